//! The shipped EPD perft suites (core/data/*-suite.epd) counted exactly:
//! chess's 128 positions to depth 4, our Reversi and checkers suites in
//! full, and the checkers start line against Bik's published table.

use perft_core::{Checkers, Chess, Game, Leaves, Reversi, parse_suite, perft};

/// Counts every line of `suite` as `G` up to `max_depth`.
fn check_suite<G: Game>(suite: &str, max_depth: u32) -> usize {
    let lines = parse_suite(suite).expect("a shipped suite parses");
    let mut checked = 0;
    for line in &lines {
        let pos: G = line
            .position
            .parse()
            .unwrap_or_else(|e| panic!("line {}: {e}", line.line));
        for &(depth, expected) in line.expected.iter().filter(|&&(d, _)| d <= max_depth) {
            assert_eq!(
                perft(&pos, depth),
                Leaves {
                    leaves: expected,
                    higher: perft(&pos, depth).higher
                },
                "line {} depth {depth}: {}",
                line.line,
                line.position
            );
            checked += 1;
        }
    }
    checked
}

#[test]
fn the_chess_suite_to_depth_4() {
    let checked = check_suite::<Chess>(include_str!("../../data/chess-suite.epd"), 4);
    assert!(checked > 400, "{checked} counts");
}

#[test]
fn the_reversi_suite_in_full() {
    assert_eq!(
        check_suite::<Reversi>(include_str!("../../data/reversi-suite.epd"), 8),
        40
    );
}

#[test]
fn the_checkers_suite_in_full_and_its_start_as_published() {
    let suite = include_str!("../../data/checkers-suite.epd");
    assert_eq!(check_suite::<Checkers>(suite, 9), 45);
    let start = &parse_suite(suite).unwrap()[0];
    assert_eq!(start.position.parse::<Checkers>().unwrap(), Checkers::start());
    for &(depth, expected) in &start.expected {
        let published = Checkers::published(depth).expect("Bik's table has depths 1-9");
        assert_eq!(published.total.leaves, expected, "depth {depth}");
    }
}
