//! The statistics table: complete statistics of subtrees, shared by the
//! counting threads, apart from the plain counts' table.
//!
//! Like [`TranspositionTable`](crate::TranspositionTable) it keeps the
//! whole normalised position and the remaining depth, and a hit needs both
//! to be equal, never a hash alone; the hash only picks the bucket. It is
//! typed by its game, so a table of one game (or one Reversi convention)
//! cannot be handed to another. Its entries are far wider than a plain
//! count's (a leaf total and every kind's count in `u128`), so each bucket
//! of [`BUCKET_ENTRIES`] sits behind its own mutex: a thread that finds it
//! locked takes a probe for a miss and skips a store, so nobody waits.

use std::fmt;
use std::sync::Mutex;

use super::{GameStats, LeafStats};
use crate::table_key::TableKey;

/// Entries per bucket; a store replaces the one with the fewest leaves.
pub const BUCKET_ENTRIES: usize = 2;

/// One stored subtree.
#[derive(Clone, Copy)]
struct Entry<G: GameStats> {
    key: G::Key,
    depth: u32,
    stats: LeafStats<G::Stats>,
}

type Bucket<G> = Mutex<[Option<Entry<G>>; BUCKET_ENTRIES]>;

/// The statistics table of game `G`. Its size is fixed at creation.
pub struct StatsTable<G: GameStats> {
    buckets: Box<[Bucket<G>]>,
}

impl<G: GameStats> fmt::Debug for StatsTable<G> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StatsTable")
            .field("game", &G::NAME)
            .field("buckets", &self.buckets.len())
            .finish()
    }
}

impl<G: GameStats> StatsTable<G> {
    /// Bytes of one bucket, padding included: what sizes are reckoned in.
    pub const fn bucket_bytes() -> u64 {
        std::mem::size_of::<Bucket<G>>() as u64
    }

    /// Bytes per entry, for sizing a table to the positions it will store.
    pub const fn entry_bytes() -> u64 {
        Self::bucket_bytes() / BUCKET_ENTRIES as u64
    }

    /// A table of at most `bytes` bytes, or `None` when that is not even
    /// one bucket. Its memory is written once here.
    pub fn with_bytes(bytes: u64) -> Option<StatsTable<G>> {
        let buckets = usize::try_from(bytes / Self::bucket_bytes()).ok()?;
        (buckets > 0).then(|| StatsTable {
            buckets: (0..buckets).map(|_| Mutex::new([None; BUCKET_ENTRIES])).collect(),
        })
    }

    /// Bytes of the buckets.
    pub fn bytes(&self) -> u64 {
        self.buckets.len() as u64 * Self::bucket_bytes()
    }

    /// Number of entries.
    pub fn entries(&self) -> u64 {
        (self.buckets.len() * BUCKET_ENTRIES) as u64
    }

    /// The bucket of `key`.
    #[inline]
    fn bucket(&self, key: &G::Key) -> &Bucket<G> {
        let hash = crate::table::hash(key.words());
        let index = (u128::from(hash) * self.buckets.len() as u128) >> 64;
        &self.buckets[index as usize]
    }

    /// Starts loading the bucket of `key` (every cache line of it) into the
    /// cache, so that a probe of it a little later does not wait on
    /// memory. A hint only: nothing is read or written.
    #[inline]
    pub fn prefetch(&self, key: &G::Key) {
        let start = self.bucket(key) as *const Bucket<G> as *const u8;
        for offset in (0..std::mem::size_of::<Bucket<G>>()).step_by(64) {
            crate::table::prefetch_line(start.wrapping_add(offset));
        }
    }

    /// The statistics stored for exactly this key and depth, if any.
    #[inline]
    pub fn probe(&self, key: &G::Key, depth: u32) -> Option<LeafStats<G::Stats>> {
        let bucket = self.bucket(key).try_lock().ok()?;
        bucket
            .iter()
            .flatten()
            .find(|entry| entry.depth == depth && entry.key == *key)
            .map(|entry| entry.stats)
    }

    /// Stores complete statistics, replacing the entry of the same key and
    /// depth, else an empty one, else the one with the fewest leaves.
    #[inline]
    pub fn store(&self, key: &G::Key, depth: u32, stats: &LeafStats<G::Stats>) {
        let Ok(mut bucket) = self.bucket(key).try_lock() else {
            return;
        };
        let same = bucket
            .iter()
            .position(|slot| slot.is_some_and(|entry| entry.depth == depth && entry.key == *key));
        let victim = same.unwrap_or_else(|| {
            (0..BUCKET_ENTRIES)
                .min_by_key(|&i| bucket[i].map_or(0, |entry| entry.stats.leaves.leaves.max(1)))
                .unwrap_or(0)
        });
        bucket[victim] = Some(Entry {
            key: *key,
            depth,
            stats: *stats,
        });
    }

    /// Share of entries in use, from a sample of up to `sample` buckets
    /// spread over the table.
    pub fn fill(&self, sample: u64) -> f64 {
        let step = (self.buckets.len() / sample.max(1) as usize).max(1);
        let (mut used, mut seen) = (0u64, 0u64);
        for bucket in self.buckets.iter().step_by(step) {
            // A bucket locked at this moment is left out of the sample.
            if let Ok(bucket) = bucket.try_lock() {
                used += bucket.iter().flatten().count() as u64;
                seen += BUCKET_ENTRIES as u64;
            }
        }
        used as f64 / seen.max(1) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Checkers, Chess, Game, Leaves, Reversi};

    #[test]
    fn a_hit_needs_the_whole_key_and_the_depth() {
        let table = StatsTable::<Chess>::with_bytes(1 << 16).expect("64 KiB holds buckets");
        let start = Chess::start();
        let stats = LeafStats {
            leaves: Leaves::full(8902),
            ..LeafStats::default()
        };
        table.store(&start.table_key(), 3, &stats);
        assert_eq!(table.probe(&start.table_key(), 3), Some(stats));
        assert_eq!(table.probe(&start.table_key(), 4), None);
        let other = start.play(start.legal_moves()[0]);
        assert_eq!(table.probe(&other.table_key(), 3), None);
    }

    #[test]
    fn a_full_bucket_keeps_the_bigger_subtree() {
        // One bucket: every key lands in it.
        let table = StatsTable::<Checkers>::with_bytes(StatsTable::<Checkers>::bucket_bytes()).unwrap();
        assert_eq!(table.entries(), 2);
        let start = Checkers::start();
        let children: Vec<Checkers> = start.legal_moves().into_iter().map(|mv| start.play(mv)).collect();
        let with = |n| LeafStats {
            leaves: Leaves::full(n),
            ..LeafStats::default()
        };
        table.store(&children[0].table_key(), 5, &with(100));
        table.store(&children[1].table_key(), 5, &with(10));
        table.store(&children[2].table_key(), 5, &with(50));
        assert_eq!(table.probe(&children[0].table_key(), 5), Some(with(100)));
        assert_eq!(table.probe(&children[1].table_key(), 5), None);
        assert_eq!(table.probe(&children[2].table_key(), 5), Some(with(50)));
        assert_eq!(table.fill(10), 1.0);
    }

    #[test]
    fn too_small_a_budget_is_refused() {
        assert!(StatsTable::<Reversi>::with_bytes(StatsTable::<Reversi>::bucket_bytes() - 1).is_none());
    }
}
