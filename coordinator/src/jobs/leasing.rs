//! Leases: handing units to workers, renewing, handing back and expiring
//! them. A lease belongs to a worker session; its deadline is the
//! session's, so a heartbeat renews every lease at once and expiring
//! touches only the units of sessions that went silent.

use std::collections::HashSet;
use std::time::{Duration, Instant};

use super::{JobState, Jobs, LeasedUnit, MAX_UNIT_FAILURES, WorkerRef, unix_ms};

/// The leases of one worker session.
#[derive(Debug)]
pub(super) struct Holder {
    pub deadline: Instant,
    /// (job, unit) pairs leased to the session and not yet reported.
    pub units: HashSet<(String, u64)>,
}

impl Jobs {
    /// Leases up to `max` units to `worker`, from the first unfinished job
    /// with units wanting a lease (only `only_job` when given), preferring
    /// the first move of `affinity` (updated to what was handed out). Never
    /// the same unit twice to one machine.
    pub fn lease(
        &mut self,
        worker: WorkerRef<'_>,
        max: usize,
        affinity: &mut Option<(String, u32)>,
        only_job: Option<&str>,
        now: Instant,
        ttl: Duration,
    ) -> Vec<LeasedUnit> {
        let mut out = Vec::new();
        for id in &self.order {
            if out.len() >= max {
                break;
            }
            if only_job.is_some_and(|only| only != id) {
                continue;
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
            // Units this machine may not take, put back when done.
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
                let Some(queue) = job.pending.get_mut(&group) else {
                    break;
                };
                let Some(unit_id) = queue.pop_front() else {
                    job.pending.remove(&group);
                    continue;
                };
                if queue.is_empty() {
                    job.pending.remove(&group);
                }
                job.units[unit_id as usize].queued = false;
                if !job.units[unit_id as usize].needs_lease() {
                    continue;
                }
                if !job.units[unit_id as usize].can_take(worker.identity) {
                    passed_over.push(unit_id);
                    continue;
                }
                self.next_epoch += 1;
                let epoch = self.next_epoch;
                job.units[unit_id as usize].lease(worker.session, worker.identity, epoch);
                let holder = self
                    .holders
                    .entry(worker.session.to_owned())
                    .or_insert_with(|| Holder {
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
                // With verification it also wants a second machine.
                job.requeue(unit_id);
            }
            for unit_id in passed_over.into_iter().rev() {
                job.requeue(unit_id);
            }
        }
        out
    }

    /// Puts a leased unit back in the queue: `worker` gave back its lease
    /// of `epoch`. False when it held no such lease.
    pub fn release(&mut self, job_id: &str, unit_id: u64, epoch: u64, worker: WorkerRef<'_>) -> bool {
        let Some(job) = self.jobs.get_mut(job_id) else {
            return false;
        };
        if job.state.is_final() || unit_id >= job.units.len() as u64 {
            return false;
        }
        let Some(session) = job.units[unit_id as usize].release(epoch, worker.identity) else {
            return false;
        };
        if let Some(holder) = self.holders.get_mut(&session) {
            holder.units.remove(&(job_id.to_owned(), unit_id));
        }
        job.released += 1;
        job.requeue(unit_id);
        self.outbox.push(job.state_op());
        true
    }

    /// Extends every lease of the session `session` to `now + ttl`; returns
    /// how many it holds.
    pub fn renew(&mut self, session: &str, now: Instant, ttl: Duration) -> u32 {
        self.holders.get_mut(session).map_or(0, |holder| {
            holder.deadline = now + ttl;
            holder.units.len() as u32
        })
    }

    /// Re-queues the units of every session whose leases ran out: the one
    /// path for a lost, killed or cut-off worker. A unit that keeps failing
    /// fails its job (`perft resume` queues it again). Returns the number
    /// of leases that ran out.
    pub fn expire(&mut self, now: Instant) -> u64 {
        let lost: Vec<String> = self
            .holders
            .iter()
            .filter(|(_, h)| h.deadline <= now)
            .map(|(w, _)| w.clone())
            .collect();
        let mut expired = 0;
        let mut changed = HashSet::new();
        for session in lost {
            let Some(holder) = self.holders.remove(&session) else {
                continue;
            };
            for (job_id, unit_id) in holder.units {
                let Some(job) = self.jobs.get_mut(&job_id) else {
                    continue;
                };
                if job.state.is_final() || !job.units[unit_id as usize].drop_lease(&session) {
                    continue;
                }
                job.released += 1;
                expired += 1;
                job.requeue(unit_id);
                let unit = &job.units[unit_id as usize];
                if unit.failures >= MAX_UNIT_FAILURES {
                    let reason = format!(
                        "unit {unit_id} ({}) lost its lease {MAX_UNIT_FAILURES} times; `perft resume {job_id}` queues it again",
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
}
