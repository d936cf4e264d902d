//! Jobs rebuilt from the journal: what it gives back of them (after a
//! restart, and when a failed job is resumed or some of a job's units are
//! counted again), and the table rebuilt from that.

use std::collections::HashMap;

use super::job::Job;
use super::{Credit, Disagreement, JobError, JobSpec, JobView, Jobs, MAX_VOTES, Op, Summary, not_found};
use crate::planning::PlannedJob;
use perft_model::Count;
use perft_model::JobState;
use perft_model::{Epoch, JobId, ParticipantId, UnitId};

/// A vote read back from the journal.
#[derive(Debug, Clone)]
pub struct RestoredVote {
    pub unit_id: UnitId,
    pub voter: ParticipantId,
    pub label: String,
    pub count: Count,
}

/// A job read back from the journal.
#[derive(Debug, Clone)]
pub struct RestoredJob {
    pub id: JobId,
    pub spec: JobSpec,
    /// The plan; its units only for an open job (or one without summary).
    pub plan: PlannedJob,
    pub units_total: u64,
    /// A finished job's summary; with one, nothing per unit is read.
    pub summary: Option<Summary>,
    pub state: JobState,
    pub error: Option<String>,
    /// When it was submitted; `None` in a journal older than schema 10.
    pub submitted_ms: Option<u64>,
    pub started_ms: Option<u64>,
    pub finished_ms: Option<u64>,
    pub released: u64,
    pub results: Vec<(UnitId, Count)>,
    pub votes: Vec<RestoredVote>,
    pub disagreements: Vec<Disagreement>,
    /// Parts of the plan whose checksum failed: the job cannot be trusted.
    pub damage: Vec<String>,
    /// Units whose stored count failed its checksum: counted again.
    pub damaged_counts: Vec<UnitId>,
    /// Units of a done job whose counts failed the check against its
    /// Merkle root at start: counted again, and shown until they are.
    pub recount: Vec<UnitId>,
    /// Units reopened since their first lease, with the first epoch still
    /// valid for them.
    pub floors: Vec<(UnitId, Epoch)>,
    /// Units a participant may never lease again (reopened because of its
    /// counts).
    pub bars: Vec<(UnitId, ParticipantId)>,
}

/// What the journal holds of the jobs and of who counted them.
#[derive(Debug, Default)]
pub struct Restored {
    pub jobs: Vec<RestoredJob>,
    /// Every participant's credit.
    pub credit: Vec<(ParticipantId, Credit)>,
}

