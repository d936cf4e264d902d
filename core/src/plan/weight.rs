//! How paths weigh units: a unit reached by several paths from a first
//! move is counted once and weighs that many times.

use crate::measure::Counted;

/// How many paths from one first move reach a unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Weight {
    /// Index into [`Plan::first_moves`](super::Plan::first_moves).
    pub first_move: u32,
    /// Number of paths.
    pub paths: u64,
}

/// A weighted sum of counts passed `u128`: only a forged or corrupt count
/// can do that, since every game's depth limit keeps true totals below it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the weighted sum of the counts overflows u128")]
pub struct CountOverflow;

/// Counts per first move: `settled` plus, for every counted unit, its
/// count times its paths from each first move. The one aggregation of the
/// local run, the coordinator and the certificate, for every measure;
/// every product and sum is checked.
pub fn weighted_sum<'w, C: Counted>(
    settled: &[C],
    units: impl IntoIterator<Item = (&'w [Weight], C)>,
) -> Result<Vec<C>, CountOverflow> {
    let mut per_move = settled.to_vec();
    for (weights, count) in units {
        for w in weights {
            let slot = &mut per_move[w.first_move as usize];
            *slot = count
                .checked_mul(u128::from(w.paths))
                .and_then(|weighted| slot.checked_add(weighted))
                .ok_or(CountOverflow)?;
        }
    }
    Ok(per_move)
}
