//! The statistics recursion, compiled once per kernel as the plain one is
//! (see `perft.rs`), and its counter.
//!
//! It cannot bulk-count: every leaf move is classified by the game's
//! [`GameStats::children_stats`]. Sums are `u128` and checked; a node at
//! least [`MIN_STORED_DEPTH`](crate::Game::MIN_STORED_DEPTH) deep is
//! looked up in the statistics table when the counter has one.

use super::table::StatsTable;
use super::{GameStats, LeafStats};
use crate::count::Leaves;
use crate::kernel::Kernel;
use crate::perft::TableStats;

/// Statistics are looked up from this depth at least: a depth-2 node's
/// statistics are a few hundred children's, not worth a wide entry (the
/// plain count, whose entries are a cache line's half, stores chess from
/// depth 2).
const MIN_STATS_STORED_DEPTH: u32 = 3;

/// The shallowest node the statistics table stores for game `G`.
pub(crate) fn min_stats_stored_depth<G: GameStats>() -> u32 {
    G::MIN_STORED_DEPTH.max(MIN_STATS_STORED_DEPTH)
}

/// The statistics of `pos` as a leaf no move led to (depth 0).
#[inline(always)]
fn root_leaf<G: GameStats>(pos: &G) -> LeafStats<G::Stats> {
    LeafStats {
        leaves: Leaves::full(1),
        kinds: pos.node_kinds(),
    }
}

/// The statistics of a node without a move, two or more plies above full
/// depth: one "higher" leaf where the game counts game-over nodes, nothing
/// otherwise.
#[inline(always)]
fn game_over<G: GameStats>(pos: &G) -> LeafStats<G::Stats> {
    if G::GAME_OVER_IS_LEAF {
        LeafStats {
            leaves: Leaves { leaves: 1, higher: 1 },
            kinds: pos.node_kinds(),
        }
    } else {
        LeafStats::default()
    }
}