impl Jobs {
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
            submitted_ms,
            started_ms,
            finished_ms,
            released,
            results,
            votes,
            disagreements,
            damage,
            damaged_counts,
            recount,
            floors,
            bars,
        } = restored;
        let now = self.clock.now_ms();
        // Every new lease is numbered past every reopening journaled.
        if let Some(highest) = floors.iter().map(|(_, floor)| floor.0).max()
            && highest >= self.next_epoch
        {
            self.next_epoch = highest;
            self.boot_epoch = highest.saturating_add(1);
        }
        if let Some(summary) = summary.filter(|_| state.is_final()) {
            let mut job = Job::finished(id, spec, plan, units_total, summary);
            job.state = state;
            job.error = error;
            job.submitted_ms = submitted_ms;
            job.started_ms = started_ms;
            job.finished_ms = finished_ms;
            job.released = released;
            job.disagreements = disagreements;
            self.insert(job);
            return;
        }
        let job = self.insert(Job::new(id.clone(), spec, plan));
        job.released = released;
        job.submitted_ms = submitted_ms;
        job.started_ms = started_ms;
        job.disagreements = disagreements;
        if !damage.is_empty() {
            let reason = format!(
                "the journal's copy of {} failed its checksum: resubmit the job",
                damage.join(", ")
            );
            tracing::error!(job = %id, %reason, "journal damage");
            job.finish(JobState::Failed, Some(reason), now);
            return;
        }
        for (unit_id, floor) in floors {
            job.raise_floor(unit_id, floor);
        }
        for (unit_id, participant) in &bars {
            job.bar(*unit_id, participant);
        }
        for unit_id in &damaged_counts {
            tracing::error!(job = %id, unit = unit_id.0, "journal: a stored count failed its checksum; the unit is counted again");
        }
        // A done job's damaged counts: it says so until they are counted.
        if state == JobState::Done
            && let Some(open) = job.open.as_mut()
        {
            open.recounting = recount.into_iter().chain(damaged_counts).collect();
        }
        let mut overflowed = false;
        for (unit_id, count) in results {
            if !overflowed && job.is_open(unit_id) {
                overflowed |= !job.decided(unit_id, count, now);
            }
        }
        if overflowed {
            return;
        }
        let quorum = job.spec.quorum();
        for vote in votes {
            job.with_unit(vote.unit_id, |unit| {
                unit.vote(&vote.voter, &vote.label, vote.count, quorum)
            });
        }
        let complete = job.summary.done == job.units_total;
        match state {
            JobState::Cancelled | JobState::Failed => {
                job.finish(state, error, now);
                job.finished_ms = finished_ms;
            }
            _ if complete => {
                job.finish(JobState::Done, None, now);
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

    /// Checks that `job_id` is a failed job, which [`Jobs::resume`] can
    /// take once its units are read back from the journal.
    pub fn check_resumable(&self, job_id: &JobId) -> Result<(), JobError> {
        let job = self.jobs.get(job_id).ok_or_else(|| not_found(job_id))?;
        if job.state != JobState::Failed {
            return Err(JobError::NotFailed {
                id: job_id.clone(),
                state: job.state,
            });
        }
        Ok(())
    }

    /// Queues a failed job's open units again, keeping every accepted
    /// count; a unit that found no majority is counted afresh. `restored`
    /// is the job as the journal holds it.
    pub fn resume(&mut self, job_id: &JobId, restored: RestoredJob) -> Result<JobView, JobError> {
        self.check_resumable(job_id)?;
        self.rebuild_open(job_id, restored)
    }

    /// Counts some of a job's units again: `restored` is the job as the
    /// journal holds it once their counts went ([`Op::Reopen`]). A done
    /// job runs again; a cancelled one is left alone.
    pub fn reopen(&mut self, job_id: &JobId, restored: RestoredJob) -> Result<JobView, JobError> {
        let job = self.jobs.get(job_id).ok_or_else(|| not_found(job_id))?;
        if job.state == JobState::Cancelled {
            return Ok(job.view(self.clock.now_ms()));
        }
        self.rebuild_open(job_id, restored)
    }

    fn rebuild_open(&mut self, job_id: &JobId, mut restored: RestoredJob) -> Result<JobView, JobError> {
        if !restored.damage.is_empty() {
            return Err(JobError::CannotResume {
                id: job_id.clone(),
                reason: format!(
                    "the journal's copy of {} failed its checksum",
                    restored.damage.join(", ")
                ),
            });
        }
        // Votes that found no majority are dropped: counted afresh.
        let mut per_unit: HashMap<UnitId, usize> = HashMap::new();
        for vote in &restored.votes {
            *per_unit.entry(vote.unit_id).or_default() += 1;
        }
        let stuck: Vec<UnitId> = per_unit
            .into_iter()
            .filter(|&(_, n)| n >= MAX_VOTES as usize)
            .map(|(u, _)| u)
            .collect();
        for &unit_id in &stuck {
            self.outbox.push(Op::ClearVotes {
                job_id: job_id.clone(),
                unit_id,
            });
        }
        restored.votes.retain(|v| !stuck.contains(&v.unit_id));
        let (released, submitted_ms, started_ms, disagreements) = {
            let old = &self.jobs[job_id];
            (
                old.released,
                old.submitted_ms,
                old.started_ms,
                old.disagreements.clone(),
            )
        };
        let now = self.clock.now_ms();
        let mut job = Job::new(job_id.clone(), restored.spec, restored.plan);
        job.released = released;
        job.submitted_ms = submitted_ms;
        job.started_ms = started_ms;
        job.disagreements = disagreements;
        for (unit_id, floor) in restored.floors {
            job.raise_floor(unit_id, floor);
        }
        for (unit_id, participant) in &restored.bars {
            job.bar(*unit_id, participant);
        }
        for (unit_id, count) in restored.results {
            if job.is_open(unit_id) && !job.decided(unit_id, count, now) {
                break;
            }
        }
        let quorum = job.spec.quorum();
        for vote in restored.votes {
            job.with_unit(vote.unit_id, |unit| {
                unit.vote(&vote.voter, &vote.label, vote.count, quorum)
            });
        }
        if !job.state.is_final() {
            job.state = JobState::Running;
            if job.summary.done == job.units_total {
                job.finish(JobState::Done, None, now);
            }
        }
        self.outbox.push(job.state_op());
        let view = job.view(now);
        self.jobs.insert(job_id.clone(), job);
        Ok(view)
    }
}
