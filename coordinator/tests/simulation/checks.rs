//! The checks: after every step the table says what the model says;
//! after a restart the journal gives back what was acknowledged; at the
//! end, once honest workers finished, every job is done with its true
//! total.

use perft_coordinator::jobs::Restored;
use perft_model::Count;
use perft_model::{JobId, JobState};

use super::actors::{Actor, Kind};
use super::model::Broken;
use super::trace::{note, note_step, start_drain_trace};
use super::world::{PROGRESS_MS, World};

impl World {
    /// The leaves of job `id`'s divide, as the table sums them now.
    fn table_total(&self, id: &JobId) -> Result<u128, Broken> {
        Ok(self
            .jobs
            .divide(id)
            .map_err(|e| e.to_string())?
            .total
            .leaves
            .leaves)
    }

    /// After every step: the table says what the model says.
    pub(super) fn check(&mut self) -> Result<(), Broken> {
        if !self.oracle {
            return Ok(());
        }
        let now = self.now();
        for (j, id) in self.model.job_ids.iter().enumerate() {
            let model = &self.model.live.jobs[j];
            let view = self.jobs.view(id).map_err(|e| e.to_string())?;
            let leased = if model.state.is_final() {
                0
            } else {
                self.model.units_leased(j)
            };
            let total = self.table_total(id)?;
            if view.state != model.state
                || view.units_done != model.decided.len() as u64
                || view.units_leased != leased
                || total != self.model.total(j)
            {
                return Err(format!(
                    "invariant 7: {id} is {:?} with {} units done, {} leased, total {}; the model says {:?}, {}, {}, {}",
                    view.state,
                    view.units_done,
                    view.units_leased,
                    total,
                    model.state,
                    model.decided.len(),
                    leased,
                    self.model.total(j)
                ));
            }
        }
        for actor in &self.actors {
            let id = &actor.id;
            let credit = self.jobs.credit(id);
            let record = self.model.record(id);
            let (q, s) = (self.jobs.is_quarantined(id), self.jobs.is_suspended(id));
            if q != self.model.quarantined(id)
                || s != self.model.suspended(id, now)
                || credit.lost_votes != record.lost
                || credit.lost_votes_forgiven != record.forgiven
                || credit.lapses != record.lapses
            {
                return Err(format!(
                    "invariant 7: {id}: quarantined {q}, suspended {s}, {credit:?}; the model says {}, {}, {record:?}",
                    self.model.quarantined(id),
                    self.model.suspended(id, now)
                ));
            }
        }
        Ok(())
    }

    /// (3) The journal gives back every acknowledged verdict, vote and
    /// bar, and nothing else.
    pub(super) fn check_restored(&self, restored: &Restored) -> Result<(), Broken> {
        if restored.jobs.len() != self.model.job_ids.len() {
            return Err(format!(
                "invariant 3: the journal holds {} jobs, {} were submitted",
                restored.jobs.len(),
                self.model.job_ids.len()
            ));
        }
        for job in &restored.jobs {
            let j = self.model.job_index(&job.id);
            let model = &self.model.acked.jobs[j];
            let journaled = if model.done_in_journal {
                JobState::Done
            } else {
                model.state
            };
            if job.state != journaled {
                return Err(format!(
                    "invariant 3: {} comes back {:?}, acknowledged {:?}",
                    job.id, job.state, model.state
                ));
            }
            if job.summary.is_some() {
                continue;
            }
            let results: Vec<(u64, Count)> = {
                let mut r: Vec<_> = job.results.iter().map(|(u, c)| (u.0, *c)).collect();
                r.sort_by_key(|(u, _)| *u);
                r
            };
            let acked: Vec<(u64, Count)> = model.decided.iter().map(|(&u, d)| (u, d.count)).collect();
            if results != acked {
                return Err(format!(
                    "invariant 3: {} comes back with the counts of units {:?}, acknowledged {:?}",
                    job.id,
                    results.iter().map(|(u, _)| u).collect::<Vec<_>>(),
                    acked.iter().map(|(u, _)| u).collect::<Vec<_>>()
                ));
            }
            let mut votes: Vec<(u64, String, u128)> = job
                .votes
                .iter()
                .map(|v| (v.unit_id.0, v.voter.to_string(), v.count.leaves.leaves))
                .collect();
            votes.sort();
            let mut pending: Vec<(u64, String, u128)> = model
                .pending
                .iter()
                .flat_map(|(&u, vs)| vs.iter().map(move |(p, c)| (u, p.to_string(), c.leaves.leaves)))
                .collect();
            pending.sort();
            if votes != pending {
                return Err(format!(
                    "invariant 3: {} comes back with the votes {votes:?}, acknowledged {pending:?}",
                    job.id
                ));
            }
            let mut bars: Vec<(u64, String)> = job.bars.iter().map(|(u, p)| (u.0, p.to_string())).collect();
            bars.sort();
            let acked_bars: Vec<(u64, String)> = model
                .bars
                .iter()
                .flat_map(|(&u, ps)| ps.iter().map(move |p| (u, p.to_string())))
                .collect();
            if bars != acked_bars {
                return Err(format!(
                    "invariant 3: {} comes back with the bars {bars:?}, acknowledged {acked_bars:?}",
                    job.id
                ));
            }
        }
        Ok(())
    }

