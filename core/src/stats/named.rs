//! Statistics with their kinds named, for code that learns the game at run
//! time: the CLI prints them, and a cluster can carry and sum them per
//! unit ([`count_packed_stats`] counts one packed position).

use super::{GameStats, LeafStats, Tally, perft_stats};
use crate::count::Leaves;
use crate::game::UnpackError;

/// Leaves and their counts by kind, the kinds named ([`Tally::KINDS`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedStats {
    /// All leaves.
    pub leaves: Leaves,
    /// The kinds, in column order.
    pub kinds: &'static [&'static str],
    /// One count per kind, in the order of `kinds`.
    pub counts: Vec<u128>,
}

impl NamedStats {
    /// The named form of `stats`.
    pub fn of<T: Tally>(stats: &LeafStats<T>) -> NamedStats {
        NamedStats {
            leaves: stats.leaves,
            kinds: T::KINDS,
            counts: stats.kinds.counts(),
        }
    }

    /// The typed form, or `None` when the kinds are not `T`'s.
    pub fn typed<T: Tally>(&self) -> Option<LeafStats<T>> {
        if self.kinds != T::KINDS {
            return None;
        }
        Some(LeafStats {
            leaves: self.leaves,
            kinds: T::from_counts(&self.counts)?,
        })
    }

    /// The sum, or `None` when the kinds differ or a count passes `u128`.
    pub fn checked_add(&self, rhs: &NamedStats) -> Option<NamedStats> {
        if self.kinds != rhs.kinds || self.counts.len() != rhs.counts.len() {
            return None;
        }
        let counts = self
            .counts
            .iter()
            .zip(&rhs.counts)
            .map(|(a, b)| a.checked_add(*b))
            .collect::<Option<Vec<u128>>>()?;
        Some(NamedStats {
            leaves: self.leaves.checked_add(rhs.leaves)?,
            kinds: self.kinds,
            counts,
        })
    }

    /// The statistics of a subtree reached by `n` paths, or `None` past
    /// `u128`.
    pub fn checked_mul(&self, n: u128) -> Option<NamedStats> {
        let counts = self
            .counts
            .iter()
            .map(|c| c.checked_mul(n))
            .collect::<Option<Vec<u128>>>()?;
        Some(NamedStats {
            leaves: self.leaves.checked_mul(n)?,
            kinds: self.kinds,
            counts,
        })
    }

    /// The count of `kind`, if the statistics have that kind.
    pub fn get(&self, kind: &str) -> Option<u128> {
        let i = self.kinds.iter().position(|&k| k == kind)?;
        self.counts.get(i).copied()
    }
}

/// Why a packed position could not be counted with statistics.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StatsRequestError {
    /// The bytes are no position of the game.
    #[error(transparent)]
    Unpack(#[from] UnpackError),
    /// The depth is past the game's limit.
    #[error("depth {depth} is above the {game} limit of {max}")]
    Depth {
        /// [`Game::NAME`](crate::Game::NAME).
        game: &'static str,
        /// The depth asked.
        depth: u32,
        /// [`Game::MAX_DEPTH`](crate::Game::MAX_DEPTH).
        max: u32,
    },
}

/// The statistics of the packed position `bytes` counted `depth` plies deep,
/// on one thread without a table: one unit of a distributed count. Units
/// need a ply (`depth >= 1`): at depth 0 a position knows its own kinds (a
/// game over) but not those of the move that led to it. Reached at run time
/// through [`GameFns::count_packed_stats`](crate::GameFns::count_packed_stats).
pub fn count_packed_stats<G: GameStats>(bytes: &[u8], depth: u32) -> Result<NamedStats, StatsRequestError> {
    if depth > G::MAX_DEPTH {
        return Err(StatsRequestError::Depth {
            game: G::NAME,
            depth,
            max: G::MAX_DEPTH,
        });
    }
    let pos = G::unpack(bytes)?;
    Ok(NamedStats::of(&perft_stats(&pos, depth)))
}
