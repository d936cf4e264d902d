//! The coordinator around the table: the reaper (recounts, deadlines),
//! the admin (revocations, lifts, resumes), clients submitting jobs, and
//! crashes with their restarts.

use std::collections::BTreeSet;
use std::sync::Arc;

use perft_coordinator::jobs::{Jobs, LeaseHolder, Op};
use perft_coordinator::journal::{Journal, plan_ops};
use perft_model::JobState;
use perft_model::{JobId, ParticipantId, SessionId, UnitId};
use rand::Rng;

use super::model::{Broken, LiveLease};
use super::trace::note;
use super::world::World;

impl World {
    /// The reaper's pass (`Coordinator::reap`): what the newly
    /// quarantined decided alone is counted again; the leases of sessions
    /// found silent end, and those past their deadline lapse.
    pub(super) fn reap(&mut self) -> Result<(), Broken> {
        self.recount_owed()?;
        let silent: Vec<SessionId> = self
            .actors
            .iter_mut()
            .flat_map(|a| std::mem::take(&mut a.left_behind))
            .collect();
        if !silent.is_empty() {
            self.expire_sessions(&silent)?;
        }
        self.lapse_overdue()
    }

    /// What the newly quarantined decided alone is counted again
    /// (`Coordinator::recount_owed`): the reaper's first task, and what an
    /// admin's lift of a quarantine waits for.
    fn recount_owed(&mut self) -> Result<(), Broken> {
        let mut newly = self.jobs.take_newly_quarantined();
        // Quarantined, lifted and quarantined again: recounted once.
        newly.sort();
        newly.dedup();
        let expected: Vec<ParticipantId> = std::mem::take(&mut self.model.vol.newly_quarantined)
            .into_iter()
            .collect();
        note(format!("  reap: newly quarantined {newly:?}"));
        if self.oracle && newly != expected {
            return Err(format!(
                "invariant 7: the table's newly quarantined {newly:?} are not the model's {expected:?}"
            ));
        }
        for p in newly {
            self.stats.quarantined += 1;
            self.recount(&p, true)?;
        }
        Ok(())
    }

    pub(super) fn lapse_overdue(&mut self) -> Result<(), Broken> {
        let now = self.now();
        let ended: Vec<LiveLease> = self
            .model
            .vol
            .leases
            .iter()
            .filter(|l| l.deadline_ms <= now)
            .cloned()
            .collect();
        let got = self.jobs.lapse_overdue();
        note(format!("  lapse_overdue: {got} leases"));
        self.lapsed(ended.clone(), got, "lapse_overdue")?;
        // (5) No unit stays leased past its deadline: a hand-back of each
        // lease that came due must find it gone (and then changes nothing).
        for l in ended {
            let job_id = self.model.job_ids[l.job].clone();
            let holder = LeaseHolder {
                session: l.session.clone(),
                identity: l.who.clone(),
                label: Arc::from("probe"),
            };
            if self.jobs.release(&job_id, UnitId(l.unit), l.epoch, &holder) {
                return Err(format!(
                    "invariant 5: {job_id}/u{} is still leased to {} (epoch {}) past its deadline {} after lapse_overdue at {now}",
                    l.unit, l.who, l.epoch.0, l.deadline_ms
                ));
            }
        }
        Ok(())
    }

    /// `Coordinator::recount`: every unit whose verdict `who`'s count was
    /// part of (with `alone`, that it decided by itself) is counted again,
    /// and `who` never leases it again.
    pub(super) fn recount(&mut self, who: &ParticipantId, alone: bool) -> Result<(), Broken> {
        // The coordinator journals every change before the reaper's task
        // reads the journal.
        self.flush();
        let decided = self.journal().decided_by(who, alone).expect("decided_by");
        let mut expected = BTreeSet::new();
        for (j, job) in self.model.live.jobs.iter().enumerate() {
            for (&unit, d) in &job.decided {
                let hit = if alone {
                    d.deciders == [who.clone()]
                } else {
                    d.deciders.contains(who)
                };
                if hit {
                    expected.insert((j, unit));
                }
            }
        }
        let found: BTreeSet<(usize, u64)> = decided
            .iter()
            .flat_map(|(job_id, units)| {
                let j = self.model.job_index(job_id);
                units.iter().map(move |u| (j, u.0))
            })
            .collect();
        note(format!(
            "  recount {who} (alone: {alone}): {:?}",
            found
                .iter()
                .map(|(j, u)| format!("{}/u{u}", self.model.job_ids[*j]))
                .collect::<Vec<_>>()
        ));
        if self.oracle && found != expected {
            return Err(format!(
                "invariant 7: the journal says {who} decided {found:?} (alone: {alone}); the model says {expected:?}"
            ));
        }
        for (job_id, unit_ids) in decided {
            if !self.jobs.contains(&job_id) {
                continue;
            }
            self.stats.recounted_units += unit_ids.len() as u64;
            let floor = self.jobs.fresh_floor();
            self.jobs.record(Op::Reopen {
                job_id: job_id.clone(),
                unit_ids,
                floor,
                barred: Some(who.clone()),
            });
            self.after_call()?;
            self.flush();
            let restored = self.journal().load_job(&job_id).expect("load_job");
            self.jobs
                .reopen(&job_id, restored)
                .map_err(|e| format!("reopening {job_id}: {e}"))?;
            let j = self.model.job_index(&job_id);
            self.model.rebuilt(j);
            self.after_call()?;
        }
        self.flush();
        Ok(())
    }

