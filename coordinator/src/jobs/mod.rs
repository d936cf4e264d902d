//! Jobs and their units as an explicit state machine, without I/O: the
//! scheduler's event loop owns it and runs the gRPC services' and the
//! lease reaper's tasks on it, and every change it makes is queued for the
//! journal in the order it happened.
//!
//! Job: Queued -> Running -> Done | Failed; Queued | Running -> Cancelled;
//! Failed -> Running (resumed). Unit: see [`unit`]: leased to one machine
//! (two with verification) until enough equal counts decide it; an expired
//! or handed-back lease puts it back in the queue. A unit's count is
//! accepted once.

mod job;
mod leasing;
mod ledger;
mod unit;

use std::collections::HashMap;
use std::time::{SystemTime, UNIX_EPOCH};

use perft_core::{GameKind, Leaves};

use crate::journal::{Op, RestoredJob};
use crate::planning::PlannedJob;
use job::Job;
pub use job::Summary;
use leasing::Holder;
use ledger::Ledger;
pub use ledger::{Credit, MAX_CPU_MS_PER_COUNT};
use unit::VoteOutcome;
pub use unit::{MAX_VOTES, Vote};

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

    /// The state's name, as the journal stores it and the dashboard shows it.
    pub fn name(self) -> &'static str {
        match self {
            JobState::Queued => "queued",
            JobState::Running => "running",
            JobState::Done => "done",
            JobState::Failed => "failed",
            JobState::Cancelled => "cancelled",
        }
    }
}

/// What a client asked for, validated.
#[derive(Clone, Debug)]
pub struct JobSpec {
    pub game: GameKind,
    /// Canonical text of the root.
    pub position: String,
    pub depth: u32,
    /// Count every unit for two different participants.
    pub verify: bool,
    /// The participant that submitted it.
    pub owner: String,
}

impl JobSpec {
    /// Equal counts from distinct participants that decide a unit.
    fn quorum(&self) -> u32 {
        if self.verify { 2 } else { 1 }
    }
}

/// Who is asking: a worker session, the participant it belongs to (the
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
    pub unit_id: u64,
    pub epoch: u64,
    /// The game's packed position.
    pub position: Vec<u8>,
}

/// Units of one job handed to a worker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeasedJob {
    pub job_id: String,
    pub game: GameKind,
    pub depth: u32,
    pub units: Vec<LeasedUnit>,
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
    /// Units waiting for a lease, and units some worker holds.
    pub units_queued: u64,
    pub units_leased: u64,
    pub leaves_done: u128,
    pub seconds: f64,
    /// How many units had workers sending different counts.
    pub disagreements: u64,
    /// The part of the expected work done, 0 to 1 (units weighed by their
    /// estimated size).
    pub work_done: f64,
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

/// One first move's line of a divide table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DivideLine {
    pub first_move: String,
    pub leaves: Leaves,
    /// Units below the move, and how many are decided.
    pub units_total: u64,
    pub units_done: u64,
}

/// A job's divide table so far.
#[derive(Clone, Debug)]
pub struct DivideView {
    pub job: JobView,
    pub moves: Vec<DivideLine>,
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
    #[error("job {id} cannot be resumed: {reason}")]
    CannotResume { id: String, reason: String },
    #[error("job {id} is {}: cancel it before deleting it", .state.name())]
    NotFinished { id: String, state: JobState },
}

/// A new job with its units laid out, built where it costs nothing to
/// others (its summary takes one step per unit) before [`Jobs::add`].
#[derive(Debug)]
pub struct NewJob(Job);

impl NewJob {
    pub fn new(id: String, spec: JobSpec, plan: PlannedJob) -> NewJob {
        NewJob(Job::new(id, spec, plan))
    }
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
    /// Who counted what.
    ledger: Ledger,
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
            ledger: Ledger::default(),
        }
    }
}

fn not_found(job_id: &str) -> JobError {
    JobError::NotFound(job_id.to_owned())
}

impl Jobs {
    /// No jobs, with the participants' credit read back from the journal
    /// and the quarantine threshold.
    pub fn with_credit(credit: Vec<(String, Credit)>, quarantine_after: Option<u64>) -> Jobs {
        Jobs {
            ledger: Ledger::new(credit, quarantine_after),
            ..Jobs::default()
        }
    }

    /// The changes made since the last call, for the journal, in order
    /// (credit last, merged per participant).
    pub fn take_ops(&mut self) -> Vec<Op> {
        let mut ops = std::mem::take(&mut self.outbox);
        ops.extend(self.ledger.take_ops());
        ops
    }

    /// How many changes wait for the journal.
    pub fn pending_ops(&self) -> usize {
        self.outbox.len() + usize::from(self.ledger.has_pending())
    }

