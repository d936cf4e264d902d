//! Jobs and their units as an explicit state machine, without I/O: the gRPC
//! services and the lease reaper drive it under one lock.
//!
//! Job: Queued -> Running -> Done | Failed; Queued | Running -> Cancelled.
//! Unit: Pending -> Leased -> Done; Leased -> Pending when its lease
//! expires or the worker hands it back. A result is accepted once per unit,
//! from whichever lease delivers it first; later ones are ignored.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use perft_core::{GameKind, Leaves, Weight, weighted_sum};

use crate::journal::{Op, RestoredJob};
use crate::planning::PlannedJob;

/// Milliseconds since the Unix epoch: job times survive restarts.
pub fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// Lifecycle of a job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobState {
    Queued,
    Running,
    Done,
    Failed,
    Cancelled,
}

impl JobState {
    /// Done, failed or cancelled: nothing will change any more.
    pub fn is_final(self) -> bool {
        matches!(self, JobState::Done | JobState::Failed | JobState::Cancelled)
    }
}

/// What a client asked for, validated.
#[derive(Clone, Debug)]
pub struct JobSpec {
    pub game: GameKind,
    /// Canonical text of the root.
    pub position: String,
    pub depth: u32,
    pub verify: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum UnitState {
    Pending,
    Leased {
        worker: String,
        epoch: u64,
        deadline: Instant,
    },
    Done {
        leaves: Leaves,
    },
}

#[derive(Clone, Debug)]
struct Unit {
    position: String,
    weights: Vec<Weight>,
    state: UnitState,
    /// Leases that ended without a result.
    failures: u32,
}

/// A unit handed to a worker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeasedUnit {
    pub job_id: String,
    pub unit_id: u64,
    pub epoch: u64,
    pub game: GameKind,
    pub position: String,
    pub depth: u32,
}

/// A job's state as clients see it.
#[derive(Clone, Debug)]
pub struct JobView {
    pub id: String,
    pub spec: JobSpec,
    pub split_depth: u32,
    pub state: JobState,
    pub error: Option<String>,
    pub units_total: u64,
    pub units_done: u64,
    pub units_released: u64,
    pub leaves_done: u128,
    pub seconds: f64,
}

/// A job's divide table so far.
#[derive(Clone, Debug)]
pub struct DivideView {
    pub job: JobView,
    pub moves: Vec<(String, Leaves)>,
    pub total: Leaves,
}

/// A unit fails the job after this many leases ended without a result.
pub const MAX_UNIT_FAILURES: u32 = 8;

#[derive(Debug)]
struct Job {
    id: String,
    spec: JobSpec,
    split_depth: u32,
    remaining_depth: u32,
    first_moves: Vec<String>,
    settled: Vec<Leaves>,
    /// A root with no move: its whole count, found when planning.
    root_leaves: Option<Leaves>,
    units: Vec<Unit>,
    /// Pending units grouped by their first first-move, so a worker keeps
    /// getting related subtrees and its table hits more.
    pending: BTreeMap<u32, VecDeque<u64>>,
    done: u64,
    released: u64,
    leaves_done: u128,
    state: JobState,
    error: Option<String>,
    started_ms: Option<u64>,
    finished_ms: Option<u64>,
}

impl Job {
    fn group(&self, unit: u64) -> u32 {
        self.units[unit as usize]
            .weights
            .first()
            .map_or(0, |w| w.first_move)
    }

    fn requeue(&mut self, unit: u64) {
        let group = self.group(unit);
        self.pending.entry(group).or_default().push_front(unit);
    }

    fn finish(&mut self, state: JobState, error: Option<String>) {
        self.state = state;
        self.error = error;
        self.finished_ms = Some(unix_ms());
        self.pending.clear();
    }

    /// The journal record of the job's state.
    fn state_op(&self) -> Op {
        Op::JobState {
            job_id: self.id.clone(),
            state: self.state,
            error: self.error.clone(),
            started_ms: self.started_ms,
            finished_ms: self.finished_ms,
            released: self.released,
        }
    }

