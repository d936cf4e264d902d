//! `perft run`: a perft counted on this machine.

use std::time::Instant;

use perft_core::{Divide, Game, GameVisitor, TranspositionTable, divide, divide_parallel};

use crate::args::{Format, PerftreeArgs, RunArgs};
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
        Some(text) => text.parse::<G>().map_err(|e| {
            CliError::Usage(format!(
                "invalid {} position '{}': {e}",
                G::NAME,
                perft_core::shown(text.trim())
            ))
        }),
    }
}

/// `root` with its moves written in Chess960 notation when `chess960`
/// (castling as the king taking its rook); only chess has one.
pub fn with_chess960_notation<G: Game>(mut root: G, chess960: bool) -> Result<G, CliError> {
    if !chess960 {
        return Ok(root);
    }
    match (&mut root as &mut dyn std::any::Any).downcast_mut::<perft_core::Chess>() {
        Some(chess) => {
            *chess = chess.with_chess960_notation(true);
            Ok(root)
        }
        None => Err(CliError::Usage(format!(
            "--chess960 is for chess, not {}",
            G::NAME
        ))),
    }
}

/// `root` after each of `moves`, each parsed in the position it is played
/// in; the first illegal one is a usage error naming it.
pub fn play_moves<G: Game>(mut root: G, moves: &[String]) -> Result<G, CliError> {
    for text in moves.iter().flat_map(|m| m.split_whitespace()) {
        let mv = root
            .parse_move(text)
            .map_err(|e| CliError::Usage(e.to_string()))?;
        root = root.play(mv);
    }
    Ok(root)
}

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

/// The report of a local count, its divide sorted by notation where the
/// game wants it.
fn report<G: Game>(
    root: &G,
    depth: u32,
    result: &Divide<G::Move>,
    seconds: f64,
    threads: usize,
    table: Option<TableReport>,
    raw: bool,
) -> Report {
    let mut divide: Vec<_> = result
        .moves
        .iter()
        .map(|&(mv, leaves)| (root.format_move(mv), leaves))
        .collect();
    if G::SORT_DIVIDE {
        divide.sort_by(|a, b| a.0.cmp(&b.0));
    }
    Report {
        game: G::NAME,
        reports_higher: G::GAME_OVER_IS_LEAF,
        position: root.to_string(),
        depth,
        total: result.total,
        divide,
        seconds,
        source: Source::Local {
            threads,
            table,
            kernel: G::best_kernel().name(),
            raw,
            peak_memory_bytes: peak_memory_bytes(),
        },
    }
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

/// Counts and prints.
pub fn run(args: &RunArgs) -> Result<(), CliError> {
    let report = args.game.dispatch(Count(args))?;
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
        chess960: args.chess960,
        raw: false,
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
