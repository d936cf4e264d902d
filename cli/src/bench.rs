//! `perft bench`: fixed cases per game, each run in a child process (so its
//! peak memory is its own) several times, reporting medians.
//!
//! "raw" cases measure the bare move generator: one thread, no table, no
//! merging of transpositions, every leaf enumerated, comparable with other
//! engines' published speeds. "table" cases measure the whole engine:
//! planner, transposition table and threads.

use std::process::Command;
use std::time::Instant;

use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use cpu_time::ProcessTime;
use perft_core::{Convention, Game, GameKind, GameVisitor, Plain};
use perft_local::{LocalJob, count_planned, peak_memory_bytes};
use serde::{Deserialize, Serialize};

use crate::args::{BenchArgs, BenchCaseArgs, EngineArgs, Format};
use crate::error::CliError;
use crate::report::human_bytes;

/// One benchmark case.
#[derive(Debug, Clone, Copy)]
struct Case {
    game: GameKind,
    /// The counting convention, for games with a choice.
    convention: Option<Convention>,
    depth: u32,
    /// `None`: raw; `Some(size)`: the whole engine with a table of `size`.
    table: Option<&'static str>,
}

/// The table size of every table case.
const BENCH_TABLE: &str = "2G";

/// Every game's cases, in registry order, each convention of a game with
/// a choice in turn.
fn cases(full: bool) -> Vec<Case> {
    let mut cases = Vec::new();
    for &game in GameKind::ALL {
        let conventions: Vec<Option<Convention>> = match game.conventions() {
            [] => vec![None],
            some => some.iter().copied().map(Some).collect(),
        };
        for convention in conventions {
            let bench = game
                .fns_in(convention)
                .expect("the game's own conventions")
                .bench();
            let game_cases = if full { bench.full } else { bench.quick };
            cases.extend(game_cases.iter().map(|case| Case {
                game,
                convention,
                depth: case.depth,
                table: case.table.then_some(BENCH_TABLE),
            }));
        }
    }
    cases
}

/// What a child process measured in one run of a case.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Measurement {
    pub leaves: String,
    pub seconds: f64,
    pub cpu_seconds: f64,
    pub peak_memory_bytes: Option<u64>,
}

/// A case's medians over its runs.
#[derive(Debug, Serialize)]
struct CaseResult {
    game: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    convention: Option<&'static str>,
    depth: u32,
    mode: &'static str,
    threads: usize,
    table: Option<String>,
    runs: u64,
    leaves: String,
    median_seconds: f64,
    median_cpu_seconds: f64,
    leaves_per_second: u64,
    peak_memory_bytes: Option<u64>,
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

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
            return Err(CliError::Failed(format!(
                "benchmark case {} depth {} failed: {}",
                case.game.name(),
                case.depth,
                String::from_utf8_lossy(&output.stderr).trim()
            )));
        }
        let m: Measurement = serde_json::from_slice(&output.stdout)
            .map_err(|e| CliError::Failed(format!("bench-case output: {e}")))?;
        measured.push(m);
    }
    let seconds = median(measured.iter().map(|m| m.seconds).collect());
    let leaves = measured[0].leaves.clone();
    if measured.iter().any(|m| m.leaves != leaves) {
        return Err(CliError::Failed(format!(
            "runs of {} depth {} disagree",
            case.game.name(),
            case.depth
        )));
    }
    let count: f64 = leaves.parse().unwrap_or(0.0);
    Ok(CaseResult {
        game: case.game.name(),
        convention: case.convention.map(Convention::name),
        depth: case.depth,
        mode: if case.table.is_some() { "table" } else { "raw" },
        threads,
        table: case.table.map(str::to_owned),
        runs,
        leaves,
        median_seconds: seconds,
        median_cpu_seconds: median(measured.iter().map(|m| m.cpu_seconds).collect()),
        leaves_per_second: if seconds > 0.0 {
            (count / seconds) as u64
        } else {
            0
        },
        peak_memory_bytes: measured.iter().filter_map(|m| m.peak_memory_bytes).max(),
    })
}

/// `perft bench`.
pub fn bench(args: &BenchArgs) -> Result<(), CliError> {
    let cases = cases(args.full);
    let threads = args
        .threads
        .map_or_else(EngineArgs::default_threads, |n| n as usize);
    let mut results = Vec::new();
    if let (Some(game), Some(convention)) = (args.game, args.convention) {
        game.resolve_convention(Some(convention))
            .map_err(|e| CliError::Usage(e.to_string()))?;
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
    let mut out = std::io::stdout().lock();
    match args.format {
        Format::Json => {
            serde_json::to_writer_pretty(&mut out, &results).map_err(|e| CliError::Failed(e.to_string()))?;
            std::io::Write::write_all(&mut out, b"\n")?;
        }
        Format::Text | Format::Csv => {
            let mut table = Table::new();
            table.load_preset(UTF8_FULL_CONDENSED).set_header([
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
            std::io::Write::write_all(
                &mut out,
                format!("{table}\n(medians of {} runs)\n", args.runs).as_bytes(),
            )?;
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

fn measure<G: Game>(args: &BenchCaseArgs) -> Result<Measurement, CliError> {
    let root = G::start();
    let started = Instant::now();
    let cpu = ProcessTime::now();
    let leaves = if args.raw {
        perft_core::divide(&root, args.depth).total
    } else {
        let threads = args.engine.threads();
        let job = LocalJob::new(args.game, args.depth, threads, args.engine.table());
        count_planned::<G, Plain>(&root, &job)?.divide.total
    };
    Ok(Measurement {
        leaves: leaves.leaves.to_string(),
        seconds: started.elapsed().as_secs_f64(),
        cpu_seconds: cpu.elapsed().as_secs_f64(),
        peak_memory_bytes: peak_memory_bytes(),
    })
}

/// [`measure`] for the game chosen on the command line.
struct Measure<'a>(&'a BenchCaseArgs);

impl GameVisitor for Measure<'_> {
    type Output = Result<Measurement, CliError>;
    fn visit<G: Game>(self) -> Self::Output {
        measure::<G>(self.0)
    }
}

/// The hidden `perft bench-case`: one measurement, as JSON on stdout.
pub fn bench_case(args: &BenchCaseArgs) -> Result<(), CliError> {
    let m = args
        .game
        .dispatch_in(args.convention, Measure(args))
        .map_err(|e| CliError::Usage(e.to_string()))??;
    serde_json::to_writer(std::io::stdout().lock(), &m).map_err(|e| CliError::Failed(e.to_string()))
}
