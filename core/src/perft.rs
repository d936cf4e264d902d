//! Bulk-counted perft and divide, generic over [`Game`].
//!
//! The recursion counts in `u64` (two adds a node) and checks for overflow
//! above depth 2; a subtree too big for `u64` is split into its children and
//! summed in `u128`, so every total is exact whatever the depth.

use crate::count::{Leaves, Leaves64};
use crate::game::{Game, MoveSet};
use crate::table::{StoredCount, TranspositionTable};

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
    Counter::new(None).perft(pos, depth)
}

/// Transposition-table statistics of one or more counting threads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TableStats {
    /// Lookups made (nodes of depth >= [`Game::MIN_STORED_DEPTH`]).
    pub probes: u64,
    /// Lookups that found the position and depth.
    pub hits: u64,
}

impl std::ops::AddAssign for TableStats {
    fn add_assign(&mut self, rhs: TableStats) {
        self.probes += rhs.probes;
        self.hits += rhs.hits;
    }
}

/// Counts perft for one thread, with or without a shared table, and keeps
/// that thread's table statistics.
#[derive(Debug)]
pub struct Counter<'t> {
    table: Option<&'t TranspositionTable>,
    /// What this counter's lookups found so far.
    pub stats: TableStats,
}

impl<'t> Counter<'t> {
    /// A counter using `table` when given.
    pub fn new(table: Option<&'t TranspositionTable>) -> Counter<'t> {
        Counter {
            table,
            stats: TableStats::default(),
        }
    }

    /// The leaves below `pos`, exact in `u128` whatever the depth: a
    /// subtree too big for the `u64` recursion is split into its children.
    pub fn perft<G: Game>(&mut self, pos: &G, depth: u32) -> Leaves {
        let counted = match self.table {
            None => perft_u64(pos, depth),
            Some(table) => self.perft_table(table, pos, depth),
        };
        if let Some(count) = counted {
            return count.into();
        }
        // Only reachable at depth >= 3 with a non-empty move set.
        pos.legal_moves()
            .into_iter()
            .map(|mv| self.perft(&pos.play(mv), depth - 1))
            .sum()
    }

    /// The `u64` recursion with lookups. Only complete counts are stored:
    /// an overflow returns `None` before anything of its subtree's root is.
    fn perft_table<G: Game>(&mut self, table: &TranspositionTable, pos: &G, depth: u32) -> Option<Leaves64> {
        if depth < G::MIN_STORED_DEPTH {
            return perft_u64(pos, depth);
        }
        let key = pos.table_key();
        self.stats.probes += 1;
        if let Some(stored) = table.probe(&key, depth) {
            self.stats.hits += 1;
            return Some(Leaves64 {
                leaves: stored.leaves,
                higher: stored.higher,
            });
        }
        let moves = pos.legal_moves();
        if moves.is_empty() {
            return Some(game_over::<G>());
        }
        let mut total = Leaves64::ZERO;
        for mv in moves {
            total = total.checked_add(self.perft_table(table, &pos.play(mv), depth - 1)?)?;
        }
        table.store(
            &key,
            depth,
            StoredCount {
                leaves: total.leaves,
                higher: total.higher,
            },
        );
        Some(total)
    }
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
