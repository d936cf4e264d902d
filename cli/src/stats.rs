//! `perft run --stats`: the count with its leaves by kind, in total and per
//! first move, planned and threaded like a plain run (or `--raw`: one
//! thread, no table, nothing merged), printed through the same report.

use std::time::Instant;

use perft_core::stats::{count_units_stats, divide_stats_parallel, plan_stats_divide};
use perft_core::{
    Game, GameStats, Plan, StatsDivide, StatsTable, StatsVisitor, TableStats, Tally, divide_stats,
    local_plan, table_size,
};

use crate::args::{RunArgs, TableChoice};
use crate::error::CliError;
use crate::local_certificate::write_certificate;
use crate::report::{LocalRun, Report, ReportStats, TableReport, in_notation};
use crate::root::{play_moves, root_position, with_chess960_notation};

/// [`count_stats`] for the game chosen on the command line.
pub struct CountStats<'a>(pub &'a RunArgs);

impl StatsVisitor for CountStats<'_> {
    type Output = Result<Report, CliError>;
    fn visit<G: GameStats>(self) -> Self::Output {
        count_stats::<G>(self.0)
    }
}

/// `perft run --stats` for game `G`.
pub fn count_stats<G: GameStats>(args: &RunArgs) -> Result<Report, CliError> {
    let root: G = root_position(args.position.as_deref(), args.depth)?;
    let root = with_chess960_notation(root, args.chess960)?;
    let root = play_moves(root, &args.moves)?;
    let started = Instant::now();
    if args.raw {
        tracing::info!(game = G::NAME, depth = args.depth, position = %root, "counting raw with statistics");
        let result = divide_stats(&root, args.depth);
        let seconds = started.elapsed().as_secs_f64();
        let run = LocalRun {
            depth: args.depth,
            seconds,
            threads: 1,
            table: None,
            raw: true,
        };
        return Ok(report(&root, &result, run));
    }
    let threads = args.engine.threads();
    tracing::info!(game = G::NAME, depth = args.depth, threads, position = %root, "counting with statistics");
    let (result, table) = count_planned(&root, args, threads)?;
    let seconds = started.elapsed().as_secs_f64();
    let run = LocalRun {
        depth: args.depth,
        seconds,
        threads,
        table,
        raw: false,
    };
    Ok(report(&root, &result, run))
}

/// A divide with statistics and its table's report (`None` without one).
type Counted<G> = (
    StatsDivide<<G as Game>::Move, <G as GameStats>::Stats>,
    Option<TableReport>,
);

/// Plans `root` (to `--split-depth`, or into enough units for the
/// threads), counts the units with the statistics table `--hash` asks for
/// (by default sized to the plan) and sums the divide; writes the
/// statistics certificate when `--certificate` asks for one. A plan leaves
/// its units at least one ply: a leaf's kind is the move's that made it.
fn count_planned<G: GameStats>(root: &G, args: &RunArgs, threads: usize) -> Result<Counted<G>, CliError> {
    let plan = match args.split_depth {
        Some(split) if split >= args.depth => {
            return Err(CliError::Usage(format!(
                "--stats needs a split depth below the depth {} (units count the last ply), got {split}",
                args.depth
            )));
        }
        Some(split) => Plan::new(*root, args.depth, split),
        // Depths 0 and 1 have no plan with a ply left to its units.
        None if args.depth <= 1 && args.certificate.is_some() => {
            return Err(CliError::Usage(format!(
                "a statistics certificate needs depth 2 or more (its units count the last ply), got {}",
                args.depth
            )));
        }
        None if args.depth <= 1 => {
            let (divide, _) = divide_stats_parallel(root, args.depth, threads, None)
                .map_err(|e| CliError::Usage(e.to_string()))?;
            return Ok((divide, None));
        }
        None => local_plan(root, args.depth, threads),
    }
    .map_err(|e| CliError::Usage(e.to_string()))?;
    let table = stats_table_for::<G>(args.engine.table(), || table_size::plan_stored_positions(&plan))?;
    let (counts, probes) = count_units_stats(
        plan.units().positions(),
        plan.remaining_depth(),
        threads,
        table.as_ref(),
    );
    if let Some(path) = &args.certificate {
        write_certificate(path, |local| {
            perft_certificate::from_stats_plan(args.game, &plan, &counts, local)
        })?;
    }
    let divide = plan_stats_divide(&plan, &counts);
    Ok((divide, table.map(|table| table_report(&table, probes))))
}

/// The statistics table `choice` asks for ([`TableChoice::local_bytes`]):
/// by default sized to the `stored` positions the work promises.
pub(crate) fn stats_table_for<G: GameStats>(
    choice: TableChoice,
    stored: impl FnOnce() -> u128,
) -> Result<Option<StatsTable<G>>, CliError> {
    let Some(bytes) = choice.local_bytes(stored, StatsTable::<G>::entry_bytes()) else {
        return Ok(None);
    };
    let table = StatsTable::<G>::with_bytes(bytes).ok_or_else(|| {
        CliError::Usage(format!(
            "a statistics table of {bytes} bytes holds no entry; give at least {}",
            StatsTable::<G>::bucket_bytes()
        ))
    })?;
    tracing::debug!(bytes, entries = table.entries(), "statistics table");
    Ok(Some(table))
}

fn table_report<G: GameStats>(table: &StatsTable<G>, probes: TableStats) -> TableReport {
    TableReport {
        bytes: table.bytes(),
        entries: table.entries(),
        probes: probes.probes,
        hits: probes.hits,
        fill: table.fill(100_000),
    }
}

/// The report of a count with statistics, each move's kinds beside it.
fn report<G: GameStats>(root: &G, result: &StatsDivide<G::Move, G::Stats>, run: LocalRun) -> Report {
    let moves = in_notation(root, &result.moves);
    let stats = ReportStats {
        kinds: G::Stats::KINDS,
        total: result.total.kinds.counts(),
        per_move: moves.iter().map(|(_, stats)| stats.kinds.counts()).collect(),
    };
    let divide = moves.into_iter().map(|(mv, stats)| (mv, stats.leaves)).collect();
    run.report(root, result.total.leaves, divide, Some(stats))
}
