//! Chess statistics against the published tables: the Grand Chess Tree's
//! start position (`core/data/chess-start-stats.tsv`) column by column,
//! and the Chess Programming Wiki's positions 2-4
//! (`core/data/chess-cpw-stats.tsv`) to depth 4; the leaf totals against
//! the plain count everywhere.

use perft_core::chess::ChessStats;
use perft_core::chess::published_rows;
use perft_core::{ByKind, divide_parallel};
use perft_core::{Chess, Game, LeafStats, NamedStats, StatsTable, divide_stats, perft, perft_stats};

const START_STATS: &str = include_str!("../../data/chess-start-stats.tsv");
const CPW_STATS: &str = include_str!("../../data/chess-cpw-stats.tsv");

/// A table's rows as (column name, value) pairs; comments skipped.
fn table(tsv: &'static str) -> Vec<Vec<(&'static str, &'static str)>> {
    let mut lines = tsv
        .lines()
        .filter(|line| !line.starts_with('#') && !line.is_empty());
    let header: Vec<&str> = lines.next().expect("a header").split('\t').collect();
    lines
        .map(|line| {
            let fields: Vec<&str> = line.split('\t').collect();
            assert_eq!(fields.len(), header.len(), "{line}");
            header.iter().copied().zip(fields).collect()
        })
        .collect()
}

fn field<'a>(row: &[(&str, &'a str)], name: &str) -> &'a str {
    row.iter()
        .find(|(column, _)| *column == name)
        .unwrap_or_else(|| panic!("no column {name}"))
        .1
}

fn number(row: &[(&str, &str)], name: &str) -> u128 {
    field(row, name)
        .parse()
        .unwrap_or_else(|_| panic!("{name} is a number"))
}

fn parse(fen: &str) -> Chess {
    fen.parse().unwrap_or_else(|e| panic!("{fen}: {e}"))
}

/// Statistics as the command line counts them: planned, two threads, one
/// shared table; the leaves checked against the plain count.
fn counted(pos: &Chess, depth: u32) -> LeafStats<ChessStats> {
    let table = StatsTable::<Chess>::with_bytes(64 << 20).expect("64 MiB holds buckets");
    let (divide, _) = divide_parallel::<_, ByKind>(pos, depth, 2, Some(&table)).expect("plannable");
    assert_eq!(
        divide.total.leaves,
        perft(pos, depth),
        "{pos} depth {depth}: leaves"
    );
    assert!(divide.total.is_consistent(), "{pos} depth {depth}");
    divide.total
}

/// Every column of the Grand Chess Tree's table from depth 1 to `deepest`.
fn check_start_to(deepest: u32) {
    let start = Chess::start();
    let rows = table(START_STATS);
    assert_eq!(rows.len(), 12, "depths 1-12");
    for row in rows
        .iter()
        .filter(|row| number(row, "depth") <= u128::from(deepest))
    {
        let depth = number(row, "depth") as u32;
        let stats = NamedStats::of(&counted(&start, depth));
        assert_eq!(stats.leaves.leaves, number(row, "nodes"), "depth {depth}: nodes");
        for &(column, _) in row.iter().skip(2) {
            assert_eq!(
                stats.get(column),
                Some(number(row, column)),
                "depth {depth}: {column}"
            );
        }
    }
}

/// Depths 1-7: 3.3 billion leaves classified, 35 s on two cores shared
/// with other builds (load average 8) in the test profile (opt-level 3).
#[test]
fn the_start_matches_the_grand_chess_tree_to_depth_7() {
    check_start_to(7);
}

#[test]
fn the_table_header_names_the_kinds_in_order() {
    let header = START_STATS
        .lines()
        .find(|line| !line.starts_with('#'))
        .expect("a header");
    let columns: Vec<&str> = header.split('\t').skip(2).collect();
    assert_eq!(columns, <ChessStats as perft_core::Tally>::KINDS);
}

/// The Wiki's columns from ours: its checks count mates too, its double
/// checks are every check by two pieces, its discovery checks those by one
/// uncovered piece (mates excluded from both). Position 4's discovery and
/// double checks are zeros never filled in (see the data file and
/// [`position_4_has_discovered_checks_the_wiki_leaves_at_zero`]).
#[test]
fn kiwipete_and_positions_3_and_4_match_the_chess_programming_wiki() {
    let rows = table(CPW_STATS);
    assert_eq!(rows.len(), 12, "three positions, depths 1-4");
    for row in &rows {
        let pos = parse(field(row, "fen"));
        let depth = number(row, "depth") as u32;
        let s = counted(&pos, depth);
        let k = s.kinds;
        let at = format!("{} depth {depth}", field(row, "name"));
        assert_eq!(s.leaves.leaves, number(row, "nodes"), "{at}: nodes");
        assert_eq!(k.captures, number(row, "captures"), "{at}: captures");
        assert_eq!(k.enpassants, number(row, "enpassants"), "{at}: e.p.");
        assert_eq!(k.castles, number(row, "castles"), "{at}: castles");
        assert_eq!(k.promotions, number(row, "promotions"), "{at}: promotions");
        assert_eq!(
            k.total_checks + k.total_mates,
            number(row, "checks"),
            "{at}: checks"
        );
        assert_eq!(k.total_mates, number(row, "checkmates"), "{at}: checkmates");
        if field(row, "name") == "position4" {
            continue;
        }
        assert_eq!(
            k.single_discovered_checks,
            number(row, "discovery_checks"),
            "{at}: discovery checks"
        );
        assert_eq!(
            k.direct_discovered_checks + k.double_discovered_checks,
            number(row, "double_checks"),
            "{at}: double checks"
        );
    }
}