    /// `Coordinator::revoke`: the undecided votes of a hostile participant
    /// go, its sessions end, and sometimes everything it helped decide is
    /// counted again.
    pub(super) fn revoke(&mut self) -> Result<(), Broken> {
        let Some(a) = self.pick_actor(|a| a.kind.hostile()) else {
            return Ok(());
        };
        let who = self.actors[a].id.clone();
        let dropped = self.jobs.drop_votes_of(&who);
        note(format!("  revoke {who}: {dropped} votes dropped"));
        self.after_call()?;
        self.model.live.revoked.insert(who.clone());
        self.flush();
        self.stats.revoked += 1;
        // Every machine of it: the door refuses them, their sessions end.
        for m in 0..self.actors.len() {
            if self.actors[m].id == who {
                self.actors[m].revoked = true;
                self.expire(m)?;
            }
        }
        self.flush();
        if self.rng.random_bool(0.5) {
            self.recount(&who, false)?;
        }
        Ok(())
    }

    /// An admin lifts a participant's quarantine and/or its strikes.
    pub(super) fn lift(&mut self) -> Result<(), Broken> {
        let now = self.now();
        let barred: Vec<usize> = (0..self.actors.len())
            .filter(|&a| {
                let id = &self.actors[a].id;
                self.model.quarantined(id) || self.model.suspended(id, now)
            })
            .collect();
        let a = if !barred.is_empty() && self.rng.random_bool(0.8) {
            barred[self.rng.random_range(0..barred.len())]
        } else {
            self.rng.random_range(0..self.actors.len())
        };
        let (quarantine, lapses) = match self.rng.random_range(0..3) {
            0 => (true, false),
            1 => (false, true),
            _ => (true, true),
        };
        self.lift_one(a, quarantine, lapses)
    }

    pub(super) fn lift_one(&mut self, a: usize, quarantine: bool, lapses: bool) -> Result<(), Broken> {
        let who = self.actors[a].id.clone();
        note(format!("  lift {who} quarantine {quarantine} lapses {lapses}"));
        if quarantine {
            self.recount_owed()?;
        }
        self.jobs.lift(&who, quarantine, lapses);
        self.model.lift(&who, quarantine, lapses);
        self.after_call()
    }

    /// The coordinator crashes: the table and every change the journal
    /// did not take go; it restarts later from the journal, and every
    /// worker registers again.
    pub(super) fn crash(&mut self) -> Result<(), Broken> {
        self.stop();
        self.start()
    }

    /// The coordinator stops without warning: every change the journal
    /// has not taken is lost, with the table's memory.
    pub(super) fn stop(&mut self) {
        self.stats.crashes += 1;
        note(format!("  crash: {} ops lost", self.unsent.len()));
        self.unsent.clear();
        self.deliveries.clear();
        for actor in &mut self.actors {
            let unanswered = std::mem::take(&mut actor.in_flight);
            actor.outbox.extend(unanswered);
            // The worker registry goes with the table.
            actor.left_behind.clear();
        }
        self.model.crash();
        self.jobs = Jobs::new(self.policy, self.clock.clone(), Vec::new());
        // The journal's lock goes with it.
        self.journal = None;
        self.clock.advance(self.rng.random_range(1..=120_000));
    }

    /// The coordinator starts again from the journal.
    pub(super) fn start(&mut self) -> Result<(), Broken> {
        let opened = Journal::open(self.dir.path()).map_err(|e| format!("reopening the journal: {e}"))?;
        self.check_restored(&opened.restored)?;
        let mut jobs = Jobs::new(self.policy, self.clock.clone(), opened.restored.credit);
        for job in opened.restored.jobs {
            jobs.restore(job);
        }
        self.jobs = jobs;
        self.journal = Some(opened.journal);
        for actor in &mut self.actors {
            actor.new_session();
        }
        self.after_call()?;
        self.flush();
        Ok(())
    }

    /// A client submits the next job: its plan is journaled first.
    pub(super) fn submit(&mut self) -> Result<(), Broken> {
        if self.unsubmitted.is_empty() {
            return self.lease_some();
        }
        self.flush();
        let (plan, verify) = self.unsubmitted.remove(0);
        let id = JobId::parse(&format!("j{}", self.model.job_ids.len())).expect("a job id");
        let spec = plan.spec(verify);
        note(format!(
            "  submit {id}: perft({}) verify {verify}, {} units",
            plan.depth,
            plan.units()
        ));
        for op in plan_ops(&id, &spec, &plan.planned, 0) {
            let commit = self.journal().send(vec![op]);
            self.rt.block_on(commit.wait()).expect("a journal write");
        }
        self.jobs.submit(id.clone(), spec, plan.planned.clone());
        self.model.add_job(id, plan);
        self.after_call()
    }

    /// An admin resumes a failed job.
    pub(super) fn resume_failed(&mut self) -> Result<(), Broken> {
        let failed: Vec<usize> = (0..self.model.job_ids.len())
            .filter(|&j| self.model.live.jobs[j].state == JobState::Failed)
            .collect();
        let Some(&j) = failed.first() else {
            return Ok(());
        };
        let id = self.model.job_ids[j].clone();
        self.jobs
            .check_resumable(&id)
            .map_err(|e| format!("{id} failed, yet: {e}"))?;
        self.flush();
        let restored = self.journal().load_job(&id).expect("load_job");
        note(format!("  resume {id}"));
        self.jobs
            .resume(&id, restored)
            .map_err(|e| format!("resuming {id}: {e}"))?;
        self.stats.resumed += 1;
        self.model.rebuilt(j);
        self.after_call()
    }
}
