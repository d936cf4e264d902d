//! Every published count from the start position that a test can afford,
//! from the reference tables shipped in `core/data` (never read from outside
//! the repository).

use perft_core::{Checkers, Game, GameKind, Leaves, Reversi, divide, perft};

/// Reversi depths up to 11 (212,258,800 leaves, 228 of them game-over).
#[test]
fn reversi_start_matches_published_table_through_depth_11() {
    for depth in GameKind::Reversi
        .fns()
        .published_depths()
        .into_iter()
        .filter(|&d| d <= 11)
    {
        let expected = GameKind::Reversi.fns().published(depth).unwrap().total;
        assert_eq!(perft(&Reversi::start(), depth), expected, "reversi depth {depth}");
    }
    assert_eq!(perft(&Reversi::start(), 11).full_depth(), 212_258_572);
}

/// Checkers depths up to 12: depth 12 (388,623,673) is the first that tells
/// kept duplicate captures from removed ones.
#[test]
fn checkers_start_matches_published_table_through_depth_12() {
    for depth in GameKind::Checkers
        .fns()
        .published_depths()
        .into_iter()
        .filter(|&d| d <= 12)
    {
        let expected = GameKind::Checkers.fns().published(depth).unwrap().total;
        assert_eq!(
            perft(&Checkers::start(), depth),
            expected,
            "checkers depth {depth}"
        );
    }
}

/// Divide lines sum to the total, and each line is perft of its child.
#[test]
fn divide_lines_sum_to_the_total() {
    let reversi = divide(&Reversi::start(), 9);
    assert_eq!(reversi.moves.len(), 4);
    assert_eq!(
        reversi.moves.iter().map(|&(_, n)| n).sum::<Leaves>(),
        reversi.total
    );
    assert_eq!(reversi.total, Leaves::full(3_005_288));
    // The four first moves are symmetric: each has a quarter.
    for &(_, n) in &reversi.moves {
        assert_eq!(n, Leaves::full(3_005_288 / 4));
    }
    let checkers = divide(&Checkers::start(), 10);
    assert_eq!(checkers.moves.len(), 7);
    assert_eq!(checkers.total, Leaves::full(18_391_564));
    assert_eq!(
        checkers.moves.iter().map(|&(_, n)| n).sum::<Leaves>(),
        checkers.total
    );
    for &(mv, n) in &checkers.moves {
        assert_eq!(n, perft(&Checkers::start().play(mv), 9));
    }
}
