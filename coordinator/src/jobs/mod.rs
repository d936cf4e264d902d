//! Jobs and their units as an explicit state machine, without I/O: the gRPC
//! services and the lease reaper drive it under one lock, and every change
//! it makes is queued for the journal in the order it happened.
//!
//! Job: Queued -> Running -> Done | Failed; Queued | Running -> Cancelled;
//! Failed -> Running (resumed). Unit: see [`unit`]: leased to one machine
//! (two with verification) until enough equal counts decide it; an expired
//! or handed-back lease puts it back in the queue. A unit's count is
//! accepted once.

mod job;
mod leasing;
mod unit;

use std::collections::HashMap;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use perft_core::{GameKind, Leaves, weighted_sum};

use crate::journal::{Op, RestoredJob};
use crate::planning::PlannedJob;
use job::Job;
use leasing::Holder;
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
    /// Done, failed or cancelled: nothing changes any more (but a failed
    /// job can be resumed).
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
    /// Count every unit on two different machines.
    pub verify: bool,
}

impl JobSpec {
    /// Equal counts from distinct machines that decide a unit.
    fn quorum(&self) -> u32 {
        if self.verify { 2 } else { 1 }
    }
}

/// Who is asking: a worker session, the machine it runs on (its name, the
/// identity verification counts), and how people know it.
#[derive(Clone, Copy, Debug)]
pub struct WorkerRef<'a> {
    pub session: &'a str,
    pub identity: &'a str,
    pub label: &'a str,
}

impl<'a> WorkerRef<'a> {
    /// A worker whose session, machine and label are all `name`.
    pub fn named(name: &'a str) -> WorkerRef<'a> {
        WorkerRef {
            session: name,
            identity: name,
            label: name,
        }
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

/// Outcome of one reported count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reported {
    /// Kept: it decided its unit, or it waits for another machine's count.
    Accepted,
    /// Unknown job or unit, a finished job, a unit already decided, or a
    /// second count from the same machine.
    Ignored,
}

/// Why a job operation was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum JobError {
    #[error("no job '{}'", perft_core::shown(.0))]
    NotFound(String),
    #[error("job {id} is {state:?}, not failed: only a failed job can be resumed")]
    NotFailed { id: String, state: JobState },
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

fn not_found(job_id: &str) -> JobError {
    JobError::NotFound(job_id.to_owned())
}

impl Jobs {
    /// The changes made since the last call, for the journal, in order.
    pub fn take_ops(&mut self) -> Vec<Op> {
        std::mem::take(&mut self.outbox)
    }

    /// The most leaves a count of one of the job's units can be (`None` for
    /// no such job).
    pub fn count_limit(&self, job_id: &str) -> Option<u128> {
        let job = self.jobs.get(job_id)?;
        Some(job.spec.game.max_leaves(job.remaining_depth))
    }

    /// Whether a job of that id exists.
    pub fn contains(&self, job_id: &str) -> bool {
        self.jobs.contains_key(job_id)
    }

    /// Queues a planned job under `id`.
    pub fn submit(&mut self, id: String, spec: JobSpec, plan: PlannedJob, _now: Instant) {
        self.outbox.push(Op::Submit {
            seq: self.order.len() as u64,
            id: id.clone(),
            spec: spec.clone(),
            plan: plan.clone(),
        });
        let job = self.insert(id, spec, plan);
        job.queue_all();
        if job.units.is_empty() {
            // Nothing to count: everything was settled while planning.
            job.started_ms = Some(unix_ms());
            job.finish(JobState::Done, None);
            let op = job.state_op();
            self.outbox.push(op);
        }
    }

    /// Rebuilds a job read back from the journal: its counts and pending
    /// votes are applied, and every unit without a verdict is pending
    /// again. A job whose plan is damaged fails; a damaged count is counted
    /// again.
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
            votes,
            disagreements,
            damage,
            damaged_counts,
        } = restored;
        let quorum = spec.quorum();
        let job = self.insert(id.clone(), spec, plan);
        job.released = released;
        job.started_ms = started_ms;
        job.disagreements = disagreements;
        for unit_id in &damaged_counts {
            tracing::error!(job = %id, unit = unit_id, "journal: a stored count failed its checksum; the unit is counted again");
        }
        let mut overflowed = false;
        for (unit_id, leaves) in results {
            if job.units[unit_id as usize].done().is_none() {
                job.units[unit_id as usize].restore(leaves);
                overflowed |= !job.decided(unit_id, leaves);
            }
        }
        for vote in votes {
            let unit = &mut job.units[vote.unit_id as usize];
            if unit.done().is_none() {
                unit.vote(&vote.voter, &vote.label, vote.leaves, quorum);
            }
        }
        let complete = job.done == job.units.len() as u64;
        if !damage.is_empty() {
            let reason = format!(
                "the journal's copy of {} failed its checksum: resubmit the job",
                damage.join(", ")
            );
            tracing::error!(job = %id, %reason, "journal damage");
            job.finish(JobState::Failed, Some(reason));
            return;
        }
        match state {
            _ if overflowed => {}
            JobState::Cancelled | JobState::Failed => {
                job.finish(state, error);
                job.finished_ms = finished_ms;
            }
            _ if complete => {
                job.finish(JobState::Done, None);
                job.finished_ms = finished_ms.or(job.finished_ms);
            }
            // Queued or running, or done with a damaged count to redo.
            _ => {
                job.state = if started_ms.is_some() {
                    JobState::Running
                } else {
                    JobState::Queued
                };
                job.queue_all();
            }
        }
    }

