//! `perft estimate`: what a perft will cost before machines are committed
//! (the prediction is `perft-estimate`'s), printed with what its journal
//! and certificate will weigh.

use perft_core::{Game, GameVisitor, RootSetup};
use perft_estimate::{EstimateError, EstimateRequest, Interval, TreeEstimate};
use serde::Serialize;

use crate::args::{EstimateArgs, Format};
use crate::error::CliError;

/// Bytes the coordinator's journal keeps per unit, roughly: the unit's
/// row in its chunk, its result row and one vote, with SQLite's overhead.
const JOURNAL_BYTES_PER_UNIT: u64 = 160;
/// Bytes a unit costs in a certificate, compressed (measured: see
/// BENCHMARKS.md).
const CERTIFICATE_BYTES_PER_UNIT: u64 = 10;

/// The prediction, as printed.
#[derive(Debug, Clone, Serialize)]
pub struct Prediction {
    pub game: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub convention: Option<&'static str>,
    pub depth: u32,
    pub seed: u64,
    pub confidence: f64,
    #[serde(flatten)]
    pub tree: TreeEstimate,
    pub core_days: Interval,
    pub threads: usize,
    pub wall_seconds_on_this_machine: f64,
    pub journal_bytes: u64,
    pub certificate_bytes: u64,
}

struct Estimate<'a>(&'a EstimateArgs);

impl GameVisitor for Estimate<'_> {
    type Output = Result<Prediction, CliError>;

    fn visit<G: Game>(self) -> Self::Output {
        let args = self.0;
        let root: G = RootSetup::new(args.tree.position.as_deref(), args.tree.depth).root()?;
        let request = EstimateRequest {
            depth: args.tree.depth,
            split_depth: args.split_depth,
            sample: args.sample,
            paths: args.paths,
            time_budget: args.time_budget,
            seed: args.seed,
            table_bytes: args.engine.table().bytes_or(|| 1 << 30),
        };
        let e = perft_estimate::estimate(root, &request).map_err(|e: EstimateError| {
            if e.is_request() {
                CliError::usage_from(e)
            } else {
                CliError::failed_from(e)
            }
        })?;
        let threads = args.engine.threads();
        let units = e.units as u64;
        Ok(Prediction {
            game: G::NAME,
            convention: G::CONVENTION.map(perft_core::Convention::name),
            depth: args.tree.depth,
            seed: args.seed,
            confidence: 0.99,
            core_days: e.cpu_seconds.scaled(1.0 / 86_400.0),
            threads,
            wall_seconds_on_this_machine: e.cpu_seconds.estimate / threads as f64,
            journal_bytes: units * (JOURNAL_BYTES_PER_UNIT + G::PACKED_BYTES as u64) + e.weights * 16,
            certificate_bytes: units * CERTIFICATE_BYTES_PER_UNIT,
            tree: e,
        })
    }
}

fn sci(value: f64) -> String {
    format!("{value:.4e}")
}

/// `perft estimate`.
pub fn estimate(args: &EstimateArgs) -> Result<(), CliError> {
    let p = args
        .tree
        .game
        .dispatch_in(args.tree.convention, Estimate(args))
        .map_err(CliError::usage_from)??;
    if args.format == Format::Json {
        let text = serde_json::to_string(&p).map_err(CliError::failed_from)?;
        return outln!("{text}");
    }
    let convention = p
        .convention
        .map_or(String::new(), |c| format!(" ({c} convention)"));
    outln!(
        "{}{convention} depth {}: split depth {}, {} units; {} sampled, {} random paths each, seed {}",
        p.game,
        p.depth,
        p.tree.split_depth,
        p.tree.units,
        p.tree.sampled_units,
        p.tree.paths_per_unit,
        p.seed
    )?;
    outln!(
        "leaves: {} (99% interval {} .. {})",
        sci(p.tree.leaves.estimate),
        sci(p.tree.leaves.low),
        sci(p.tree.leaves.high)
    )?;
    outln!(
        "cpu time: {:.1} s (99% interval {:.1} .. {:.1} s) = {:.4} core-days ({:.4} .. {:.4})",
        p.tree.cpu_seconds.estimate,
        p.tree.cpu_seconds.low,
        p.tree.cpu_seconds.high,
        p.core_days.estimate,
        p.core_days.low,
        p.core_days.high
    )?;
    outln!(
        "timed: {} units at depth {} on one thread with the table: {:.3e} leaves per CPU second{}",
        p.tree.timed_units,
        p.tree.timed_depth,
        p.tree.leaves_per_cpu_second,
        if p.tree.timed_depth < p.depth - p.tree.split_depth {
            " (shallower than the units: the time is scaled by leaves)"
        } else {
            ""
        }
    )?;
    if let (Some(depth), Some(measured)) = (p.tree.sharing_depth, p.tree.sharing_measured) {
        outln!(
            "sharing: at depth {depth} below the units, the whole plan counted {measured:.2}x as fast a leaf as the sample (the table's hits across units); carried to depth {}: {:.2}x, and the cpu time is divided by it",
            p.tree.timed_depth,
            p.tree.sharing_factor
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
