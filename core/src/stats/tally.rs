//! Leaves counted by kind: the [`Tally`] a game declares with `tally!`,
//! and [`LeafStats`], a count's leaves with their kinds.

use std::fmt::Debug;
use std::iter::Sum;
use std::ops::{Add, AddAssign, Mul};

use crate::count::Leaves;

/// Leaves counted by kind: one game's statistics. Each count is part of the
/// leaves, so none can pass the leaf total; sums and products are checked.
pub trait Tally: Copy + Default + Eq + Debug + Send + Sync + 'static {
    /// The kinds' names in column order, as JSON and CSV print them.
    const KINDS: &'static [&'static str];

    /// The counts, in the order of [`Tally::KINDS`].
    fn counts(&self) -> Vec<u128>;

    /// The tally of `counts` given in the order of [`Tally::KINDS`], or
    /// `None` when there are not exactly that many.
    fn from_counts(counts: &[u128]) -> Option<Self>;

    /// The sum, or `None` when a count does not fit in `u128`.
    fn checked_add(self, rhs: Self) -> Option<Self>;

    /// The tally of a subtree reached by `n` paths, or `None` past `u128`.
    fn checked_mul(self, n: u128) -> Option<Self>;

    /// Whether the counts can be those of a tree of `leaves` leaves: none
    /// above the total, and totals equal to their parts. What a count from
    /// outside the process is checked with.
    fn is_consistent(&self, leaves: &Leaves) -> bool {
        none_above(&self.counts(), leaves.leaves)
    }
}

/// Whether no count is above `most`, one count at a time. Every value
/// passes through `black_box`, so no vectorizer merges the comparisons:
/// merged, LLVM 22's vector-combine pass never finishes on them
/// (llvm/llvm-project#211984, Rust 1.95) and the release build hangs. A
/// cold check: once per count that comes from outside the process.
#[inline(never)]
pub(crate) fn none_above(counts: &[u128], most: u128) -> bool {
    counts.iter().all(|&n| std::hint::black_box(n) <= most)
}

/// The sum of `parts`, or `None` past `u128`, one part at a time for the
/// same reason as [`none_above`].
#[inline(never)]
pub(crate) fn checked_sum(parts: &[u128]) -> Option<u128> {
    parts
        .iter()
        .try_fold(0u128, |sum, &n| sum.checked_add(std::hint::black_box(n)))
}

/// Declares a [`Tally`]: a struct of `u128` counts, one per kind, named as
/// its fields and documented by their doc comments. The struct must also
/// have an inherent `parts_add_up(&self) -> bool`: whether the counts that
/// are sums of others (chess's totals) or parts of others (en passant of
/// captures) are.
macro_rules! tally {
    ($(#[$doc:meta])* $name:ident { $($(#[$field_doc:meta])* $field:ident),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
        pub struct $name {
            $($(#[$field_doc])* pub $field: u128,)+
        }

        impl $crate::stats::Tally for $name {
            const KINDS: &'static [&'static str] = &[$(stringify!($field)),+];

            fn counts(&self) -> Vec<u128> {
                vec![$(self.$field),+]
            }

            fn from_counts(counts: &[u128]) -> Option<$name> {
                let mut counts = counts.iter().copied();
                let tally = $name { $($field: counts.next()?,)+ };
                counts.next().is_none().then_some(tally)
            }

            fn checked_add(self, rhs: $name) -> Option<$name> {
                Some($name { $($field: self.$field.checked_add(rhs.$field)?,)+ })
            }

            fn checked_mul(self, n: u128) -> Option<$name> {
                Some($name { $($field: self.$field.checked_mul(n)?,)+ })
            }

            fn is_consistent(&self, leaves: &$crate::Leaves) -> bool {
                $crate::stats::none_above(&[$(self.$field),+], leaves.leaves) && self.parts_add_up()
            }
        }
    };
}
pub(crate) use tally;

/// The leaves below a node and how many of them are of each kind.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LeafStats<T> {
    /// All leaves, as [`perft`](crate::perft()) counts them.
    pub leaves: Leaves,
    /// The leaves by kind.
    pub kinds: T,
}

impl<T: Tally> LeafStats<T> {
    /// The sum, or `None` when a count does not fit in `u128`.
    pub fn checked_add(self, rhs: LeafStats<T>) -> Option<LeafStats<T>> {
        Some(LeafStats {
            leaves: self.leaves.checked_add(rhs.leaves)?,
            kinds: self.kinds.checked_add(rhs.kinds)?,
        })
    }

    /// The statistics of a subtree reached by `n` paths, or `None` past
    /// `u128`.
    pub fn checked_mul(self, n: u128) -> Option<LeafStats<T>> {
        Some(LeafStats {
            leaves: self.leaves.checked_mul(n)?,
            kinds: self.kinds.checked_mul(n)?,
        })
    }

    /// Whether the kinds fit the leaves ([`Tally::is_consistent`]) and the
    /// game-over part fits the whole.
    pub fn is_consistent(&self) -> bool {
        self.leaves.is_consistent() && self.kinds.is_consistent(&self.leaves)
    }
}

/// Sums never wrap: every count is part of the leaves, which the depth
/// limits keep inside `u128`, so passing it is a bug and stops. Counts from
/// outside the process are summed with [`LeafStats::checked_add`].
impl<T: Tally> Add for LeafStats<T> {
    type Output = LeafStats<T>;
    fn add(self, rhs: LeafStats<T>) -> LeafStats<T> {
        self.checked_add(rhs).expect("leaf statistics overflow u128")
    }
}

impl<T: Tally> AddAssign for LeafStats<T> {
    fn add_assign(&mut self, rhs: LeafStats<T>) {
        *self = *self + rhs;
    }
}

/// A subtree counted once and reached by `n` paths weighs `n` times.
impl<T: Tally> Mul<u128> for LeafStats<T> {
    type Output = LeafStats<T>;
    fn mul(self, n: u128) -> LeafStats<T> {
        self.checked_mul(n).expect("leaf statistics overflow u128")
    }
}

impl<T: Tally> Sum for LeafStats<T> {
    fn sum<I: Iterator<Item = LeafStats<T>>>(iter: I) -> LeafStats<T> {
        iter.fold(LeafStats::default(), Add::add)
    }
}
