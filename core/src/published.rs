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
