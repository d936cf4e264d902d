//! Counting a plan's units on several OS threads that share one table.
//! Never on an async runtime's threads: perft blocks for as long as it runs.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::count::Leaves;
use crate::game::Game;
use crate::perft::{Counter, Divide, TableStats};
use crate::plan::{Plan, PlanError};
use crate::table::TranspositionTable;

/// Counts every unit at `depth` with `threads` threads (at least one),
/// handing units out in order from a shared cursor. Returns one count per
/// unit and the threads' table statistics summed.
pub fn count_units<G: Game>(
    units: &[G],
    depth: u32,
    threads: usize,
    table: Option<&TranspositionTable>,
) -> (Vec<Leaves>, TableStats) {
    let cursor = AtomicUsize::new(0);
    let mut counts = vec![Leaves::ZERO; units.len()];
    let mut stats = TableStats::default();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.max(1))
            .map(|_| {
                scope.spawn(|| {
                    let mut counter = Counter::new(table);
                    let mut done = Vec::new();
                    loop {
                        let i = cursor.fetch_add(1, Ordering::Relaxed);
                        let Some(unit) = units.get(i) else { break };
                        done.push((i, counter.perft(unit, depth)));
                    }
                    (done, counter.stats)
                })
            })
            .collect();
        for worker in workers {
            // A panic in a counting thread is a bug; surface it unchanged.
            let (done, thread_stats) = worker.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
            for (i, count) in done {
                counts[i] = count;
            }
            stats += thread_stats;
        }
    });
    (counts, stats)
}

/// Units per thread that the local run aims for, so that threads finish
/// close together.
pub const UNITS_PER_THREAD: usize = 32;

/// Divide of `depth` plies below `root`, planned with transpositions merged
/// and counted on `threads` threads sharing `table`.
pub fn divide_parallel<G: Game>(
    root: &G,
    depth: u32,
    threads: usize,
    table: Option<&TranspositionTable>,
) -> Result<(Divide<G::Move>, TableStats), PlanError> {
    if depth == 0 {
        let divide = Divide {
            moves: Vec::new(),
            total: Leaves::full(1),
        };
        return Ok((divide, TableStats::default()));
    }
    let plan = local_plan(root, depth, threads)?;
    Ok(divide_plan(&plan, threads, table))
}

/// The plan [`divide_parallel`] counts: transpositions merged, enough units
/// for `threads` threads to finish close together. Made apart from the
/// count so the table can be sized to it. `depth` must be at least 1.
pub fn local_plan<G: Game>(root: &G, depth: u32, threads: usize) -> Result<Plan<G>, PlanError> {
    Plan::with_min_units(*root, depth, threads.max(1) * UNITS_PER_THREAD, usize::MAX)
}

/// Counts the units of `plan` on `threads` threads sharing `table`, and the
/// divide they make.
pub fn divide_plan<G: Game>(
    plan: &Plan<G>,
    threads: usize,
    table: Option<&TranspositionTable>,
) -> (Divide<G::Move>, TableStats) {
    let (counts, stats) = count_units(plan.units().positions(), plan.remaining_depth(), threads, table);
    (plan.divide(&counts), stats)
}
