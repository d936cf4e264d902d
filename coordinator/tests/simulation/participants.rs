//! What the participants do: lease, count, report, replay, hand back,
//! go silent; every answer checked against the model's.

use perft_coordinator::jobs::{MAX_UNIT_FAILURES, POISON_PARTICIPANTS, Reported};
use perft_core::Leaves;
use perft_model::Count;
use perft_model::JobState;
use perft_model::{Epoch, SessionId, UnitId};
use rand::Rng;

use super::actors::Kind;
use super::model::{Broken, Issued, LiveLease};
use super::trace::note;
use super::world::World;

impl World {
    pub(super) fn lease_some(&mut self) -> Result<(), Broken> {
        let Some(a) = self.pick_actor(|_| true) else {
            return Ok(());
        };
        let max = self.rng.random_range(1..=4);
        self.lease(a, max)
    }

    /// Actor `a` asks for up to `max` units.
    pub(super) fn lease(&mut self, a: usize, max: usize) -> Result<(), Broken> {
        let now = self.now();
        let who = self.actors[a].id.clone();
        let barred_now = self.model.quarantined(&who) || self.model.suspended(&who, now);
        let groups = self.jobs.lease(&self.actors[a].holder(), max, None);
        if barred_now && !groups.is_empty() {
            return Err(format!(
                "invariant 2: {who} leased units while {}",
                if self.model.quarantined(&who) {
                    "quarantined"
                } else {
                    "suspended"
                }
            ));
        }
        let mut shown = Vec::new();
        let mut handed = 0;
        for group in groups {
            let j = self.model.job_index(&group.job_id);
            let plan = self.model.plans[j];
            for leased in group.units {
                handed += 1;
                let unit = leased.unit_id.0;
                let job = &self.model.live.jobs[j];
                shown.push(format!("{}/u{unit}@{}", group.job_id, leased.epoch.0));
                if job.state.is_final() || job.decided.contains_key(&unit) {
                    return Err(format!(
                        "invariant 9: {who} leased {}/u{unit}, which is {:?} and {}decided",
                        group.job_id,
                        job.state,
                        if job.decided.contains_key(&unit) {
                            ""
                        } else {
                            "not "
                        }
                    ));
                }
                // (6) Never a unit reopened because of its counts.
                if job.barred(unit, &who) {
                    return Err(format!(
                        "invariant 6: {who} leased {}/u{unit}, reopened because of its counts",
                        group.job_id
                    ));
                }
                let holds = self
                    .model
                    .vol
                    .leases
                    .iter()
                    .any(|l| l.job == j && l.unit == unit && l.who == who);
                if holds || job.has_pending(unit, &who) {
                    return Err(format!(
                        "invariant 9: {who} leased {}/u{unit} again: it holds a lease of it or counted it",
                        group.job_id
                    ));
                }
                if leased.epoch.0 <= self.model.max_epoch {
                    return Err(format!(
                        "invariant 9: epochs only grow, yet {}/u{unit} was leased with epoch {} after epoch {} was issued",
                        group.job_id, leased.epoch.0, self.model.max_epoch
                    ));
                }
                if leased.position != plan.planned.units.position(unit as usize) {
                    return Err(format!(
                        "invariant 9: {}/u{unit} leased with another unit's position",
                        group.job_id
                    ));
                }
                self.model.max_epoch = leased.epoch.0;
                self.model.vol.leases.push(LiveLease {
                    job: j,
                    unit,
                    epoch: leased.epoch,
                    who: who.clone(),
                    session: self.actors[a].session.clone(),
                    deadline_ms: now.saturating_add(plan.allowance_ms(unit, self.policy.progress_ms)),
                });
                let seq = self.model.tick();
                self.deliveries.push((
                    a,
                    Issued {
                        job: j,
                        unit,
                        epoch: leased.epoch,
                        generation: self.model.generation,
                        seq,
                    },
                ));
            }
        }
        note(format!("  lease {who} max {max}: [{}]", shown.join(" ")));
        if handed > max {
            return Err(format!(
                "invariant 9: {who} asked for {max} units and got {handed}"
            ));
        }
        self.after_call()
    }