#[test]
fn position_4_has_discovered_checks_the_wiki_leaves_at_zero() {
    let pos = parse("r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1");
    let mut line = pos;
    for mv in ["c4c5", "e8e7"] {
        line = line.play(line.parse_move(mv).unwrap());
    }
    // cxb6 takes the bishop and opens b4-c5-d6-e7 to the white bishop.
    let s = perft_core::GameStats::move_kinds(&line, line.parse_move("c5b6").unwrap());
    assert_eq!(
        (s.captures, s.single_discovered_checks, s.total_checks),
        (1, 1, 1)
    );
    // Ke8-f8 instead meets the same bishop on f8: two at depth 3.
    assert_eq!(perft_stats(&pos, 3).kinds.single_discovered_checks, 2);
}

/// Every published position (position 5 and 6 have no statistics
/// published): the statistics' leaves are the published counts.
#[test]
fn leaves_with_statistics_are_the_published_counts() {
    for row in published_rows().filter(|row| row.depth <= 4) {
        let pos = parse(row.fen);
        assert_eq!(
            perft_stats(&pos, row.depth).leaves.leaves,
            row.leaves,
            "{} depth {}",
            row.name,
            row.depth
        );
    }
}

#[test]
fn en_passant_can_uncover_two_checkers() {
    // exd6 e.p. empties e5 (the rook on e8 checks along the file) and d5
    // (the bishop on c6 checks along the diagonal); the pawn on d6 does
    // not check. The king walks out: not mate. Bxd5+ is the other capture,
    // and a direct check.
    let pos = parse("4R3/8/2B5/3pP3/4k3/8/8/K7 w - d6 0 1");
    let s = perft_stats(&pos, 1).kinds;
    assert_eq!((s.enpassants, s.captures), (1, 2));
    assert_eq!(s.double_discovered_checks, 1);
    assert_eq!(s.total_checks, s.direct_checks + 1);
    assert_eq!(s.total_mates, 0);
}

#[test]
fn castling_checks_with_its_rook() {
    // O-O lands the rook on f1, giving check on the f-file: a direct check,
    // as are Rf1+ and Rh8+.
    let pos = parse("5k2/8/8/8/8/8/8/4K2R w K - 0 1");
    let s = perft_stats(&pos, 1).kinds;
    assert_eq!(s.castles, 1);
    assert_eq!(s.direct_checks, 3);
    assert_eq!(s.total_checks, 3);
}

#[test]
fn a_mate_is_counted_as_a_mate_only() {
    // Back-rank mate: Ra8# is the one mate; Ra7 and friends are quiet.
    let pos = parse("6k1/5ppp/8/8/8/8/8/R5K1 w - - 0 1");
    let s = perft_stats(&pos, 1).kinds;
    assert_eq!((s.direct_mates, s.total_mates), (1, 1));
    assert_eq!(s.total_checks, 0);
}

#[test]
fn the_divide_sums_to_the_total_and_matches_the_plain_divide() {
    let kiwipete = parse("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1");
    let raw = divide_stats(&kiwipete, 4);
    let plain = perft_core::divide(&kiwipete, 4);
    assert_eq!(raw.moves.len(), plain.moves.len());
    for ((mv, stats), (plain_mv, leaves)) in raw.moves.iter().zip(&plain.moves) {
        assert_eq!(mv, plain_mv);
        assert_eq!(stats.leaves, *leaves, "{}", kiwipete.format_move(*mv));
    }
    assert_eq!(
        raw.moves.iter().map(|&(_, s)| s).sum::<LeafStats<ChessStats>>(),
        raw.total
    );
    // Planned (units three plies deep, so the table is used) and
    // threaded, each first move's statistics are the same.
    let table = StatsTable::<Chess>::with_bytes(16 << 20).unwrap();
    let plan = perft_core::Plan::new(kiwipete, 4, 1).unwrap();
    let (planned, probes) = perft_core::divide_plan::<_, ByKind>(&plan, 2, Some(&table));
    assert_eq!(planned, raw);
    // One probe per unit (its children are too shallow to store).
    assert_eq!(probes.probes, 48);
}
