//! The hard-collision-free transposition table shared by all threads.
//!
//! An entry keeps the whole normalised position (its key words), the
//! remaining depth and the counts: a hit needs the key and the depth to be
//! equal word for word, never a hash alone, so a collision cannot corrupt a
//! count. The hash only picks the bucket.
//!
//! Storage is a flat array of `AtomicU64`, its buckets aligned to 64-byte
//! cache lines and no entry straddling two: entries of 2-word keys (32
//! bytes) pack two to a line, wider ones take a line each, padded. A game
//! that has no game-over leaves may keep its count in the meta word
//! ([`Layout::of`]): a 3-word chess key then makes 32-byte entries, a whole
//! bucket in one line. A bucket holds [`BUCKET_ENTRIES`] entries behind one
//! lock bit:
//! a thread that finds the bucket locked treats a probe as a miss and skips a
//! store, so nobody ever waits and nobody ever reads a half-written entry.

use std::sync::atomic::{AtomicU64, Ordering};

pub use crate::table_key::{MIN_STORED_DEPTH, SHALLOWEST_STORED_DEPTH, TableKey};

/// Entries per bucket; a store replaces the one with the smallest subtree.
pub const BUCKET_ENTRIES: usize = 2;

/// Meta word: remaining depth in bits 0..8 (0 = empty), then the game-over
/// leaves in bits 8..56 (or, in a compact layout, all leaves in bits
/// 8..63), the bucket lock in bit 63 (of the bucket's first entry).
const DEPTH_MASK: u64 = 0xFF;
const HIGHER_SHIFT: u32 = 8;
const HIGHER_MAX: u64 = (1 << 48) - 1;
/// The most leaves a compact entry holds; bigger counts are not stored.
const COMPACT_LEAVES_MAX: u64 = (1 << 55) - 1;
const LOCK: u64 = 1 << 63;

/// Words from one entry to the next for entries of `entry_words` words:
/// as many as fit whole in a 64-byte line share it, else one line (or more)
/// each, so a probe never splits an entry across two lines.
const fn stride_of(entry_words: usize) -> usize {
    if 8 % entry_words == 0 {
        entry_words
    } else {
        entry_words.next_multiple_of(8)
    }
}

/// How entries are laid out: the key's width and where the counts go.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    /// Words of a key.
    key_words: usize,
    /// Whether the leaves share the meta word (no game-over leaves, at most
    /// [`COMPACT_LEAVES_MAX`] leaves) instead of having a word of their own.
    compact: bool,
}

impl Layout {
    /// Keys of `key_words` words, counts of every size with game-over
    /// leaves: a word for the leaves and one for depth and game-over leaves.
    pub const fn wide(key_words: usize) -> Layout {
        Layout {
            key_words,
            compact: false,
        }
    }

    /// Keys of `key_words` words, counts without game-over leaves in the
    /// meta word: one word per entry less.
    pub const fn compact(key_words: usize) -> Layout {
        Layout {
            key_words,
            compact: true,
        }
    }

    /// The layout for game `G`: compact where the game has no game-over
    /// leaves and the saved word packs more entries into a cache line.
    pub fn of<G: crate::Game>() -> Layout {
        let key_words = std::mem::size_of::<G::Key>() / 8;
        let compact = !G::GAME_OVER_IS_LEAF && stride_of(key_words + 1) < stride_of(key_words + 2);
        Layout { key_words, compact }
    }

    /// Words of an entry: the key, the leaves unless compact, the meta word.
    const fn entry_words(self) -> usize {
        self.key_words + if self.compact { 1 } else { 2 }
    }
}

/// Bytes one entry of game `G`'s keys takes, padding included: what the
/// default table size is reckoned in.
pub fn entry_bytes_of<G: crate::Game>() -> u64 {
    (stride_of(Layout::of::<G>().entry_words()) * 8) as u64
}

/// Mixes key words into a 64-bit hash (multiply-xorshift, per word); the
/// statistics table picks its buckets with it too.
#[inline(always)]
pub(crate) fn hash(words: &[u64]) -> u64 {
    let mut h = 0x243F_6A88_85A3_08D3u64;
    for &w in words {
        h = (h ^ w).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        h ^= h >> 29;
    }
    h = h.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    h ^ (h >> 32)
}

