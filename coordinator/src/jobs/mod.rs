//! Jobs and their units as an explicit state machine, without I/O: the gRPC
//! services and the lease reaper drive it under one lock, and every change
//! it makes is queued for the journal in the order it happened.
//!
//! Job: Queued -> Running -> Done | Failed; Queued | Running -> Cancelled.
//! Unit: see [`unit`]: leased to one worker (two with verification) until
//! enough equal counts decide it; an expired or handed-back lease puts it
//! back in the queue. A unit's count is accepted once.

mod unit;

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use perft_core::{GameKind, Leaves, weighted_sum};

use crate::journal::{Op, RestoredJob};
use crate::planning::PlannedJob;
pub use unit::{MAX_VOTES, Vote};
use unit::{Unit, VoteOutcome};

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
    /// Count every unit on two different workers.
    pub verify: bool,
}

impl JobSpec {
    /// Equal counts from distinct workers that decide a unit.
    fn quorum(&self) -> u32 {
        if self.verify { 2 } else { 1 }
    }
}

/// A unit whose workers sent different counts, and what was decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Disagreement {
    pub unit_id: u64,
    pub position: String,
    /// Every count received, in order.
    pub votes: Vec<Vote>,
    /// The count taken (the majority), if one was reached.
    pub decided: Option<Leaves>,
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
    pub disagreements: Vec<Disagreement>,
}

/// Totals over all jobs, for metrics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct JobsStats {
    /// Jobs queued, running, done, failed, cancelled.
    pub jobs: [u64; 5],
    /// Units of unfinished jobs waiting for a lease.
    pub units_queued: u64,
    /// Units of unfinished jobs some worker holds.
    pub units_leased: u64,
    /// Units decided, over all jobs.
    pub units_done: u64,
    /// Leases that ran out or were handed back, over all jobs.
    pub units_released: u64,
    /// Leaves counted so far, over all jobs.
    pub leaves_done: u128,
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
    /// Units wanting a lease, grouped by their first first-move, so a worker
    /// keeps getting related subtrees and its table hits more.
    pending: BTreeMap<u32, VecDeque<u64>>,
    done: u64,
    released: u64,
    leaves_done: u128,
    state: JobState,
    error: Option<String>,
    started_ms: Option<u64>,
    finished_ms: Option<u64>,
    disagreements: Vec<Disagreement>,
}

impl Job {
    fn group(&self, unit: u64) -> u32 {
        self.units[unit as usize]
            .weights
            .first()
            .map_or(0, |w| w.first_move)
    }

    /// Puts a unit that wants a lease back in its group's queue, first.
    fn requeue(&mut self, unit_id: u64) {
        let unit = &self.units[unit_id as usize];
        if unit.queued || !unit.needs_lease() || self.state.is_final() {
            return;
        }
        let group = self.group(unit_id);
        self.pending.entry(group).or_default().push_front(unit_id);
        self.units[unit_id as usize].queued = true;
    }

    fn finish(&mut self, state: JobState, error: Option<String>) {
        self.state = state;
        self.error = error;
        self.finished_ms = Some(unix_ms());
        self.pending.clear();
        for unit in &mut self.units {
            unit.queued = false;
        }
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

    fn view(&self) -> JobView {
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
            disagreements: self.disagreements.clone(),
        }
    }

    /// Counts a decided unit in.
    fn decided(&mut self, unit_id: u64, leaves: Leaves) {
        let weight: u128 = self.units[unit_id as usize]
            .weights
            .iter()
            .map(|w| u128::from(w.paths))
            .sum();
        self.leaves_done += leaves.leaves * weight;
        self.done += 1;
    }
}

/// Outcome of one reported count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reported {
    /// Kept: it decided its unit, or it waits for a second count.
    Accepted,
    /// Unknown job or unit, a finished job, a unit already decided, or a
    /// second count from the same worker.
    Ignored,
}

/// Why a job operation was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum JobError {
    #[error("no job '{0}'")]
    NotFound(String),
}

/// The leases of one worker. A heartbeat renews them all at once, so the
/// deadline is the worker's: renewing costs nothing per unit, and expiring
/// touches only the units of workers that went silent.
#[derive(Debug)]
struct Holder {
    deadline: Instant,
    /// (job, unit) pairs leased to the worker and not yet reported.
    units: HashSet<(String, u64)>,
}