    /// The hostile participants stop; honest ones (two fresh among them)
    /// finish every job, the admin lifting the honest ones and resuming
    /// failed jobs. Then the end state is checked.
    pub(super) fn drain(&mut self) -> Result<(), Broken> {
        note("drain: the hostile participants stop".to_owned());
        start_drain_trace();
        self.draining = true;
        for actor in &mut self.actors {
            if actor.kind.hostile() {
                actor.retired = true;
            }
        }
        while !self.unsubmitted.is_empty() {
            self.submit()?;
        }
        self.actors.push(Actor::new("v0".to_owned(), Kind::Honest));
        self.actors.push(Actor::new("v1".to_owned(), Kind::Honest));
        for a in 0..self.actors.len() {
            if self.actors[a].kind.honest() && !self.actors[a].revoked {
                self.lift_one(a, true, true)?;
            }
        }
        // Every lease a hostile participant parked comes due.
        self.clock.advance(101 * PROGRESS_MS);
        for round in 0..400 {
            self.model.begin_step();
            note_step(format!("drain round {round}"));
            self.reap()?;
            while self.model.live.jobs.iter().any(|j| j.state == JobState::Failed) {
                self.stats.failed += 1;
                self.resume_failed()?;
            }
            for a in 0..self.actors.len() {
                if self.actors[a].active() && self.actors[a].kind.honest() {
                    self.work(a)?;
                    self.lease(a, 8)?;
                }
            }
            self.flush();
            for a in 0..self.actors.len() {
                if self.actors[a].active() && self.actors[a].kind.honest() {
                    self.work(a)?;
                }
            }
            self.flush();
            self.check()?;
            // Done, and nobody quarantined waits for the reaper's recount.
            if self.model.live.jobs.iter().all(|j| j.state == JobState::Done)
                && self.model.vol.newly_quarantined.is_empty()
            {
                return self.check_end();
            }
            self.clock.advance(1_000);
        }
        Err(format!(
            "end: the honest workers did not finish the jobs: {:?}",
            self.model
                .job_ids
                .iter()
                .map(|id| self.jobs.view(id).map(|v| (
                    v.state,
                    v.units_done,
                    v.units_total,
                    v.units_queued,
                    v.units_leased
                )))
                .collect::<Vec<_>>()
        ))
    }

    /// Every job is done with the published total unless a hostile-only
    /// verdict stands; what a quarantined participant decided alone
    /// before its quarantine was counted again.
    pub(super) fn check_end(&mut self) -> Result<(), Broken> {
        for (j, id) in self.model.job_ids.iter().enumerate() {
            let plan = self.model.plans[j];
            let job = &self.model.live.jobs[j];
            let wrong: Vec<u64> = job
                .decided
                .iter()
                .filter(|(u, d)| d.count != plan.truth[**u as usize])
                .map(|(u, _)| *u)
                .collect();
            self.stats.wrong_standing += wrong.len() as u64;
            let total = self.table_total(id)?;
            if wrong.is_empty() && total != plan.published {
                return Err(format!(
                    "end: {id} is done with {total} leaves, not the published perft({}) = {}",
                    plan.depth, plan.published
                ));
            }
            // (8) A quarantine recounts what the participant decided alone.
            for (&unit, d) in &job.decided {
                if let [p] = &d.deciders[..]
                    && let Some(times) = self.model.live.quarantined_at.get(p)
                    && times.iter().any(|&q| d.seq < q)
                {
                    return Err(format!(
                        "invariant 8: {id}/u{unit} = {} decided by {p} alone stands, though {p} was quarantined after it",
                        d.count.leaves.leaves
                    ));
                }
            }
        }
        Ok(())
    }
}