    fn view(&self, _now: Instant) -> JobView {
        let seconds = match (self.started_ms, self.finished_ms) {
            (Some(start), Some(end)) => end.saturating_sub(start) as f64 / 1000.0,
            (Some(start), None) => unix_ms().saturating_sub(start) as f64 / 1000.0,
            _ => 0.0,
        };
        let settled: u128 = self.settled.iter().map(|l| l.leaves).sum();
        JobView {
            id: self.id.clone(),
            spec: self.spec.clone(),
            split_depth: self.split_depth,
            state: self.state,
            error: self.error.clone(),
            units_total: self.units.len() as u64,
            units_done: self.done,
            units_released: self.released,
            leaves_done: self.leaves_done + settled + self.root_leaves.map_or(0, |l| l.leaves),
            seconds,
        }
    }
}

/// Outcome of one reported result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reported {
    Accepted,
    /// Unknown job or unit, a finished job, or a unit already done.
    Ignored,
}

/// Why a job operation was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum JobError {
    #[error("no job '{0}'")]
    NotFound(String),
}

/// Every job, in submission order.
#[derive(Debug)]
pub struct Jobs {
    order: Vec<String>,
    jobs: HashMap<String, Job>,
    next_epoch: u64,
    /// Changes not yet handed to the journal, in the order they happened.
    outbox: Vec<Op>,
}

impl Default for Jobs {
    fn default() -> Jobs {
        Jobs {
            order: Vec::new(),
            jobs: HashMap::new(),
            // Epochs go on growing across restarts, so a lease from before a
            // restart is never mistaken for a new one.
            next_epoch: unix_ms() * 1000,
            outbox: Vec::new(),
        }
    }
}

impl Jobs {
    /// The changes made since the last call, for the journal, in order.
    pub fn take_ops(&mut self) -> Vec<Op> {
        std::mem::take(&mut self.outbox)
    }

    /// Queues a planned job under `id`.
    pub fn submit(&mut self, id: String, spec: JobSpec, plan: PlannedJob, now: Instant) {
        self.outbox.push(Op::Submit {
            seq: self.order.len() as u64,
            id: id.clone(),
            spec: spec.clone(),
            plan: plan.clone(),
        });
        self.insert(id, spec, plan, now);
        let job = &self.jobs[self.order.last().expect("just inserted")];
        if job.state != JobState::Queued {
            self.outbox.push(job.state_op());
        }
    }

    /// Rebuilds a job read back from the journal: results are applied, and
    /// every unit without one is pending again.
    pub fn restore(&mut self, restored: RestoredJob, now: Instant) {
        let RestoredJob {
            id,
            spec,
            plan,
            state,
            error,
            started_ms,
            finished_ms,
            released,
            results,
        } = restored;
        self.insert(id.clone(), spec, plan, now);
        let job = self.jobs.get_mut(&id).expect("just inserted");
        job.released = released;
        job.started_ms = started_ms;
        for (unit_id, leaves) in results {
            let unit = &mut job.units[unit_id as usize];
            if !matches!(unit.state, UnitState::Done { .. }) {
                unit.state = UnitState::Done { leaves };
                let weight: u128 = unit.weights.iter().map(|w| u128::from(w.paths)).sum();
                job.leaves_done += leaves.leaves * weight;
                job.done += 1;
            }
        }
        job.pending.clear();
        for unit_id in 0..job.units.len() as u64 {
            if !matches!(job.units[unit_id as usize].state, UnitState::Done { .. }) {
                let group = job.group(unit_id);
                job.pending.entry(group).or_default().push_back(unit_id);
            }
        }
        let complete = job.done == job.units.len() as u64;
        match state {
            JobState::Cancelled | JobState::Failed => {
                job.state = state;
                job.error = error;
                job.finished_ms = finished_ms;
                job.pending.clear();
            }
            _ if complete => {
                job.state = JobState::Done;
                job.finished_ms = finished_ms.or(Some(unix_ms()));
                job.pending.clear();
            }
            // Queued or running (a journal never says done with units left).
            _ => {
                job.state = if started_ms.is_some() {
                    JobState::Running
                } else {
                    JobState::Queued
                }
            }
        }
    }

