//! Bulk-counted perft and divide, generic over [`Game`].
//!
//! The recursion counts in `u64` (two adds a node) and checks for overflow
//! above depth 2; a subtree too big for `u64` is split into its children and
//! summed in `u128`, so every total is exact whatever the depth. Moves are
//! handed to the recursion by [`Game::for_each_move`], so no move list is
//! built or copied on the way down.

use crate::count::{Leaves, Leaves64};
use crate::game::Game;
use crate::table::{MIN_STORED_DEPTH, StoredCount, TranspositionTable};

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
    let mut total = Leaves64::ZERO;
    let mut moves = 0u32;
    pos.for_each_move(|mv| {
        moves += 1;
        total = total.add_small(perft_1(&pos.play(mv)));
    });
    if moves == 0 { game_over::<G>() } else { total }
}

/// Depths 0 to 2, which never recurse.
#[inline(always)]
fn perft_shallow<G: Game>(pos: &G, depth: u32) -> Leaves64 {
    match depth {
        0 => Leaves64::full(1),
        1 => perft_1(pos),
        _ => perft_2(pos),
    }
}

/// The sum of `child` over the children of `pos`, or `None` once it does
/// not fit in `u64` (the remaining children are then skipped).
#[inline(always)]
fn sum_children<G: Game>(pos: &G, mut child: impl FnMut(&G) -> Option<Leaves64>) -> Option<Leaves64> {
    let mut total = Some(Leaves64::ZERO);
    let mut moves = 0u32;
    pos.for_each_move(|mv| {
        moves += 1;
        if let Some(sum) = total {
            total = child(&pos.play(mv)).and_then(|n| sum.checked_add(n));
        }
    });
    if moves == 0 { Some(game_over::<G>()) } else { total }
}

/// One node of the `u64` recursion; `recurse` counts a child one ply less
/// deep (the kernel's own copy of this function).
#[inline(always)]
fn perft_u64_node<G: Game>(
    pos: &G,
    depth: u32,
    recurse: impl Fn(&G, u32) -> Option<Leaves64>,
) -> Option<Leaves64> {
    if depth < 3 {
        return Some(perft_shallow(pos, depth));
    }
    sum_children(pos, |child| recurse(child, depth - 1))
}

/// One node of the `u64` recursion with lookups. Only complete counts are
/// stored: an overflow returns `None` before anything of its subtree's root
/// is.
#[inline(always)]
fn perft_table_node<G: Game>(
    table: &TranspositionTable,
    stats: &mut TableStats,
    pos: &G,
    depth: u32,
    mut recurse: impl FnMut(&mut TableStats, &G, u32) -> Option<Leaves64>,
) -> Option<Leaves64> {
    if depth < MIN_STORED_DEPTH {
        return Some(perft_shallow(pos, depth));
    }
    let key = pos.table_key();
    stats.probes += 1;
    if let Some(stored) = table.probe(&key, depth) {
        stats.hits += 1;
        return Some(Leaves64 {
            leaves: stored.leaves,
            higher: stored.higher,
        });
    }
    let total = sum_children(pos, |child| recurse(stats, child, depth - 1))?;
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

/// The `u64` recursion without a table.
fn perft_u64<G: Game>(pos: &G, depth: u32) -> Option<Leaves64> {
    perft_u64_node(pos, depth, perft_u64)
}

/// The `u64` recursion with lookups in `table`.
fn perft_table<G: Game>(
    table: &TranspositionTable,
    stats: &mut TableStats,
    pos: &G,
    depth: u32,
) -> Option<Leaves64> {
    perft_table_node(table, stats, pos, depth, |stats, child, depth| {
        perft_table(table, stats, child, depth)
    })
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
    /// Lookups made (nodes of depth >= [`MIN_STORED_DEPTH`]).
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
            Some(table) => perft_table(table, &mut self.stats, pos, depth),
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
