//! `perft estimate`: what a perft will cost before machines are committed.
//!
//! Leaves: the root is planned to the split depth exactly (transpositions
//! merged, as a run plans it); a random sample of units is drawn and each
//! unit's subtree is estimated by Knuth's random paths (exact for the last
//! three plies). The weighted total's interval comes from the spread of
//! the sampled units' estimates. CPU time: sampled units are counted
//! exactly with this machine's engine and a table on one thread, at the
//! remaining depth when the budget allows (else shallower, and the rate
//! in leaves per CPU second is carried to the predicted leaves). The time
//! interval covers the sampling error only. The sample shares its table
//! with fewer units than the run will, so the time is divided by how much
//! faster a whole run counts than the sample at a shallower depth where a
//! whole run is cheap ([`sharing_factor`]); sharing grows with depth, so
//! the time still leans high.

use cpu_time::ThreadTime;
use perft_certificate::audit::sample_indices;
use perft_core::{Counter, Game, GameVisitor, MoveSet, Plan, TranspositionTable};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

use crate::args::{EstimateArgs, Format};
use crate::error::CliError;
use crate::root::root_position;

/// z of the two-sided 99% normal interval.
const Z99: f64 = 2.576;
/// Plies below which a random path stops and counts exactly.
const EXACT_PLIES: u32 = 3;
/// Units a plan for the estimate aims for when no split depth is given.
const MIN_UNITS: usize = 10_000;
/// Most units a plan for the estimate may have.
const MAX_UNITS: usize = 2_000_000;
/// Consecutive units timed together.
const TIMED_RUN: usize = 64;
/// Bytes the coordinator's journal keeps per unit, roughly: the unit's
/// row in its chunk, its result row and one vote, with SQLite's overhead.
const JOURNAL_BYTES_PER_UNIT: u64 = 160;
/// Bytes a unit costs in a certificate, compressed (measured: see
/// BENCHMARKS.md).
const CERTIFICATE_BYTES_PER_UNIT: u64 = 10;

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

    fn scaled(self, by: f64) -> Interval {
        Interval {
            estimate: self.estimate * by,
            low: self.low * by,
            high: self.high * by,
        }
    }
}

/// The prediction, as printed.
#[derive(Debug, Clone, Serialize)]
pub struct Prediction {
    pub game: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub convention: Option<&'static str>,
    pub depth: u32,
    pub split_depth: u32,
    pub units: usize,
    pub sampled_units: usize,
    pub paths_per_unit: usize,
    pub seed: u64,
    pub confidence: f64,
    pub leaves: Interval,
    pub cpu_seconds: Interval,
    pub core_days: Interval,
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
    pub threads: usize,
    pub wall_seconds_on_this_machine: f64,
    pub journal_bytes: u64,
    pub certificate_bytes: u64,
}

/// Mean and standard error of the mean.
fn mean_and_error(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    if values.is_empty() {
        return (0.0, 0.0);
    }
    let mean = values.iter().sum::<f64>() / n;
    if values.len() < 2 {
        return (mean, mean.abs());
    }
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, (variance / n).sqrt())
}

/// One random path's estimate of the leaves below `pos` at `depth`:
/// the product of the branching factors met, times the exact count of
/// the last plies.
fn random_path<G: Game>(pos: &G, depth: u32, rng: &mut StdRng, counter: &mut Counter<'_>) -> f64 {
    let mut pos = *pos;
    let mut factor = 1.0;
    let mut depth = depth;
    while depth > EXACT_PLIES {
        let moves = pos.legal_moves();
        let n = moves.len();
        if n == 0 {
            break;
        }
        let Some(mv) = moves.into_iter().nth(rng.random_range(0..n)) else {
            break;
        };
        factor *= n as f64;
        pos = pos.play(mv);
        depth -= 1;
    }
    factor * counter.perft(&pos, depth).leaves as f64
}

/// What the timing of sampled units found.
struct Timing {
    depth: u32,
    units: usize,
    /// Thread CPU seconds per unit counted.
    seconds: Vec<f64>,
    leaves: u128,
}

/// Thread CPU seconds since `start`.
fn cpu_since(start: &ThreadTime) -> f64 {
    start.elapsed().as_secs_f64()
}

fn thread_time() -> Result<ThreadTime, CliError> {
    ThreadTime::try_now().map_err(|e| CliError::Failed(format!("thread CPU time: {e}")))
}

