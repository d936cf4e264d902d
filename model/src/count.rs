//! A unit's count: its leaves and, in a statistics job, its leaves by
//! kind. Fixed-size and `Copy`, so votes, sums, divide lines and
//! certificates carry it as they carried bare leaves.

use perft_core::{GameFns, GameKind, LeafStats, Leaves, Tally};

/// Most kinds a game's statistics have (chess has 14); a test checks every
/// game of the registry fits.
pub const MAX_KINDS: usize = 16;

/// Leaves and, in a statistics job, their counts by kind in the game's
/// column order; kinds past `kinds_len` stay zero, so equality is the
/// counts' equality.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Count {
    pub leaves: Leaves,
    kinds_len: u8,
    kinds: [u128; MAX_KINDS],
}

impl Count {
    /// No leaves, no kinds.
    pub const ZERO: Count = Count {
        leaves: Leaves::ZERO,
        kinds_len: 0,
        kinds: [0; MAX_KINDS],
    };

    /// A count without kinds (a job without statistics).
    pub const fn plain(leaves: Leaves) -> Count {
        Count {
            leaves,
            kinds_len: 0,
            kinds: [0; MAX_KINDS],
        }
    }

    /// No leaves, with `kinds` kinds all zero (at most [`MAX_KINDS`]).
    pub fn zero(kinds: usize) -> Count {
        Count {
            kinds_len: kinds.min(MAX_KINDS) as u8,
            ..Count::ZERO
        }
    }

    /// Every count at `u128::MAX`, with `kinds` kinds: what a sum that
    /// overflowed (and failed its job) shows.
    pub fn saturated(kinds: usize) -> Count {
        let mut count = Count::zero(kinds);
        count.leaves = Leaves::full(u128::MAX);
        for k in &mut count.kinds[..usize::from(count.kinds_len)] {
            *k = u128::MAX;
        }
        count
    }

    /// Leaves with their counts by kind; `None` for more than [`MAX_KINDS`].
    pub fn with_kinds(leaves: Leaves, kinds: &[u128]) -> Option<Count> {
        let mut count = Count::zero(kinds.len());
        count.kinds.get_mut(..kinds.len())?.copy_from_slice(kinds);
        count.leaves = leaves;
        Some(count)
    }

    /// The counts by kind, in the game's column order (empty without
    /// statistics).
    pub fn kinds(&self) -> &[u128] {
        &self.kinds[..usize::from(self.kinds_len)]
    }

    /// The counts by kind, to change in place (how many there are stays).
    pub fn kinds_mut(&mut self) -> &mut [u128] {
        &mut self.kinds[..usize::from(self.kinds_len)]
    }

    /// The sum, or `None` when the two have different kinds or a count
    /// passes `u128`.
    pub fn checked_add(self, rhs: Count) -> Option<Count> {
        if self.kinds_len != rhs.kinds_len {
            return None;
        }
        let mut sum = self;
        sum.leaves = self.leaves.checked_add(rhs.leaves)?;
        for (a, b) in sum.kinds.iter_mut().zip(rhs.kinds) {
            *a = a.checked_add(b)?;
        }
        Some(sum)
    }

    /// The count of a subtree reached by `n` paths, or `None` past `u128`.
    pub fn checked_mul(self, n: u128) -> Option<Count> {
        let mut product = self;
        product.leaves = self.leaves.checked_mul(n)?;
        for k in &mut product.kinds {
            *k = k.checked_mul(n)?;
        }
        Some(product)
    }

    /// `leaves` with `kinds` as a count of a unit of a job that counts
    /// `wanted` kinds (0: a plain job) of `game`: what a count from outside
    /// (a worker's result, a certificate) must be. The error says what is
    /// wrong, for the sender.
    pub fn checked(
        leaves: Leaves,
        kinds: &[u128],
        game: &GameFns,
        wanted: usize,
    ) -> Result<Count, CountRefused> {
        let found = kinds.len();
        if found != wanted {
            return Err(match wanted {
                0 => CountRefused::UnwantedKinds { found },
                wanted => CountRefused::KindCount { wanted, found },
            });
        }
        if wanted > 0 && !game.kinds_fit(&leaves, kinds) {
            return Err(CountRefused::KindsDoNotFit);
        }
        Count::with_kinds(leaves, kinds).ok_or(CountRefused::TooManyKinds { kinds: wanted })
    }
}

