//! Every published count from the start position, read from the reference
//! tables copied into `tests/data` (never from outside the repository).

use perft_core::{Checkers, Game, Leaves, Reversi, divide, perft};

/// Rows of a reference TSV: comment lines and the header skipped.
fn rows(tsv: &str) -> Vec<Vec<&str>> {
    tsv.lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .skip(1)
        .map(|line| line.split('\t').collect())
        .collect()
}

fn count(field: &str) -> u128 {
    field.parse().expect("reference counts are decimal integers")
}

/// Reversi depths up to 11 (212,258,800 leaves, 228 of them game-over).
#[test]
fn reversi_start_matches_published_table_through_depth_11() {
    let table = rows(include_str!("data/reversi-start.tsv"));
    assert_eq!(table.len(), 14, "the reference lists depths 1-14");
    for row in table.iter().filter(|row| count(row[0]) <= 11) {
        let depth = count(row[0]) as u32;
        let expected = Leaves {
            leaves: count(row[1]),
            higher: count(row[3]),
        };
        let got = perft(&Reversi::start(), depth);
        assert_eq!(got, expected, "reversi depth {depth}");
        assert_eq!(
            got.full_depth(),
            count(row[2]),
            "reversi depth {depth} full depth"
        );
    }
}

/// Checkers depths up to 12: depth 12 (388,623,673) is the first that tells
/// kept duplicate captures from removed ones.
#[test]
fn checkers_start_matches_published_table_through_depth_12() {
    let table = rows(include_str!("data/checkers-start.tsv"));
    assert_eq!(table.len(), 29, "the reference lists depths 0-28");
    for row in table.iter().filter(|row| count(row[0]) <= 12) {
        let depth = count(row[0]) as u32;
        let got = perft(&Checkers::start(), depth);
        assert_eq!(got, Leaves::full(count(row[1])), "checkers depth {depth}");
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
