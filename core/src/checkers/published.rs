//! Checkers' published counts from the start: Aart Bik's table, depths
//! 0-28, and divide tables for depths 18-28.

use crate::count::Leaves;
use crate::published::{Published, depths, number, row_at, rows};

const START: &str = include_str!("../../data/checkers-start.tsv");
const DIVIDE: &str = include_str!("../../data/checkers-divide.tsv");

/// The table at `depth`, with the divide where one was published.
pub(super) fn start(depth: u32) -> Option<Published> {
    let total = row_at(START, depth)?;
    let header = DIVIDE
        .lines()
        .find(|line| !line.starts_with('#'))
        .unwrap_or_default();
    let column = header.split('\t').position(|name| name == format!("d{depth}"));
    let divide = column.map(|col| {
        rows(DIVIDE)
            .map(|row| (row[0].to_owned(), number(row[col])))
            .collect()
    });
    Some(Published {
        total: Leaves::full(number(total[1])),
        divide,
    })
}

/// The depths of the table.
pub(super) fn start_depths() -> Vec<u32> {
    depths(START)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_parses_and_divides_sum_to_totals() {
        assert_eq!(start_depths(), (0..=28).collect::<Vec<_>>());
        assert_eq!(start(12).unwrap().divide, None);
        for depth in 18..=28 {
            let p = start(depth).unwrap();
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
