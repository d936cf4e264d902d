//! One job: its plan, its units, its queue of units wanting a lease, and
//! its progress, kept so that every count it sums is checked.

use std::collections::{BTreeMap, VecDeque};

use perft_core::Leaves;

use super::unit::Unit;
use super::{Disagreement, JobSpec, JobState, JobView, unix_ms};
use crate::journal::Op;

#[derive(Debug)]
pub(super) struct Job {
    pub id: String,
    pub spec: JobSpec,
    pub split_depth: u32,
    pub remaining_depth: u32,
    pub first_moves: Vec<String>,
    pub settled: Vec<Leaves>,
    /// A root with no move: its whole count, found when planning.
    pub root_leaves: Option<Leaves>,
    pub units: Vec<Unit>,
    /// Units wanting a lease, grouped by their first first-move, so a worker
    /// keeps getting related subtrees and its table hits more.
    pub pending: BTreeMap<u32, VecDeque<u64>>,
    pub done: u64,
    pub released: u64,
    /// Leaves of the decided units, weighted; checked, never wrapping.
    pub leaves_done: u128,
    pub state: JobState,
    pub error: Option<String>,
    pub started_ms: Option<u64>,
    pub finished_ms: Option<u64>,
    pub disagreements: Vec<Disagreement>,
}

impl Job {
    pub fn group(&self, unit: u64) -> u32 {
        self.units[unit as usize]
            .weights
            .first()
            .map_or(0, |w| w.first_move)
    }

    /// Puts a unit that wants a lease back in its group's queue, first.
    pub fn requeue(&mut self, unit_id: u64) {
        let unit = &self.units[unit_id as usize];
        if unit.queued || !unit.needs_lease() || self.state.is_final() {
            return;
        }
        let group = self.group(unit_id);
        self.pending.entry(group).or_default().push_front(unit_id);
        self.units[unit_id as usize].queued = true;
    }

    /// Queues every unit that wants a lease, in plan order.
    pub fn queue_all(&mut self) {
        for unit_id in 0..self.units.len() as u64 {
            let group = self.group(unit_id);
            let unit = &mut self.units[unit_id as usize];
            if !unit.queued && unit.needs_lease() {
                self.pending.entry(group).or_default().push_back(unit_id);
                unit.queued = true;
            }
        }
    }

    pub fn finish(&mut self, state: JobState, error: Option<String>) {
        self.state = state;
        self.error = error;
        self.finished_ms = Some(unix_ms());
        self.pending.clear();
        // A finished job holds no lease: a resumed one leases afresh.
        for unit in &mut self.units {
            unit.queued = false;
            unit.clear_leases();
        }
    }

    /// The journal record of the job's state.
    pub fn state_op(&self) -> Op {
        Op::JobState {
            job_id: self.id.clone(),
            state: self.state,
            error: self.error.clone(),
            started_ms: self.started_ms,
            finished_ms: self.finished_ms,
            released: self.released,
        }
    }

    /// Leaves counted so far, settled ones included; `None` past `u128`
    /// (only a forged or damaged count gets there, and fails the job).
    fn leaves_so_far(&self) -> Option<u128> {
        self.settled
            .iter()
            .try_fold(self.leaves_done, |sum, l| sum.checked_add(l.leaves))?
            .checked_add(self.root_leaves.map_or(0, |l| l.leaves))
    }

    pub fn view(&self) -> JobView {
        let seconds = match (self.started_ms, self.finished_ms) {
            (Some(start), Some(end)) => end.saturating_sub(start) as f64 / 1000.0,
            (Some(start), None) => unix_ms().saturating_sub(start) as f64 / 1000.0,
            _ => 0.0,
        };
        JobView {
            id: self.id.clone(),
            spec: self.spec.clone(),
            split_depth: self.split_depth,
            state: self.state,
            error: self.error.clone(),
            units_total: self.units.len() as u64,
            units_done: self.done,
            units_released: self.released,
            leaves_done: self.leaves_so_far().unwrap_or(u128::MAX),
            seconds,
            disagreements: self.disagreements.clone(),
        }
    }

    /// Counts a decided unit in. A weighted sum past `u128` fails the job
    /// (returns false): no true count gets there.
    pub fn decided(&mut self, unit_id: u64, leaves: Leaves) -> bool {
        self.done += 1;
        let weighted = self.units[unit_id as usize]
            .weights
            .iter()
            .try_fold(0u128, |sum, w| {
                leaves
                    .leaves
                    .checked_mul(u128::from(w.paths))
                    .and_then(|n| sum.checked_add(n))
            });
        if let Some(total) = weighted.and_then(|n| self.leaves_done.checked_add(n)) {
            self.leaves_done = total;
            if self.leaves_so_far().is_some() {
                return true;
            }
        }
        let reason = format!(
            "the count of unit {unit_id} ({}) makes the total overflow u128: a forged or damaged count",
            leaves.leaves
        );
        self.finish(JobState::Failed, Some(reason));
        false
    }
}