/// Starts loading the cache line holding `byte` (a hint only: it never
/// faults, whatever the address, and reads or writes nothing); the
/// statistics table prefetches its buckets with it too.
#[inline(always)]
pub(crate) fn prefetch_line(byte: *const u8) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        // SAFETY: prefetching needs SSE, which every x86-64 CPU has, and a
        // prefetch never faults, so any address is sound.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(byte.cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = byte;
}

/// Counts below a stored position: all leaves and the game-over part.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StoredCount {
    /// All leaves.
    pub leaves: u64,
    /// Game-over leaves above full depth.
    pub higher: u64,
}

/// The table. Its size is fixed at creation and never grows.
#[derive(Debug)]
pub struct TranspositionTable {
    words: Box<[AtomicU64]>,
    /// First word on a 64-byte boundary: where bucket 0 starts.
    base: usize,
    /// Words per entry: key words, the leaves unless compact, the meta word.
    entry_words: usize,
    /// Whether the leaves are kept in the meta word.
    compact: bool,
    /// Words from one entry's start to the next: `entry_words`, padded to
    /// a whole cache line when entries would otherwise straddle lines.
    stride: usize,
    key_words: usize,
    buckets: u64,
}

impl TranspositionTable {
    /// A table of at most `bytes` bytes for keys of `key_words` words in
    /// the [`Layout::wide`] layout, or `None` when that is not even one
    /// bucket.
    pub fn with_bytes(bytes: u64, key_words: usize) -> Option<TranspositionTable> {
        Self::with_layout(bytes, Layout::wide(key_words))
    }

    /// A table of at most `bytes` bytes laid out as `layout`, or `None`
    /// when that is not even one bucket.
    pub fn with_layout(bytes: u64, layout: Layout) -> Option<TranspositionTable> {
        let bucket_bytes = (stride_of(layout.entry_words()) * BUCKET_ENTRIES * 8) as u64;
        // 64 bytes of the budget go to aligning bucket 0 on a cache line.
        let buckets = bytes.saturating_sub(64) / bucket_bytes;
        (buckets > 0).then(|| Self::allocate(buckets, layout))
    }

    /// A table of at most `bytes` bytes for the keys of game `G`.
    pub fn for_game<G: crate::Game>(bytes: u64) -> Option<TranspositionTable> {
        Self::with_layout(bytes, Layout::of::<G>())
    }

    fn allocate(buckets: u64, layout: Layout) -> TranspositionTable {
        let words = buckets as usize * stride_of(layout.entry_words()) * BUCKET_ENTRIES + 8;
        Self::laid_out(zeroed_words(words), layout).expect("a table is allocated for at least one bucket")
    }

    /// Empty `words` laid out as `layout`: as many buckets as fit after the
    /// 8 words kept for aligning bucket 0 on a cache line; `None` when not
    /// even one does.
    fn laid_out(words: Box<[AtomicU64]>, layout: Layout) -> Option<TranspositionTable> {
        let entry_words = layout.entry_words();
        let stride = stride_of(entry_words);
        let buckets = (words.len().saturating_sub(8) / (stride * BUCKET_ENTRIES)) as u64;
        let misalignment = words.as_ptr() as usize % 64;
        let base = (64 - misalignment) % 64 / 8;
        (buckets > 0).then_some(TranspositionTable {
            words,
            base,
            entry_words,
            compact: layout.compact,
            stride,
            key_words: layout.key_words,
            buckets,
        })
    }

