//! The divide: a count split by first move, what engine authors compare
//! line by line. One body for every measure ([`Measure`]).

use crate::count::Leaves;
use crate::game::Game;
use crate::measure::{ByKind, Counted, Measure, Plain};
use crate::stats::{GameStats, LeafStats};

/// A count split by first move: leaves ([`Leaves`], the default) or leaves
/// by kind ([`StatsDivide`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Divide<M, C = Leaves> {
    /// Each legal first move with the count below it, in generation order.
    pub moves: Vec<(M, C)>,
    /// The sum of `moves`, or the root itself when it is a leaf (depth 0,
    /// or a game-over root where the game counts those).
    pub total: C,
}

/// A divide with the leaves' kinds.
pub type StatsDivide<M, T> = Divide<M, LeafStats<T>>;

/// The count of `depth` plies below `pos` under measure `Ms`, split by
/// first move: one thread, no table, nothing merged.
pub fn divide_by<G: Game, Ms: Measure<G>>(pos: &G, depth: u32) -> Divide<G::Move, Ms::Count> {
    let moves: Vec<G::Move> = if depth == 0 {
        Vec::new()
    } else {
        pos.legal_moves().into_iter().collect()
    };
    if moves.is_empty() {
        return Divide {
            moves: Vec::new(),
            total: Ms::perft(pos, depth),
        };
    }
    let mut counter = Ms::counter(None);
    let moves: Vec<(G::Move, Ms::Count)> = moves
        .into_iter()
        .map(|mv| (mv, Ms::count_move(&mut counter, pos, mv, depth)))
        .collect();
    let total = moves
        .iter()
        .try_fold(Ms::Count::default(), |sum, &(_, n)| sum.checked_add(n))
        .expect("true counts within MAX_DEPTH fit in u128");
    Divide { moves, total }
}

/// Perft of `depth` plies below `pos`, with the count below each first
/// move.
pub fn divide<G: Game>(pos: &G, depth: u32) -> Divide<G::Move> {
    divide_by::<G, Plain>(pos, depth)
}

/// [`divide`] with the leaves' kinds.
pub fn divide_stats<G: GameStats>(pos: &G, depth: u32) -> StatsDivide<G::Move, G::Stats> {
    divide_by::<G, ByKind>(pos, depth)
}
