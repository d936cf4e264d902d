//! The CPU time of a perft, from sampled units counted exactly on one
//! thread with a table. The sample shares its table with fewer units than
//! the run will, so the time is divided by how much faster a whole run
//! counts than the sample at a shallower depth where a whole run is cheap
//! ([`sharing_factor`]); sharing grows with depth, so the time still leans
//! high.

use cpu_time::ThreadTime;
use perft_core::{Counter, Game, TranspositionTable};

use crate::EstimateError;

/// What the timing of sampled units found.
pub(crate) struct Timing {
    pub depth: u32,
    pub units: usize,
    /// Thread CPU seconds per unit counted.
    pub seconds: Vec<f64>,
    pub leaves: u128,
}

/// Thread CPU seconds since `start`.
fn cpu_since(start: &ThreadTime) -> f64 {
    start.elapsed().as_secs_f64()
}

fn thread_time() -> Result<ThreadTime, EstimateError> {
    ThreadTime::try_now().map_err(EstimateError::ThreadTime)
}

/// Counts sampled units exactly on one thread with a table until
/// `budget` CPU seconds are spent (at least one unit), at the remaining
/// depth or the deepest one at which a unit fits in a quarter of the
/// budget. CPU time, not wall time: other work on the machine does not
/// make the units look dearer.
pub(crate) fn time_units<G: Game>(
    units: &[G],
    order: &[usize],
    remaining: u32,
    budget: f64,
    table: Option<&TranspositionTable>,
) -> Result<Timing, EstimateError> {
    let first = units[order[0]];
    let mut depth = remaining.min(1);
    let mut counter = Counter::new(None);
    while depth < remaining {
        let cpu = thread_time()?;
        let at = counter.perft(&first, depth).leaves.max(1);
        let took = cpu_since(&cpu);
        let deeper = counter.perft(&first, depth + 1).leaves;
        let growth = (deeper as f64 / at as f64).max(1.0);
        if took * growth * growth > budget / 4.0 {
            break;
        }
        depth += 1;
    }
    let mut counter = Counter::new(table);
    let mut timing = Timing {
        depth,
        units: 0,
        seconds: Vec::new(),
        leaves: 0,
    };
    let mut spent = 0.0;
    for &i in order {
        let cpu = thread_time()?;
        let leaves = counter.perft(&units[i], depth).leaves;
        let took = cpu_since(&cpu);
        timing.seconds.push(took);
        timing.leaves += leaves;
        timing.units += 1;
        spent += took;
        if spent > budget {
            break;
        }
    }
    Ok(timing)
}

/// How much faster a whole run counts than the timed sample, measured at
/// a shallower remaining depth where the whole run is cheap: every unit
/// counted in plan order with one table (as a worker does), against the
/// sample's own procedure at that depth. A run's units share subtrees in
/// the table across the whole plan, a sample's only within itself, so
/// without this the time leans high (checkers perft(18): 3.6x). `None`
/// when no shallower depth fits a quarter of the budget.
pub(crate) fn sharing_factor<G: Game>(
    units: &[G],
    order: &[usize],
    below: u32,
    budget: f64,
    table: Option<&mut TranspositionTable>,
) -> Result<Option<Calibration>, EstimateError> {
    let Some(table) = table else {
        return Ok(None);
    };
    let mut passes: Vec<(u32, f64, u128)> = Vec::new();
    let mut last_took = 0.0f64;
    // The last pass's time ratio to the one before: a pass that would
    // take more than a quarter of the budget is not started.
    let mut growth: Option<f64> = None;
    for depth in 1..below {
        if growth.is_some_and(|g| last_took * g > budget / 4.0) {
            break;
        }
        table.reset_for_game::<G>();
        let mut counter = Counter::new(Some(&*table));
        let cpu = thread_time()?;
        let leaves: u128 = units.iter().map(|unit| counter.perft(unit, depth).leaves).sum();
        let took = cpu_since(&cpu);
        if took > budget / 4.0 {
            break;
        }
        if last_took > 0.0 {
            growth = Some((took / last_took).max(1.0));
        }
        last_took = took;
        // Too cheap to time with any accuracy: not a calibration point.
        if took >= 0.02 {
            passes.push((depth, took, leaves));
        }
    }
    // The factor at the deepest two passes, and its growth per ply carried
    // down to the timed depth (sharing grows with depth; the growth is
    // bounded so that a noisy pair cannot promise a free run).
    let mut factors = Vec::new();
    for &(depth, whole_seconds, whole_leaves) in passes.iter().rev().take(2).rev() {
        table.reset_for_game::<G>();
        let mut counter = Counter::new(Some(&*table));
        let (mut spent, mut leaves) = (0.0, 0u128);
        for &i in order {
            let cpu = thread_time()?;
            leaves += counter.perft(&units[i], depth).leaves;
            spent += cpu_since(&cpu);
            if spent > whole_seconds / 2.0 {
                break;
            }
        }
        let sample_rate = leaves as f64 / spent.max(1e-9);
        let whole_rate = whole_leaves as f64 / whole_seconds.max(1e-9);
        factors.push((depth, (whole_rate / sample_rate).clamp(0.25, 100.0)));
    }
    let Some(&(depth, factor)) = factors.last() else {
        return Ok(None);
    };
    let per_ply = match factors.as_slice() {
        [(_, before), (_, last)] => (last / before).clamp(1.0, 1.5),
        _ => 1.0,
    };
    let carried = factor * per_ply.powi(below.saturating_sub(depth) as i32);
    Ok(Some(Calibration {
        depth,
        factor: carried.clamp(0.25, 100.0),
        measured: factor,
    }))
}

/// The [`sharing_factor`]: measured at `depth`, and carried to the timed depth.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Calibration {
    pub depth: u32,
    pub measured: f64,
    pub factor: f64,
}