/// Counts sampled units exactly on one thread with a table until
/// `budget` CPU seconds are spent (at least one unit), at the remaining
/// depth or the deepest one at which a unit fits in a quarter of the
/// budget. CPU time, not wall time: other work on the machine does not
/// make the units look dearer.
fn time_units<G: Game>(
    units: &[G],
    order: &[usize],
    remaining: u32,
    budget: f64,
    table: Option<&TranspositionTable>,
) -> Result<Timing, CliError> {
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
fn sharing_factor<G: Game>(
    units: &[G],
    order: &[usize],
    below: u32,
    budget: f64,
    table: Option<&mut TranspositionTable>,
) -> Result<Option<Calibration>, CliError> {
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
struct Calibration {
    depth: u32,
    measured: f64,
    factor: f64,
}

struct Estimate<'a>(&'a EstimateArgs);

impl GameVisitor for Estimate<'_> {
    type Output = Result<Prediction, CliError>;

    fn visit<G: Game>(self) -> Self::Output {
        let args = self.0;
        let root: G = root_position(args.position.as_deref(), args.depth)?;
        if args.depth == 0 {
            return Err(CliError::Usage(
                "nothing to estimate at depth 0: it is 1 leaf".to_owned(),
            ));
        }
        let plan = match args.split_depth {
            Some(split) => Plan::bounded(root, args.depth, split, MAX_UNITS),
            None => Plan::with_min_units(root, args.depth, MIN_UNITS, MAX_UNITS),
        }
        .map_err(|e| CliError::Usage(e.to_string()))?;
        let remaining = plan.remaining_depth();
        let units = plan.units();
        let settled: f64 = plan.settled().iter().map(|l| l.leaves as f64).sum();
        let n = units.len();
        let sample = sample_indices(n, args.sample.max(1), args.seed);
        let mut rng = StdRng::seed_from_u64(args.seed);
        let mut counter = Counter::new(None);
        let paths = args.paths.max(1);
        let mut weighted = Vec::with_capacity(sample.len());
        let mut unweighted = Vec::with_capacity(sample.len());
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

        let mut table = args
            .engine
            .table_bytes_or(1 << 30)
            .and_then(TranspositionTable::for_game::<G>);
        if let Some(table) = &mut table {
            // Writing every word faults the whole table in now, as a long
            // run has long since done: its first touches are not the units'.
            table.reset_for_game::<G>();
        }
        // Runs of consecutive units from random starts: a run's threads take
        // units in plan order, and neighbours (children of one parent)
        // share much of their subtrees in the table, so timing scattered
        // units alone would miss those hits.
        let starts = sample_indices(n.div_ceil(TIMED_RUN), n.div_ceil(TIMED_RUN), args.seed ^ 0x5EED);
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
                args.time_budget,
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
                args.time_budget,
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
        let threads = args.engine.threads();
        let weights: u64 = (0..n).map(|i| units.weights(i).len() as u64).sum();
        Ok(Prediction {
            game: G::NAME,
            convention: G::CONVENTION.map(perft_core::Convention::name),
            depth: args.depth,
            split_depth: plan.split_depth(),
            units: n,
            sampled_units: sample.len(),
            paths_per_unit: paths,
            seed: args.seed,
            confidence: 0.99,
            leaves,
            cpu_seconds,
            core_days: cpu_seconds.scaled(1.0 / 86_400.0),
            timed_depth: timing.depth,
            timed_units: timing.units,
            leaves_per_cpu_second: rate,
            sharing_depth: calibration.map(|c| c.depth),
            sharing_measured: calibration.map(|c| c.measured),
            sharing_factor: sharing,
            threads,
            wall_seconds_on_this_machine: cpu_seconds.estimate / threads as f64,
            journal_bytes: n as u64 * (JOURNAL_BYTES_PER_UNIT + G::PACKED_BYTES as u64) + weights * 16,
            certificate_bytes: n as u64 * CERTIFICATE_BYTES_PER_UNIT,
        })
    }
}

fn sci(value: f64) -> String {
    format!("{value:.4e}")
}

/// `perft estimate`.
pub fn estimate(args: &EstimateArgs) -> Result<(), CliError> {
    let p = args
        .game
        .dispatch_in(args.convention, Estimate(args))
        .map_err(|e| CliError::Usage(e.to_string()))??;
    if args.format == Format::Json {
        let text = serde_json::to_string(&p).map_err(|e| CliError::Failed(e.to_string()))?;
        return outln!("{text}");
    }
    let convention = p
        .convention
        .map_or(String::new(), |c| format!(" ({c} convention)"));
    outln!(
        "{}{convention} depth {}: split depth {}, {} units; {} sampled, {} random paths each, seed {}",
        p.game,
        p.depth,
        p.split_depth,
        p.units,
        p.sampled_units,
        p.paths_per_unit,
        p.seed
    )?;
    outln!(
        "leaves: {} (99% interval {} .. {})",
        sci(p.leaves.estimate),
        sci(p.leaves.low),
        sci(p.leaves.high)
    )?;
    outln!(
        "cpu time: {:.1} s (99% interval {:.1} .. {:.1} s) = {:.4} core-days ({:.4} .. {:.4})",
        p.cpu_seconds.estimate,
        p.cpu_seconds.low,
        p.cpu_seconds.high,
        p.core_days.estimate,
        p.core_days.low,
        p.core_days.high
    )?;
    outln!(
        "timed: {} units at depth {} on one thread with the table: {:.3e} leaves per CPU second{}",
        p.timed_units,
        p.timed_depth,
        p.leaves_per_cpu_second,
        if p.timed_depth < p.depth - p.split_depth {
            " (shallower than the units: the time is scaled by leaves)"
        } else {
            ""
        }
    )?;
    if let (Some(depth), Some(measured)) = (p.sharing_depth, p.sharing_measured) {
        outln!(
            "sharing: at depth {depth} below the units, the whole plan counted {measured:.2}x as fast a leaf as the sample (the table's hits across units); carried to depth {}: {:.2}x, and the cpu time is divided by it",
            p.timed_depth,
            p.sharing_factor
        )?;
    }
    outln!(
        "on {} thread{} of this machine: about {:.1} s of wall time",
        p.threads,
        if p.threads == 1 { "" } else { "s" },
        p.wall_seconds_on_this_machine
    )?;
    outln!(
        "journal: about {} bytes; certificate: about {} bytes",
        p.journal_bytes,
        p.certificate_bytes
    )?;
    Ok(())
}
