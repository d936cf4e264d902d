//! The transposition table: hits are exact under concurrent writers, its
//! size stays within the budget, and counts are the same with and without
//! it, on one thread or several.

use perft_core::table::{Layout, MIN_STORED_DEPTH, SHALLOWEST_STORED_DEPTH, StoredCount, TableKey};
use perft_core::{
    Checkers, Chess, Counter, Game, PreparedTable, Reversi, TranspositionTable, divide, divide_parallel,
    perft,
};

/// The count a stress-test writer stores for (key, depth): any function of
/// both, so a hit can be checked against it.
fn expected(key: &[u64; 2], depth: u32) -> StoredCount {
    let mix = key[0].wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ key[1].rotate_left(17)
        ^ (u64::from(depth) * 0x1234_5677);
    StoredCount {
        leaves: mix,
        higher: mix & 0xFFFF,
    }
}

/// Four threads each make 300,000 random stores and probes of `keys` at 4
/// depths, storing `count_of(key, depth)`: every hit must be exactly that,
/// and there must be hits to check.
fn race<K: TableKey + std::fmt::Debug>(
    table: &TranspositionTable,
    keys: &[K],
    count_of: impl Fn(&K, u32) -> StoredCount + Sync,
) {
    let count_of = &count_of;
    let hits: u64 = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..4u64)
            .map(|thread| {
                scope.spawn(move || {
                    let mut hits = 0u64;
                    let mut state = thread + 1;
                    for _ in 0..300_000 {
                        state = state
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        let key = &keys[(state >> 33) as usize % keys.len()];
                        let depth = MIN_STORED_DEPTH + (state >> 20) as u32 % 4;
                        // A prefetch, as the recursion makes ahead of its
                        // probes, under the same contention.
                        table.prefetch(key);
                        if state & (1 << 40) != 0 {
                            table.store(key, depth, count_of(key, depth));
                        } else if let Some(found) = table.probe(key, depth) {
                            assert_eq!(found, count_of(key, depth), "hit for {key:?} at depth {depth}");
                            hits += 1;
                        }
                    }
                    hits
                })
            })
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).sum()
    });
    assert!(hits > 1000, "the race must produce hits to check, got {hits}");
}

#[test]
fn racing_writers_and_readers_only_ever_see_what_was_stored() {
    // 4 buckets (64 bytes go to alignment), 64 keys x 4 depths: constant
    // eviction and contention.
    let table = TranspositionTable::with_bytes(5 * 64, 2).unwrap();
    assert_eq!(table.entries(), 8);
    let keys: Vec<[u64; 2]> = (0..64u64).map(|i| [i * 0x0101_0101, !i]).collect();
    race(&table, &keys, expected);
}

#[test]
fn a_hit_needs_the_same_key_and_depth() {
    let table = TranspositionTable::with_bytes(1 << 16, 2).unwrap();
    let count = StoredCount {
        leaves: 42,
        higher: 3,
    };
    // A prefetch is a hint: it stores nothing and finds nothing.
    table.prefetch(&[1, 2]);
    assert_eq!(table.probe(&[1, 2], 5), None);
    table.store(&[1, 2], 5, count);
    table.prefetch(&[1, 2]);
    assert_eq!(table.probe(&[1, 2], 5), Some(count));
    assert_eq!(table.probe(&[1, 2], 6), None);
    assert_eq!(table.probe(&[1, 3], 5), None);
    assert_eq!(table.probe(&[2, 2], 5), None);
    // Shallow subtrees are not stored.
    table.store(&[7, 7], SHALLOWEST_STORED_DEPTH - 1, count);
    assert_eq!(table.probe(&[7, 7], SHALLOWEST_STORED_DEPTH - 1), None);
}

#[test]
fn compact_racing_writers_and_readers_only_ever_see_what_was_stored() {
    // 3-word keys with the leaves in the meta word: two entries, one bucket,
    // to a cache line; 4 buckets, 64 keys x 4 depths.
    let table = TranspositionTable::with_layout(5 * 64, Layout::compact(3)).unwrap();
    assert_eq!((table.entries(), table.bucket_bytes()), (8, 64));
    let keys: Vec<[u64; 3]> = (0..64u64).map(|i| [i * 0x0101_0101, !i, i << 7]).collect();
    let count_of = |key: &[u64; 3], depth: u32| StoredCount {
        leaves: expected(&[key[0], key[1] ^ key[2]], depth).leaves >> 9,
        higher: 0,
    };
    race(&table, &keys, count_of);
}