    fn insert(&mut self, id: String, spec: JobSpec, plan: PlannedJob) -> &mut Job {
        let quorum = spec.quorum();
        let job = Job {
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
            pending: Default::default(),
            done: 0,
            released: 0,
            leaves_done: 0,
            state: JobState::Queued,
            error: None,
            started_ms: None,
            finished_ms: None,
            disagreements: Vec::new(),
        };
        self.order.push(id.clone());
        self.jobs.entry(id).insert_entry(job).into_mut()
    }

    /// Takes a unit's count from `worker`, whose lease the caller checked.
    pub fn report(&mut self, job_id: &str, unit_id: u64, leaves: Leaves, worker: WorkerRef<'_>) -> Reported {
        if let Some(holder) = self.holders.get_mut(worker.session) {
            holder.units.remove(&(job_id.to_owned(), unit_id));
        }
        let Some(job) = self.jobs.get_mut(job_id) else {
            return Reported::Ignored;
        };
        if job.state.is_final() || unit_id >= job.units.len() as u64 {
            return Reported::Ignored;
        }
        let quorum = job.spec.quorum();
        let vote_op = || Op::Vote {
            job_id: job_id.to_owned(),
            unit_id,
            voter: worker.identity.to_owned(),
            label: worker.label.to_owned(),
            leaves,
        };
        match job.units[unit_id as usize].vote(worker.identity, worker.label, leaves, quorum) {
            VoteOutcome::Ignored => return Reported::Ignored,
            VoteOutcome::Counted => self.outbox.push(vote_op()),
            VoteOutcome::Disagreed => {
                self.outbox.push(vote_op());
                job.requeue(unit_id);
            }
            VoteOutcome::Decided {
                leaves,
                votes,
                machines,
            } => {
                self.outbox.push(Op::Result {
                    job_id: job_id.to_owned(),
                    unit_id,
                    leaves,
                    machines: machines.join("\n"),
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
                if !job.decided(unit_id, leaves) {
                    self.outbox.push(job.state_op());
                } else if job.done == job.units.len() as u64 {
                    job.finish(JobState::Done, None);
                    self.outbox.push(job.state_op());
                }
            }
            VoteOutcome::NoMajority { votes } => {
                self.outbox.push(vote_op());
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
                        "no {quorum} machines agree on unit {unit_id} within {MAX_VOTES} counts"
                    )),
                );
                self.outbox.push(job.state_op());
            }
        }
        Reported::Accepted
    }

    /// Cancels a job that has not finished; its units are no longer leased
    /// and late results for it are ignored.
    pub fn cancel(&mut self, job_id: &str) -> Result<JobView, JobError> {
        let job = self.jobs.get_mut(job_id).ok_or_else(|| not_found(job_id))?;
        if !job.state.is_final() {
            job.finish(JobState::Cancelled, None);
            self.outbox.push(job.state_op());
        }
        Ok(job.view())
    }

    /// Queues a failed job's open units again, keeping every accepted
    /// count; a unit that found no majority is counted afresh.
    pub fn resume(&mut self, job_id: &str) -> Result<JobView, JobError> {
        let job = self.jobs.get_mut(job_id).ok_or_else(|| not_found(job_id))?;
        if job.state != JobState::Failed {
            return Err(JobError::NotFailed {
                id: job_id.to_owned(),
                state: job.state,
            });
        }
        let quorum = job.spec.quorum();
        for unit_id in 0..job.units.len() as u64 {
            if job.units[unit_id as usize].resume(quorum) {
                self.outbox.push(Op::ClearVotes {
                    job_id: job_id.to_owned(),
                    unit_id,
                });
            }
        }
        job.state = JobState::Running;
        job.error = None;
        job.finished_ms = None;
        job.queue_all();
        if job.done == job.units.len() as u64 {
            job.finish(JobState::Done, None);
        }
        self.outbox.push(job.state_op());
        Ok(job.view())
    }

    pub fn view(&self, job_id: &str) -> Result<JobView, JobError> {
        self.jobs
            .get(job_id)
            .map(Job::view)
            .ok_or_else(|| not_found(job_id))
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
            stats.leaves_done = stats.leaves_done.saturating_add(job.view().leaves_done);
        }
        stats
    }

    /// The divide table from the units decided so far.
    pub fn divide(&self, job_id: &str) -> Result<DivideView, JobError> {
        let job = self.jobs.get(job_id).ok_or_else(|| not_found(job_id))?;
        let counted = job
            .units
            .iter()
            .filter_map(|u| u.done().map(|leaves| (u.weights.as_slice(), leaves)));
        // A sum past u128 already failed the job; show it saturated.
        let per_move = weighted_sum(&job.settled, counted)
            .unwrap_or_else(|_| vec![Leaves::full(u128::MAX); job.first_moves.len()]);
        let total = match job.root_leaves {
            Some(root) => root,
            None => per_move
                .iter()
                .try_fold(Leaves::ZERO, |sum, &l| sum.checked_add(l))
                .unwrap_or(Leaves::full(u128::MAX)),
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
