//! Bulk-counted perft and divide, generic over [`Game`].
//!
//! The recursion counts in `u64` (two adds a node) and checks for overflow
//! above depth 2; a subtree too big for `u64` is split into its children and
//! summed in `u128`, so every total is exact whatever the depth. Moves are
//! handed to the recursion by [`Game::for_each_move`], so no move list is
//! built or copied on the way down. The recursion is compiled once per
//! [`Kernel`] and the counter calls the copy it was given.

use crate::count::{Leaves, Leaves64};
use crate::game::Game;
use crate::kernel::{Isa, Kernel};
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
fn perft_1<G: Game, I: Isa>(pos: &G, isa: I) -> Leaves64 {
    match pos.count_moves_on(isa) {
        0 => Leaves64::full(u64::from(G::GAME_OVER_IS_LEAF)),
        n => Leaves64::full(n),
    }
}

/// Depths 0 and 1, which need no move list.
#[inline(always)]
fn perft_0_1<G: Game, I: Isa>(pos: &G, isa: I, depth: u32) -> Leaves64 {
    if depth == 0 {
        Leaves64::full(1)
    } else {
        perft_1(pos, isa)
    }
}

/// The probe of a table node: the stored count, if any.
#[inline(always)]
fn probe<G: Game>(
    table: &TranspositionTable,
    stats: &mut TableStats,
    key: &G::Key,
    depth: u32,
) -> Option<Leaves64> {
    stats.probes += 1;
    let stored = table.probe(key, depth + G::TABLE_DEPTH_TAG)?;
    stats.hits += 1;
    Some(Leaves64 {
        leaves: stored.leaves,
        higher: stored.higher,
    })
}

/// Stores a complete count of a table node.
#[inline(always)]
fn store<G: Game>(table: &TranspositionTable, key: &G::Key, depth: u32, total: Leaves64) {
    let count = StoredCount {
        leaves: total.leaves,
        higher: total.higher,
    };
    table.store(key, depth + G::TABLE_DEPTH_TAG, count);
}

