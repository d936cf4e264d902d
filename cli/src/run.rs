//! `perft run`: a perft counted on this machine.

use std::time::Instant;

use perft_core::parallel::count_units;
use perft_core::{
    Divide, Game, GameVisitor, Leaves, Plan, TableStats, TranspositionTable, divide, divide_plan, local_plan,
    table_size,
};

use crate::args::{Format, PerftreeArgs, RunArgs, TableChoice};
use crate::error::CliError;
use crate::local_certificate::write_certificate;
use crate::report::{LocalRun, Report, TableReport, in_notation};
use crate::root::{play_moves, root_position, with_chess960_notation};
use crate::stats::CountStats;

/// `perft run --raw`: the bare move generator on one thread, no table, no
/// merging; every leaf is enumerated (bulk-counted at the last ply).
pub fn count_raw<G: Game>(root: &G, depth: u32) -> Divide<G::Move> {
    divide(root, depth)
}

/// Counts `root` to `depth` with the engine options of `args` and reports
/// the divide, sorted by notation where the game wants it.
pub fn count_from<G: Game>(root: G, args: &RunArgs) -> Result<Report, CliError> {
    if args.raw {
        tracing::info!(game = G::NAME, depth = args.depth, position = %root, "counting raw");
        let started = Instant::now();
        let result = count_raw(&root, args.depth);
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
    tracing::info!(game = G::NAME, depth = args.depth, threads, position = %root, "counting");
    let started = Instant::now();
    let (result, stats, table) = count_planned(&root, args, threads)?;
    let seconds = started.elapsed().as_secs_f64();
    let table = table.map(|table| TableReport::new(&table, stats));
    let run = LocalRun {
        depth: args.depth,
        seconds,
        threads,
        table,
        raw: false,
    };
    Ok(report(&root, &result, run))
}

/// Plans `root` (to `--split-depth`, or into enough units for the
/// threads), counts the units with the table `--hash` asks for (by default
/// sized to the plan) and sums the divide; writes the certificate when
/// `--certificate` asks for one.
fn count_planned<G: Game>(root: &G, args: &RunArgs, threads: usize) -> Result<LocalCount<G::Move>, CliError> {
    if args.depth == 0 {
        if args.certificate.is_some() {
            return Err(CliError::Usage(
                "a certificate needs a depth of at least 1".to_owned(),
            ));
        }
        let divide = Divide {
            moves: Vec::new(),
            total: Leaves::full(1),
        };
        return Ok((divide, TableStats::default(), None));
    }
    let plan = match args.split_depth {
        Some(split) => Plan::new(*root, args.depth, split),
        None => local_plan(root, args.depth, threads),
    }
    .map_err(|e| CliError::Usage(e.to_string()))?;
    let table = table_for::<G>(args.engine.table(), || table_size::plan_stored_positions(&plan))?;
    let (counts, stats) = count_units(
        plan.units().positions(),
        plan.remaining_depth(),
        threads,
        table.as_ref(),
    );
    if let Some(path) = &args.certificate {
        write_certificate(path, |local| {
            perft_certificate::from_plan(args.game, &plan, &counts, local)
        })?;
    }
    Ok((plan.divide(&counts), stats, table))
}

/// What a local count gives: the divide, the table's statistics and the
/// table (`None` without one).
pub type LocalCount<M> = (Divide<M>, TableStats, Option<TranspositionTable>);

/// A local count on `threads` threads: planned, then counted with the table
/// `choice` asks for, made once the plan is known so that the default size
/// follows the work. Returns the divide, the table's statistics and the
/// table (`None` without one, and for depth 0, which counts nothing).
pub fn count_local<G: Game>(
    root: &G,
    depth: u32,
    threads: usize,
    choice: TableChoice,
) -> Result<LocalCount<G::Move>, CliError> {
    if depth == 0 {
        let divide = Divide {
            moves: Vec::new(),
            total: Leaves::full(1),
        };
        return Ok((divide, TableStats::default(), None));
    }
    let plan = local_plan(root, depth, threads).map_err(|e| CliError::Usage(e.to_string()))?;
    let table = table_for::<G>(choice, || table_size::plan_stored_positions(&plan))?;
    let (divide, stats) = divide_plan(&plan, threads, table.as_ref());
    Ok((divide, stats, table))
}

/// The table `choice` asks for ([`TableChoice::local_bytes`]): by default
/// sized to the `stored` positions the work promises.
pub(crate) fn table_for<G: Game>(
    choice: TableChoice,
    stored: impl FnOnce() -> u128,
) -> Result<Option<TranspositionTable>, CliError> {
    let Some(bytes) = choice.local_bytes(stored, perft_core::table::entry_bytes_of::<G>()) else {
        return Ok(None);
    };
    let table = TranspositionTable::for_game::<G>(bytes).ok_or_else(|| {
        CliError::Usage(format!(
            "a table of {bytes} bytes holds no entry; give at least 64K"
        ))
    })?;
    tracing::debug!(bytes, entries = table.entries(), "table");
    Ok(Some(table))
}

/// The report of a local count.
fn report<G: Game>(root: &G, result: &Divide<G::Move>, run: LocalRun) -> Report {
    run.report(root, result.total, in_notation(root, &result.moves), None)
}

/// `perft run` for game `G`.
pub fn count<G: Game>(args: &RunArgs) -> Result<Report, CliError> {
    let root: G = root_position(args.position.as_deref(), args.depth)?;
    let root = with_chess960_notation(root, args.chess960)?;
    let root = play_moves(root, &args.moves)?;
    count_from(root, args)
}

/// [`count`] for the game chosen on the command line.
pub struct Count<'a>(pub &'a RunArgs);

impl GameVisitor for Count<'_> {
    type Output = Result<Report, CliError>;
    fn visit<G: Game>(self) -> Self::Output {
        count::<G>(self.0)
    }
}

/// [`Count`] in the game and convention of `args`; with `--stats`,
/// [`CountStats`].
pub fn count_in(args: &RunArgs) -> Result<Report, CliError> {
    let counted = if args.stats {
        args.game.dispatch_stats_in(args.convention, CountStats(args))
    } else {
        args.game.dispatch_in(args.convention, Count(args))
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
    let mut report = args.game.dispatch(Count(&run))?;
    report.divide.sort_by(|a, b| a.0.cmp(&b.0));
    let mut text = String::new();
    for (mv, leaves) in &report.divide {
        text.push_str(&format!("{mv} {}\n", leaves.leaves));
    }
    text.push_str(&format!("\n{}\n", report.total.leaves));
    std::io::Write::write_all(&mut std::io::stdout().lock(), text.as_bytes())?;
    Ok(())
}
