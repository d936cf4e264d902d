//! What the registry knows of a game as data: its [`Game`](crate::Game)
//! consts, readable in `const` contexts.

use crate::stats::{GameStats, Tally};

/// A game's consts, gathered by [`GameFacts::of`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GameFacts {
    /// [`Game::NAME`](crate::Game::NAME).
    pub name: &'static str,
    /// [`Game::ABOUT`](crate::Game::ABOUT).
    pub about: &'static str,
    /// [`Game::MAX_DEPTH`](crate::Game::MAX_DEPTH).
    pub max_depth: u32,
    /// [`Game::GAME_OVER_IS_LEAF`](crate::Game::GAME_OVER_IS_LEAF): results carry a "higher" split.
    pub reports_higher: bool,
    /// [`Game::SORT_DIVIDE`](crate::Game::SORT_DIVIDE): divide lines are printed sorted by move.
    pub sort_divide: bool,
    /// [`Game::PACKED_BYTES`](crate::Game::PACKED_BYTES): the length of every packed position.
    pub packed_bytes: usize,
    /// The kinds of the game's statistics, in column order
    /// ([`Tally::KINDS`]).
    pub stats_kinds: &'static [&'static str],
}

impl GameFacts {
    /// The facts of game `G`.
    pub const fn of<G: GameStats>() -> GameFacts {
        GameFacts {
            name: G::NAME,
            about: G::ABOUT,
            max_depth: G::MAX_DEPTH,
            reports_higher: G::GAME_OVER_IS_LEAF,
            sort_divide: G::SORT_DIVIDE,
            packed_bytes: G::PACKED_BYTES,
            stats_kinds: G::Stats::KINDS,
        }
    }
}