    /// The count actor `a` sends for a unit it holds.
    pub(super) fn count_for(&mut self, a: usize, issued: &Issued) -> Count {
        let truth = self.model.plans[issued.job].truth[issued.unit as usize];
        let wrong = |by: u128| Count::plain(Leaves::full(truth.leaves.leaves + by));
        match self.actors[a].kind {
            Kind::Honest | Kind::Slow | Kind::Owner => truth,
            Kind::Forger => wrong(self.rng.random_range(1..=40)),
            Kind::Colluder => wrong(7),
            Kind::Replayer => {
                if self.rng.random_bool(0.5) {
                    truth
                } else {
                    wrong(1)
                }
            }
            Kind::Lapser | Kind::Parker => unreachable!("they never count"),
        }
    }

    pub(super) fn work_some(&mut self) -> Result<(), Broken> {
        let Some(a) = self.pick_actor(|a| {
            let counts = !matches!(a.kind, Kind::Lapser | Kind::Parker);
            counts && (!a.held.is_empty() || !a.outbox.is_empty())
        }) else {
            return Ok(());
        };
        self.work(a)
    }

    /// Actor `a` counts what it holds and sends its counts (a slow one
    /// some of them).
    pub(super) fn work(&mut self, a: usize) -> Result<(), Broken> {
        let slow = self.actors[a].kind == Kind::Slow && !self.draining;
        let held = std::mem::take(&mut self.actors[a].held);
        for issued in held {
            if slow && self.rng.random_bool(0.5) {
                self.actors[a].held.push(issued);
                continue;
            }
            let count = self.count_for(a, &issued);
            self.actors[a].outbox.push((issued, count));
        }
        let outbox = std::mem::take(&mut self.actors[a].outbox);
        for (issued, count) in outbox {
            if slow && self.rng.random_bool(0.6) {
                self.actors[a].outbox.push((issued, count));
                continue;
            }
            self.send(a, &issued, count)?;
            let actor = &mut self.actors[a];
            if actor.kind.honest() {
                actor.in_flight.push((issued.clone(), count));
            }
            if actor.kind == Kind::Replayer {
                actor.memory.push((issued, count));
            }
        }
        Ok(())
    }

    /// Actor `a` reports `count` for the lease `issued`; the answer must
    /// be the model's.
    pub(super) fn send(&mut self, a: usize, issued: &Issued, count: Count) -> Result<(), Broken> {
        let who = self.actors[a].id.clone();
        let job_id = self.model.job_ids[issued.job].clone();
        let expected = self.model.expect_report(issued, &who);
        let quarantined = self.model.quarantined(&who);
        let got = self.jobs.report(
            &job_id,
            UnitId(issued.unit),
            issued.epoch,
            count,
            0,
            &self.actors[a].holder(),
        );
        note(format!(
            "  report {who} {job_id}/u{}@{} (gen {}) = {}: {got:?}",
            issued.unit, issued.epoch.0, issued.generation, count.leaves.leaves
        ));
        match got {
            Reported::Accepted => self.stats.accepted += 1,
            Reported::Stale => self.stats.stale += 1,
            Reported::Refused => self.stats.refused += 1,
            Reported::Ignored => self.stats.ignored += 1,
        }
        if got == Reported::Accepted {
            // (2) Nothing of a quarantined or revoked participant.
            if quarantined || self.model.live.revoked.contains(&who) {
                return Err(format!(
                    "invariant 2: {job_id}/u{} took the count of {who}, which is quarantined or revoked",
                    issued.unit
                ));
            }
            // (6) Nor of one barred from the unit.
            if self.model.live.jobs[issued.job].barred(issued.unit, &who) {
                return Err(format!(
                    "invariant 6: {job_id}/u{} took the count of {who}, barred from it by a recount",
                    issued.unit
                ));
            }
        }
        if self.oracle && got != expected {
            return Err(format!(
                "invariant 7: {who}'s count for {job_id}/u{} lease {} (issued {}) was {got:?}; a lease {} so it must be {expected:?}",
                issued.unit,
                issued.epoch.0,
                if issued.generation == self.model.generation {
                    "by this table"
                } else {
                    "before the last restart"
                },
                if self.model.stands(issued, &who) {
                    "that stands"
                } else {
                    "that no longer stands"
                },
            ));
        }
        if got == Reported::Accepted {
            self.model.counted(issued.job, issued.unit, &who);
        }
        self.after_call()
    }

