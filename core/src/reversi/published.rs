//! Reversi's published counts from the start: Aart Bik's table, depths
//! 1-14 with the game-over split, and OEIS A124004 (the other convention),
//! terms 0-21, totals only.

use crate::count::Leaves;
use crate::published::{Published, depths, number, row_at};

const BIK: &str = include_str!("../../data/reversi-start.tsv");
const OEIS: &str = include_str!("../../data/reversi-oeis-a124004.tsv");

/// Bik's table at `depth`, with the game-over split.
pub(super) fn bik(depth: u32) -> Option<Published> {
    row_at(BIK, depth).map(|row| Published {
        total: Leaves {
            leaves: number(row[1]),
            higher: number(row[3]),
        },
        divide: None,
    })
}

/// The depths of Bik's table.
pub(super) fn bik_depths() -> Vec<u32> {
    depths(BIK)
}

/// A124004's term `depth`.
pub(super) fn oeis(depth: u32) -> Option<Published> {
    row_at(OEIS, depth).map(|row| Published {
        total: Leaves::full(number(row[1])),
        divide: None,
    })
}

/// The terms of A124004 shipped.
pub(super) fn oeis_depths() -> Vec<u32> {
    depths(OEIS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_tables_parse() {
        assert_eq!(bik_depths(), (1..=14).collect::<Vec<_>>());
        assert_eq!(
            bik(11).unwrap().total,
            Leaves {
                leaves: 212_258_800,
                higher: 228
            }
        );
        assert!(bik(15).is_none());
        assert_eq!(oeis_depths(), (0..=21).collect::<Vec<_>>());
        assert_eq!(oeis(0).unwrap().total, Leaves::full(1));
    }
}
