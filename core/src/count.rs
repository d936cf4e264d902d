//! Leaf counts: `u128` totals that cannot overflow on published depths, with
//! the game-over leaves ("higher") kept apart.

use std::iter::Sum;
use std::ops::{Add, AddAssign, Mul};

/// Leaves below a node. `leaves` counts every leaf; `higher` is the part of it
/// made of game-over nodes met above full depth (Reversi), so the full-depth
/// leaves are `leaves - higher`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Leaves {
    /// All leaves: full-depth nodes plus game-over nodes above full depth.
    pub leaves: u128,
    /// Game-over nodes reached before full depth (always 0 for checkers).
    pub higher: u128,
}

impl Leaves {
    /// No leaf at all.
    pub const ZERO: Leaves = Leaves { leaves: 0, higher: 0 };

    /// Leaves that all lie at full depth.
    pub const fn full(n: u128) -> Leaves {
        Leaves { leaves: n, higher: 0 }
    }

    /// The leaves that lie at full depth (`higher <= leaves` for every
    /// count the engine makes; a foreign count is checked with
    /// [`Leaves::is_consistent`] first).
    pub const fn full_depth(&self) -> u128 {
        self.leaves.saturating_sub(self.higher)
    }

    /// True when the game-over part does not exceed the whole.
    pub const fn is_consistent(&self) -> bool {
        self.higher <= self.leaves
    }

    /// The sum, or `None` when it does not fit in `u128`.
    pub fn checked_add(self, rhs: Leaves) -> Option<Leaves> {
        Some(Leaves {
            leaves: self.leaves.checked_add(rhs.leaves)?,
            higher: self.higher.checked_add(rhs.higher)?,
        })
    }

    /// The count of a subtree reached by `n` paths, or `None` when it does
    /// not fit in `u128`.
    pub fn checked_mul(self, n: u128) -> Option<Leaves> {
        Some(Leaves {
            leaves: self.leaves.checked_mul(n)?,
            higher: self.higher.checked_mul(n)?,
        })
    }
}

/// Sums of counts never wrap: one past `u128` is a bug or a forged count,
/// and stops rather than giving a wrong number. Code that sums counts from
/// outside the process uses [`Leaves::checked_add`] instead.
impl Add for Leaves {
    type Output = Leaves;
    fn add(self, rhs: Leaves) -> Leaves {
        self.checked_add(rhs).expect("leaf count overflows u128")
    }
}

impl AddAssign for Leaves {
    fn add_assign(&mut self, rhs: Leaves) {
        *self = *self + rhs;
    }
}

/// A subtree counted once and reached by `n` paths weighs `n` times its count.
impl Mul<u128> for Leaves {
    type Output = Leaves;
    fn mul(self, n: u128) -> Leaves {
        self.checked_mul(n).expect("leaf count overflows u128")
    }
}

impl Sum for Leaves {
    fn sum<I: Iterator<Item = Leaves>>(iter: I) -> Leaves {
        iter.fold(Leaves::ZERO, Add::add)
    }
}

/// The hot-loop form of [`Leaves`]: two `u64`, cheap to add. Sums above
/// depth 2 are checked, and an overflow sends the caller to the `u128` path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Leaves64 {
    pub(crate) leaves: u64,
    pub(crate) higher: u64,
}

impl Leaves64 {
    pub(crate) const ZERO: Leaves64 = Leaves64 { leaves: 0, higher: 0 };

    pub(crate) const fn full(n: u64) -> Leaves64 {
        Leaves64 { leaves: n, higher: 0 }
    }

    pub(crate) const HIGHER_ONE: Leaves64 = Leaves64 { leaves: 1, higher: 1 };

    /// Adds without overflow checks: only for sums bounded by construction
    /// (the children of a depth-2 node).
    #[inline(always)]
    pub(crate) fn add_small(self, rhs: Leaves64) -> Leaves64 {
        Leaves64 {
            leaves: self.leaves.wrapping_add(rhs.leaves),
            higher: self.higher.wrapping_add(rhs.higher),
        }
    }

    /// Adds, or `None` when the total no longer fits in a `u64`
    /// (`higher <= leaves`, so checking `leaves` covers both).
    #[inline(always)]
    pub(crate) fn checked_add(self, rhs: Leaves64) -> Option<Leaves64> {
        Some(Leaves64 {
            leaves: self.leaves.checked_add(rhs.leaves)?,
            higher: self.higher + rhs.higher,
        })
    }
}

impl From<Leaves64> for Leaves {
    fn from(c: Leaves64) -> Leaves {
        Leaves {
            leaves: c.leaves.into(),
            higher: c.higher.into(),
        }
    }
}
