//! What a count measures, so that everything around core's hot recursions
//! is written once: threads sharing a table, a plan's weights, the divide,
//! the certificate. [`Plain`] counts leaves ([`Leaves`]); [`ByKind`]
//! counts leaves with their kinds ([`LeafStats`]). Each measure keeps its
//! own recursion and table: nothing here runs per node, so choosing a
//! measure costs no speed.
//!
//! ```
//! use perft_core::{ByKind, Chess, Counted, Game, Plain, divide_parallel};
//!
//! // Chess perft(3) from the start on two threads, no table: 8,902
//! // leaves (Chess Programming Wiki), 34 of them captures.
//! let (plain, _) = divide_parallel::<_, Plain>(&Chess::start(), 3, 2, None)?;
//! let (by_kind, _) = divide_parallel::<_, ByKind>(&Chess::start(), 3, 2, None)?;
//! assert_eq!(plain.total.leaves, 8_902);
//! assert_eq!(by_kind.total.leaves(), plain.total);
//! let captures = <ByKind as perft_core::Measure<Chess>>::Count::KINDS
//!     .iter()
//!     .position(|&kind| kind == "captures")
//!     .expect("chess counts captures");
//! assert_eq!(by_kind.total.kinds()[captures], 34);
//! # Ok::<(), perft_core::PlanError>(())
//! ```

use std::fmt::Debug;

use crate::count::Leaves;
use crate::game::Game;
use crate::perft::{Counter, TableStats};
use crate::stats::{GameStats, LeafStats, StatsCounter, StatsTable, Tally};
use crate::table::{TranspositionTable, entry_bytes_of};

/// One subtree's count under some measure: sums and products are checked,
/// since a count from outside the process may be forged.
pub trait Counted: Copy + Default + Debug + Eq + Send + Sync + 'static {
    /// The kinds' names in column order; none for plain leaves.
    const KINDS: &'static [&'static str];

    /// All the leaves.
    fn leaves(&self) -> Leaves;

    /// The leaves by kind, in the order of [`Counted::KINDS`].
    fn kinds(&self) -> Vec<u128>;

    /// The sum, or `None` past `u128`.
    fn checked_add(self, rhs: Self) -> Option<Self>;

    /// The count of a subtree reached by `n` paths, or `None` past `u128`.
    fn checked_mul(self, n: u128) -> Option<Self>;
}

impl Counted for Leaves {
    const KINDS: &'static [&'static str] = &[];

    fn leaves(&self) -> Leaves {
        *self
    }

    fn kinds(&self) -> Vec<u128> {
        Vec::new()
    }

    fn checked_add(self, rhs: Leaves) -> Option<Leaves> {
        Leaves::checked_add(self, rhs)
    }

    fn checked_mul(self, n: u128) -> Option<Leaves> {
        Leaves::checked_mul(self, n)
    }
}

impl<T: Tally> Counted for LeafStats<T> {
    const KINDS: &'static [&'static str] = T::KINDS;

    fn leaves(&self) -> Leaves {
        self.leaves
    }

    fn kinds(&self) -> Vec<u128> {
        self.kinds.counts()
    }

    fn checked_add(self, rhs: LeafStats<T>) -> Option<LeafStats<T>> {
        LeafStats::checked_add(self, rhs)
    }

    fn checked_mul(self, n: u128) -> Option<LeafStats<T>> {
        LeafStats::checked_mul(self, n)
    }
}

/// A table counting threads share: what a report says of it.
pub trait SharedTable: Send + Sync {
    /// Bytes it holds.
    fn bytes(&self) -> u64;
    /// Entries it holds.
    fn entries(&self) -> u64;
    /// Share of entries in use, from about `sample` buckets.
    fn fill(&self, sample: u64) -> f64;
}

impl SharedTable for TranspositionTable {
    fn bytes(&self) -> u64 {
        TranspositionTable::bytes(self)
    }
    fn entries(&self) -> u64 {
        TranspositionTable::entries(self)
    }
    fn fill(&self, sample: u64) -> f64 {
        TranspositionTable::fill(self, sample)
    }
}

impl<G: GameStats> SharedTable for StatsTable<G> {
    fn bytes(&self) -> u64 {
        StatsTable::bytes(self)
    }
    fn entries(&self) -> u64 {
        StatsTable::entries(self)
    }
    fn fill(&self, sample: u64) -> f64 {
        StatsTable::fill(self, sample)
    }
}

/// A table asked for with too few bytes to hold one entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum TableTooSmall {
    #[error("a table of {bytes} bytes holds no entry; give at least 64K")]
    Plain { bytes: u64 },
    #[error("a statistics table of {bytes} bytes holds no entry; give at least {least}")]
    ByKind { bytes: u64, least: u64 },
}

