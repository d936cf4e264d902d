//! Deep Perft's estimate: what a perft will cost before machines are
//! committed.
//!
//! It owns the prediction. Leaves: the root is planned to the split depth
//! exactly (transpositions merged, as a run plans it); a random sample of
//! units is drawn and each unit's subtree is estimated by Knuth's random
//! paths (exact for the last three plies). The weighted total's interval
//! comes from the spread of the sampled units' estimates. CPU time: sampled
//! units are counted exactly with this machine's engine and a table on one
//! thread ([`timing`]), at the remaining depth when the budget allows (else
//! shallower, and the rate in leaves per CPU second is carried to the
//! predicted leaves). The time interval covers the sampling error only.
//!
//! It must not print, read arguments or files, or know the cluster: the
//! CLI renders a [`TreeEstimate`], and what a journal or a certificate
//! will weigh is the CLI's to add.

mod paths;
mod timing;

use perft_certificate::audit::sample_indices;
use perft_core::{Game, Plan, PlanError, TranspositionTable};
use rand::SeedableRng;
use rand::rngs::StdRng;
use serde::Serialize;

use paths::{mean_and_error, random_path};
use timing::{Timing, sharing_factor, time_units};

/// z of the two-sided 99% normal interval.
const Z99: f64 = 2.576;
/// Units a plan for the estimate aims for when no split depth is given.
const MIN_UNITS: usize = 10_000;
/// Most units a plan for the estimate may have.
const MAX_UNITS: usize = 2_000_000;
/// Consecutive units timed together.
const TIMED_RUN: usize = 64;

/// A value with its 99% interval.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Interval {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
}

impl Interval {
    fn of(mean: f64, standard_error: f64, scale: f64, offset: f64) -> Interval {
        Interval {
            estimate: offset + scale * mean,
            low: (offset + scale * (mean - Z99 * standard_error)).max(0.0),
            high: offset + scale * (mean + Z99 * standard_error),
        }
    }

    /// The interval times `by`.
    pub fn scaled(self, by: f64) -> Interval {
        Interval {
            estimate: self.estimate * by,
            low: self.low * by,
            high: self.high * by,
        }
    }
}

/// What to estimate and how hard to look.
#[derive(Debug, Clone, Copy)]
pub struct EstimateRequest {
    pub depth: u32,
    /// The plan's split depth; by default enough units for a fair sample.
    pub split_depth: Option<u32>,
    /// Units sampled for the leaves.
    pub sample: usize,
    /// Random paths per sampled unit.
    pub paths: usize,
    /// CPU seconds the timing may spend.
    pub time_budget: f64,
    pub seed: u64,
    /// The timing's table; `None`: none.
    pub table_bytes: Option<u64>,
}

/// The prediction.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct TreeEstimate {
    pub split_depth: u32,
    pub units: usize,
    /// Weights over all units (a unit has one per first move reaching it).
    #[serde(skip)]
    pub weights: u64,
    pub sampled_units: usize,
    pub paths_per_unit: usize,
    pub leaves: Interval,
    pub cpu_seconds: Interval,
    /// Depth the sampled units were timed at (the remaining depth, or
    /// shallower when one unit would not fit the time budget).
    pub timed_depth: u32,
    pub timed_units: usize,
    pub leaves_per_cpu_second: f64,
    /// Remaining depth at which a whole run was timed against the sample
    /// (none when no shallower depth was cheap enough).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sharing_depth: Option<u32>,
    /// How much faster the whole run counted than the sample there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sharing_measured: Option<f64>,
    /// The same carried to the timed depth by its growth per ply over the
    /// last two depths measured; the CPU time is divided by it.
    pub sharing_factor: f64,
}

/// Why there is no estimate.
#[derive(Debug, thiserror::Error)]
pub enum EstimateError {
    #[error("nothing to estimate at depth 0: it is 1 leaf")]
    DepthZero,
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error("thread CPU time: {0}")]
    ThreadTime(#[source] std::io::Error),
}

impl EstimateError {
    /// Whether the request was at fault (not the machine).
    pub fn is_request(&self) -> bool {
        !matches!(self, EstimateError::ThreadTime(_))
    }
}