    /// Empties the table and lays it out again for the keys of game `G`, in
    /// the memory it already has. A worker switching games reuses its table
    /// this way rather than freeing it and faulting a new one in: on a VM
    /// that hands freed memory back to its host, that costs seconds of
    /// system time per GiB (see `BENCHMARKS.md`).
    pub fn reset_for_game<G: crate::Game>(&mut self) {
        for word in self.words.iter_mut() {
            *word.get_mut() = 0;
        }
        let layout = Layout::of::<G>();
        self.key_words = layout.key_words;
        self.entry_words = layout.entry_words();
        self.compact = layout.compact;
        // A wider key may need a wider stride: the layout is redone whole.
        self.stride = stride_of(self.entry_words);
        // `allocate` keeps 8 words for the alignment offset.
        self.buckets = ((self.words.len() - 8) / (self.stride * BUCKET_ENTRIES)) as u64;
    }

    /// Whether the operating system was asked to back the table with huge
    /// pages (Linux transparent huge pages).
    pub fn huge_pages_advised(&self) -> bool {
        huge_page_range(&self.words).is_some()
    }

    /// Bytes of the whole allocation.
    pub fn bytes(&self) -> u64 {
        (self.words.len() * 8) as u64
    }

    /// Number of entries.
    pub fn entries(&self) -> u64 {
        self.buckets * BUCKET_ENTRIES as u64
    }

    #[inline(always)]
    fn word(&self, index: usize) -> &AtomicU64 {
        &self.words[self.base + index]
    }

    /// First word of the bucket of `key`.
    #[inline(always)]
    fn bucket_of(&self, words: &[u64]) -> usize {
        let index = ((u128::from(hash(words)) * u128::from(self.buckets)) >> 64) as usize;
        index * self.stride * BUCKET_ENTRIES
    }

    /// Bytes of one bucket (a whole number of cache lines).
    pub fn bucket_bytes(&self) -> u64 {
        (self.stride * BUCKET_ENTRIES * 8) as u64
    }

    /// Index of the lock word: the meta word of the bucket's first entry.
    #[inline(always)]
    fn lock_index(&self, bucket: usize) -> usize {
        bucket + self.entry_words - 1
    }

    #[inline(always)]
    fn try_lock(&self, bucket: usize) -> Option<u64> {
        let lock = self.word(self.lock_index(bucket));
        let meta = lock.load(Ordering::Relaxed);
        if meta & LOCK != 0 {
            return None;
        }
        lock.compare_exchange_weak(meta, meta | LOCK, Ordering::Acquire, Ordering::Relaxed)
            .ok()
    }

    #[inline(always)]
    fn unlock(&self, bucket: usize, first_meta: u64) {
        self.word(self.lock_index(bucket))
            .store(first_meta & !LOCK, Ordering::Release);
    }

    /// Whether the entry at `entry`, whose meta word is `meta`, holds
    /// exactly `words` at `depth`. Racy unless the bucket is locked.
    #[inline(always)]
    fn matches(&self, entry: usize, meta: u64, words: &[u64], depth: u32) -> bool {
        meta & DEPTH_MASK == u64::from(depth)
            && words
                .iter()
                .enumerate()
                .all(|(i, &w)| self.word(entry + i).load(Ordering::Relaxed) == w)
    }

    /// The meta word of `slot` in a bucket locked by us: the first slot's
    /// is the lock word, as read when locking.
    #[inline(always)]
    fn meta_of(&self, entry: usize, slot: usize, first_meta: u64) -> u64 {
        if slot == 0 {
            first_meta
        } else {
            self.word(entry + self.entry_words - 1).load(Ordering::Relaxed)
        }
    }

    /// Starts loading the bucket of `key` into the cache, so that a probe
    /// of it a little later does not wait on memory. A hint only: nothing
    /// is read or written, and it may be dropped.
    #[inline(always)]
    pub fn prefetch<K: TableKey>(&self, key: &K) {
        // Every bucket starts on a cache line; buckets wider than one line
        // (no game has them yet) are found with one miss more.
        prefetch_line(self.word(self.bucket_of(key.words())) as *const AtomicU64 as *const u8);
    }