#[test]
fn a_compact_entry_keeps_only_what_fits() {
    let table = TranspositionTable::with_layout(1 << 16, Layout::compact(3)).unwrap();
    let most = StoredCount {
        leaves: (1 << 55) - 1,
        higher: 0,
    };
    table.store(&[1, 2, 3], 9, most);
    assert_eq!(table.probe(&[1, 2, 3], 9), Some(most));
    assert_eq!(table.probe(&[1, 2, 3], 8), None);
    assert_eq!(table.probe(&[1, 2, 4], 9), None);
    // Too many leaves, or game-over leaves: not stored, never cut short.
    let too_many = StoredCount {
        leaves: 1 << 55,
        higher: 0,
    };
    table.store(&[4, 5, 6], 9, too_many);
    assert_eq!(table.probe(&[4, 5, 6], 9), None);
    table.store(
        &[7, 8, 9],
        9,
        StoredCount {
            leaves: 10,
            higher: 1,
        },
    );
    assert_eq!(table.probe(&[7, 8, 9], 9), None);
    // Chess is laid out compact, Reversi (game-over leaves) and checkers
    // (2-word keys already pack two to a line) wide.
    assert_eq!(Layout::of::<Chess>(), Layout::compact(3));
    assert_eq!(Layout::of::<Reversi>(), Layout::wide(2));
    assert_eq!(Layout::of::<Checkers>(), Layout::wide(2));
    assert_eq!(
        TranspositionTable::for_game::<Chess>(1 << 16)
            .unwrap()
            .bucket_bytes(),
        64
    );
}

#[test]
fn table_never_exceeds_its_budget() {
    for bytes in [256u64, 1000, 4096, 1 << 20, (1 << 20) + 100, 3 << 30] {
        for key_words in [2, 4] {
            let table = TranspositionTable::with_bytes(bytes, key_words).unwrap();
            let bucket = table.bucket_bytes();
            assert_eq!(bucket % 64, 0, "buckets are whole cache lines");
            assert_eq!(bucket, if key_words == 2 { 64 } else { 128 });
            assert!(table.bytes() <= bytes, "{} > {bytes}", table.bytes());
            assert!(
                table.bytes() + bucket + 64 > bytes,
                "{} wastes budget {bytes}",
                table.bytes()
            );
            assert!(table.entries() * (key_words as u64 + 2) * 8 <= table.bytes());
        }
    }
    assert!(TranspositionTable::with_bytes(127, 2).is_none());
    // A table spanning several huge pages asks for them (on Linux), and the
    // advice leaves it working.
    let big = TranspositionTable::with_bytes(16 << 20, 2).unwrap();
    assert_eq!(big.huge_pages_advised(), cfg!(target_os = "linux"));
    #[cfg(target_os = "linux")]
    assert!(
        huge_page_advice_in_smaps(),
        "the kernel lists no mapping of 8 MiB or more advised for huge pages"
    );
    big.store(&[3, 4], 9, StoredCount { leaves: 5, higher: 0 });
    assert_eq!(big.probe(&[3, 4], 9), Some(StoredCount { leaves: 5, higher: 0 }));
    assert!(TranspositionTable::with_bytes(128, 2).is_some());
}

/// Same counts with a table (small, so it evicts), without, and threaded.
fn check_same_counts<G: Game>(pos: &G, depth: u32) {
    let plain = divide(pos, depth);
    let table = TranspositionTable::with_bytes(1 << 16, std::mem::size_of::<G::Key>() / 8).unwrap();
    let mut counter = Counter::new(Some(&table));
    assert_eq!(
        counter.perft(pos, depth),
        plain.total,
        "{pos} depth {depth} with table"
    );
    assert!(depth < G::MIN_STORED_DEPTH || counter.stats.probes > 0);
    for threads in [1, 3] {
        for table in [None, Some(&table)] {
            let (threaded, _) = divide_parallel::<_, perft_core::Plain>(pos, depth, threads, table).unwrap();
            assert_eq!(threaded, plain, "{pos} depth {depth}, {threads} threads");
        }
    }
}

#[test]
fn counts_are_the_same_with_and_without_table_and_threads_from_the_start() {
    check_same_counts(&Reversi::start(), 9);
    check_same_counts(&Checkers::start(), 10);
    check_same_counts(&Chess::start(), 5);
    let kiwipete: Chess = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
        .parse()
        .unwrap();
    check_same_counts(&kiwipete, 4);
}

#[test]
fn counts_are_the_same_with_and_without_table_and_threads_from_random_positions() {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for round in 0..12 {
        let mut reversi = Reversi::start();
        let mut checkers = Checkers::start();
        let mut chess = Chess::start();
        for _ in 0..(next() % 40) {
            let moves: Vec<_> = reversi.legal_moves().into_iter().collect();
            if let Some(&mv) = moves.get(next() as usize % moves.len().max(1)) {
                reversi = reversi.play(mv);
            }
            let moves: Vec<_> = checkers.legal_moves().into_iter().collect();
            if let Some(&mv) = moves.get(next() as usize % moves.len().max(1)) {
                checkers = checkers.play(mv);
            }
            let moves: Vec<_> = chess.legal_moves().into_iter().collect();
            if let Some(&mv) = moves.get(next() as usize % moves.len().max(1)) {
                chess = chess.play(mv);
            }
        }
        check_same_counts(&reversi, 5 + round % 3);
        check_same_counts(&checkers, 6 + round % 3);
        check_same_counts(&chess, 3 + round % 2);
    }
}