/// Estimates the perft of `request.depth` plies below `root`.
pub fn estimate<G: Game>(root: G, request: &EstimateRequest) -> Result<TreeEstimate, EstimateError> {
    if request.depth == 0 {
        return Err(EstimateError::DepthZero);
    }
    let plan = match request.split_depth {
        Some(split) => Plan::bounded(root, request.depth, split, MAX_UNITS),
        None => Plan::with_min_units(root, request.depth, MIN_UNITS, MAX_UNITS),
    }?;
    let remaining = plan.remaining_depth();
    let units = plan.units();
    let settled: f64 = plan.settled().iter().map(|l| l.leaves as f64).sum();
    let n = units.len();
    let sample = sample_indices(n, request.sample.max(1), request.seed);
    let mut rng = StdRng::seed_from_u64(request.seed);
    let paths = request.paths.max(1);
    let mut weighted = Vec::with_capacity(sample.len());
    let mut unweighted = Vec::with_capacity(sample.len());
    let mut counter = perft_core::Counter::new(None);
    for &i in &sample {
        let pos = &units.positions()[i];
        let below = (0..paths)
            .map(|_| random_path(pos, remaining, &mut rng, &mut counter))
            .sum::<f64>()
            / paths as f64;
        let ways: f64 = units.weights(i).iter().map(|w| w.paths as f64).sum();
        weighted.push(ways * below);
        unweighted.push(below);
    }
    let (mean, error) = mean_and_error(&weighted);
    let leaves = Interval::of(mean, error, n as f64, settled);
    let (unit_mean, unit_error) = mean_and_error(&unweighted);
    let unit_leaves = Interval::of(unit_mean, unit_error, n as f64, 0.0);

    let mut table = request.table_bytes.and_then(TranspositionTable::for_game::<G>);
    if let Some(table) = &mut table {
        // Writing every word faults the whole table in now, as a long run
        // has long since done: its first touches are not the units'.
        table.reset_for_game::<G>();
    }
    // Runs of consecutive units from random starts: a run's threads take
    // units in plan order, and neighbours (children of one parent) share
    // much of their subtrees in the table, so timing scattered units alone
    // would miss those hits.
    let starts = sample_indices(
        n.div_ceil(TIMED_RUN),
        n.div_ceil(TIMED_RUN),
        request.seed ^ 0x5EED,
    );
    let mut shuffled = starts;
    rand::seq::SliceRandom::shuffle(shuffled.as_mut_slice(), &mut rng);
    let shuffled: Vec<usize> = shuffled
        .into_iter()
        .flat_map(|run| run * TIMED_RUN..((run + 1) * TIMED_RUN).min(n))
        .collect();
    let timing = if n == 0 {
        Timing {
            depth: remaining,
            units: 0,
            seconds: vec![0.0],
            leaves: 0,
        }
    } else {
        time_units(
            units.positions(),
            &shuffled,
            remaining,
            request.time_budget,
            table.as_ref(),
        )?
    };
    let spent: f64 = timing.seconds.iter().sum();
    let rate = timing.leaves as f64 / spent.max(1e-9);
    let calibration = if n == 0 {
        None
    } else {
        sharing_factor(
            units.positions(),
            &shuffled,
            timing.depth,
            request.time_budget,
            table.as_mut(),
        )?
    };
    let sharing = calibration.map_or(1.0, |c| c.factor);
    let cpu_seconds = if timing.depth == remaining {
        let (t_mean, t_error) = mean_and_error(&timing.seconds);
        Interval::of(t_mean, t_error, n as f64, 0.0)
    } else {
        unit_leaves.scaled(1.0 / rate.max(1.0))
    }
    .scaled(1.0 / sharing);
    Ok(TreeEstimate {
        split_depth: plan.split_depth(),
        units: n,
        weights: (0..n).map(|i| units.weights(i).len() as u64).sum(),
        sampled_units: sample.len(),
        paths_per_unit: paths,
        leaves,
        cpu_seconds,
        timed_depth: timing.depth,
        timed_units: timing.units,
        leaves_per_cpu_second: rate,
        sharing_depth: calibration.map(|c| c.depth),
        sharing_measured: calibration.map(|c| c.measured),
        sharing_factor: sharing,
    })
}
