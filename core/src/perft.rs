//! Bulk-counted perft and divide, generic over [`Game`].
//!
//! The recursion counts in `u64` (two adds a node) and checks for overflow
//! above depth 2; a subtree too big for `u64` is split into its children and
//! summed in `u128`, so every total is exact whatever the depth.

use crate::count::{Leaves, Leaves64};
use crate::game::{Game, MoveSet};

/// Leaves of a node whose side to move has no move: one "higher" leaf where
/// the game counts game-over nodes, none otherwise.
#[inline(always)]
fn game_over<G: Game>() -> Leaves64 {
    if G::GAME_OVER_IS_LEAF {
        Leaves64::HIGHER_ONE
    } else {
        Leaves64::ZERO
    }
}

/// Depth 1 with bulk counting: the number of legal moves.
///
/// A game-over node one ply above full depth is a full-depth leaf where the
/// game counts game-over nodes: the side to move passes, the pass is the
/// last ply, and the game only ends at the node it reaches (Bik's
/// convention; the published Reversi `higher` counts depend on it).
#[inline(always)]
fn perft_1<G: Game>(pos: &G) -> Leaves64 {
    match pos.count_moves() {
        0 => Leaves64::full(u64::from(G::GAME_OVER_IS_LEAF)),
        n => Leaves64::full(n),
    }
}

/// Depth 2: the children's move counts. At most `MAX_MOVES^2` leaves, so the
/// sum cannot overflow.
#[inline(always)]
fn perft_2<G: Game>(pos: &G) -> Leaves64 {
    let moves = pos.legal_moves();
    if moves.is_empty() {
        return game_over::<G>();
    }
    moves
        .into_iter()
        .fold(Leaves64::ZERO, |acc, mv| acc.add_small(perft_1(&pos.play(mv))))
}

/// Perft in `u64`; `None` when the count does not fit.
pub(crate) fn perft_u64<G: Game>(pos: &G, depth: u32) -> Option<Leaves64> {
    match depth {
        0 => Some(Leaves64::full(1)),
        1 => Some(perft_1(pos)),
        2 => Some(perft_2(pos)),
        _ => {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                return Some(game_over::<G>());
            }
            let mut total = Leaves64::ZERO;
            for mv in moves {
                total = total.checked_add(perft_u64(&pos.play(mv), depth - 1)?)?;
            }
            Some(total)
        }
    }
}

/// The leaves of the tree of `depth` plies below `pos`.
///
/// A leaf is a node at full depth, or (where [`Game::GAME_OVER_IS_LEAF`]) a
/// game-over node above it, which is also counted in [`Leaves::higher`].
pub fn perft<G: Game>(pos: &G, depth: u32) -> Leaves {
    if let Some(count) = perft_u64(pos, depth) {
        return count.into();
    }
    // Only reachable at depth >= 3 with a non-empty move set.
    pos.legal_moves()
        .into_iter()
        .map(|mv| perft(&pos.play(mv), depth - 1))
        .sum()
}

/// Perft split by first move: what engine authors compare line by line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divide<M> {
    /// Each legal first move with the leaves below it, in generation order.
    pub moves: Vec<(M, Leaves)>,
    /// All leaves: the sum of `moves`, or the root itself when it is a leaf
    /// (depth 0, or a game-over root where the game counts those).
    pub total: Leaves,
}

/// Perft of `depth` plies below `pos`, with the count below each first move.
pub fn divide<G: Game>(pos: &G, depth: u32) -> Divide<G::Move> {
    let moves: Vec<G::Move> = if depth == 0 {
        Vec::new()
    } else {
        pos.legal_moves().into_iter().collect()
    };
    if moves.is_empty() {
        return Divide {
            moves: Vec::new(),
            total: perft(pos, depth),
        };
    }
    let moves: Vec<(G::Move, Leaves)> = moves
        .into_iter()
        .map(|mv| (mv, perft(&pos.play(mv), depth - 1)))
        .collect();
    let total = moves.iter().map(|&(_, n)| n).sum();
    Divide { moves, total }
}
