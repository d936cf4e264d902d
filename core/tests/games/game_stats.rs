//! Reversi and checkers statistics against naive reference movers that
//! share no code with the engine (`tests/reference/`), in both Reversi
//! conventions; the leaf totals against the plain count; every kernel,
//! with and without a table, and the planned divide against the raw one.

use crate::reference::{checkers, reversi};
use perft_core::checkers::CheckersStats;
use perft_core::reversi::ReversiStats;
use perft_core::stats::StatsRequestError;
use perft_core::{ByKind, divide_parallel, divide_plan, weighted_sum};
use perft_core::{
    Checkers, Chess, CountOverflow, Game, GameKind, GameStats, Kernel, LeafStats, Leaves, NamedStats, Plan,
    Reversi, ReversiOeis, StatsCounter, StatsTable, Weight, divide_stats, perft, perft_stats,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The statistics of `pos` to `depth` on every kernel this CPU runs, with
/// and without a table: all equal, and their leaves the plain count's.
fn engine<G: GameStats>(pos: &G, depth: u32) -> LeafStats<G::Stats> {
    let expected = perft_stats(pos, depth);
    assert_eq!(expected.leaves, perft(pos, depth), "{pos} depth {depth}: leaves");
    assert!(expected.is_consistent(), "{pos} depth {depth}");
    assert_eq!(
        divide_stats(pos, depth).total,
        expected,
        "{pos} depth {depth}: divide"
    );
    let table = StatsTable::<G>::with_bytes(1 << 20).expect("1 MiB holds buckets");
    for kernel in Kernel::available() {
        for table in [None, Some(&table)] {
            let mut counter = StatsCounter::with_kernel(table, kernel).expect("available");
            // Twice, so the second count reads the table.
            for _ in 0..2 {
                assert_eq!(
                    counter.count(pos, depth),
                    expected,
                    "{pos} depth {depth} on {kernel}"
                );
            }
        }
    }
    expected
}

/// A late Reversi game: discs at random with 2-10 squares left (fewer
/// where two fall on one), so that passes and game overs abound within a
/// few plies.
fn late_reversi(rng: &mut StdRng) -> String {
    let empty = rng.random_range(2..=10);
    let mut cells: Vec<char> = (0..64)
        .map(|_| if rng.random::<bool>() { 'X' } else { 'O' })
        .collect();
    for _ in 0..empty {
        let at = rng.random_range(0..64);
        cells[at] = '-';
    }
    let side = if rng.random::<bool>() { 'X' } else { 'O' };
    format!("{} {side}", cells.iter().collect::<String>())
}

#[test]
fn reversi_statistics_match_the_reference_in_both_conventions() {
    let mut rng = StdRng::seed_from_u64(23);
    let (mut passes, mut game_overs, mut higher) = (0u128, 0u128, 0u128);
    let mut texts: Vec<String> = (0..40).map(|_| late_reversi(&mut rng)).collect();
    texts.push(Reversi::start().to_string());
    for text in &texts {
        let cells = reversi::cells_of(text);
        let pos: Reversi = text.parse().expect("a valid board");
        for depth in 0..=6 {
            let bik = engine(&pos, depth);
            let oeis = engine(&ReversiOeis(pos), depth);
            for (stats, is_bik) in [(bik, true), (oeis, false)] {
                let reference = reversi::reference_stats(&cells, depth, is_bik, false);
                let expected = LeafStats {
                    leaves: reference.leaves,
                    kinds: ReversiStats {
                        passes: reference.passes,
                        game_overs: reference.game_overs,
                    },
                };
                assert_eq!(stats, expected, "{text} depth {depth} bik {is_bik}");
            }
            passes += bik.kinds.passes;
            game_overs += bik.kinds.game_overs;
            higher += bik.leaves.higher;
        }
    }
    // The boards are late enough for every kind to be met often.
    eprintln!("{passes} passes, {game_overs} game overs ({higher} higher) compared");
    assert!(passes > 100 && game_overs > 100 && higher > 10);
}

/// A124004 counts nothing for a game over one ply above full depth, where
/// Bik's convention counts a leaf: their published depth-10 counts differ
/// by exactly the games over at ply 9, the first ply where one can end.
#[test]
fn reversi_game_overs_at_ply_9_are_what_the_conventions_differ_by_at_10() {
    let bik = Reversi::published(10).expect("published").total.leaves;
    let oeis = ReversiOeis::published(10).expect("published").total.leaves;
    let ply_9 = perft_stats(&Reversi::start(), 9);
    assert_eq!(ply_9.kinds.game_overs, bik - oeis);
    assert_eq!(ply_9.leaves.higher, 0);
    let ply_8 = engine(&Reversi::start(), 8);
    assert_eq!(ply_8.leaves.leaves, 390_216);
    assert_eq!(ply_8.kinds, ReversiStats::default());
}

/// In Bik's convention every game over at ply `d` or before is a leaf of
/// perft(d) (one ply above full depth, behind its final pass), and exactly
/// the "higher" leaves of perft(d + 2): the published table gives both.
#[test]
fn reversi_game_overs_are_the_published_higher_leaves_two_plies_deeper() {
    let table = StatsTable::<Reversi>::with_bytes(64 << 20).unwrap();
    for depth in 9..=11 {
        let higher = Reversi::published(depth + 2).expect("published").total.higher;
        let (divide, _) = divide_parallel::<_, ByKind>(&Reversi::start(), depth, 2, Some(&table)).unwrap();
        assert_eq!(divide.total.kinds.game_overs, higher, "depth {depth}");
        assert_eq!(
            divide.total.leaves,
            perft(&Reversi::start(), depth),
            "depth {depth}"
        );
    }
}

/// A checkers board at random: men and kings of both sides anywhere legal
/// (a man on its crowning row becomes a king), at most twelve a side.
fn random_checkers(rng: &mut StdRng) -> String {
    let (mut dark, mut light) = (Vec::new(), Vec::new());
    for square in 1..=32u32 {
        let roll = rng.random_range(0..100);
        let (list, crown_row) = match roll {
            0..=17 => (&mut dark, 29..=32),
            18..=35 => (&mut light, 1..=4),
            _ => continue,
        };
        if list.len() == 12 {
            continue;
        }
        let king = rng.random_range(0..4) == 0 || crown_row.contains(&square);
        list.push(format!("{}{square}", if king { "K" } else { "" }));
    }
    let side = if rng.random::<bool>() { 'B' } else { 'W' };
    format!("{side}:W{}:B{}", light.join(","), dark.join(","))
}

fn checkers_expected(fen: &str, depth: u32) -> LeafStats<CheckersStats> {
    let reference = checkers::reference_stats(&checkers::parse(fen), depth);
    LeafStats {
        leaves: Leaves::full(reference.leaves),
        kinds: CheckersStats {
            captures: reference.captures,
            multi_jumps: reference.multi_jumps,
            crownings: reference.crownings,
        },
    }
}

#[test]
fn checkers_reference_agrees_with_the_published_start() {
    let start = checkers::parse("B:W21-32:B1-12");
    let leaves: Vec<u128> = (0..=7)
        .map(|d| checkers::reference_stats(&start, d).leaves)
        .collect();
    assert_eq!(leaves, [1, 7, 49, 302, 1469, 7361, 36768, 179740]);
}

#[test]
fn checkers_statistics_match_the_reference() {
    let mut fens: Vec<String> = perft_core::parse_suite(include_str!("../../data/checkers-suite.epd"))
        .expect("the shipped suite parses")
        .into_iter()
        .map(|line| line.position)
        .collect();
    let mut rng = StdRng::seed_from_u64(28);
    fens.extend((0..30).map(|_| random_checkers(&mut rng)));
    let (mut captures, mut multi_jumps, mut crownings) = (0u128, 0u128, 0u128);
    for (i, fen) in fens.iter().enumerate() {
        let pos: Checkers = fen.parse().unwrap_or_else(|e| panic!("{fen}: {e}"));
        let deepest = if i == 0 { 7 } else { 5 };
        for depth in 0..=deepest {
            let stats = engine(&pos, depth);
            assert_eq!(stats, checkers_expected(fen, depth), "{fen} depth {depth}");
            captures += stats.kinds.captures;
            multi_jumps += stats.kinds.multi_jumps;
            crownings += stats.kinds.crownings;
        }
    }
    eprintln!("{captures} captures, {multi_jumps} multi-jumps, {crownings} crownings compared");
    assert!(captures > 1000 && multi_jumps > 100 && crownings > 100);
}

#[test]
fn chess_statistics_agree_on_every_kernel_and_with_a_table() {
    let kiwipete: Chess = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
        .parse()
        .unwrap();
    let s = engine(&kiwipete, 4);
    assert_eq!(s.leaves.leaves, 4_085_603);
}

/// Game-over nodes above the split depth are settled while planning: the
/// planned divide counts their statistics as the raw one does.
#[test]
fn a_planned_divide_settles_game_overs_as_the_raw_one_counts_them() {
    let mut rng = StdRng::seed_from_u64(5);
    let mut settled = 0;
    for _ in 0..60 {
        let text = late_reversi(&mut rng);
        let pos: Reversi = text.parse().unwrap();
        if pos.legal_moves().into_iter().next().is_none() {
            continue;
        }
        let plan = Plan::new(pos, 5, 3).expect("plannable");
        settled += plan.settled_nodes().len();
        let table = StatsTable::<Reversi>::with_bytes(1 << 20).unwrap();
        let (planned, _) = divide_plan::<_, ByKind>(&plan, 2, Some(&table));
        assert_eq!(planned, divide_stats(&pos, 5), "{text}");
    }
    assert!(settled > 0, "some games end above the split");
}

#[test]
fn named_statistics_count_a_packed_position_and_refuse_bad_requests() {
    let kinds = GameKind::Chess.stats_kinds();
    assert_eq!(kinds[0], "captures");
    let chess = GameKind::Chess.fns();
    let bytes = chess.pack_text("").unwrap();
    let named = chess.count_packed_stats(&bytes, 3).unwrap();
    assert_eq!(named, NamedStats::of(&perft_stats(&Chess::start(), 3)));
    assert_eq!(named.get("captures"), Some(34));
    assert_eq!(named.get("total_checks"), Some(12));
    assert_eq!(named.get("passes"), None);
    // Summing units: twice the start is twice every count.
    let doubled = named.checked_add(&named).unwrap();
    assert_eq!(doubled, named.checked_mul(2).unwrap());
    assert_eq!(
        doubled
            .typed::<perft_core::chess::ChessStats>()
            .unwrap()
            .kinds
            .captures,
        68
    );
    // Statistics of different games do not add.
    let reversi = GameKind::Reversi.fns();
    let reversi = reversi
        .count_packed_stats(&reversi.pack_text("").unwrap(), 2)
        .unwrap();
    assert_eq!(named.checked_add(&reversi), None);
    assert!(named.checked_mul(u128::MAX).is_none());
    // Hostile requests: short bytes, too deep, a convention for chess.
    assert!(matches!(
        chess.count_packed_stats(&bytes[1..], 1),
        Err(StatsRequestError::Unpack(_))
    ));
    assert_eq!(
        chess.count_packed_stats(&bytes, 17).unwrap_err().to_string(),
        "depth 17 is above the chess limit of 16"
    );
    assert!(matches!(
        GameKind::Chess.fns_in(Some(perft_core::Convention::Oeis)),
        Err(perft_core::ConventionRefused { .. })
    ));
    // The OEIS convention is its own game type.
    let oeis = GameKind::Reversi
        .fns_in(Some(perft_core::Convention::Oeis))
        .unwrap()
        .count_packed_stats(&GameKind::Reversi.fns().pack_text("").unwrap(), 4)
        .unwrap();
    assert_eq!(oeis.leaves.leaves, 244);
}

#[test]
fn weighted_sums_of_unit_statistics_are_checked() {
    let unit = perft_stats(&Checkers::start(), 3);
    let weights = [
        Weight {
            first_move: 0,
            paths: 2,
        },
        Weight {
            first_move: 1,
            paths: 1,
        },
    ];
    let settled = vec![LeafStats::default(); 2];
    let sums = weighted_sum(&settled, [(&weights[..], unit)]).unwrap();
    assert_eq!(sums, [unit * 2, unit]);
    let huge = LeafStats {
        leaves: Leaves::full(u128::MAX / 2 + 1),
        kinds: CheckersStats::default(),
    };
    assert_eq!(weighted_sum(&settled, [(&weights[..], huge)]), Err(CountOverflow));
}