/// Every job, in submission order.
#[derive(Debug)]
pub struct Jobs {
    order: Vec<String>,
    jobs: HashMap<String, Job>,
    holders: HashMap<String, Holder>,
    next_epoch: u64,
    /// Changes not yet handed to the journal, in the order they happened.
    outbox: Vec<Op>,
}

impl Default for Jobs {
    fn default() -> Jobs {
        Jobs {
            order: Vec::new(),
            jobs: HashMap::new(),
            holders: HashMap::new(),
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
    pub fn submit(&mut self, id: String, spec: JobSpec, plan: PlannedJob, _now: Instant) {
        self.outbox.push(Op::Submit {
            seq: self.order.len() as u64,
            id: id.clone(),
            spec: spec.clone(),
            plan: plan.clone(),
        });
        self.insert(id.clone(), spec, plan);
        let job = self.jobs.get_mut(&id).expect("just inserted");
        if job.units.is_empty() {
            // Nothing to count: everything was settled while planning.
            job.started_ms = Some(unix_ms());
            job.finish(JobState::Done, None);
            self.outbox.push(job.state_op());
        }
    }

    /// Rebuilds a job read back from the journal: its counts are applied,
    /// and every unit without one is pending again.
    pub fn restore(&mut self, restored: RestoredJob, _now: Instant) {
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
            disagreements,
        } = restored;
        self.insert(id.clone(), spec, plan);
        let job = self.jobs.get_mut(&id).expect("just inserted");
        job.released = released;
        job.started_ms = started_ms;
        job.disagreements = disagreements;
        for (unit_id, leaves) in results {
            if job.units[unit_id as usize].done().is_none() {
                job.units[unit_id as usize].restore(leaves);
                job.decided(unit_id, leaves);
            }
        }
        let complete = job.done == job.units.len() as u64;
        match state {
            JobState::Cancelled | JobState::Failed => {
                job.finish(state, error);
                job.finished_ms = finished_ms;
            }
            _ if complete => {
                job.finish(JobState::Done, None);
                job.finished_ms = finished_ms.or(job.finished_ms);
            }
            // Queued or running (a journal never says done with units left).
            _ => {
                job.state = if started_ms.is_some() {
                    JobState::Running
                } else {
                    JobState::Queued
                };
                for unit_id in 0..job.units.len() as u64 {
                    let group = job.group(unit_id);
                    if job.units[unit_id as usize].needs_lease() {
                        job.pending.entry(group).or_default().push_back(unit_id);
                        job.units[unit_id as usize].queued = true;
                    }
                }
            }
        }
    }

    fn insert(&mut self, id: String, spec: JobSpec, plan: PlannedJob) {
        let quorum = spec.quorum();
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
                .map(|(position, weights)| Unit::new(position, weights, quorum))
                .collect(),
            pending: BTreeMap::new(),
            done: 0,
            released: 0,
            leaves_done: 0,
            state: JobState::Queued,
            error: None,
            started_ms: None,
            finished_ms: None,
            disagreements: Vec::new(),
        };
        for unit_id in 0..job.units.len() as u64 {
            let group = job.group(unit_id);
            job.pending.entry(group).or_default().push_back(unit_id);
            job.units[unit_id as usize].queued = true;
        }
        self.order.push(id.clone());
        self.jobs.insert(id, job);
    }

