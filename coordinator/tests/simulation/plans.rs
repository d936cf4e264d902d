//! The simulated jobs: small checkers perfts split at 2, planned once per
//! process, with every unit's true count and what it adds to the total.

use std::sync::OnceLock;

use perft_coordinator::jobs::JobSpec;
use perft_coordinator::planning::{PlanRequest, PlannedJob, plan};
use perft_core::{Checkers, Game, GameKind};
use perft_model::Count;
use perft_model::ParticipantId;

/// One plan and the truth about it.
#[derive(Debug)]
pub struct Plan {
    pub depth: u32,
    pub planned: PlannedJob,
    /// Each unit's true count.
    pub truth: Vec<Count>,
    /// Paths to each unit from the root: what its count adds, per leaf.
    pub paths: Vec<u128>,
    /// Leaves settled while planning.
    pub settled: u128,
    /// The published total.
    pub published: u128,
    /// The units' estimated work, summed as the table sums it.
    work_total: f64,
}

impl Plan {
    fn new(depth: u32) -> Plan {
        let planned = plan(GameKind::Checkers, &PlanRequest::split_at(depth, 2)).expect("a checkers plan");
        let units = &planned.units;
        let truth: Vec<Count> = (0..units.len())
            .map(|i| {
                let position = Checkers::unpack(units.position(i)).expect("a packed position");
                Count::plain(perft_core::perft(&position, planned.remaining_depth))
            })
            .collect();
        let paths: Vec<u128> = (0..units.len())
            .map(|i| units.weights(i).iter().map(|w| u128::from(w.paths)).sum())
            .collect();
        let settled = planned.settled.iter().map(|c| c.leaves.leaves).sum();
        let mut work_total = 0.0;
        for i in 0..units.len() {
            work_total += f64::from(units.estimate(i));
        }
        let published = GameKind::Checkers
            .fns()
            .published(depth)
            .expect("a published checkers total")
            .total
            .leaves;
        let plan = Plan {
            depth,
            planned,
            truth,
            paths,
            settled,
            published,
            work_total,
        };
        let all = plan.total(plan.truth.iter().copied().enumerate().map(|(u, c)| (u as u64, c)));
        assert_eq!(
            all, plan.published,
            "the true counts sum to the published perft({depth})"
        );
        plan
    }

    pub fn units(&self) -> u64 {
        self.truth.len() as u64
    }

    /// The job's total from the decided units' counts, as its divide sums
    /// them.
    pub fn total(&self, decided: impl Iterator<Item = (u64, Count)>) -> u128 {
        decided.fold(self.settled, |sum, (unit, count)| {
            sum + count.leaves.leaves * self.paths[unit as usize]
        })
    }

    /// How long a lease of `unit` may go without its count: the table's
    /// rule (the average unit gets `progress_ms`, a larger one
    /// proportionally more, at most a hundred times), computed here
    /// independently.
    pub fn allowance_ms(&self, unit: u64, progress_ms: u64) -> u64 {
        let mean = self.work_total / self.units().max(1) as f64;
        let estimate = f64::from(self.planned.units.estimate(unit as usize));
        let factor = if mean > 0.0 && estimate.is_finite() {
            (estimate / mean).clamp(1.0, 100.0)
        } else {
            1.0
        };
        (progress_ms as f64 * factor) as u64
    }

    /// The job's spec.
    pub fn spec(&self, verify: bool) -> JobSpec {
        let owner = ParticipantId::parse("submitter").expect("a participant name");
        JobSpec {
            verify,
            ..JobSpec::plain(GameKind::Checkers, &self.planned, self.depth, owner)
        }
    }
}

/// Checkers perft(4) and perft(5), split at 2.
pub fn plans() -> &'static [Plan] {
    static PLANS: OnceLock<Vec<Plan>> = OnceLock::new();
    PLANS.get_or_init(|| [4, 5].into_iter().map(Plan::new).collect())
}
