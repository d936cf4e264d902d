//! Published perft counts from the standard starts, shipped in the crate
//! (`core/data/*.tsv`), for `perft verify` and the tests.
//!
//! Reversi: Aart Bik's table, depths 1-14 with the game-over split, and
//! OEIS A124004 (the other convention), terms 0-21.
//! Checkers: Bik's table, depths 0-28, and divide tables for depths 18-28.
//! Chess: the start position to depth 15 and five other standard positions.
//! Each game reaches its own tables through
//! [`Game::published`](crate::Game::published).

use crate::count::Leaves;

const REVERSI_START: &str = include_str!("../data/reversi-start.tsv");
const REVERSI_OEIS: &str = include_str!("../data/reversi-oeis-a124004.tsv");
const CHECKERS_START: &str = include_str!("../data/checkers-start.tsv");
const CHECKERS_DIVIDE: &str = include_str!("../data/checkers-divide.tsv");
const CHESS_PUBLISHED: &str = include_str!("../data/chess-published.tsv");

/// One row of the chess table: a named position, a depth, its leaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PositionRow {
    /// `start`, `kiwipete`, `position3`, ...
    pub name: &'static str,
    /// The position as a six-field FEN.
    pub fen: &'static str,
    /// Plies counted.
    pub depth: u32,
    /// Leaves at that depth.
    pub leaves: u128,
}

/// The chess table: the start position to depth 15 and the five other
/// standard test positions (the Chess Programming Wiki's "Perft Results").
pub fn chess_rows() -> impl Iterator<Item = PositionRow> {
    rows(CHESS_PUBLISHED).map(|row| PositionRow {
        name: row[0],
        fen: row[1],
        depth: number(row[2]) as u32,
        leaves: number(row[3]),
    })
}

/// Data rows of a reference table: comments and the header skipped.
fn rows(tsv: &str) -> impl Iterator<Item = Vec<&str>> {
    tsv.lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .skip(1)
        .map(|line| line.split('\t').collect())
}

fn number(field: &str) -> u128 {
    // The tables are part of the crate and checked by its tests.
    field
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("published table holds '{field}'"))
}

/// The published counts of one depth from the start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    /// The total, with the game-over split where it was published.
    pub total: Leaves,
    /// Leaves per first move where a divide table was published.
    pub divide: Option<Vec<(String, u128)>>,
}

/// Reversi from the start at `depth`: Bik's table, with the game-over split.
pub(crate) fn reversi_start(depth: u32) -> Option<Published> {
    rows(REVERSI_START)
        .find(|row| number(row[0]) == u128::from(depth))
        .map(|row| Published {
            total: Leaves {
                leaves: number(row[1]),
                higher: number(row[3]),
            },
            divide: None,
        })
}

/// Reversi from the start at `depth` in OEIS A124004's convention (terms
/// 0-21, totals only).
pub(crate) fn reversi_oeis_start(depth: u32) -> Option<Published> {
    rows(REVERSI_OEIS)
        .find(|row| number(row[0]) == u128::from(depth))
        .map(|row| Published {
            total: Leaves::full(number(row[1])),
            divide: None,
        })
}

/// The terms of A124004 shipped.
pub(crate) fn reversi_oeis_depths() -> Vec<u32> {
    rows(REVERSI_OEIS).map(|row| number(row[0]) as u32).collect()
}

/// Checkers from the start at `depth`, with the divide where published.
pub(crate) fn checkers_start(depth: u32) -> Option<Published> {
    let total = rows(CHECKERS_START).find(|row| number(row[0]) == u128::from(depth))?;
    let header = CHECKERS_DIVIDE
        .lines()
        .find(|line| !line.starts_with('#'))
        .unwrap_or_default();
    let column = header.split('\t').position(|name| name == format!("d{depth}"));
    let divide = column.map(|col| {
        rows(CHECKERS_DIVIDE)
            .map(|row| (row[0].to_owned(), number(row[col])))
            .collect()
    });
    Some(Published {
        total: Leaves::full(number(total[1])),
        divide,
    })
}

/// Chess from the start at `depth`.
pub(crate) fn chess_start(depth: u32) -> Option<Published> {
    chess_rows()
        .find(|row| row.name == "start" && row.depth == depth)
        .map(|row| Published {
            total: Leaves::full(row.leaves),
            divide: None,
        })
}

/// The depths of the Reversi table.
pub(crate) fn reversi_depths() -> Vec<u32> {
    rows(REVERSI_START).map(|row| number(row[0]) as u32).collect()
}

/// The depths of the checkers table.
pub(crate) fn checkers_depths() -> Vec<u32> {
    rows(CHECKERS_START).map(|row| number(row[0]) as u32).collect()
}

/// The depths of the chess start position's rows.
pub(crate) fn chess_depths() -> Vec<u32> {
    chess_rows()
        .filter(|row| row.name == "start")
        .map(|row| row.depth)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_parse_and_divides_sum_to_totals() {
        assert_eq!(reversi_depths(), (1..=14).collect::<Vec<_>>());
        assert_eq!(checkers_depths(), (0..=28).collect::<Vec<_>>());
        let d11 = reversi_start(11).unwrap();
        assert_eq!(
            d11.total,
            Leaves {
                leaves: 212_258_800,
                higher: 228
            }
        );
        assert!(reversi_start(15).is_none());
        assert_eq!(chess_depths(), (1..=15).collect::<Vec<_>>());
        assert_eq!(
            chess_start(14).unwrap().total,
            Leaves::full(61_885_021_521_585_529_237)
        );
        assert_eq!(checkers_start(12).unwrap().divide, None);
        for depth in 18..=28 {
            let p = checkers_start(depth).unwrap();
            let divide = p.divide.unwrap();
            assert_eq!(divide.len(), 7);
            assert_eq!(
                divide.iter().map(|(_, n)| n).sum::<u128>(),
                p.total.leaves,
                "depth {depth}"
            );
        }
    }
}