/// What is counted in game `G`: the count, the table its threads share and
/// one thread's counter.
pub trait Measure<G: Game>: 'static {
    /// One subtree's count.
    type Count: Counted;
    /// The table the counting threads share.
    type Table: SharedTable;
    /// One thread's counter, holding its table statistics.
    type Counter<'t>;

    /// Plies a plan must leave each unit: a leaf's kind is that of the
    /// move that made it, which a unit at full depth no longer knows.
    const UNIT_PLIES: u32;

    /// A counter on the best kernel, sharing `table` when given.
    fn counter(table: Option<&Self::Table>) -> Self::Counter<'_>;

    /// The count of the tree of `depth` plies below `pos`.
    fn count(counter: &mut Self::Counter<'_>, pos: &G, depth: u32) -> Self::Count;

    /// The count below first move `mv` of `pos`, `depth` plies deep
    /// counting `mv` (at least 1).
    fn count_move(counter: &mut Self::Counter<'_>, pos: &G, mv: G::Move, depth: u32) -> Self::Count {
        Self::count(counter, &pos.play(mv), depth - 1)
    }

    /// What `counter`'s lookups found so far.
    fn probes(counter: &Self::Counter<'_>) -> TableStats;

    /// A table of at most `bytes` bytes.
    fn table(bytes: u64) -> Result<Self::Table, TableTooSmall>;

    /// Bytes one entry takes, to size a table to the positions it should
    /// hold.
    fn entry_bytes() -> u64;

    /// The shallowest node, in plies above the leaves, that this measure's
    /// table stores: what sizing a table to its work reckons from.
    fn min_stored_depth() -> u32;

    /// The count of `pos` on one thread without a table.
    fn perft(pos: &G, depth: u32) -> Self::Count {
        Self::count(&mut Self::counter(None), pos, depth)
    }
}

/// Leaves alone: what `perft` counts.
#[derive(Debug, Clone, Copy)]
pub struct Plain;

/// Leaves with their kinds (captures, checks, passes, ...): `perft
/// --stats`.
#[derive(Debug, Clone, Copy)]
pub struct ByKind;

impl<G: Game> Measure<G> for Plain {
    type Count = Leaves;
    type Table = TranspositionTable;
    type Counter<'t> = Counter<'t>;
    const UNIT_PLIES: u32 = 0;

    fn counter(table: Option<&TranspositionTable>) -> Counter<'_> {
        Counter::new(table)
    }

    #[inline]
    fn count(counter: &mut Counter<'_>, pos: &G, depth: u32) -> Leaves {
        counter.perft(pos, depth)
    }

    fn probes(counter: &Counter<'_>) -> TableStats {
        counter.stats
    }

    fn table(bytes: u64) -> Result<TranspositionTable, TableTooSmall> {
        TranspositionTable::for_game::<G>(bytes).ok_or(TableTooSmall::Plain { bytes })
    }

    fn entry_bytes() -> u64 {
        entry_bytes_of::<G>()
    }

    fn min_stored_depth() -> u32 {
        G::MIN_STORED_DEPTH
    }
}

impl<G: GameStats> Measure<G> for ByKind {
    type Count = LeafStats<G::Stats>;
    type Table = StatsTable<G>;
    type Counter<'t> = StatsCounter<'t, G>;
    const UNIT_PLIES: u32 = 1;

    fn counter(table: Option<&StatsTable<G>>) -> StatsCounter<'_, G> {
        StatsCounter::new(table)
    }

    #[inline]
    fn count(counter: &mut StatsCounter<'_, G>, pos: &G, depth: u32) -> LeafStats<G::Stats> {
        counter.count(pos, depth)
    }

    /// A last-ply move's kinds are its own, which its child no longer
    /// knows.
    fn count_move(
        counter: &mut StatsCounter<'_, G>,
        pos: &G,
        mv: G::Move,
        depth: u32,
    ) -> LeafStats<G::Stats> {
        if depth == 1 {
            LeafStats {
                leaves: Leaves::full(1),
                kinds: pos.move_kinds(mv),
            }
        } else {
            counter.count(&pos.play(mv), depth - 1)
        }
    }

    fn probes(counter: &StatsCounter<'_, G>) -> TableStats {
        counter.probes
    }

    fn table(bytes: u64) -> Result<StatsTable<G>, TableTooSmall> {
        StatsTable::with_bytes(bytes).ok_or(TableTooSmall::ByKind {
            bytes,
            least: StatsTable::<G>::bucket_bytes(),
        })
    }

    fn entry_bytes() -> u64 {
        StatsTable::<G>::entry_bytes()
    }

    fn min_stored_depth() -> u32 {
        crate::stats::min_stats_stored_depth::<G>()
    }
}
