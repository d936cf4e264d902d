//! Leases: handing units to workers, handing back, and ending leases that
//! brought no count: a lost session's, or one past its own progress
//! deadline. A lease that ends without a count is charged to its
//! participant (a strike; enough of them suspend it), never to the job:
//! only a unit that lapses [`MAX_UNIT_FAILURES`] times with
//! [`POISON_PARTICIPANTS`] different participants fails its job. Every reopening raises the unit's floor, so
//! no lease from before it counts, before or after a restart.

use std::collections::{BTreeMap, HashSet};

use perft_model::{Epoch, JobId, ParticipantId, SessionId, UnitId};

use super::deadlines::Due;
use super::job::Job;
use super::{Jobs, LeaseHolder, LeasedJob, LeasedUnit, MAX_UNIT_FAILURES, Op, POISON_PARTICIPANTS};
use perft_model::JobState;

/// The leases of one worker session.
#[derive(Debug, Default)]
pub(super) struct Holder {
    /// (job, unit) pairs leased to the session and not yet reported.
    pub units: HashSet<(JobId, UnitId)>,
    /// Jobs that leased it fresh units: where it may have a stretch.
    pub stretch_jobs: HashSet<JobId>,
}

/// Leases ended without a count in one pass, per participant and per job.
#[derive(Default)]
struct Lapses {
    per_participant: BTreeMap<ParticipantId, u64>,
    per_job: BTreeMap<JobId, Vec<UnitId>>,
}