    /// The counts stored for exactly this key and depth, if any.
    #[inline]
    pub fn probe<K: TableKey>(&self, key: &K, depth: u32) -> Option<StoredCount> {
        let words = key.words();
        debug_assert_eq!(words.len(), self.key_words);
        let bucket = self.bucket_of(words);
        // A look without the lock first: a miss, the common case, then never
        // writes the bucket's cache line. A match is confirmed under the lock.
        let seems_stored = (0..BUCKET_ENTRIES).any(|slot| {
            let entry = bucket + slot * self.stride;
            self.matches(
                entry,
                self.word(entry + self.entry_words - 1).load(Ordering::Relaxed),
                words,
                depth,
            )
        });
        if !seems_stored {
            return None;
        }
        let first_meta = self.try_lock(bucket)?;
        let found = (0..BUCKET_ENTRIES).find_map(|slot| {
            let entry = bucket + slot * self.stride;
            let meta = self.meta_of(entry, slot, first_meta);
            self.matches(entry, meta, words, depth)
                .then(|| self.count_of(entry, meta))
        });
        self.unlock(bucket, first_meta);
        found
    }

    /// The counts of the entry at `entry`, whose meta word is `meta`.
    #[inline(always)]
    fn count_of(&self, entry: usize, meta: u64) -> StoredCount {
        if self.compact {
            StoredCount {
                leaves: (meta & !LOCK) >> HIGHER_SHIFT,
                higher: 0,
            }
        } else {
            StoredCount {
                leaves: self.word(entry + self.key_words).load(Ordering::Relaxed),
                higher: (meta & !LOCK) >> HIGHER_SHIFT,
            }
        }
    }

    /// Whether an entry can hold `count`.
    #[inline(always)]
    fn holds(&self, count: StoredCount) -> bool {
        if self.compact {
            count.higher == 0 && count.leaves <= COMPACT_LEAVES_MAX
        } else {
            count.higher <= HIGHER_MAX
        }
    }

    /// Stores a complete count, replacing the entry of the same key and
    /// depth, else the one with the fewest leaves. Depths below
    /// [`SHALLOWEST_STORED_DEPTH`] and counts the entry cannot hold are
    /// skipped.
    #[inline]
    pub fn store<K: TableKey>(&self, key: &K, depth: u32, count: StoredCount) {
        if depth < SHALLOWEST_STORED_DEPTH || depth > DEPTH_MASK as u32 || !self.holds(count) {
            return;
        }
        let words = key.words();
        debug_assert_eq!(words.len(), self.key_words);
        let bucket = self.bucket_of(words);
        let Some(first_meta) = self.try_lock(bucket) else {
            return;
        };
        let mut victim = 0;
        let mut smallest = u64::MAX;
        for slot in 0..BUCKET_ENTRIES {
            let entry = bucket + slot * self.stride;
            let meta = self.meta_of(entry, slot, first_meta);
            if self.matches(entry, meta, words, depth) {
                victim = slot;
                break;
            }
            let leaves = if meta & DEPTH_MASK == 0 {
                0
            } else {
                self.count_of(entry, meta).leaves
            };
            if leaves < smallest {
                smallest = leaves;
                victim = slot;
            }
        }
        let entry = bucket + victim * self.stride;
        for (i, &w) in words.iter().enumerate() {
            self.word(entry + i).store(w, Ordering::Relaxed);
        }
        let meta = if self.compact {
            u64::from(depth) | (count.leaves << HIGHER_SHIFT)
        } else {
            self.word(entry + self.key_words)
                .store(count.leaves, Ordering::Relaxed);
            u64::from(depth) | (count.higher << HIGHER_SHIFT)
        };
        if victim == 0 {
            self.unlock(bucket, meta);
        } else {
            self.word(entry + self.entry_words - 1)
                .store(meta, Ordering::Relaxed);
            self.unlock(bucket, first_meta);
        }
    }

    /// Share of entries in use, from a sample of up to `sample` buckets
    /// spread over the table.
    pub fn fill(&self, sample: u64) -> f64 {
        let step = (self.buckets / sample.max(1)).max(1);
        let (mut used, mut seen) = (0u64, 0u64);
        let mut bucket = 0;
        while bucket < self.buckets {
            let first = bucket as usize * self.stride * BUCKET_ENTRIES;
            for slot in 0..BUCKET_ENTRIES {
                let meta = self
                    .word(first + slot * self.stride + self.entry_words - 1)
                    .load(Ordering::Relaxed);
                used += u64::from(meta & DEPTH_MASK != 0);
                seen += 1;
            }
            bucket += step;
        }
        used as f64 / seen.max(1) as f64
    }
}

