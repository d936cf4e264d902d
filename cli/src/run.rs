//! `perft run`: a perft counted on this machine.

use std::time::Instant;

use perft_core::{Checkers, Divide, Game, Kernel, Reversi, TranspositionTable, divide, divide_parallel};

use crate::args::{GameName, RunArgs};
use crate::error::CliError;
use crate::report::{Report, Source, TableReport, peak_memory_bytes};

/// Parses the position (or takes the start) and checks the depth limit.
pub fn root_position<G: Game>(text: Option<&str>, depth: u32) -> Result<G, CliError> {
    if depth > G::MAX_DEPTH {
        return Err(CliError::Usage(format!(
            "depth {depth} is above the {} limit of {}",
            G::NAME,
            G::MAX_DEPTH
        )));
    }
    match text {
        None => Ok(G::start()),
        Some(text) => text
            .parse::<G>()
            .map_err(|e| CliError::Usage(format!("invalid {} position '{}': {e}", G::NAME, text.trim()))),
    }
}

/// `perft run --raw`: the bare move generator on one thread, no table, no
/// merging; every leaf is enumerated (bulk-counted at the last ply).
pub fn count_raw<G: Game>(root: &G, depth: u32) -> Divide<G::Move> {
    divide(root, depth)
}

pub fn count<G: Game>(args: &RunArgs) -> Result<Report, CliError> {
    let root: G = root_position(args.position.as_deref(), args.depth)?;
    if args.raw {
        tracing::info!(game = G::NAME, depth = args.depth, position = %root, "counting raw");
        let started = Instant::now();
        let result = count_raw(&root, args.depth);
        let seconds = started.elapsed().as_secs_f64();
        return Ok(report(&root, args.depth, &result, seconds, 1, None, true));
    }
    let threads = args.engine.threads();
    let table = match args.engine.table_bytes() {
        None => None,
        Some(bytes) => Some(TranspositionTable::for_game::<G>(bytes).ok_or_else(|| {
            CliError::Usage(format!(
                "a table of {bytes} bytes holds no entry; give at least 64K"
            ))
        })?),
    };
    tracing::info!(game = G::NAME, depth = args.depth, threads, position = %root, "counting");
    let started = Instant::now();
    let (result, stats) = divide_parallel(&root, args.depth, threads, table.as_ref())
        .map_err(|e| CliError::Usage(e.to_string()))?;
    let seconds = started.elapsed().as_secs_f64();
    let table = table.map(|table| TableReport::new(&table, stats));
    Ok(report(&root, args.depth, &result, seconds, threads, table, false))
}

/// The report of a local count.
fn report<G: Game>(
    root: &G,
    depth: u32,
    result: &Divide<G::Move>,
    seconds: f64,
    threads: usize,
    table: Option<TableReport>,
    raw: bool,
) -> Report {
    Report {
        game: G::NAME,
        reports_higher: G::GAME_OVER_IS_LEAF,
        position: root.to_string(),
        depth,
        total: result.total,
        divide: result
            .moves
            .iter()
            .map(|&(mv, leaves)| (root.format_move(mv), leaves))
            .collect(),
        seconds,
        source: Source::Local {
            threads,
            table,
            kernel: Kernel::best().name(),
            raw,
            peak_memory_bytes: peak_memory_bytes(),
        },
    }
}

/// Counts and prints.
pub fn run(args: &RunArgs) -> Result<(), CliError> {
    let report = match args.game {
        GameName::Reversi => count::<Reversi>(args)?,
        GameName::Checkers => count::<Checkers>(args)?,
    };
    report.write(args.format, &mut std::io::stdout().lock())
}
