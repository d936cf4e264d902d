//! Published perft counts: the vocabulary of the tables shipped in the
//! crate (`core/data/*.tsv`) for `perft verify` and the tests, and how their
//! rows are read. Each game loads its own tables in its folder and points
//! at them from [`Game::published`](crate::Game::published); code that
//! learns the game at run time reads them through
//! [`GameFns::published`](crate::GameFns::published).

use crate::count::Leaves;

/// The published counts of one depth from the start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Published {
    /// The total, with the game-over split where it was published.
    pub total: Leaves,
    /// Leaves per first move where a divide table was published.
    pub divide: Option<Vec<(String, u128)>>,
}

/// One published figure beside the one a count gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Compared {
    /// `total`, `higher` or the first move of a divide line.
    pub label: String,
    pub published: u128,
    pub counted: u128,
}

impl Compared {
    /// Whether the count gave what was published.
    pub fn matches(&self) -> bool {
        self.published == self.counted
    }
}

impl Published {
    /// Every published figure beside what a count of the same depth gave:
    /// the total, the game-over leaves when `with_higher` (games where a
    /// game over above full depth is a leaf), then each published divide
    /// line in its order (a first move the count lacks counted 0).
    pub fn compare(&self, total: Leaves, divide: &[(String, Leaves)], with_higher: bool) -> Vec<Compared> {
        let compared = |label: &str, published: u128, counted: u128| Compared {
            label: label.to_owned(),
            published,
            counted,
        };
        let mut all = vec![compared("total", self.total.leaves, total.leaves)];
        if with_higher {
            all.push(compared("higher", self.total.higher, total.higher));
        }
        for (first_move, published) in self.divide.iter().flatten() {
            let counted = divide
                .iter()
                .find(|(counted_move, _)| counted_move == first_move)
                .map_or(0, |(_, leaves)| leaves.leaves);
            all.push(compared(first_move, *published, counted));
        }
        all
    }
}

/// Data rows of a reference table, split at tabs: comments and the header
/// skipped.
pub(crate) fn rows(tsv: &str) -> impl Iterator<Item = Vec<&str>> {
    tsv.lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .skip(1)
        .map(|line| line.split('\t').collect())
}

/// A number of a reference table. The tables are part of the crate and
/// checked by its tests, so a bad field is a bug of the crate.
pub(crate) fn number(field: &str) -> u128 {
    field
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("published table holds '{field}'"))
}

/// The first column of every row of `tsv` (its depths).
pub(crate) fn depths(tsv: &str) -> Vec<u32> {
    rows(tsv).map(|row| number(row[0]) as u32).collect()
}

/// The row of `tsv` whose first column is `depth`.
pub(crate) fn row_at(tsv: &str, depth: u32) -> Option<Vec<&str>> {
    rows(tsv).find(|row| number(row[0]) == u128::from(depth))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_is_compared_figure_by_figure_and_a_missing_move_counts_nothing() {
        let published = Published {
            total: Leaves {
                leaves: 10,
                higher: 2,
            },
            divide: Some(vec![("a".to_owned(), 6), ("b".to_owned(), 4)]),
        };
        let divide = [("b".to_owned(), Leaves { leaves: 4, higher: 0 })];
        let compared = published.compare(
            Leaves {
                leaves: 10,
                higher: 1,
            },
            &divide,
            true,
        );
        let shown: Vec<(&str, u128, u128, bool)> = compared
            .iter()
            .map(|c| (c.label.as_str(), c.published, c.counted, c.matches()))
            .collect();
        assert_eq!(
            shown,
            [
                ("total", 10, 10, true),
                ("higher", 2, 1, false),
                ("a", 6, 0, false),
                ("b", 4, 4, true)
            ]
        );
        assert_eq!(
            published
                .compare(
                    Leaves {
                        leaves: 10,
                        higher: 1
                    },
                    &divide,
                    false
                )
                .len(),
            3
        );
    }
}