    fn insert(&mut self, id: String, spec: JobSpec, plan: PlannedJob, _now: Instant) {
        let mut job = Job {
            id: id.clone(),
            spec,
            split_depth: plan.split_depth,
            remaining_depth: plan.remaining_depth,
            first_moves: plan.first_moves,
            settled: plan.settled,
            root_leaves: plan.root_leaves,
            units: plan
                .units
                .into_iter()
                .map(|(position, weights)| Unit {
                    position,
                    weights,
                    state: UnitState::Pending,
                    failures: 0,
                })
                .collect(),
            pending: BTreeMap::new(),
            done: 0,
            released: 0,
            leaves_done: 0,
            state: JobState::Queued,
            error: None,
            started_ms: None,
            finished_ms: None,
        };
        for unit in 0..job.units.len() as u64 {
            let group = job.group(unit);
            job.pending.entry(group).or_default().push_back(unit);
        }
        if job.units.is_empty() {
            // Nothing to count: everything was settled while planning.
            job.started_ms = Some(unix_ms());
            job.finish(JobState::Done, None);
        }
        self.order.push(id.clone());
        self.jobs.insert(id, job);
    }

    /// Leases up to `max` units to `worker`, from the first unfinished job
    /// with pending units, preferring the first move of `affinity`
    /// (updated to what was handed out).
    pub fn lease(
        &mut self,
        worker: &str,
        max: usize,
        affinity: &mut Option<(String, u32)>,
        now: Instant,
        ttl: Duration,
    ) -> Vec<LeasedUnit> {
        let mut out = Vec::new();
        for id in &self.order {
            if out.len() >= max {
                break;
            }
            let job = self.jobs.get_mut(id).expect("ordered jobs exist");
            if job.state.is_final() || job.pending.is_empty() {
                continue;
            }
            if job.state == JobState::Queued {
                job.state = JobState::Running;
                job.started_ms = Some(unix_ms());
                self.outbox.push(job.state_op());
            }
            while out.len() < max {
                let group = match affinity {
                    Some((job_id, group)) if job_id == id && job.pending.contains_key(group) => *group,
                    // Switch to the largest group left: most related work.
                    _ => match job.pending.iter().max_by_key(|(_, q)| q.len()) {
                        Some((&group, _)) => group,
                        None => break,
                    },
                };
                let queue = job.pending.get_mut(&group).expect("group exists");
                let unit_id = queue.pop_front().expect("groups are never empty");
                if queue.is_empty() {
                    job.pending.remove(&group);
                }
                self.next_epoch += 1;
                let epoch = self.next_epoch;
                let unit = &mut job.units[unit_id as usize];
                unit.state = UnitState::Leased {
                    worker: worker.to_owned(),
                    epoch,
                    deadline: now + ttl,
                };
                *affinity = Some((id.clone(), group));
                out.push(LeasedUnit {
                    job_id: id.clone(),
                    unit_id,
                    epoch,
                    game: job.spec.game,
                    position: unit.position.clone(),
                    depth: job.remaining_depth,
                });
            }
        }
        out
    }

    /// Records a unit's count from `worker`, once.
    pub fn report(
        &mut self,
        job_id: &str,
        unit_id: u64,
        leaves: Leaves,
        worker: &str,
        _now: Instant,
    ) -> Reported {
        let Some(job) = self.jobs.get_mut(job_id) else {
            return Reported::Ignored;
        };
        if job.state.is_final() {
            return Reported::Ignored;
        }
        let Some(unit) = job.units.get_mut(unit_id as usize) else {
            return Reported::Ignored;
        };
        match unit.state {
            UnitState::Done { .. } => return Reported::Ignored,
            UnitState::Pending => {
                // A late result for a unit whose lease expired: the count is
                // exact all the same, so take it and stop re-leasing it.
                let group = job.units[unit_id as usize]
                    .weights
                    .first()
                    .map_or(0, |w| w.first_move);
                if let Some(queue) = job.pending.get_mut(&group) {
                    queue.retain(|&u| u != unit_id);
                    if queue.is_empty() {
                        job.pending.remove(&group);
                    }
                }
            }
            UnitState::Leased { .. } => {}
        }
        let unit = &mut job.units[unit_id as usize];
        unit.state = UnitState::Done { leaves };
        let weight: u128 = unit.weights.iter().map(|w| u128::from(w.paths)).sum();
        job.leaves_done += leaves.leaves * weight;
        job.done += 1;
        self.outbox.push(Op::Result {
            job_id: job_id.to_owned(),
            unit_id,
            leaves,
            worker: worker.to_owned(),
        });
        if job.done == job.units.len() as u64 {
            job.finish(JobState::Done, None);
            self.outbox.push(job.state_op());
        }
        Reported::Accepted
    }