    /// Leases up to `max` units to `worker`, from the first unfinished job
    /// with units wanting a lease, preferring the first move of `affinity`
    /// (updated to what was handed out). Never the same unit twice to one
    /// worker.
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
            // Units this worker may not take, put back when done.
            let mut passed_over = Vec::new();
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
                job.units[unit_id as usize].queued = false;
                if !job.units[unit_id as usize].needs_lease() {
                    continue;
                }
                if !job.units[unit_id as usize].can_take(worker) {
                    passed_over.push(unit_id);
                    continue;
                }
                self.next_epoch += 1;
                let epoch = self.next_epoch;
                job.units[unit_id as usize].lease(worker, epoch);
                let holder = self.holders.entry(worker.to_owned()).or_insert_with(|| Holder {
                    deadline: now + ttl,
                    units: HashSet::new(),
                });
                // Asking for work is a sign of life too.
                holder.deadline = now + ttl;
                holder.units.insert((id.clone(), unit_id));
                *affinity = Some((id.clone(), group));
                out.push(LeasedUnit {
                    job_id: id.clone(),
                    unit_id,
                    epoch,
                    game: job.spec.game,
                    position: job.units[unit_id as usize].position.clone(),
                    depth: job.remaining_depth,
                });
                // With verification it also wants a second worker.
                job.requeue(unit_id);
            }
            for unit_id in passed_over.into_iter().rev() {
                job.requeue(unit_id);
            }
        }
        out
    }

    /// Takes a unit's count from `worker_id` (shown as `worker`).
    pub fn report(
        &mut self,
        job_id: &str,
        unit_id: u64,
        leaves: Leaves,
        worker_id: &str,
        worker: &str,
    ) -> Reported {
        if let Some(holder) = self.holders.get_mut(worker_id) {
            holder.units.remove(&(job_id.to_owned(), unit_id));
        }
        let Some(job) = self.jobs.get_mut(job_id) else {
            return Reported::Ignored;
        };
        if job.state.is_final() || unit_id >= job.units.len() as u64 {
            return Reported::Ignored;
        }
        let quorum = job.spec.quorum();
        match job.units[unit_id as usize].vote(worker_id, worker, leaves, quorum) {
            VoteOutcome::Ignored => return Reported::Ignored,
            VoteOutcome::Counted => {}
            VoteOutcome::Disagreed => job.requeue(unit_id),
            VoteOutcome::Decided { leaves, votes } => {
                job.decided(unit_id, leaves);
                self.outbox.push(Op::Result {
                    job_id: job_id.to_owned(),
                    unit_id,
                    leaves,
                    worker: worker.to_owned(),
                });
                if votes.iter().any(|v| v.leaves != leaves) {
                    let disagreement = Disagreement {
                        unit_id,
                        position: job.units[unit_id as usize].position.clone(),
                        votes,
                        decided: Some(leaves),
                    };
                    tracing_disagreement(job_id, &disagreement);
                    self.outbox.push(Op::Disagreement {
                        job_id: job_id.to_owned(),
                        disagreement: disagreement.clone(),
                    });
                    job.disagreements.push(disagreement);
                }
                if job.done == job.units.len() as u64 {
                    job.finish(JobState::Done, None);
                    self.outbox.push(job.state_op());
                }
            }
            VoteOutcome::NoMajority { votes } => {
                let disagreement = Disagreement {
                    unit_id,
                    position: job.units[unit_id as usize].position.clone(),
                    votes,
                    decided: None,
                };
                tracing_disagreement(job_id, &disagreement);
                self.outbox.push(Op::Disagreement {
                    job_id: job_id.to_owned(),
                    disagreement: disagreement.clone(),
                });
                job.disagreements.push(disagreement);
                job.finish(
                    JobState::Failed,
                    Some(format!(
                        "no {quorum} workers agree on unit {unit_id} within {MAX_VOTES} counts"
                    )),
                );
                self.outbox.push(job.state_op());
            }
        }
        Reported::Accepted
    }

    /// Puts a leased unit back in the queue (its worker gave it back).
    pub fn release(&mut self, job_id: &str, unit_id: u64, epoch: u64) -> bool {
        let Some(job) = self.jobs.get_mut(job_id) else {
            return false;
        };
        if job.state.is_final() || unit_id >= job.units.len() as u64 {
            return false;
        }
        let Some(worker) = job.units[unit_id as usize].release(epoch) else {
            return false;
        };
        if let Some(holder) = self.holders.get_mut(&worker) {
            holder.units.remove(&(job_id.to_owned(), unit_id));
        }
        job.released += 1;
        job.requeue(unit_id);
        self.outbox.push(job.state_op());
        true
    }

    /// Extends every lease of `worker` to `now + ttl`; returns how many it
    /// holds.
    pub fn renew(&mut self, worker: &str, now: Instant, ttl: Duration) -> u32 {
        self.holders.get_mut(worker).map_or(0, |holder| {
            holder.deadline = now + ttl;
            holder.units.len() as u32
        })
    }

    /// Re-queues the units of every worker whose leases ran out: the one
    /// path for a lost, killed or cut-off worker. A unit that keeps failing
    /// fails its job. Returns the number of leases that ran out.
    pub fn expire(&mut self, now: Instant) -> u64 {
        let lost: Vec<String> = self
            .holders
            .iter()
            .filter(|(_, h)| h.deadline <= now)
            .map(|(w, _)| w.clone())
            .collect();
        let mut expired = 0;
        let mut changed = HashSet::new();
        for worker in lost {
            let Some(holder) = self.holders.remove(&worker) else {
                continue;
            };
            for (job_id, unit_id) in holder.units {
                let Some(job) = self.jobs.get_mut(&job_id) else {
                    continue;
                };
                if job.state.is_final() || !job.units[unit_id as usize].drop_lease(&worker) {
                    continue;
                }
                job.released += 1;
                expired += 1;
                job.requeue(unit_id);
                let unit = &job.units[unit_id as usize];
                if unit.failures >= MAX_UNIT_FAILURES {
                    let reason = format!(
                        "unit {unit_id} ({}) lost its lease {MAX_UNIT_FAILURES} times",
                        unit.position
                    );
                    job.finish(JobState::Failed, Some(reason));
                }
                changed.insert(job_id);
            }
        }
        for job_id in changed {
            self.outbox.push(self.jobs[&job_id].state_op());
        }
        expired
    }

    /// Cancels a job that has not finished; its units are no longer leased
    /// and late results for it are ignored.
    pub fn cancel(&mut self, job_id: &str) -> Result<JobView, JobError> {
        let job = self
            .jobs
            .get_mut(job_id)
            .ok_or_else(|| JobError::NotFound(job_id.to_owned()))?;
        if !job.state.is_final() {
            job.finish(JobState::Cancelled, None);
            self.outbox.push(job.state_op());
        }
        Ok(job.view())
    }

    pub fn view(&self, job_id: &str) -> Result<JobView, JobError> {
        self.jobs
            .get(job_id)
            .map(Job::view)
            .ok_or_else(|| JobError::NotFound(job_id.to_owned()))
    }

    pub fn list(&self) -> Vec<JobView> {
        self.order.iter().map(|id| self.jobs[id].view()).collect()
    }

    /// Totals for metrics.
    pub fn stats(&self) -> JobsStats {
        let mut stats = JobsStats::default();
        for job in self.jobs.values() {
            let slot = match job.state {
                JobState::Queued => 0,
                JobState::Running => 1,
                JobState::Done => 2,
                JobState::Failed => 3,
                JobState::Cancelled => 4,
            };
            stats.jobs[slot] += 1;
            if !job.state.is_final() {
                stats.units_queued += job.pending.values().map(|q| q.len() as u64).sum::<u64>();
                stats.units_leased += job.units.iter().filter(|u| u.leased()).count() as u64;
            }
            stats.units_done += job.done;
            stats.units_released += job.released;
            stats.leaves_done += job.view().leaves_done;
        }
        stats
    }

    /// The divide table from the units decided so far.
    pub fn divide(&self, job_id: &str) -> Result<DivideView, JobError> {
        let job = self
            .jobs
            .get(job_id)
            .ok_or_else(|| JobError::NotFound(job_id.to_owned()))?;
        let counted = job
            .units
            .iter()
            .filter_map(|u| u.done().map(|leaves| (u.weights.as_slice(), leaves)));
        let per_move = weighted_sum(&job.settled, counted);
        let total = match job.root_leaves {
            Some(root) => root,
            None => per_move.iter().copied().sum(),
        };
        Ok(DivideView {
            job: job.view(),
            moves: job.first_moves.iter().cloned().zip(per_move).collect(),
            total,
        })
    }
}

fn tracing_disagreement(job_id: &str, d: &Disagreement) {
    let votes: Vec<String> = d
        .votes
        .iter()
        .map(|v| format!("{}={}", v.worker, v.leaves.leaves))
        .collect();
    tracing::warn!(job = job_id, unit = d.unit_id, position = %d.position, votes = %votes.join(" "), "workers disagree");
}

#[cfg(test)]
mod tests;
