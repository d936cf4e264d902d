//! What clients and metrics see of the jobs: a job's view, pages of jobs
//! and disagreements, totals, and divide tables.

use perft_model::{Count, DivideLine};

use super::job::Job;
use super::{Disagreement, JobError, JobSpec, Jobs, not_found};
use crate::admission::OpenUse;
use perft_model::JobState;
use perft_model::{JobId, ParticipantId};

/// A job's state as clients see it.
#[derive(Clone, Debug)]
pub struct JobView {
    pub id: JobId,
    pub spec: JobSpec,
    pub split_depth: u32,
    pub state: JobState,
    pub error: Option<String>,
    /// When it was submitted (ms since the Unix epoch), if known.
    pub submitted_ms: Option<u64>,
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

/// A job's divide table so far.
#[derive(Clone, Debug)]
pub struct DivideView {
    pub job: JobView,
    pub moves: Vec<DivideLine>,
    pub total: Count,
}

impl Jobs {
    /// What `owner`'s unfinished jobs hold.
    pub fn open_use(&self, owner: &ParticipantId) -> OpenUse {
        let mut used = OpenUse::default();
        for job in self
            .jobs
            .values()
            .filter(|job| !job.state.is_final() && job.spec.owner == *owner)
        {
            used.jobs += 1;
            used.units = used.units.saturating_add(job.units_total);
        }
        used
    }

    /// What each owner's unfinished jobs hold.
    pub fn open_use_by_owner(&self) -> std::collections::HashMap<ParticipantId, OpenUse> {
        let mut by_owner = std::collections::HashMap::<ParticipantId, OpenUse>::new();
        for job in self.jobs.values().filter(|job| !job.state.is_final()) {
            let used = by_owner.entry(job.spec.owner.clone()).or_default();
            used.jobs += 1;
            used.units = used.units.saturating_add(job.units_total);
        }
        by_owner
    }

    pub fn view(&self, job_id: &JobId) -> Result<JobView, JobError> {
        self.jobs
            .get(job_id)
            .map(|job| job.view(self.clock.now_ms()))
            .ok_or_else(|| not_found(job_id))
    }

    /// Up to `limit` jobs in submission order, from place `start`; and the
    /// place of the next page, if any.
    pub fn list(&self, start: usize, limit: usize) -> (Vec<JobView>, Option<usize>) {
        let end = start.saturating_add(limit).min(self.order.len());
        let now = self.clock.now_ms();
        let views = self
            .order
            .get(start..end)
            .unwrap_or_default()
            .iter()
            .map(|id| self.jobs[id].view(now))
            .collect();
        (views, (end < self.order.len()).then_some(end))
    }

    /// Up to `limit` of a job's disagreements from `start`, and the place of
    /// the next page.
    pub fn disagreements(
        &self,
        job_id: &JobId,
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
        let now = self.clock.now_ms();
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
            stats.leaves_done = stats.leaves_done.saturating_add(job.view(now).leaves_done);
        }
        stats
    }

    /// The divide table from the units decided so far.
    pub fn divide(&self, job_id: &JobId) -> Result<DivideView, JobError> {
        let job = self.jobs.get(job_id).ok_or_else(|| not_found(job_id))?;
        // A sum past u128 already failed the job; show it saturated.
        let per_move = job
            .per_move()
            .unwrap_or_else(|| vec![Count::saturated(job.spec.kinds()); job.first_moves.len()]);
        let total = match job.root_leaves {
            Some(root) => root,
            None => per_move
                .iter()
                .try_fold(Count::zero(job.spec.kinds()), |sum, &c| sum.checked_add(c))
                .unwrap_or(Count::saturated(job.spec.kinds())),
        };
        let moves = job
            .first_moves
            .iter()
            .zip(per_move)
            .enumerate()
            .map(|(i, (mv, count))| DivideLine {
                first_move: mv.clone(),
                count,
                units_total: job.summary.move_units.get(i).copied().unwrap_or(0),
                units_done: job.summary.move_done.get(i).copied().unwrap_or(0),
            })
            .collect();
        Ok(DivideView {
            job: job.view(self.clock.now_ms()),
            moves,
            total,
        })
    }

    /// Heap bytes of the open jobs' units, for memory figures and tests.
    pub fn unit_bytes(&self) -> usize {
        self.jobs.values().map(Job::unit_bytes).sum()
    }
}