    /// A replayer sends again counts it sent before (the door lets them
    /// through: their tags are genuine).
    pub(super) fn replay(&mut self) -> Result<(), Broken> {
        let Some(a) = self.pick_actor(|a| a.kind == Kind::Replayer && !a.memory.is_empty()) else {
            return Ok(());
        };
        for _ in 0..self.rng.random_range(1..=3) {
            let memory = &self.actors[a].memory;
            let (issued, mut count) = memory[self.rng.random_range(0..memory.len())].clone();
            if self.rng.random_bool(0.3) {
                count = Count::plain(Leaves::full(count.leaves.leaves + 2));
            }
            self.send(a, &issued, count)?;
        }
        Ok(())
    }

    /// Hands back the lease `issued` for actor `a`; the answer must be the
    /// model's.
    pub(super) fn release(&mut self, a: usize, issued: &Issued) -> Result<(), Broken> {
        let who = self.actors[a].id.clone();
        let job_id = self.model.job_ids[issued.job].clone();
        let job = &self.model.live.jobs[issued.job];
        let expected = !job.state.is_final()
            && !job.decided.contains_key(&issued.unit)
            && self.model.vol.leases.iter().any(|l| {
                l.job == issued.job && l.unit == issued.unit && l.epoch == issued.epoch && l.who == who
            });
        let got = self.jobs.release(
            &job_id,
            UnitId(issued.unit),
            issued.epoch,
            &self.actors[a].holder(),
        );
        note(format!(
            "  release {who} {job_id}/u{}@{}: {got}",
            issued.unit, issued.epoch.0
        ));
        if self.oracle && got != expected {
            return Err(format!(
                "invariant 7: {who} handed back {job_id}/u{} lease {}: {got}, the model says {expected}",
                issued.unit, issued.epoch.0
            ));
        }
        if got {
            self.model.vol.leases.retain(|l| l.epoch != issued.epoch);
        }
        self.after_call()
    }

    /// A parker hands back leases it does not hold any more: its own stale
    /// epochs (sometimes one it does hold), and epochs that were never its
    /// own (another participant's, or one off), which the door would
    /// refuse and the table must too.
    pub(super) fn park(&mut self) -> Result<(), Broken> {
        let Some(a) = self.pick_actor(|a| a.kind == Kind::Parker && !a.issued.is_empty()) else {
            return Ok(());
        };
        for _ in 0..self.rng.random_range(1..=3) {
            let own = &self.actors[a].issued;
            let mut issued = own[self.rng.random_range(0..own.len())].clone();
            match self.rng.random_range(0..10) {
                0..2 => {
                    let others: Vec<&Issued> = self
                        .actors
                        .iter()
                        .filter(|o| o.id != self.actors[a].id)
                        .flat_map(|o| &o.issued)
                        .collect();
                    if !others.is_empty() {
                        issued = others[self.rng.random_range(0..others.len())].clone();
                    }
                }
                2..4 => {
                    let by = if self.rng.random_bool(0.5) { 1 } else { u64::MAX };
                    issued.epoch = Epoch(issued.epoch.0.wrapping_add(by));
                }
                _ => {}
            }
            self.release(a, &issued)?;
        }
        Ok(())
    }

