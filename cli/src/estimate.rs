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
//! interval covers the sampling error only: the sample shares its table
//! with fewer units than the run will, so the time leans high (measured:
//! 1.0x the actual CPU time for Reversi perft(13), 1.7x for checkers
//! perft(15)).

use cpu_time::ThreadTime;
use perft_core::{Counter, Game, GameVisitor, MoveSet, Plan, TranspositionTable};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde::Serialize;

use crate::args::{EstimateArgs, Format};
use crate::audit::sample_indices;
use crate::error::CliError;
use crate::run::root_position;

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
        let cpu_seconds = if timing.depth == remaining {
            let (t_mean, t_error) = mean_and_error(&timing.seconds);
            Interval::of(t_mean, t_error, n as f64, 0.0)
        } else {
            unit_leaves.scaled(1.0 / rate.max(1.0))
        };
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