#[test]
fn game_over_counts_survive_the_table() {
    // Late Reversi positions end games inside the tree: their `higher`
    // leaves must come back from the table unchanged.
    let pos: Reversi = "XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXO-O--O---O--- X"
        .parse()
        .unwrap();
    let plain = perft(&pos, 8);
    assert!(plain.higher > 0, "the test position must end games: {plain:?}");
    check_same_counts(&pos, 8);
}

/// Whether the kernel shows a mapping of at least 8 MiB with the huge-page
/// advice flag (`hg` in `VmFlags`): the advice really reached it.
#[cfg(target_os = "linux")]
fn huge_page_advice_in_smaps() -> bool {
    let smaps = std::fs::read_to_string("/proc/self/smaps").expect("smaps is readable");
    let mut size_kib = 0u64;
    for line in smaps.lines() {
        if let Some(size) = line.strip_prefix("Size:") {
            size_kib = size.trim().trim_end_matches("kB").trim().parse().unwrap_or(0);
        }
        if let Some(flags) = line.strip_prefix("VmFlags:")
            && size_kib >= 8 << 10
            && flags.split_whitespace().any(|flag| flag == "hg")
        {
            return true;
        }
    }
    false
}

/// A table emptied for another game keeps its memory and counts exactly.
#[test]
fn a_reset_table_is_empty_and_counts_the_new_game_exactly() {
    let mut table = TranspositionTable::for_game::<Reversi>(1 << 20).unwrap();
    let (bytes, entries) = (table.bytes(), table.entries());
    Counter::new(Some(&table)).perft(&Reversi::start(), 7);
    assert!(table.fill(1000) > 0.0);
    table.reset_for_game::<Checkers>();
    assert_eq!(
        (table.bytes(), table.entries(), table.fill(1000)),
        (bytes, entries, 0.0)
    );
    assert_eq!(
        Counter::new(Some(&table)).perft(&Checkers::start(), 9),
        perft(&Checkers::start(), 9)
    );
}

/// A table emptied for a game of another key width (Reversi's two words,
/// chess's four) takes that game's layout whole and counts exactly.
#[test]
fn a_table_reset_for_a_wider_key_counts_exactly() {
    let mut table = TranspositionTable::for_game::<Reversi>(1 << 20).unwrap();
    Counter::new(Some(&table)).perft(&Reversi::start(), 7);
    table.reset_for_game::<perft_core::Chess>();
    let start = perft_core::Chess::start();
    assert_eq!(
        Counter::new(Some(&table)).perft(&start, 5),
        perft_core::GameKind::Chess.fns().published(5).unwrap().total
    );
    assert!(table.bytes() <= 1 << 20);
    table.reset_for_game::<Checkers>();
    assert_eq!(
        Counter::new(Some(&table)).perft(&Checkers::start(), 9),
        perft(&Checkers::start(), 9)
    );
}

/// A prepared table (its memory faulted in by several threads before the
/// game is known) is empty, as large as a table made for the game, never
/// over the budget, and counts each game exactly.
#[test]
fn a_prepared_table_takes_any_game_empty_and_counts_exactly() {
    // A budget that is not a whole number of pages or buckets.
    let budget = (3 << 20) + 4100;
    let prepared = PreparedTable::allocate(budget, 3);
    assert!(prepared.bytes() <= budget);
    let table = prepared.for_game::<Chess>().unwrap();
    let made = TranspositionTable::for_game::<Chess>(budget).unwrap();
    assert_eq!(table.entries(), made.entries());
    assert!(table.bytes() <= budget);
    assert_eq!(table.fill(1000), 0.0);
    assert_eq!(
        Counter::new(Some(&table)).perft(&Chess::start(), 5),
        perft_core::GameKind::Chess.fns().published(5).unwrap().total
    );

    let table = PreparedTable::allocate(budget, 1).for_game::<Checkers>().unwrap();
    assert_eq!(
        table.entries(),
        TranspositionTable::for_game::<Checkers>(budget)
            .unwrap()
            .entries()
    );
    assert_eq!(
        Counter::new(Some(&table)).perft(&Checkers::start(), 9),
        perft(&Checkers::start(), 9)
    );
    assert!(PreparedTable::allocate(64, 2).for_game::<Reversi>().is_none());
}