impl Jobs {
    /// Leases up to `max` units to `worker`, from the first unfinished job
    /// with units wanting a lease (only `only_job` when given), grouped per
    /// job. A job hands each worker session the units of its own stretch of
    /// plan order, so a worker gets neighbouring subtrees, which share
    /// positions in its table. Never the same unit twice to one
    /// participant; nothing to a quarantined or suspended one.
    pub fn lease(&mut self, worker: &LeaseHolder, max: usize, only_job: Option<&JobId>) -> Vec<LeasedJob> {
        let mut out = Vec::new();
        let now = self.clock.now_ms();
        if self.ledger.is_quarantined(&worker.identity) || self.ledger.is_suspended(&worker.identity, now) {
            return out;
        }
        let progress_ms = self.policy.progress_ms;
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
                job.started_ms = Some(now);
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
                self.deadlines.push(Due {
                    at_ms: now.saturating_add(job.progress_allowance_ms(unit_id, progress_ms)),
                    epoch,
                    unit_id,
                    job_id: id.clone(),
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
        if handed > 0 {
            self.compact_deadlines();
        }
        out
    }

    /// Drops the deadlines of leases that ended, once they pile up.
    fn compact_deadlines(&mut self) {
        if !self.deadlines.due_for_compaction() {
            return;
        }
        let jobs = &self.jobs;
        let live = self.holders.values().map(|h| h.units.len()).sum::<usize>();
        self.deadlines.compact(live, |due| {
            jobs.get(&due.job_id)
                .is_some_and(|job| job.holds_lease(due.unit_id, due.epoch))
        });
    }

    /// Puts a leased unit back in the queue: `worker` gave back its lease
    /// of `epoch`. False when it held no such lease.
    pub fn release(&mut self, job_id: &JobId, unit_id: UnitId, epoch: Epoch, worker: &LeaseHolder) -> bool {
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
        let floor = Epoch(self.next_epoch + 1);
        job.raise_floor(unit_id, floor);
        job.requeue(unit_id);
        self.outbox.push(Op::Floors {
            job_id: job_id.clone(),
            unit_ids: vec![unit_id],
            floor,
        });
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
    /// found them silent, they left, or their participant was revoked):
    /// the one path for a lost, killed or cut-off worker. Each ended lease
    /// is charged to its participant. Returns the number of leases that
    /// ended.
    pub fn expire(&mut self, lost: &[SessionId]) -> u64 {
        let mut lapses = Lapses::default();
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
                if let Some(Some(participant)) = job.with_unit(unit_id, |unit| unit.drop_lease(session)) {
                    lapses.add(participant, job_id, unit_id);
                }
            }
        }
        self.charge(lapses)
    }

    /// Ends every lease past its progress deadline at the table's time:
    /// a unit held without a count for longer than its size allows goes
    /// back to the queue, whatever else its session sends. Returns the
    /// number of leases that ended.
    pub fn lapse_overdue(&mut self) -> u64 {
        let now = self.clock.now_ms();
        let mut lapses = Lapses::default();
        while let Some(due) = self.deadlines.pop_due(now) {
            let Some(job) = self.jobs.get_mut(&due.job_id) else {
                continue;
            };
            if job.state.is_final() {
                continue;
            }
            let Some(Some((session, participant))) = job.with_unit(due.unit_id, |unit| unit.lapse(due.epoch))
            else {
                continue;
            };
            if let Some(holder) = self.holders.get_mut(&session) {
                holder.units.remove(&(due.job_id.clone(), due.unit_id));
            }
            lapses.add(participant, due.job_id, due.unit_id);
        }
        self.charge(lapses)
    }

    /// Requeues the lapsed units (raising their floors), fails a job on a
    /// poison unit, and charges each participant one strike.
    fn charge(&mut self, lapses: Lapses) -> u64 {
        let now = self.clock.now_ms();
        let floor = Epoch(self.next_epoch + 1);
        let mut ended = 0;
        for (job_id, unit_ids) in lapses.per_job {
            let Some(job) = self.jobs.get_mut(&job_id) else {
                continue;
            };
            ended += unit_ids.len() as u64;
            for &unit_id in &unit_ids {
                job.released += 1;
                job.raise_floor(unit_id, floor);
                job.requeue(unit_id);
                fail_if_poison(job, unit_id, now);
            }
            self.outbox.push(Op::Floors {
                job_id: job_id.clone(),
                unit_ids,
                floor,
            });
            self.outbox.push(job.state_op());
        }
        for (participant, leases) in lapses.per_participant {
            if self.ledger.lapsed(&participant, leases, now) {
                tracing::warn!(
                    %participant,
                    leases,
                    "participant suspended: its leases keep lapsing; it leases nothing until its strikes fade or an admin lifts them"
                );
            }
        }
        ended
    }
}

impl Lapses {
    fn add(&mut self, participant: ParticipantId, job_id: JobId, unit_id: UnitId) {
        *self.per_participant.entry(participant).or_default() += 1;
        self.per_job.entry(job_id).or_default().push(unit_id);
    }
}

/// Fails `job` when unit `unit_id` is poison: its leases lapsed
/// [`MAX_UNIT_FAILURES`] times, with [`POISON_PARTICIPANTS`] different
/// participants or with the coordinator's owner alone. One participant's
/// lapses never fail a job, and honest machines that crash now and then
/// rarely lapse one unit that often.
fn fail_if_poison(job: &mut Job, unit_id: UnitId, now_ms: u64) {
    let verdict = job.with_unit(unit_id, |unit| {
        (
            unit.lapsed_participants(),
            unit.failures,
            unit.lapsed_by_owner_only(),
        )
    });
    let Some((participants, failures, owner_only)) = verdict else {
        return;
    };
    if failures < MAX_UNIT_FAILURES {
        return;
    }
    let reason = if participants >= POISON_PARTICIPANTS {
        format!("its leases lapsed {failures} times, with {participants} different participants")
    } else if owner_only {
        format!("it lost its lease {failures} times")
    } else {
        return;
    };
    let reason = format!(
        "unit {unit_id} ({}): {reason}; `perft resume {}` queues it again",
        job.shown_position(unit_id),
        job.id
    );
    job.finish(JobState::Failed, Some(reason), now_ms);
}
