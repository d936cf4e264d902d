//! Leases: handing units to workers, handing back and expiring them. A
//! lease belongs to a worker session and lives as long as the session: the
//! coordinator's worker registry is the one clock that says a session is
//! lost, and expiring touches only the units of lost sessions.

use std::collections::HashSet;

use crate::ids::{Epoch, JobId, SessionId, UnitId};

use super::{JobState, Jobs, LeasedJob, LeasedUnit, Lessee, MAX_UNIT_FAILURES};
use crate::clock::unix_ms;

/// The leases of one worker session.
#[derive(Debug, Default)]
pub(super) struct Holder {
    /// (job, unit) pairs leased to the session and not yet reported.
    pub units: HashSet<(JobId, UnitId)>,
    /// Jobs that leased it fresh units: where it may have a stretch.
    pub stretch_jobs: HashSet<JobId>,
}

impl Jobs {
    /// Leases up to `max` units to `worker`, from the first unfinished job
    /// with units wanting a lease (only `only_job` when given), grouped per
    /// job. A job hands each worker session the units of its own stretch of
    /// plan order, so a worker gets neighbouring subtrees, which share
    /// positions in its table.
    /// Never the same unit twice to one participant.
    pub fn lease(&mut self, worker: &Lessee, max: usize, only_job: Option<&JobId>) -> Vec<LeasedJob> {
        let mut out = Vec::new();
        if self.ledger.is_quarantined(&worker.identity) {
            return out;
        }
        let mut handed = 0;
        for id in &self.order {
            if handed >= max {
                break;
            }
            if only_job.is_some_and(|only| only != id) {
                continue;
            }
            let job = self.jobs.get_mut(id).expect("ordered jobs exist");
            if job.state.is_final() || !job.has_queued() {
                continue;
            }
            if job.state == JobState::Queued {
                job.state = JobState::Running;
                job.started_ms = Some(unix_ms());
                self.outbox.push(job.state_op());
            }
            let mut units = Vec::new();
            while handed < max {
                let Some(unit_id) = job.next_for(&worker.identity, &worker.session) else {
                    break;
                };
                self.next_epoch += 1;
                let epoch = Epoch(self.next_epoch);
                job.with_unit(unit_id, |unit| {
                    unit.lease(&worker.session, &worker.identity, epoch)
                });
                self.holders
                    .entry(worker.session.clone())
                    .or_default()
                    .units
                    .insert((id.clone(), unit_id));
                units.push(LeasedUnit {
                    unit_id,
                    epoch,
                    position: job.position(unit_id).unwrap_or_default().to_vec(),
                });
                handed += 1;
                // With verification it also wants a second participant.
                job.requeue(unit_id);
            }
            if !units.is_empty() {
                if let Some(holder) = self.holders.get_mut(&worker.session) {
                    holder.stretch_jobs.insert(id.clone());
                }
                out.push(LeasedJob {
                    job_id: id.clone(),
                    game: job.spec.game,
                    convention: job.spec.convention,
                    depth: job.remaining_depth,
                    stats: job.spec.stats,
                    units,
                });
            }
        }
        out
    }

    /// Puts a leased unit back in the queue: `worker` gave back its lease
    /// of `epoch`. False when it held no such lease.
    pub fn release(&mut self, job_id: &JobId, unit_id: UnitId, epoch: Epoch, worker: &Lessee) -> bool {
        let Some(job) = self.jobs.get_mut(job_id) else {
            return false;
        };
        if job.state.is_final() {
            return false;
        }
        let Some(session) = job
            .with_unit(unit_id, |unit| unit.release(epoch, &worker.identity))
            .flatten()
        else {
            return false;
        };
        if let Some(holder) = self.holders.get_mut(&session) {
            holder.units.remove(&(job_id.clone(), unit_id));
        }
        job.released += 1;
        job.requeue(unit_id);
        self.outbox.push(job.state_op());
        true
    }

    /// How many units the session `session` holds.
    pub fn held_by(&self, session: &SessionId) -> usize {
        self.holders.get(session).map_or(0, |h| h.units.len())
    }

    /// The worker sessions holding units of `job_id`, with how many each
    /// holds, most first: the workers serving the job now. One step per
    /// lease held, over all jobs.
    pub fn holders_of(&self, job_id: &JobId) -> Vec<(SessionId, u64)> {
        let mut serving: Vec<(SessionId, u64)> = self
            .holders
            .iter()
            .filter_map(|(session, holder)| {
                let held = holder.units.iter().filter(|(job, _)| job == job_id).count() as u64;
                (held > 0).then(|| (session.clone(), held))
            })
            .collect();
        serving.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.as_str().cmp(b.0.as_str())));
        serving
    }

    /// Re-queues the units of the sessions `lost` (the worker registry
    /// found them silent, or they left): the one path for a lost, killed or
    /// cut-off worker. A unit that keeps failing fails its job (`perft
    /// resume` queues it again). Returns the number of leases that ended.
    pub fn expire(&mut self, lost: &[SessionId]) -> u64 {
        let mut expired = 0;
        let mut changed = HashSet::new();
        for session in lost {
            let Some(holder) = self.holders.remove(session) else {
                continue;
            };
            for job_id in &holder.stretch_jobs {
                if let Some(job) = self.jobs.get_mut(job_id) {
                    job.forget_session(session);
                }
            }
            // In plan order, so the units come back in an order that does
            // not depend on a hash set's.
            let mut units: Vec<_> = holder.units.into_iter().collect();
            units.sort_unstable();
            for (job_id, unit_id) in units {
                let Some(job) = self.jobs.get_mut(&job_id) else {
                    continue;
                };
                if job.state.is_final() {
                    continue;
                }
                let Some(failures) =
                    job.with_unit(unit_id, |unit| unit.drop_lease(session).then_some(unit.failures))
                else {
                    continue;
                };
                let Some(failures) = failures else {
                    continue;
                };
                job.released += 1;
                expired += 1;
                job.requeue(unit_id);
                if failures >= MAX_UNIT_FAILURES {
                    let reason = format!(
                        "unit {unit_id} ({}) lost its lease {MAX_UNIT_FAILURES} times; `perft resume {job_id}` queues it again",
                        job.shown_position(unit_id)
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
}