    /// Puts a leased unit back in the queue (its worker gave it back).
    pub fn release(&mut self, job_id: &str, unit_id: u64, epoch: u64) -> bool {
        let Some(job) = self.jobs.get_mut(job_id) else {
            return false;
        };
        let holds = matches!(
            job.units.get(unit_id as usize).map(|u| &u.state),
            Some(UnitState::Leased { epoch: e, .. }) if *e == epoch
        );
        if holds && !job.state.is_final() {
            job.units[unit_id as usize].state = UnitState::Pending;
            job.released += 1;
            job.requeue(unit_id);
            self.outbox.push(job.state_op());
        }
        holds
    }

    /// Extends every lease of `worker` to `now + ttl`; returns how many.
    pub fn renew(&mut self, worker: &str, now: Instant, ttl: Duration) -> u32 {
        let mut renewed = 0;
        for job in self.jobs.values_mut().filter(|j| !j.state.is_final()) {
            for unit in &mut job.units {
                if let UnitState::Leased {
                    worker: w, deadline, ..
                } = &mut unit.state
                    && w == worker
                {
                    *deadline = now + ttl;
                    renewed += 1;
                }
            }
        }
        renewed
    }

    /// Re-queues every unit whose lease ran out: the one path for a lost,
    /// killed or cut-off worker. A unit that keeps failing fails its job.
    /// Returns the number of units re-queued.
    pub fn expire(&mut self, now: Instant) -> u64 {
        let mut expired = 0;
        for job in self.jobs.values_mut().filter(|j| !j.state.is_final()) {
            let released_before = job.released;
            let mut failed = None;
            for unit_id in 0..job.units.len() as u64 {
                let unit = &mut job.units[unit_id as usize];
                if !matches!(unit.state, UnitState::Leased { deadline, .. } if deadline <= now) {
                    continue;
                }
                unit.state = UnitState::Pending;
                unit.failures += 1;
                if unit.failures >= MAX_UNIT_FAILURES {
                    failed = Some(format!(
                        "unit {unit_id} ({}) lost its lease {MAX_UNIT_FAILURES} times",
                        unit.position
                    ));
                }
                job.released += 1;
                expired += 1;
                job.requeue(unit_id);
            }
            if let Some(reason) = failed {
                job.finish(JobState::Failed, Some(reason));
            }
            if job.released != released_before {
                self.outbox.push(job.state_op());
            }
        }
        expired
    }

    /// Cancels a job that has not finished; its units are no longer leased
    /// and late results for it are ignored.
    pub fn cancel(&mut self, job_id: &str, now: Instant) -> Result<JobView, JobError> {
        let job = self
            .jobs
            .get_mut(job_id)
            .ok_or_else(|| JobError::NotFound(job_id.to_owned()))?;
        if !job.state.is_final() {
            job.finish(JobState::Cancelled, None);
            self.outbox.push(job.state_op());
        }
        Ok(job.view(now))
    }

    pub fn view(&self, job_id: &str, now: Instant) -> Result<JobView, JobError> {
        self.jobs
            .get(job_id)
            .map(|job| job.view(now))
            .ok_or_else(|| JobError::NotFound(job_id.to_owned()))
    }

    pub fn list(&self, now: Instant) -> Vec<JobView> {
        self.order.iter().map(|id| self.jobs[id].view(now)).collect()
    }