    /// An honest worker hands back a unit it holds (it is shutting down).
    pub(super) fn hand_back(&mut self) -> Result<(), Broken> {
        let Some(a) = self.pick_actor(|a| a.kind.honest() && !a.held.is_empty()) else {
            return Ok(());
        };
        let at = self.rng.random_range(0..self.actors[a].held.len());
        let issued = self.actors[a].held.remove(at);
        self.release(a, &issued)
    }

    /// Leases ended by the table: charged, and their poison units fail
    /// their jobs.
    pub(super) fn lapsed(&mut self, ended: Vec<LiveLease>, got: u64, what: &str) -> Result<(), Broken> {
        if self.oracle && got != ended.len() as u64 {
            return Err(format!(
                "invariant 7: {what} ended {got} leases; the model expects {}: {:?}",
                ended.len(),
                ended
                    .iter()
                    .map(|l| format!(
                        "{}/u{}@{} {}",
                        self.model.job_ids[l.job], l.unit, l.epoch.0, l.who
                    ))
                    .collect::<Vec<_>>()
            ));
        }
        self.stats.lapsed += got;
        let poisoned = self.model.lapse(&ended, self.now());
        self.stats.poisoned += poisoned.len() as u64;
        self.after_call()?;
        for j in poisoned {
            if self.oracle && self.model.live.jobs[j].state != JobState::Failed {
                return Err(format!(
                    "invariant 4: {}: a unit lapsed {} times with {} participants (or the owner's) and the job goes on",
                    self.model.job_ids[j], MAX_UNIT_FAILURES, POISON_PARTICIPANTS
                ));
            }
        }
        Ok(())
    }

    /// The worker registry finds a session lost (mostly a lapser's), or a
    /// worker restarts: it registers anew, keeps the leases it holds and
    /// leaves its old session behind for the reaper.
    pub(super) fn lose_session(&mut self) -> Result<(), Broken> {
        let lapsers = self.pick_actor(|a| a.kind == Kind::Lapser);
        let a = match lapsers {
            Some(a) if self.rng.random_bool(0.7) => Some(a),
            _ => self.pick_actor(|a| a.kind != Kind::Lapser || !a.held.is_empty()),
        };
        let Some(a) = a else {
            return Ok(());
        };
        if self.actors[a].kind != Kind::Lapser && self.rng.random_bool(0.4) {
            let actor = &mut self.actors[a];
            note(format!(
                "  {} restarts: session {} left behind",
                actor.name,
                actor.session.as_str()
            ));
            actor.left_behind.push(actor.session.clone());
            actor.new_session();
            return Ok(());
        }
        self.expire(a)
    }

    /// Every session of actor `a` ends (the registry found it silent, or
    /// its participant was revoked); it registers anew.
    pub(super) fn expire(&mut self, a: usize) -> Result<(), Broken> {
        let mut sessions = std::mem::take(&mut self.actors[a].left_behind);
        sessions.push(self.actors[a].session.clone());
        self.expire_sessions(&sessions)?;
        let actor = &mut self.actors[a];
        actor.new_session();
        if actor.kind == Kind::Lapser {
            actor.held.clear();
        }
        Ok(())
    }

    /// `Jobs::expire`: the leases of the lost sessions end, charged.
    pub(super) fn expire_sessions(&mut self, sessions: &[SessionId]) -> Result<(), Broken> {
        let ended: Vec<LiveLease> = self
            .model
            .vol
            .leases
            .iter()
            .filter(|l| sessions.contains(&l.session))
            .cloned()
            .collect();
        let got = self.jobs.expire(sessions);
        note(format!(
            "  expire sessions {}: {got} leases",
            sessions.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(" ")
        ));
        self.lapsed(ended, got, "expire")
    }
}
