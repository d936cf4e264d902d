//! Counting a plan's units on several OS threads that share one table, and
//! the divide they make: one body for every measure ([`Measure`]), so a
//! plain count and a count by kind cannot disagree on the tree. Never on
//! an async runtime's threads: perft blocks for as long as it runs.

use std::sync::atomic::{AtomicUsize, Ordering};

use crate::divide::{Divide, divide_by};
use crate::game::Game;
use crate::measure::Measure;
use crate::perft::TableStats;
use crate::plan::{Plan, PlanError};

/// Counts every unit at `depth` under measure `M` with `threads` threads
/// (at least one), handing units out in order from a shared cursor.
/// Returns one count per unit and the threads' table statistics summed.
pub fn count_units<G: Game, M: Measure<G>>(
    units: &[G],
    depth: u32,
    threads: usize,
    table: Option<&M::Table>,
) -> (Vec<M::Count>, TableStats) {
    count_units_watched::<G, M>(units, depth, threads, table, &AtomicUsize::new(0))
}

/// [`count_units`], adding one to `finished` as each unit is counted, so
/// another thread can show the progress.
pub fn count_units_watched<G: Game, M: Measure<G>>(
    units: &[G],
    depth: u32,
    threads: usize,
    table: Option<&M::Table>,
    finished: &AtomicUsize,
) -> (Vec<M::Count>, TableStats) {
    let cursor = AtomicUsize::new(0);
    let mut counts = vec![M::Count::default(); units.len()];
    let mut stats = TableStats::default();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.max(1))
            .map(|_| {
                scope.spawn(|| {
                    let mut counter = M::counter(table);
                    let mut done = Vec::new();
                    loop {
                        let i = cursor.fetch_add(1, Ordering::Relaxed);
                        let Some(unit) = units.get(i) else { break };
                        done.push((i, M::count(&mut counter, unit, depth)));
                        finished.fetch_add(1, Ordering::Relaxed);
                    }
                    (done, M::probes(&counter))
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

/// A divide and the lookups its table served.
pub type DivideWithProbes<G, M> = (Divide<<G as Game>::Move, <M as Measure<G>>::Count>, TableStats);

/// Divide of `depth` plies below `root` under measure `M`, planned with
/// transpositions merged and counted on `threads` threads sharing `table`.
/// A depth too shallow to leave units their plies ([`Measure::UNIT_PLIES`])
/// is counted directly.
pub fn divide_parallel<G: Game, M: Measure<G>>(
    root: &G,
    depth: u32,
    threads: usize,
    table: Option<&M::Table>,
) -> Result<DivideWithProbes<G, M>, PlanError> {
    if depth <= M::UNIT_PLIES {
        return Ok((divide_by::<G, M>(root, depth), TableStats::default()));
    }
    let plan = local_plan(root, depth, threads)?;
    Ok(divide_plan::<G, M>(&plan, threads, table))
}

/// The plan [`divide_parallel`] counts: transpositions merged, enough units
/// for `threads` threads to finish close together. Made apart from the
/// count so the table can be sized to it. `depth` must be at least 1.
pub fn local_plan<G: Game>(root: &G, depth: u32, threads: usize) -> Result<Plan<G>, PlanError> {
    Plan::with_min_units(*root, depth, threads.max(1) * UNITS_PER_THREAD, usize::MAX)
}

/// Counts the units of `plan` under measure `M` on `threads` threads
/// sharing `table`, and the divide they make.
pub fn divide_plan<G: Game, M: Measure<G>>(
    plan: &Plan<G>,
    threads: usize,
    table: Option<&M::Table>,
) -> DivideWithProbes<G, M> {
    let (counts, stats) =
        count_units::<G, M>(plan.units().positions(), plan.remaining_depth(), threads, table);
    (plan.divide::<M>(&counts), stats)
}