    /// Records a change that is not a job's (a participant's row).
    pub fn record(&mut self, op: Op) {
        self.outbox.push(op);
    }

    /// A participant's credit.
    pub fn credit(&self, participant: &str) -> Credit {
        self.ledger.get(participant)
    }

    /// Whether a participant lost too many votes to lease.
    pub fn is_quarantined(&self, participant: &str) -> bool {
        self.ledger.is_quarantined(participant)
    }

    /// Participants quarantined since the last call: what they decided
    /// alone is to be counted again.
    pub fn take_newly_quarantined(&mut self) -> Vec<String> {
        self.ledger.take_newly_quarantined()
    }

    /// Drops every undecided vote of `participant` (it was revoked): its
    /// units want another count.
    pub fn drop_votes_of(&mut self, participant: &str) -> u64 {
        let mut dropped = 0;
        for id in &self.order {
            let job = self.jobs.get_mut(id).expect("ordered jobs exist");
            if job.state.is_final() {
                continue;
            }
            for unit_id in job.units_voted_by(participant) {
                if job.with_unit(unit_id, |unit| unit.drop_voter(participant)) == Some(true) {
                    dropped += 1;
                    job.requeue(unit_id);
                }
            }
        }
        self.outbox.push(Op::DropVotesOf {
            voter: participant.to_owned(),
        });
        dropped
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

    /// Jobs so far: the next job's place in the order.
    pub fn next_seq(&self) -> u64 {
        self.order.len() as u64
    }

    /// Takes a job whose plan the journal already holds (see
    /// [`crate::journal::Op::Submit`]): it is queued, or done at once when
    /// planning settled everything.
    pub fn submit(&mut self, id: String, spec: JobSpec, plan: PlannedJob) {
        self.add(NewJob::new(id, spec, plan));
    }

    /// [`Jobs::submit`] of a job built beforehand, off the scheduler.
    pub fn add(&mut self, job: NewJob) {
        let job = self.insert(job.0);
        if job.units_total == 0 {
            // Nothing to count: everything was settled while planning.
            job.started_ms = Some(unix_ms());
            job.finish(JobState::Done, None);
            let op = job.state_op();
            self.outbox.push(op);
        }
    }

    /// Rebuilds a job read back from the journal: a finished one from its
    /// summary; an open one with its counts and pending votes applied, and
    /// every unit without a verdict wanting a lease. A job whose plan is
    /// damaged fails; a damaged count is counted again.
    pub fn restore(&mut self, restored: RestoredJob) {
        let RestoredJob {
            id,
            spec,
            plan,
            units_total,
            summary,
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
        if let Some(summary) = summary.filter(|_| state.is_final()) {
            let mut job = Job::finished(id, spec, plan, units_total, summary);
            job.state = state;
            job.error = error;
            job.started_ms = started_ms;
            job.finished_ms = finished_ms;
            job.released = released;
            job.disagreements = disagreements;
            self.insert(job);
            return;
        }
        let job = self.insert(Job::new(id.clone(), spec, plan));
        job.released = released;
        job.started_ms = started_ms;
        job.disagreements = disagreements;
        if !damage.is_empty() {
            let reason = format!(
                "the journal's copy of {} failed its checksum: resubmit the job",
                damage.join(", ")
            );
            tracing::error!(job = %id, %reason, "journal damage");
            job.finish(JobState::Failed, Some(reason));
            return;
        }
        for unit_id in &damaged_counts {
            tracing::error!(job = %id, unit = unit_id, "journal: a stored count failed its checksum; the unit is counted again");
        }
        let mut overflowed = false;
        for (unit_id, leaves) in results {
            if !overflowed && job.is_open(unit_id) {
                overflowed |= !job.decided(unit_id, leaves);
            }
        }
        if overflowed {
            return;
        }
        let quorum = job.spec.quorum();
        for vote in votes {
            job.with_unit(vote.unit_id, |unit| {
                unit.vote(&vote.voter, &vote.label, vote.leaves, quorum)
            });
        }
        let complete = job.summary.done == job.units_total;
        match state {
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
            }
        }
        if job.state.is_final() && state != job.state {
            // Finished now rather than before: record why, with the summary.
            let op = job.state_op();
            self.outbox.push(op);
        } else if job.state.is_final() && finished_ms.is_some() {
            // A finished job journaled before summaries were kept: keep one now.
            let op = job.state_op();
            self.outbox.push(op);
        }
    }

    fn insert(&mut self, job: Job) -> &mut Job {
        let id = job.id.clone();
        self.order.push(id.clone());
        self.jobs.entry(id).insert_entry(job).into_mut()
    }

    /// Takes a unit's count from `worker`, whose lease the caller checked;
    /// it took `cpu_ms` of CPU time (the worker's word, for credit only).
    pub fn report(
        &mut self,
        job_id: &str,
        unit_id: u64,
        leaves: Leaves,
        cpu_ms: u64,
        worker: WorkerRef<'_>,
    ) -> Reported {
        if let Some(holder) = self.holders.get_mut(worker.session) {
            holder.units.remove(&(job_id.to_owned(), unit_id));
        }
        let Some(job) = self.jobs.get_mut(job_id) else {
            return Reported::Ignored;
        };
        if job.state.is_final() || !job.is_open(unit_id) {
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
        let outcome = job
            .with_unit(unit_id, |unit| {
                unit.vote(worker.identity, worker.label, leaves, quorum)
            })
            .unwrap_or(VoteOutcome::Ignored);
        if outcome != VoteOutcome::Ignored {
            self.ledger.credit(
                worker.identity,
                Credit {
                    units: 1,
                    leaves: leaves.leaves,
                    cpu_ms: cpu_ms.min(MAX_CPU_MS_PER_COUNT),
                    lost_votes: 0,
                },
            );
        }
        match outcome {
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
                losers,
            } => {
                for loser in &losers {
                    self.ledger.credit(
                        loser,
                        Credit {
                            lost_votes: 1,
                            ..Credit::default()
                        },
                    );
                }
                self.outbox.push(Op::Result {
                    job_id: job_id.to_owned(),
                    unit_id,
                    leaves,
                    machines: machines.join("\n"),
                });
                if votes.iter().any(|v| v.leaves != leaves) {
                    let disagreement = Disagreement {
                        unit_id,
                        position: job.shown_position(unit_id),
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
                } else if job.summary.done == job.units_total {
                    job.finish(JobState::Done, None);
                    self.outbox.push(job.state_op());
                }
            }
            VoteOutcome::NoMajority { votes } => {
                self.outbox.push(vote_op());
                let disagreement = Disagreement {
                    unit_id,
                    position: job.shown_position(unit_id),
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

    /// Cancels a job that has not finished; its units are released and
    /// late results for it are ignored.
    pub fn cancel(&mut self, job_id: &str) -> Result<JobView, JobError> {
        let job = self.jobs.get_mut(job_id).ok_or_else(|| not_found(job_id))?;
        if !job.state.is_final() {
            job.finish(JobState::Cancelled, None);
            self.outbox.push(job.state_op());
            // A cancelled job is never resumed: its plan and counts go, its
            // summary, divide and disagreements stay.
            self.outbox.push(Op::DropPlan {
                job_id: job_id.to_owned(),
            });
        }
        Ok(job.view())
    }

    /// Removes a finished job entirely, from the table and the journal; an
    /// open one must be cancelled first. Returns it as it was.
    pub fn delete(&mut self, job_id: &str) -> Result<JobView, JobError> {
        let job = self.jobs.get(job_id).ok_or_else(|| not_found(job_id))?;
        if !job.state.is_final() {
            return Err(JobError::NotFinished {
                id: job_id.to_owned(),
                state: job.state,
            });
        }
        let view = job.view();
        self.jobs.remove(job_id);
        self.order.retain(|id| id != job_id);
        for holder in self.holders.values_mut() {
            holder.units.retain(|(job, _)| job != job_id);
        }
        self.outbox.push(Op::DeleteJob {
            job_id: job_id.to_owned(),
        });
        Ok(view)
    }

    /// Checks that `job_id` is a failed job, which [`Jobs::resume`] can
    /// take once its units are read back from the journal.
    pub fn check_resumable(&self, job_id: &str) -> Result<(), JobError> {
        let job = self.jobs.get(job_id).ok_or_else(|| not_found(job_id))?;
        if job.state != JobState::Failed {
            return Err(JobError::NotFailed {
                id: job_id.to_owned(),
                state: job.state,
            });
        }
        Ok(())
    }

    /// Queues a failed job's open units again, keeping every accepted
    /// count; a unit that found no majority is counted afresh. `restored`
    /// is the job as the journal holds it.
    pub fn resume(&mut self, job_id: &str, restored: RestoredJob) -> Result<JobView, JobError> {
        self.check_resumable(job_id)?;
        self.rebuild_open(job_id, restored)
    }

    /// Counts some of a job's units again: `restored` is the job as the
    /// journal holds it once their counts went ([`Op::Reopen`]). A done
    /// job runs again; a cancelled one is left alone.
    pub fn reopen(&mut self, job_id: &str, restored: RestoredJob) -> Result<JobView, JobError> {
        let job = self.jobs.get(job_id).ok_or_else(|| not_found(job_id))?;
        if job.state == JobState::Cancelled {
            return Ok(job.view());
        }
        self.rebuild_open(job_id, restored)
    }

    fn rebuild_open(&mut self, job_id: &str, mut restored: RestoredJob) -> Result<JobView, JobError> {
        if !restored.damage.is_empty() {
            return Err(JobError::CannotResume {
                id: job_id.to_owned(),
                reason: format!(
                    "the journal's copy of {} failed its checksum",
                    restored.damage.join(", ")
                ),
            });
        }
        // Votes that found no majority are dropped: counted afresh.
        let mut per_unit: HashMap<u64, usize> = HashMap::new();
        for vote in &restored.votes {
            *per_unit.entry(vote.unit_id).or_default() += 1;
        }
        let stuck: Vec<u64> = per_unit
            .into_iter()
            .filter(|&(_, n)| n >= MAX_VOTES as usize)
            .map(|(u, _)| u)
            .collect();
        for &unit_id in &stuck {
            self.outbox.push(Op::ClearVotes {
                job_id: job_id.to_owned(),
                unit_id,
            });
        }
        restored.votes.retain(|v| !stuck.contains(&v.unit_id));
        let (released, started_ms, disagreements) = {
            let old = &self.jobs[job_id];
            (old.released, old.started_ms, old.disagreements.clone())
        };
        let mut job = Job::new(job_id.to_owned(), restored.spec, restored.plan);
        job.released = released;
        job.started_ms = started_ms;
        job.disagreements = disagreements;
        for (unit_id, leaves) in restored.results {
            if job.is_open(unit_id) && !job.decided(unit_id, leaves) {
                break;
            }
        }
        let quorum = job.spec.quorum();
        for vote in restored.votes {
            job.with_unit(vote.unit_id, |unit| {
                unit.vote(&vote.voter, &vote.label, vote.leaves, quorum)
            });
        }
        if !job.state.is_final() {
            job.state = JobState::Running;
            if job.summary.done == job.units_total {
                job.finish(JobState::Done, None);
            }
        }
        self.outbox.push(job.state_op());
        let view = job.view();
        self.jobs.insert(job_id.to_owned(), job);
        Ok(view)
    }

    pub fn view(&self, job_id: &str) -> Result<JobView, JobError> {
        self.jobs
            .get(job_id)
            .map(Job::view)
            .ok_or_else(|| not_found(job_id))
    }

    /// Up to `limit` jobs in submission order, from place `start`; and the
    /// place of the next page, if any.
    pub fn list(&self, start: usize, limit: usize) -> (Vec<JobView>, Option<usize>) {
        let end = start.saturating_add(limit).min(self.order.len());
        let views = self
            .order
            .get(start..end)
            .unwrap_or_default()
            .iter()
            .map(|id| self.jobs[id].view())
            .collect();
        (views, (end < self.order.len()).then_some(end))
    }

    /// Up to `limit` of a job's disagreements from `start`, and the place of
    /// the next page.
    pub fn disagreements(
        &self,
        job_id: &str,
        start: usize,
        limit: usize,
    ) -> Result<(Vec<Disagreement>, Option<usize>), JobError> {
        let job = self.jobs.get(job_id).ok_or_else(|| not_found(job_id))?;
        let all = &job.disagreements;
        let end = start.saturating_add(limit).min(all.len());
        let page = all.get(start..end).unwrap_or_default().to_vec();
        Ok((page, (end < all.len()).then_some(end)))
    }

    /// Totals for metrics: one step per job, none per unit.
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
                stats.units_queued += job.units_queued();
                stats.units_leased += job.units_leased();
            }
            stats.units_done += job.summary.done;
            stats.units_released += job.released;
            stats.leaves_done = stats.leaves_done.saturating_add(job.view().leaves_done);
        }
        stats
    }

    /// The divide table from the units decided so far.
    pub fn divide(&self, job_id: &str) -> Result<DivideView, JobError> {
        let job = self.jobs.get(job_id).ok_or_else(|| not_found(job_id))?;
        // A sum past u128 already failed the job; show it saturated.
        let per_move = job
            .per_move()
            .unwrap_or_else(|| vec![Leaves::full(u128::MAX); job.first_moves.len()]);
        let total = match job.root_leaves {
            Some(root) => root,
            None => per_move
                .iter()
                .try_fold(Leaves::ZERO, |sum, &l| sum.checked_add(l))
                .unwrap_or(Leaves::full(u128::MAX)),
        };
        let moves = job
            .first_moves
            .iter()
            .zip(per_move)
            .enumerate()
            .map(|(i, (mv, leaves))| DivideLine {
                first_move: mv.clone(),
                leaves,
                units_total: job.summary.move_units.get(i).copied().unwrap_or(0),
                units_done: job.summary.move_done.get(i).copied().unwrap_or(0),
            })
            .collect();
        Ok(DivideView {
            job: job.view(),
            moves,
            total,
        })
    }

    /// Heap bytes of the open jobs' units, for memory figures and tests.
    pub fn unit_bytes(&self) -> usize {
        self.jobs.values().map(Job::unit_bytes).sum()
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
