//! `perft run`: a perft counted on this machine (`perft_local`), with its
//! leaves alone or by kind (`--stats`): one path for both, generic over
//! what is counted ([`Measure`]), rendered as a [`Report`].

use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

use perft_certificate::Certificate;
use perft_core::{
    ByKind, Counted, Divide, Game, GameStats, GameVisitor, Measure, Plain, RootSetup, StatsVisitor,
};
use perft_local::{LocalJob, Progress, count_planned, count_raw};

use crate::args::{Format, PerftreeArgs, RunArgs, TreeArgs};
use crate::error::CliError;
use crate::report::{LocalRun, Report, ReportStats, in_notation};

/// Counts `root` to `depth` under measure `M` with the engine options of
/// `args` (`--raw`: the bare move generator on one thread, no table,
/// nothing merged), writes the certificate `--certificate` asks for, and
/// reports the divide, sorted by notation where the game wants it.
fn count_from<G: Game, M: Measure<G>>(root: G, args: &RunArgs) -> Result<Report, CliError>
where
    M::Count: Into<perft_model::Count>,
{
    let started = Instant::now();
    let (threads, counted) = if args.raw {
        tracing::info!(game = G::NAME, depth = args.tree.depth, stats = args.stats, position = %root, "counting raw");
        (1, count_raw::<G, M>(&root, args.tree.depth))
    } else {
        let threads = args.engine.threads();
        tracing::info!(game = G::NAME, depth = args.tree.depth, threads, stats = args.stats, position = %root, "counting");
        let progress = Arc::new(Progress::default());
        let job = LocalJob {
            split_depth: args.split_depth,
            certify: args.certificate.as_ref().map(|_| crate::args::program()),
            progress: Some(Arc::clone(&progress)),
            ..LocalJob::new(args.tree.game, args.tree.depth, threads, args.engine.table())
        };
        let counted = crate::progress_display::shown_while(&progress, args.progress, || {
            count_planned::<G, M>(&root, &job)
        })?;
        (threads, counted)
    };
    if let (Some(path), Some(certificate)) = (&args.certificate, &counted.certificate) {
        write_certificate(path, certificate)?;
    }
    let run = LocalRun {
        depth: args.tree.depth,
        seconds: started.elapsed().as_secs_f64(),
        threads,
        table: counted.table,
        raw: args.raw,
    };
    Ok(report(&root, &counted.divide, run))
}

/// Writes a local count's certificate to `path` (`perft audit FILE` checks
/// it).
fn write_certificate(path: &Path, certificate: &Certificate) -> Result<(), CliError> {
    Ok(perft_certificate::file::write(path, &certificate.encode())?)
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
    let root: G = RootSetup {
        chess960: args.chess960,
        moves: &args.moves,
        ..RootSetup::new(args.tree.position.as_deref(), args.tree.depth)
    }
    .root()?;
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
        args.tree
            .game
            .dispatch_stats_in(args.tree.convention, CountByKind(args))
    } else {
        args.tree
            .game
            .dispatch_in(args.tree.convention, CountLeaves(args))
    };
    counted.map_err(CliError::usage_from)?
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
        tree: TreeArgs {
            position: Some(args.fen.clone()),
            ..TreeArgs::start(args.game, args.depth, None)
        },
        moves: vec![args.moves.clone()],
        certificate: None,
        split_depth: None,
        chess960: args.chess960,
        raw: false,
        stats: false,
        format: Format::Text,
        engine: args.engine.clone(),
        progress: crate::args::ProgressArgs {
            quiet: true,
            ..crate::args::ProgressArgs::DEFAULT
        },
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
