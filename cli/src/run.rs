//! `perft run`: a perft counted on this machine, with its leaves alone or
//! by kind (`--stats`): one path for both, generic over what is counted
//! ([`Measure`]).

use std::path::Path;
use std::time::Instant;

use perft_core::{
    ByKind, Counted, Divide, Game, GameKind, GameStats, GameVisitor, Measure, Plain, Plan, SharedTable,
    StatsVisitor, count_units, divide_by, local_plan, table_size,
};

use crate::args::{Format, PerftreeArgs, RunArgs, TableChoice};
use crate::error::CliError;
use crate::local_certificate::write_certificate;
use crate::report::{LocalRun, Report, ReportStats, TableReport, in_notation};
use crate::root::{play_moves, root_position, with_chess960_notation};

/// A local count: its divide and, when it used one, its table's report.
type LocalCount<G, M> = (
    Divide<<G as Game>::Move, <M as Measure<G>>::Count>,
    Option<TableReport>,
);

/// Counts `root` to `depth` under measure `M` with the engine options of
/// `args` (`--raw`: the bare move generator on one thread, no table,
/// nothing merged) and reports the divide, sorted by notation where the
/// game wants it.
pub fn count_from<G: Game, M: Measure<G>>(root: G, args: &RunArgs) -> Result<Report, CliError>
where
    M::Count: Into<perft_model::Count>,
{
    let started = Instant::now();
    let (threads, (result, table)) = if args.raw {
        tracing::info!(game = G::NAME, depth = args.depth, stats = args.stats, position = %root, "counting raw");
        (1, (divide_by::<G, M>(&root, args.depth), None))
    } else {
        let threads = args.engine.threads();
        tracing::info!(game = G::NAME, depth = args.depth, threads, stats = args.stats, position = %root, "counting");
        let job = LocalJob {
            game: args.game,
            depth: args.depth,
            split_depth: args.split_depth,
            table: args.engine.table(),
            certificate: args.certificate.as_deref(),
        };
        (threads, count_planned::<G, M>(&root, &job, threads)?)
    };
    let run = LocalRun {
        depth: args.depth,
        seconds: started.elapsed().as_secs_f64(),
        threads,
        table,
        raw: args.raw,
    };
    Ok(report(&root, &result, run))
}

/// What shapes a planned local count: `perft run`'s options, or `perft
/// bench`'s (no split depth, no certificate).
struct LocalJob<'a> {
    game: GameKind,
    depth: u32,
    split_depth: Option<u32>,
    table: TableChoice,
    certificate: Option<&'a Path>,
}

/// Plans `root` (to the split depth, or into enough units for the
/// threads), counts the units with the table `job.table` asks for (by
/// default sized to the plan) and sums the divide; writes the certificate
/// when one is asked for. A depth too shallow to leave the units their
/// plies ([`Measure::UNIT_PLIES`]) is counted without a plan.
fn count_planned<G: Game, M: Measure<G>>(
    root: &G,
    job: &LocalJob<'_>,
    threads: usize,
) -> Result<LocalCount<G, M>, CliError>
where
    M::Count: Into<perft_model::Count>,
{
    let depth = job.depth;
    let shallow = depth <= M::UNIT_PLIES;
    if let Some(split) = job.split_depth
        && M::UNIT_PLIES > 0
        && split + M::UNIT_PLIES > depth
    {
        return Err(CliError::Usage(format!(
            "--stats needs a split depth below the depth {depth} (units count the last ply), got {split}"
        )));
    }
    if shallow && job.certificate.is_some() {
        return Err(CliError::Usage(if M::UNIT_PLIES == 0 {
            "a certificate needs a depth of at least 1".to_owned()
        } else {
            format!(
                "a statistics certificate needs depth 2 or more (its units count the last ply), got {depth}"
            )
        }));
    }
    let plan = match job.split_depth {
        Some(split) => Plan::new(*root, depth, split),
        None if shallow => return Ok((divide_by::<G, M>(root, depth), None)),
        None => local_plan(root, depth, threads),
    }
    .map_err(|e| CliError::Usage(e.to_string()))?;
    let table = table_for::<G, M>(job.table, || table_size::plan_stored_positions(&plan))?;
    let (counts, probes) = count_units::<G, M>(
        plan.units().positions(),
        plan.remaining_depth(),
        threads,
        table.as_ref(),
    );
    if let Some(path) = job.certificate {
        write_certificate(path, |local| {
            perft_certificate::from_plan::<G, M>(job.game, &plan, &counts, local)
        })?;
    }
    let table = table.map(|table| TableReport::new(&table, probes));
    Ok((plan.divide::<M>(&counts), table))
}

