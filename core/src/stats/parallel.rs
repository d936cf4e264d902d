//! Statistics of a plan's units on several OS threads sharing one
//! statistics table, and the divide they make: the same plan, units and
//! weights as the plain count's ([`crate::parallel`]), so the two cannot
//! disagree on the tree.
//!
//! A unit needs at least one ply left: a leaf's kind is that of the move
//! that led to it (a capture, a pass), which a unit at full depth no
//! longer knows.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::count::{StatsCounter, StatsDivide, divide_stats, perft_stats};
use super::table::StatsTable;
use super::{GameStats, LeafStats, Tally};
use crate::parallel::local_plan;
use crate::perft::TableStats;
use crate::plan::{CountOverflow, Plan, PlanError, Weight};

/// The statistics of every unit at `depth`, counted by `threads` threads
/// (at least one) taking units in order from a shared cursor. Returns one
/// result per unit and the threads' table statistics summed.
pub fn count_units_stats<G: GameStats>(
    units: &[G],
    depth: u32,
    threads: usize,
    table: Option<&StatsTable<G>>,
) -> (Vec<LeafStats<G::Stats>>, TableStats) {
    let cursor = AtomicUsize::new(0);
    let mut counts = vec![LeafStats::default(); units.len()];
    let mut probes = TableStats::default();
    std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads.max(1))
            .map(|_| {
                scope.spawn(|| {
                    let mut counter = StatsCounter::new(table);
                    let mut done = Vec::new();
                    loop {
                        let i = cursor.fetch_add(1, Ordering::Relaxed);
                        let Some(unit) = units.get(i) else { break };
                        done.push((i, counter.count(unit, depth)));
                    }
                    (done, counter.probes)
                })
            })
            .collect();
        for worker in workers {
            // A panic in a counting thread is a bug; surface it unchanged.
            let (done, thread_probes) = worker.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
            for (i, count) in done {
                counts[i] = count;
            }
            probes += thread_probes;
        }
    });
    (counts, probes)
}

/// Statistics per first move: `settled` plus, for every counted unit, its
/// statistics times its paths from each first move; every product and sum
/// checked. What a cluster sums its units' statistics with.
pub fn weighted_stats_sum<'w, T: Tally>(
    settled: &[LeafStats<T>],
    units: impl IntoIterator<Item = (&'w [Weight], LeafStats<T>)>,
) -> Result<Vec<LeafStats<T>>, CountOverflow> {
    let mut per_move = settled.to_vec();
    for (weights, stats) in units {
        for w in weights {
            let slot = &mut per_move[w.first_move as usize];
            *slot = stats
                .checked_mul(u128::from(w.paths))
                .and_then(|weighted| slot.checked_add(weighted))
                .ok_or(CountOverflow)?;
        }
    }
    Ok(per_move)
}

/// The divide of `plan` with statistics, from each unit's (`counts[i]` for
/// unit `i`): the plan's settled nodes counted with statistics, plus paths
/// times each unit's. The plan must leave its units at least one ply.
pub fn plan_stats_divide<G: GameStats>(
    plan: &Plan<G>,
    counts: &[LeafStats<G::Stats>],
) -> StatsDivide<G::Move, G::Stats> {
    assert_eq!(counts.len(), plan.units().len(), "one count per unit");
    assert!(
        plan.remaining_depth() > 0 || plan.units().is_empty(),
        "statistics units need a ply: their leaves' kinds are their moves'"
    );
    if plan.first_moves().is_empty() {
        return StatsDivide {
            moves: Vec::new(),
            total: perft_stats(plan.root(), plan.depth()),
        };
    }
    let settled = plan_settled_stats(plan);
    let units = plan
        .units()
        .iter()
        .map(|(_, weights)| weights)
        .zip(counts.iter().copied());
    let per_move = weighted_stats_sum(&settled, units).expect("true counts within MAX_DEPTH fit in u128");
    let total = per_move.iter().copied().sum();
    StatsDivide {
        moves: plan.first_moves().iter().copied().zip(per_move).collect(),
        total,
    }
}

/// The statistics of the nodes `plan` settled while planning (games over
/// above the split), per first move: what a divide adds its units' to, on
/// one machine or a cluster.
pub fn plan_settled_stats<G: GameStats>(plan: &Plan<G>) -> Vec<LeafStats<G::Stats>> {
    let mut settled = vec![LeafStats::default(); plan.first_moves().len()];
    for node in plan.settled_nodes() {
        let stats = perft_stats(&node.position, node.depth);
        for w in &node.weights {
            settled[w.first_move as usize] += stats * u128::from(w.paths);
        }
    }
    settled
}

/// A divide with statistics and the lookups its table served.
pub type StatsCount<G> = (
    StatsDivide<<G as crate::Game>::Move, <G as GameStats>::Stats>,
    TableStats,
);

/// Counts the units of `plan` with statistics on `threads` threads sharing
/// `table`, and the divide they make.
pub fn divide_stats_plan<G: GameStats>(
    plan: &Plan<G>,
    threads: usize,
    table: Option<&StatsTable<G>>,
) -> StatsCount<G> {
    let (counts, probes) =
        count_units_stats(plan.units().positions(), plan.remaining_depth(), threads, table);
    (plan_stats_divide(plan, &counts), probes)
}

/// Divide with statistics of `depth` plies below `root`, planned with
/// transpositions merged (as [`crate::divide_parallel`]) and counted on
/// `threads` threads sharing `table`. Depths 0 and 1 are counted directly:
/// a plan of them would leave its units no ply.
pub fn divide_stats_parallel<G: GameStats>(
    root: &G,
    depth: u32,
    threads: usize,
    table: Option<&StatsTable<G>>,
) -> Result<StatsCount<G>, PlanError> {
    if depth <= 1 {
        return Ok((divide_stats(root, depth), TableStats::default()));
    }
    let plan = local_plan(root, depth, threads)?;
    Ok(divide_stats_plan(&plan, threads, table))
}
