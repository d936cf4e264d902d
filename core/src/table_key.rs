//! What a game hands the transposition table: its normalised position as a
//! few words, and the depths worth storing. Kept apart from the table so
//! that the [`Game`](crate::Game) contract names it without depending on
//! the table, which is generic over games.

/// Subtrees this shallow are cheaper to recount than to look up: the
/// default of [`Game::MIN_STORED_DEPTH`](crate::Game::MIN_STORED_DEPTH).
pub const MIN_STORED_DEPTH: u32 = 3;

/// The table never stores shallower subtrees than this, whatever the game:
/// a depth-1 count is one move generation.
pub const SHALLOWEST_STORED_DEPTH: u32 = 2;

/// A normalised position as the table stores it: a few `u64` words compared
/// whole on every hit (2 words for Reversi and checkers, 3 for chess).
pub trait TableKey: Copy + Eq + Send + Sync {
    /// The key's words.
    fn words(&self) -> &[u64];
}

impl<const N: usize> TableKey for [u64; N] {
    #[inline(always)]
    fn words(&self) -> &[u64] {
        self
    }
}
