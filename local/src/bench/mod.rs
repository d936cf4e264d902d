//! The benchmark: fixed cases per game, one run of a case measured (wall
//! and CPU time, peak memory), and a case's medians over its runs.
//!
//! "raw" cases measure the bare move generator: one thread, no table, no
//! merging of transpositions, every leaf enumerated, comparable with other
//! engines' published speeds. "table" cases measure the whole engine:
//! planner, transposition table and threads. Each run is best made in a
//! process of its own, so that its peak memory is its own: starting those
//! processes is the caller's.

pub mod anchors;

use std::time::Instant;

use cpu_time::ProcessTime;
use perft_core::{Convention, Game, GameKind, Plain};
use serde::{Deserialize, Serialize};

use crate::count::{LocalJob, count_planned, count_raw};
use crate::error::LocalError;
use crate::memory::peak_memory_bytes;
use crate::table::TableChoice;

/// The table size of every table case, as `--hash` takes it.
pub const BENCH_TABLE: &str = "2G";

/// One benchmark case.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Case {
    /// The game.
    pub game: GameKind,
    /// The counting convention, for games with a choice.
    pub convention: Option<Convention>,
    /// Plies counted from the start.
    pub depth: u32,
    /// `None`: raw; `Some(size)`: the whole engine with a table of `size`.
    pub table: Option<&'static str>,
}

/// Every game's cases (`full`: those of the speed targets, minutes a run),
/// in registry order, each convention of a game with a choice in turn.
pub fn cases(full: bool) -> Vec<Case> {
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

/// How one run of a case counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaseEngine {
    /// The bare move generator: one thread, no table, nothing merged.
    Raw,
    /// The whole engine: planner, the table chosen, `threads` threads.
    Planned {
        /// Counting threads.
        threads: usize,
        /// The table they share.
        table: TableChoice,
    },
}

/// What one run of a case measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// The leaves counted, in decimal.
    pub leaves: String,
    /// Wall time.
    pub seconds: f64,
    /// CPU time of the whole process.
    pub cpu_seconds: f64,
    /// The process's peak resident memory, where the OS tells it.
    pub peak_memory_bytes: Option<u64>,
}

/// Counts `game`'s start (as `G`) to `depth` with `engine` and measures
/// the count.
pub fn measure<G: Game>(game: GameKind, depth: u32, engine: CaseEngine) -> Result<Measurement, LocalError> {
    let root = G::start();
    let started = Instant::now();
    let cpu = ProcessTime::now();
    let counted = match engine {
        CaseEngine::Raw => count_raw::<G, Plain>(&root, depth),
        CaseEngine::Planned { threads, table } => {
            count_planned::<G, Plain>(&root, &LocalJob::new(game, depth, threads, table))?
        }
    };
    Ok(Measurement {
        leaves: counted.divide.total.leaves.to_string(),
        seconds: started.elapsed().as_secs_f64(),
        cpu_seconds: cpu.elapsed().as_secs_f64(),
        peak_memory_bytes: peak_memory_bytes(),
    })
}

/// A case's medians over its runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CaseResult {
    /// The game's name.
    pub game: &'static str,
    /// The convention's name, for games with a choice.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub convention: Option<&'static str>,
    /// Plies counted.
    pub depth: u32,
    /// `raw` or `table`.
    pub mode: &'static str,
    /// Counting threads.
    pub threads: usize,
    /// The table's size, as `--hash` takes it; `None` when raw.
    pub table: Option<String>,
    /// Runs measured.
    pub runs: u64,
    /// The leaves every run counted, in decimal.
    pub leaves: String,
    /// The median wall time.
    pub median_seconds: f64,
    /// The median CPU time.
    pub median_cpu_seconds: f64,
    /// Leaves over the median wall time (0 when none was measured).
    pub leaves_per_second: u64,
    /// The largest peak memory of the runs.
    pub peak_memory_bytes: Option<u64>,
}

impl CaseResult {
    /// The medians of `case`'s runs `measured` on `threads` threads; runs
    /// that counted different leaves are an error.
    pub fn of_runs(case: Case, threads: usize, measured: &[Measurement]) -> Result<CaseResult, LocalError> {
        let game = case.game.name();
        let Some(first) = measured.first() else {
            return Err(LocalError::NoRuns {
                game,
                depth: case.depth,
            });
        };
        let leaves = first.leaves.clone();
        if measured.iter().any(|m| m.leaves != leaves) {
            return Err(LocalError::RunsDisagree {
                game,
                depth: case.depth,
            });
        }
        let seconds = median(measured.iter().map(|m| m.seconds).collect());
        let count: f64 = leaves.parse().unwrap_or(0.0);
        Ok(CaseResult {
            game,
            convention: case.convention.map(Convention::name),
            depth: case.depth,
            mode: if case.table.is_some() { "table" } else { "raw" },
            threads,
            table: case.table.map(str::to_owned),
            runs: measured.len() as u64,
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
}

/// The middle value (the mean of the middle two for an even count);
/// `values` is not empty.
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    }
}

#[cfg(test)]
mod tests {
    use perft_core::Reversi;

    use super::*;

    fn measured(leaves: &str, seconds: f64) -> Measurement {
        Measurement {
            leaves: leaves.to_owned(),
            seconds,
            cpu_seconds: 2.0 * seconds,
            peak_memory_bytes: Some((seconds * 100.0) as u64),
        }
    }

    #[test]
    fn the_median_is_the_middle_or_the_mean_of_the_middle_two() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(vec![5.0]), 5.0);
    }

    #[test]
    fn every_game_has_quick_cases_raw_and_with_a_table() {
        let quick = cases(false);
        for &game in GameKind::ALL {
            assert!(quick.iter().any(|c| c.game == game), "{game} has no case");
        }
        assert!(quick.iter().any(|c| c.table.is_none()));
        assert!(
            quick
                .iter()
                .all(|c| c.table.is_none_or(|size| size == BENCH_TABLE))
        );
    }

    #[test]
    fn a_case_sums_to_its_medians_and_its_largest_peak() {
        let case = Case {
            game: GameKind::Reversi,
            convention: None,
            depth: 4,
            table: Some(BENCH_TABLE),
        };
        let runs = [measured("244", 1.0), measured("244", 4.0), measured("244", 2.0)];
        let result = CaseResult::of_runs(case, 2, &runs).expect("agreeing runs");
        assert_eq!((result.median_seconds, result.median_cpu_seconds), (2.0, 4.0));
        assert_eq!(result.leaves_per_second, 122);
        assert_eq!(result.peak_memory_bytes, Some(400));
        assert_eq!((result.mode, result.runs), ("table", 3));
        let disagreeing = [measured("244", 1.0), measured("245", 1.0)];
        assert!(matches!(
            CaseResult::of_runs(case, 2, &disagreeing),
            Err(LocalError::RunsDisagree { depth: 4, .. })
        ));
        assert!(matches!(
            CaseResult::of_runs(case, 2, &[]),
            Err(LocalError::NoRuns { .. })
        ));
    }

    #[test]
    fn raw_and_planned_runs_count_the_same_leaves() {
        let raw = measure::<Reversi>(GameKind::Reversi, 4, CaseEngine::Raw).expect("measured");
        let planned = CaseEngine::Planned {
            threads: 2,
            table: TableChoice::Bytes(1 << 20),
        };
        let planned = measure::<Reversi>(GameKind::Reversi, 4, planned).expect("measured");
        assert_eq!(raw.leaves, "244");
        assert_eq!(planned.leaves, "244");
    }
}