/// Defines a module holding the whole recursion compiled with the given
/// attributes (none, or a `#[target_feature]`). Everything with a closure
/// is written inside the module: a closure inherits the target features
/// of the function it is written in, not of the one it is inlined into,
/// and the closures here are the bodies of the two last plies. Everything
/// else these functions call is `#[inline(always)]`.
macro_rules! kernel_copy {
    ($module:ident, $isa:ty, $make_isa:expr $(, #[$attr:meta])*) => {
        mod $module {
            use super::*;

            /// What game code may use inside this copy.
            const ISA: $isa = $make_isa;

            /// Depth 2: the children's move counts. At most `MAX_MOVES^2`
            /// leaves, so the sum cannot overflow.
            $(#[$attr])*
            #[inline]
            fn perft_2<G: Game>(pos: &G) -> Leaves64 {
                if let Some(n) = pos.count_two_plies_on(ISA) {
                    return Leaves64::full(n);
                }
                let mut total = Leaves64::ZERO;
                let mut moves = 0u32;
                pos.for_each_move_on(ISA, |mv| {
                    moves += 1;
                    total = total.add_small(perft_1(&pos.play_on(ISA, mv), ISA));
                });
                if moves == 0 { game_over::<G>() } else { total }
            }

            /// The sum of `child` over the children of `pos`, or `None` once
            /// it does not fit in `u64` (the remaining children are then
            /// skipped).
            $(#[$attr])*
            #[inline]
            fn sum_children<G: Game>(pos: &G, mut child: impl FnMut(&G) -> Option<Leaves64>) -> Option<Leaves64> {
                let mut total = Some(Leaves64::ZERO);
                let mut moves = 0u32;
                pos.for_each_move_on(ISA, |mv| {
                    moves += 1;
                    if let Some(sum) = total {
                        total = child(&pos.play_on(ISA, mv)).and_then(|n| sum.checked_add(n));
                    }
                });
                if moves == 0 { Some(game_over::<G>()) } else { total }
            }

            /// The `u64` recursion without a table.
            $(#[$attr])*
            pub(super) fn perft_u64<G: Game>(pos: &G, depth: u32) -> Option<Leaves64> {
                match depth {
                    0 | 1 => Some(perft_0_1(pos, ISA, depth)),
                    2 => Some(perft_2(pos)),
                    3 => match pos.count_three_plies_on(ISA) {
                        Some(n) => Some(Leaves64::full(n)),
                        None => sum_children(pos, |child| perft_u64(child, 2)),
                    },
                    _ => sum_children(pos, |child| perft_u64(child, depth - 1)),
                }
            }

            /// The `u64` recursion with lookups in `table`. Only complete
            /// counts are stored: an overflow returns `None` before anything
            /// of its subtree's root is.
            $(#[$attr])*
            pub(super) fn perft_table<G: Game>(
                table: &TranspositionTable,
                stats: &mut TableStats,
                pos: &G,
                depth: u32,
            ) -> Option<Leaves64> {
                if depth < G::MIN_STORED_DEPTH {
                    return perft_u64(pos, depth);
                }
                perft_keyed(table, stats, pos, &pos.table_key(), depth)
            }

            /// [`perft_table`] of a table node whose key is known.
            $(#[$attr])*
            fn perft_keyed<G: Game>(
                table: &TranspositionTable,
                stats: &mut TableStats,
                pos: &G,
                key: &G::Key,
                depth: u32,
            ) -> Option<Leaves64> {
                if let Some(stored) = probe::<G>(table, stats, key, depth) {
                    return Some(stored);
                }
                let total = if depth == 2 {
                    perft_2(pos)
                } else if depth - 1 < G::MIN_STORED_DEPTH {
                    sum_children(pos, |child| perft_u64(child, depth - 1))?
                } else {
                    sum_table_children(table, stats, pos, depth - 1)?
                };
                store::<G>(table, key, depth, total);
                Some(total)
            }

            /// The sum of the children's counts when they are table nodes
            /// (of `depth`), or `None` once it does not fit in `u64`. Each
            /// child is counted only once the next one is made and its
            /// bucket prefetched, so that child's probe finds the bucket
            /// in the cache: a probe of a large table otherwise waits on
            /// memory nearly every time.
            $(#[$attr])*
            #[inline]
            fn sum_table_children<G: Game>(
                table: &TranspositionTable,
                stats: &mut TableStats,
                pos: &G,
                depth: u32,
            ) -> Option<Leaves64> {
                let mut total = Some(Leaves64::ZERO);
                let mut moves = 0u32;
                let mut waiting: Option<(G, G::Key)> = None;
                pos.for_each_move_on(ISA, |mv| {
                    moves += 1;
                    let Some(sum) = total else { return };
                    let child = pos.play_on(ISA, mv);
                    let key = child.table_key();
                    table.prefetch(&key);
                    if let Some((before, before_key)) = waiting.replace((child, key)) {
                        total = perft_keyed(table, stats, &before, &before_key, depth)
                            .and_then(|n| sum.checked_add(n));
                    }
                });
                if let (Some(sum), Some((last, last_key))) = (total, waiting) {
                    total = perft_keyed(table, stats, &last, &last_key, depth).and_then(|n| sum.checked_add(n));
                }
                if moves == 0 { Some(game_over::<G>()) } else { total }
            }
        }
    };
}

kernel_copy!(portable, crate::kernel::Portable, crate::kernel::Portable);
/// [`kernel_copy`] for one x86-64 kernel of [`crate::kernel::x86_kernels`].
macro_rules! x86_kernel_copy {
    ($module:ident, $proof:ident, $features:literal) => {
        #[cfg(target_arch = "x86_64")]
        kernel_copy!(
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
crate::kernel::x86_kernels!(x86_kernel_copy);

/// The leaves of the tree of `depth` plies below `pos`, counted on the best
/// kernel for this CPU.
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

/// Counts perft for one thread, with or without a shared table, on one
/// kernel, and keeps that thread's table statistics.
#[derive(Debug)]
pub struct Counter<'t> {
    table: Option<&'t TranspositionTable>,
    /// Always one that [`Kernel::is_available`] accepted; `None` counts
    /// each game on its [`Game::best_kernel`].
    kernel: Option<Kernel>,
    /// What this counter's lookups found so far.
    pub stats: TableStats,
}

impl<'t> Counter<'t> {
    /// A counter using `table` when given, on each game's
    /// [`Game::best_kernel`].
    pub fn new(table: Option<&'t TranspositionTable>) -> Counter<'t> {
        Counter {
            table,
            kernel: None,
            stats: TableStats::default(),
        }
    }

    /// A counter on `kernel`, or `None` when this CPU cannot run it.
    pub fn with_kernel(table: Option<&'t TranspositionTable>, kernel: Kernel) -> Option<Counter<'t>> {
        kernel.is_available().then_some(Counter {
            table,
            kernel: Some(kernel),
            stats: TableStats::default(),
        })
    }

    /// The kernel this counter counts game `G` on.
    pub fn kernel_for<G: Game>(&self) -> Kernel {
        self.kernel.unwrap_or_else(G::best_kernel)
    }

    /// The leaves below `pos`, exact in `u128` whatever the depth: a
    /// subtree too big for the `u64` recursion is split into its children.
    pub fn perft<G: Game>(&mut self, pos: &G, depth: u32) -> Leaves {
        if let Some(count) = self.perft_u64(pos, depth) {
            return count.into();
        }
        // Only reachable at depth >= 3 with a non-empty move set.
        pos.legal_moves()
            .into_iter()
            .map(|mv| self.perft(&pos.play(mv), depth - 1))
            .sum()
    }

    /// The `u64` count on this counter's kernel and table.
    fn perft_u64<G: Game>(&mut self, pos: &G, depth: u32) -> Option<Leaves64> {
        let kernel = self.kernel_for::<G>();
        let stats = &mut self.stats;
        match (kernel, self.table) {
            (Kernel::Portable, None) => portable::perft_u64(pos, depth),
            (Kernel::Portable, Some(table)) => portable::perft_table(table, stats, pos, depth),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `kernel` is one that `is_available` found this CPU
            // supports (`with_kernel` checks it, `Kernel::best_of` returns
            // no other), and v3 enables nothing beyond what that check
            // tested.
            (Kernel::X86_64V3, None) => unsafe { v3::perft_u64(pos, depth) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above.
            (Kernel::X86_64V3, Some(table)) => unsafe { v3::perft_table(table, stats, pos, depth) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above, for v4.
            (Kernel::X86_64V4, None) => unsafe { v4::perft_u64(pos, depth) },
            #[cfg(target_arch = "x86_64")]
            // SAFETY: as above, for v4.
            (Kernel::X86_64V4, Some(table)) => unsafe { v4::perft_table(table, stats, pos, depth) },
            #[cfg(not(target_arch = "x86_64"))]
            (_, None) => portable::perft_u64(pos, depth),
            #[cfg(not(target_arch = "x86_64"))]
            (_, Some(table)) => portable::perft_table(table, stats, pos, depth),
        }
    }
}