/// Why a count from outside can be no count of a unit of its job.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CountRefused {
    #[error("the job counts no statistics, yet the count has {found} kinds")]
    UnwantedKinds { found: usize },
    #[error("the job counts {wanted} kinds of leaves, yet the count has {found}")]
    KindCount { wanted: usize, found: usize },
    #[error("its counts by kind cannot be those of its leaves")]
    KindsDoNotFit,
    #[error("{kinds} kinds, more than {MAX_KINDS}")]
    TooManyKinds { kinds: usize },
    #[error("{leaves} leaves, more than a unit of depth {depth} can have ({limit})")]
    TooManyLeaves { leaves: u128, depth: u32, limit: u128 },
    #[error(transparent)]
    Convention(#[from] perft_core::ConventionRefused),
}

impl From<Leaves> for Count {
    fn from(leaves: Leaves) -> Count {
        Count::plain(leaves)
    }
}

impl<T: Tally> From<LeafStats<T>> for Count {
    fn from(stats: LeafStats<T>) -> Count {
        Count::with_kinds(stats.leaves, &stats.kinds.counts())
            .expect("every game's kinds fit MAX_KINDS (tested)")
    }
}

/// How many kinds a job of `game` counts: the game's, or none without
/// statistics.
pub fn kinds_of(game: GameKind, stats: bool) -> usize {
    if stats { game.fns().stats_kinds().len() } else { 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_game_kinds_fit() {
        for &game in GameKind::ALL {
            assert!(kinds_of(game, true) <= MAX_KINDS, "{game}");
            assert!(kinds_of(game, true) > 0, "{game}");
            assert_eq!(kinds_of(game, false), 0);
        }
    }

    #[test]
    fn sums_keep_kinds_apart_and_never_wrap() {
        let l = |n| Leaves { leaves: n, higher: 0 };
        let a = Count::with_kinds(l(10), &[3, 4]).unwrap();
        let b = Count::with_kinds(l(5), &[1, 0]).unwrap();
        let sum = a.checked_add(b).unwrap();
        assert_eq!(sum.leaves.leaves, 15);
        assert_eq!(sum.kinds(), [4, 4]);
        assert_eq!(a.checked_mul(3).unwrap().kinds(), [9, 12]);
        assert_eq!(a.checked_add(Count::plain(l(1))), None);
        let big = Count::with_kinds(l(u128::MAX), &[u128::MAX, 0]).unwrap();
        assert_eq!(big.checked_add(b), None);
        assert_eq!(big.checked_mul(2), None);
        assert_eq!(Count::with_kinds(l(1), &[0; MAX_KINDS + 1]), None);
        assert_ne!(a, Count::with_kinds(l(10), &[3, 5]).unwrap());
    }

    #[test]
    fn a_count_from_outside_must_have_the_jobs_kinds() {
        let chess = GameKind::Chess.fns();
        let start = chess.pack_text("").unwrap();
        let truth = chess.count_packed_stats(&start, 3).unwrap();
        let count = Count::checked(truth.leaves, &truth.counts, chess, truth.counts.len()).unwrap();
        assert_eq!(count.kinds(), truth.counts.as_slice());
        let refused = |kinds: &[u128], wanted| {
            Count::checked(truth.leaves, kinds, chess, wanted)
                .unwrap_err()
                .to_string()
        };
        assert!(refused(&[], 14).contains("counts 14 kinds"));
        assert!(refused(&truth.counts, 0).contains("no statistics"));
        let mut forged = truth.counts.clone();
        forged[0] = truth.leaves.leaves + 1;
        assert!(refused(&forged, 14).contains("cannot be"));
    }
}
