//! Chess's published counts: the start position to depth 15 and the five
//! other standard test positions (the Chess Programming Wiki's "Perft
//! Results").

use crate::count::Leaves;
use crate::published::{Published, number, rows};

const TABLE: &str = include_str!("../../data/chess-published.tsv");

/// One row of the table: a named position, a depth, its leaves.
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

/// Every row of the table.
pub fn published_rows() -> impl Iterator<Item = PositionRow> {
    rows(TABLE).map(|row| PositionRow {
        name: row[0],
        fen: row[1],
        depth: number(row[2]) as u32,
        leaves: number(row[3]),
    })
}

/// The start position at `depth`.
pub(super) fn start(depth: u32) -> Option<Published> {
    published_rows()
        .find(|row| row.name == "start" && row.depth == depth)
        .map(|row| Published {
            total: Leaves::full(row.leaves),
            divide: None,
        })
}

/// The depths of the start position's rows.
pub(super) fn start_depths() -> Vec<u32> {
    published_rows()
        .filter(|row| row.name == "start")
        .map(|row| row.depth)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_parses() {
        assert_eq!(start_depths(), (1..=15).collect::<Vec<_>>());
        assert_eq!(start(14).unwrap().total, Leaves::full(61_885_021_521_585_529_237));
    }
}