    /// The divide table from the units done so far.
    pub fn divide(&self, job_id: &str, now: Instant) -> Result<DivideView, JobError> {
        let job = self
            .jobs
            .get(job_id)
            .ok_or_else(|| JobError::NotFound(job_id.to_owned()))?;
        let counted = job.units.iter().filter_map(|u| match u.state {
            UnitState::Done { leaves } => Some((u.weights.as_slice(), leaves)),
            _ => None,
        });
        let per_move = weighted_sum(&job.settled, counted);
        let total = match job.root_leaves {
            Some(root) => root,
            None => per_move.iter().copied().sum(),
        };
        Ok(DivideView {
            job: job.view(now),
            moves: job.first_moves.iter().cloned().zip(per_move).collect(),
            total,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::planning::{PlanRequest, plan};
    use perft_core::{Checkers, Game};

    const TTL: Duration = Duration::from_secs(10);

    fn planned(depth: u32, split: u32) -> (JobSpec, PlannedJob) {
        let request = PlanRequest {
            position: None,
            depth,
            split_depth: Some(split),
            min_units: 1,
            max_units: 1 << 20,
        };
        let planned = plan(GameKind::Checkers, &request).unwrap();
        let spec = JobSpec {
            game: GameKind::Checkers,
            position: planned.position.clone(),
            depth,
            verify: false,
        };
        (spec, planned)
    }

    /// Counts a leased unit the slow, obvious way.
    fn count(unit: &LeasedUnit) -> Leaves {
        perft_core::perft(&unit.position.parse::<Checkers>().unwrap(), unit.depth)
    }

    #[test]
    fn a_job_runs_to_done_with_the_exact_divide() {
        let now = Instant::now();
        let mut jobs = Jobs::default();
        let (spec, planned) = planned(7, 3);
        let units = planned.units.len();
        jobs.submit("j".into(), spec, planned, now);
        assert_eq!(jobs.view("j", now).unwrap().state, JobState::Queued);
        let mut affinity = None;
        let leased = jobs.lease("w", usize::MAX, &mut affinity, now, TTL);
        assert_eq!(leased.len(), units);
        assert_eq!(jobs.view("j", now).unwrap().state, JobState::Running);
        assert!(
            jobs.lease("w", 10, &mut affinity, now, TTL).is_empty(),
            "nothing left to lease"
        );
        for unit in &leased {
            assert_eq!(
                jobs.report("j", unit.unit_id, count(unit), "w", now),
                Reported::Accepted
            );
        }
        let divide = jobs.divide("j", now).unwrap();
        assert_eq!(divide.job.state, JobState::Done);
        assert_eq!(divide.total, Leaves::full(179_740));
        assert_eq!(divide.job.leaves_done, 179_740);
        let direct = perft_core::divide(&Checkers::start(), 7);
        for ((mv, n), (dmv, dn)) in divide.moves.iter().zip(&direct.moves) {
            assert_eq!(
                (mv.as_str(), *n),
                (Checkers::start().format_move(*dmv).as_str(), *dn)
            );
        }
    }

    #[test]
    fn duplicate_and_late_results_are_counted_once() {
        let now = Instant::now();
        let mut jobs = Jobs::default();
        let (spec, planned) = planned(6, 2);
        jobs.submit("j".into(), spec, planned, now);
        let mut affinity = None;
        let first = jobs.lease("slow", 1, &mut affinity, now, TTL).remove(0);
        // The slow worker's lease runs out; the unit goes to another worker.
        assert_eq!(jobs.expire(now + TTL), 1);
        let mut other = None;
        let second = jobs.lease("fast", 1, &mut other, now + TTL, TTL).remove(0);
        assert_eq!((second.unit_id, second.job_id.as_str()), (first.unit_id, "j"));
        assert!(second.epoch > first.epoch);
        // Whichever result arrives first counts; the other is ignored.
        assert_eq!(
            jobs.report("j", first.unit_id, count(&first), "w", now),
            Reported::Accepted
        );
        assert_eq!(
            jobs.report("j", second.unit_id, count(&second), "w", now),
            Reported::Ignored
        );
        assert_eq!(
            jobs.report("j", first.unit_id, count(&first), "w", now),
            Reported::Ignored
        );
        let view = jobs.view("j", now).unwrap();
        assert_eq!((view.units_done, view.units_released), (1, 1));
        // A late result for a unit back in the queue is taken, and the unit
        // is no longer handed out.
        let third = jobs.lease("slow", 1, &mut affinity, now, TTL).remove(0);
        jobs.expire(now + TTL);
        assert_eq!(
            jobs.report("j", third.unit_id, count(&third), "w", now),
            Reported::Accepted
        );
        let rest = jobs.lease("fast", usize::MAX, &mut other, now, TTL);
        assert!(
            rest.iter()
                .all(|u| u.unit_id != third.unit_id && u.unit_id != first.unit_id)
        );
        assert_eq!(jobs.report("nope", 0, Leaves::ZERO, "w", now), Reported::Ignored);
        assert_eq!(
            jobs.report("j", 1 << 40, Leaves::ZERO, "w", now),
            Reported::Ignored
        );
    }

    #[test]
    fn renewed_leases_survive_and_released_units_return() {
        let now = Instant::now();
        let mut jobs = Jobs::default();
        let (spec, planned) = planned(6, 2);
        jobs.submit("j".into(), spec, planned, now);
        let mut affinity = None;
        let held = jobs.lease("w", 2, &mut affinity, now, TTL);
        assert_eq!(jobs.renew("w", now + TTL / 2, TTL), 2);
        assert_eq!(jobs.expire(now + TTL), 0, "the heartbeat moved the deadline");
        assert_eq!(jobs.expire(now + TTL / 2 + TTL), 2);
        let again = jobs.lease("w", 2, &mut affinity, now, TTL);
        assert!(
            !jobs.release("j", again[0].unit_id, again[0].epoch + 100),
            "another epoch releases nothing"
        );
        assert!(jobs.release("j", again[0].unit_id, again[0].epoch));
        let back = jobs.lease("w", 1, &mut affinity, now, TTL);
        assert_eq!(
            back[0].unit_id, again[0].unit_id,
            "a released unit is first in its group"
        );
        assert_eq!(held.len(), 2);
    }

    #[test]
    fn a_unit_that_keeps_failing_fails_its_job() {
        let now = Instant::now();
        let mut jobs = Jobs::default();
        let (spec, planned) = planned(5, 1);
        jobs.submit("j".into(), spec, planned, now);
        let mut t = now;
        for _ in 0..MAX_UNIT_FAILURES {
            assert!(!jobs.lease("w", 1, &mut None, t, TTL).is_empty());
            t += TTL;
            jobs.expire(t);
        }
        let view = jobs.view("j", t).unwrap();
        assert_eq!(view.state, JobState::Failed);
        assert!(view.error.unwrap().contains("lost its lease 8 times"));
        assert!(jobs.lease("w", 1, &mut None, t, TTL).is_empty());
    }

    #[test]
    fn jobs_run_in_order_and_cancel_frees_units() {
        let now = Instant::now();
        let mut jobs = Jobs::default();
        let (spec, planned_a) = planned(5, 1);
        jobs.submit("a".into(), spec.clone(), planned_a, now);
        let (_, planned_b) = planned(5, 1);
        jobs.submit("b".into(), spec, planned_b, now);
        let mut affinity = None;
        let first = jobs.lease("w", 3, &mut affinity, now, TTL);
        assert!(first.iter().all(|u| u.job_id == "a"));
        assert_eq!(jobs.cancel("a", now).unwrap().state, JobState::Cancelled);
        assert_eq!(
            jobs.report("a", first[0].unit_id, count(&first[0]), "w", now),
            Reported::Ignored
        );
        let next = jobs.lease("w", 3, &mut affinity, now, TTL);
        assert!(next.iter().all(|u| u.job_id == "b"));
        assert_eq!(
            jobs.cancel("zzz", now).unwrap_err(),
            JobError::NotFound("zzz".into())
        );
        assert_eq!(jobs.list(now).len(), 2);
    }
}