/// A local count of plain leaves of `game` on `threads` threads, planned,
/// then counted with the table `choice` asks for: what `perft bench` times.
pub fn count_local<G: Game>(
    root: &G,
    game: GameKind,
    depth: u32,
    threads: usize,
    choice: TableChoice,
) -> Result<Divide<G::Move>, CliError> {
    let job = LocalJob {
        game,
        depth,
        split_depth: None,
        table: choice,
        certificate: None,
    };
    Ok(count_planned::<G, Plain>(root, &job, threads)?.0)
}

/// The table `choice` asks for ([`TableChoice::local_bytes`]) under
/// measure `M`: by default sized to the `stored` positions the work
/// promises.
pub(crate) fn table_for<G: Game, M: Measure<G>>(
    choice: TableChoice,
    stored: impl FnOnce() -> u128,
) -> Result<Option<M::Table>, CliError> {
    let Some(bytes) = choice.local_bytes(stored, M::entry_bytes()) else {
        return Ok(None);
    };
    let table = M::table(bytes).map_err(|e| CliError::Usage(e.to_string()))?;
    tracing::debug!(bytes, entries = table.entries(), "table");
    Ok(Some(table))
}

/// The report of a local count, each move's kinds beside it when `C`
/// counts them.
fn report<G: Game, C: Counted>(root: &G, result: &Divide<G::Move, C>, run: LocalRun) -> Report {
    let moves = in_notation(root, &result.moves);
    let stats = (!C::KINDS.is_empty()).then(|| ReportStats {
        kinds: C::KINDS,
        total: result.total.kinds(),
        per_move: moves.iter().map(|(_, count)| count.kinds()).collect(),
    });
    let divide = moves
        .into_iter()
        .map(|(mv, count)| (mv, count.leaves()))
        .collect();
    run.report(root, result.total.leaves(), divide, stats)
}

/// `perft run` for game `G` under measure `M`.
fn count<G: Game, M: Measure<G>>(args: &RunArgs) -> Result<Report, CliError>
where
    M::Count: Into<perft_model::Count>,
{
    let root: G = root_position(args.position.as_deref(), args.depth)?;
    let root = with_chess960_notation(root, args.chess960)?;
    let root = play_moves(root, &args.moves)?;
    count_from::<G, M>(root, args)
}

/// [`count`] of leaves for the game chosen on the command line.
struct CountLeaves<'a>(&'a RunArgs);

impl GameVisitor for CountLeaves<'_> {
    type Output = Result<Report, CliError>;
    fn visit<G: Game>(self) -> Self::Output {
        count::<G, Plain>(self.0)
    }
}

/// [`count`] by kind (`--stats`) for the game chosen on the command line.
struct CountByKind<'a>(&'a RunArgs);

impl StatsVisitor for CountByKind<'_> {
    type Output = Result<Report, CliError>;
    fn visit<G: GameStats>(self) -> Self::Output {
        count::<G, ByKind>(self.0)
    }
}

/// `perft run` in the game and convention of `args`, by kind with
/// `--stats`.
pub fn count_in(args: &RunArgs) -> Result<Report, CliError> {
    let counted = if args.stats {
        args.game.dispatch_stats_in(args.convention, CountByKind(args))
    } else {
        args.game.dispatch_in(args.convention, CountLeaves(args))
    };
    counted.map_err(|e| CliError::Usage(e.to_string()))?
}

/// Counts and prints.
pub fn run(args: &RunArgs) -> Result<(), CliError> {
    let report = count_in(args)?;
    report.write(args.format, &mut std::io::stdout().lock())
}

/// `perft perftree`: the divide in Stockfish's format, which perftree
/// reads: `move count` lines sorted by move, a blank line, the total.
pub fn perftree(args: &PerftreeArgs) -> Result<(), CliError> {
    let run = RunArgs {
        game: args.game,
        depth: args.depth,
        position: Some(args.fen.clone()),
        moves: vec![args.moves.clone()],
        convention: None,
        certificate: None,
        split_depth: None,
        chess960: args.chess960,
        raw: false,
        stats: false,
        format: Format::Text,
        engine: args.engine.clone(),
    };
    let mut report = args.game.dispatch(CountLeaves(&run))?;
    report.divide.sort_by(|a, b| a.0.cmp(&b.0));
    let mut text = String::new();
    for (mv, leaves) in &report.divide {
        text.push_str(&format!("{mv} {}\n", leaves.leaves));
    }
    text.push_str(&format!("\n{}\n", report.total.leaves));
    std::io::Write::write_all(&mut std::io::stdout().lock(), text.as_bytes())?;
    Ok(())
}
