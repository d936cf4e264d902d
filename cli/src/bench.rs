//! `perft bench`: the benchmark cases (`perft_local::bench`), each run in
//! a child process (so its peak memory is its own) several times, and the
//! table of their medians.

use std::process::Command;

use perft_core::{Convention, Game, GameVisitor};
use perft_local::bench::{Case, CaseEngine, CaseResult, Measurement, cases, measure};

use crate::args::{BenchArgs, BenchCaseArgs, EngineArgs, Format};
use crate::error::CliError;
use crate::report::human_bytes;

/// Runs one case `runs` times in child processes.
fn run_case(case: Case, threads: usize, runs: u64) -> Result<CaseResult, CliError> {
    let exe = std::env::current_exe()?;
    let mut measured = Vec::new();
    for _ in 0..runs {
        let mut child = Command::new(&exe);
        child.args([
            "bench-case",
            "--game",
            case.game.name(),
            "--depth",
            &case.depth.to_string(),
        ]);
        child.args(["--threads", &threads.to_string()]);
        if let Some(convention) = case.convention {
            child.args(["--convention", convention.name()]);
        }
        match case.table {
            None => child.arg("--raw"),
            Some(size) => child.args(["--hash", size]),
        };
        let output = child.output()?;
        if !output.status.success() {
            return Err(CliError::failed(format!(
                "benchmark case {} depth {} failed: {}",
                case.game.name(),
                case.depth,
                String::from_utf8_lossy(&output.stderr).trim()
            )));
        }
        let m: Measurement = serde_json::from_slice(&output.stdout)
            .map_err(|e| CliError::failed_by(format!("bench-case output: {e}"), e))?;
        measured.push(m);
    }
    Ok(CaseResult::of_runs(case, threads, &measured)?)
}

/// `perft bench`.
pub fn bench(args: &BenchArgs) -> Result<(), CliError> {
    if let Some(folder) = &args.anchors {
        return crate::bench_anchors::bench_anchors(args, folder);
    }
    let cases = cases(args.full);
    let threads = args
        .threads
        .map_or_else(EngineArgs::default_threads, |n| n as usize);
    let mut results = Vec::new();
    if let (Some(game), Some(convention)) = (args.game, args.convention) {
        game.resolve_convention(Some(convention))
            .map_err(CliError::usage_from)?;
    }
    let chosen = cases.iter().filter(|c| {
        args.game.is_none_or(|g| g == c.game)
            && args.convention.is_none_or(|wanted| c.convention == Some(wanted))
    });
    for &case in chosen {
        // Raw cases are one thread by definition; table cases run on one
        // thread and, side by side, on the threads asked for.
        let mut thread_counts = vec![1];
        if case.table.is_some() && threads > 1 {
            thread_counts.push(threads);
        }
        for t in thread_counts {
            let result = run_case(case, t, args.runs)?;
            if args.format == Format::Text {
                eprintln!(
                    "{} depth {} {} x{}: {:.3} s",
                    game_label(&result),
                    result.depth,
                    result.mode,
                    result.threads,
                    result.median_seconds
                );
            }
            results.push(result);
        }
    }
    match args.format {
        Format::Json => crate::output::json_pretty(&results)?,
        Format::Text | Format::Csv => {
            let mut table = crate::output::table([
                "game",
                "depth",
                "mode",
                "threads",
                "table",
                "leaves",
                "median s",
                "median CPU s",
                "leaves/s",
                "peak memory",
            ]);
            for r in &results {
                table.add_row([
                    game_label(r),
                    r.depth.to_string(),
                    r.mode.to_owned(),
                    r.threads.to_string(),
                    r.table.clone().unwrap_or_else(|| "-".to_owned()),
                    r.leaves.clone(),
                    format!("{:.3}", r.median_seconds),
                    format!("{:.3}", r.median_cpu_seconds),
                    format!("{:.1} M", r.leaves_per_second as f64 / 1e6),
                    r.peak_memory_bytes.map_or_else(|| "-".to_owned(), human_bytes),
                ]);
            }
            outln!("{table}\n(medians of {} runs)", args.runs)?;
        }
    }
    Ok(())
}

/// `reversi`, or `reversi (oeis)` for a case in a game's other convention.
fn game_label(result: &CaseResult) -> String {
    match result.convention {
        Some(c) if c != Convention::Bik.name() => format!("{} ({c})", result.game),
        _ => result.game.to_owned(),
    }
}

/// [`measure`] for the game chosen on the command line.
struct MeasureCase<'a>(&'a BenchCaseArgs);

impl GameVisitor for MeasureCase<'_> {
    type Output = Result<Measurement, CliError>;
    fn visit<G: Game>(self) -> Self::Output {
        let args = self.0;
        let engine = if args.raw {
            CaseEngine::Raw
        } else {
            CaseEngine::Planned {
                threads: args.engine.threads(),
                table: args.engine.table(),
            }
        };
        Ok(measure::<G>(args.game, args.depth, engine)?)
    }
}

/// The hidden `perft bench-case`: one measurement, as JSON on stdout.
pub fn bench_case(args: &BenchCaseArgs) -> Result<(), CliError> {
    let m = args
        .game
        .dispatch_in(args.convention, MeasureCase(args))
        .map_err(CliError::usage_from)??;
    serde_json::to_writer(std::io::stdout().lock(), &m).map_err(CliError::failed_from)
}