/// `len` zero words, the table's empty state, advised onto huge pages.
fn zeroed_words(len: usize) -> Box<[AtomicU64]> {
    // Plain `AtomicU64` alignment keeps this a lazy `calloc`: the
    // allocator memsets over-aligned zeroed allocations eagerly.
    let zeroed = Box::<[AtomicU64]>::new_zeroed_slice(len);
    // SAFETY: all-zero bytes are the valid `AtomicU64` value 0, which is
    // an empty entry in an unlocked bucket. Untouched zero pages cost no
    // memory, so a large table costs nothing until it fills.
    let words = unsafe { zeroed.assume_init() };
    advise_huge_pages(&words);
    words
}

/// A table's memory, faulted in ahead of its first count and never used
/// yet. Faulting a large table in while counting makes the first job pay
/// for every page (seconds per GiB on a VM, and the page faults serialise
/// the threads), so a worker prepares its table before it asks for work.
/// The game is not known then: [`PreparedTable::for_game`] lays the memory
/// out for the first game to arrive, without emptying it again, since a
/// table no count has used is all zero.
#[derive(Debug)]
pub struct PreparedTable {
    words: Box<[AtomicU64]>,
}

impl PreparedTable {
    /// At most `bytes` bytes of table memory, every page of it touched by
    /// `threads` threads (writing the zero it already holds).
    pub fn allocate(bytes: u64, threads: usize) -> PreparedTable {
        let len = usize::try_from(bytes / 8).unwrap_or(usize::MAX);
        let words = zeroed_words(len);
        // One word a 4 KiB page: the least that makes the kernel back it.
        const PAGE_WORDS: usize = 4096 / 8;
        let chunk = len
            .div_ceil(threads.max(1))
            .next_multiple_of(PAGE_WORDS)
            .max(PAGE_WORDS);
        std::thread::scope(|scope| {
            for part in words.chunks(chunk) {
                scope.spawn(move || {
                    for word in part.iter().step_by(PAGE_WORDS).chain(part.last()) {
                        word.store(0, Ordering::Relaxed);
                    }
                });
            }
        });
        PreparedTable { words }
    }

    /// Bytes of the memory.
    pub fn bytes(&self) -> u64 {
        (self.words.len() * 8) as u64
    }

    /// The memory as an empty table for game `G`: as many entries as
    /// [`TranspositionTable::for_game`] gives for the same bytes, or `None`
    /// when that is not even one bucket.
    pub fn for_game<G: crate::Game>(self) -> Option<TranspositionTable> {
        TranspositionTable::laid_out(self.words, Layout::of::<G>())
    }
}

/// Size of a transparent huge page on x86-64 and aarch64 Linux.
const HUGE_PAGE: usize = 2 << 20;

/// The huge-page-aligned part of `words` (address and length), if any.
fn huge_page_range(words: &[AtomicU64]) -> Option<(usize, usize)> {
    let start = words.as_ptr() as usize;
    let end = start + std::mem::size_of_val(words);
    let first = start.next_multiple_of(HUGE_PAGE);
    let last = end / HUGE_PAGE * HUGE_PAGE;
    (cfg!(target_os = "linux") && last > first).then(|| (first, last - first))
}

/// Asks Linux to back the table with huge pages: a random probe then costs
/// fewer TLB misses, and filling the table takes 512 times fewer page
/// faults, which otherwise serialise the threads in the kernel.
fn advise_huge_pages(words: &[AtomicU64]) {
    #[cfg(target_os = "linux")]
    if let Some((first, len)) = huge_page_range(words) {
        // SAFETY: [first, first + len) lies inside the live allocation
        // `words`; MADV_HUGEPAGE changes only how pages are backed, never
        // their contents, so no Rust reference is affected. A failure (no
        // THP support) leaves ordinary pages, which is harmless.
        unsafe {
            libc::madvise(first as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = words;
}