/// Defines a module holding the statistics recursion compiled with the
/// given attributes (none, or a `#[target_feature]`); the closure is the
/// body of the loop, written inside so that it inherits them.
macro_rules! stats_copy {
    ($module:ident, $isa:ty, $make_isa:expr $(, #[$attr:meta])*) => {
        mod $module {
            use super::*;

            /// What game code may use inside this copy.
            const ISA: $isa = $make_isa;

            /// The statistics of the tree of `depth` plies below `pos`,
            /// with lookups in `table` when given. Only complete subtrees
            /// are stored.
            $(#[$attr])*
            pub(super) fn count<G: GameStats>(
                table: Option<&StatsTable<G>>,
                probes: &mut TableStats,
                pos: &G,
                depth: u32,
            ) -> LeafStats<G::Stats> {
                match (depth, table) {
                    (0, _) => root_leaf(pos),
                    (1, _) => pos.children_stats(ISA),
                    (_, Some(table)) if depth >= min_stats_stored_depth::<G>() => {
                        count_keyed(table, probes, pos, &pos.table_key(), depth)
                    }
                    _ => {
                        let mut total = LeafStats::default();
                        let mut moves = 0u32;
                        pos.for_each_move_on(ISA, |mv| {
                            moves += 1;
                            total += count(table, probes, &pos.play_on(ISA, mv), depth - 1);
                        });
                        if moves == 0 { game_over(pos) } else { total }
                    }
                }
            }

            /// [`count`] of a node the table stores, whose key is known.
            /// When its children are stored too, each child is counted
            /// only once the next one is made and its bucket prefetched,
            /// so that child's probe finds its bucket in the cache.
            $(#[$attr])*
            fn count_keyed<G: GameStats>(
                table: &StatsTable<G>,
                probes: &mut TableStats,
                pos: &G,
                key: &G::Key,
                depth: u32,
            ) -> LeafStats<G::Stats> {
                probes.probes += 1;
                if let Some(found) = table.probe(key, depth) {
                    probes.hits += 1;
                    return found;
                }
                // The children, of `depth - 1`, are stored from the least depth up.
                let children_stored = depth > min_stats_stored_depth::<G>();
                let mut total = LeafStats::default();
                let mut moves = 0u32;
                let mut waiting: Option<(G, G::Key)> = None;
                pos.for_each_move_on(ISA, |mv| {
                    moves += 1;
                    let child = pos.play_on(ISA, mv);
                    if !children_stored {
                        total += count(Some(table), probes, &child, depth - 1);
                        return;
                    }
                    let child_key = child.table_key();
                    table.prefetch(&child_key);
                    if let Some((before, before_key)) = waiting.replace((child, child_key)) {
                        total += count_keyed(table, probes, &before, &before_key, depth - 1);
                    }
                });
                if let Some((last, last_key)) = waiting {
                    total += count_keyed(table, probes, &last, &last_key, depth - 1);
                }
                if moves == 0 {
                    total = game_over(pos);
                }
                table.store(key, depth, &total);
                total
            }
        }
    };
}

stats_copy!(portable, crate::kernel::Portable, crate::kernel::Portable);
/// [`stats_copy`] for one x86-64 kernel of [`crate::kernel::x86_kernels`].
macro_rules! x86_stats_copy {
    ($module:ident, $proof:ident, $features:literal) => {
        #[cfg(target_arch = "x86_64")]
        stats_copy!(
            $module,
            crate::kernel::$proof,
            // SAFETY: the functions of this copy are `#[target_feature]`
            // ones, called (unsafely) only once the kernel's
            // `is_available()` held, so the proof is true wherever it is
            // used.
            unsafe { crate::kernel::$proof::new_unchecked() },
            #[target_feature(enable = $features)]
        );
    };
}
crate::kernel::x86_kernels!(x86_stats_copy);

/// Counts statistics for one thread, with or without a shared statistics
/// table, on one kernel, and keeps that thread's table statistics.
#[derive(Debug)]
pub struct StatsCounter<'t, G: GameStats> {
    table: Option<&'t StatsTable<G>>,
    /// Always one that [`Kernel::is_available`] accepted.
    kernel: Kernel,
    /// What this counter's lookups found so far.
    pub probes: TableStats,
}

impl<'t, G: GameStats> StatsCounter<'t, G> {
    /// A counter using `table` when given, on the game's
    /// [`Game::best_kernel`](crate::Game::best_kernel).
    pub fn new(table: Option<&'t StatsTable<G>>) -> StatsCounter<'t, G> {
        StatsCounter {
            table,
            kernel: G::best_kernel(),
            probes: TableStats::default(),
        }
    }

    /// A counter on `kernel`, or `None` when this CPU cannot run it.
    pub fn with_kernel(table: Option<&'t StatsTable<G>>, kernel: Kernel) -> Option<StatsCounter<'t, G>> {
        kernel.is_available().then_some(StatsCounter {
            table,
            kernel,
            probes: TableStats::default(),
        })
    }

    /// The statistics of the tree of `depth` plies below `pos`.
    pub fn count(&mut self, pos: &G, depth: u32) -> LeafStats<G::Stats> {
        let (table, probes) = (self.table, &mut self.probes);
        match self.kernel {
            Kernel::Portable => portable::count(table, probes, pos, depth),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `kernel` is one that `is_available` found this CPU
            // supports (`with_kernel` checks it, `Kernel::best_of` returns
            // no other), and v3 enables nothing beyond what that check
            // tested.
            Kernel::X86_64V3 => unsafe { v3::count(table, probes, pos, depth) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above, for v4.
            Kernel::X86_64V4 => unsafe { v4::count(table, probes, pos, depth) },
            #[cfg(not(target_arch = "x86_64"))]
            _ => portable::count(table, probes, pos, depth),
        }
    }
}

/// The statistics of the tree of `depth` plies below `pos`, on the best
/// kernel for this CPU, one thread, no table.
pub fn perft_stats<G: GameStats>(pos: &G, depth: u32) -> LeafStats<G::Stats> {
    StatsCounter::new(None).count(pos, depth)
}
