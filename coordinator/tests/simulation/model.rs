//! What the job table should hold, kept beside it from what the simulation
//! did and the ops the table queued for the journal: the oracle the
//! invariants are checked against.
//!
//! Its durable part (verdicts, pending votes, floors, bars, job states,
//! records) is what the journal holds once acknowledged: a crash rolls the
//! live copy back to the acknowledged one. Its volatile part (leases the
//! table holds, lapses counted toward a poison unit, participants
//! quarantined but not yet recounted) is the table's memory: a restart
//! empties it.

use std::collections::{BTreeMap, BTreeSet};

use perft_coordinator::jobs::{MAX_UNIT_FAILURES, MAX_VOTES, Op, POISON_PARTICIPANTS, Reported, Standing};
use perft_model::Count;
use perft_model::JobState;
use perft_model::{Epoch, JobId, ParticipantId, SessionId};

use super::plans::Plan;

/// A unit's verdict.
#[derive(Clone, Debug)]
pub struct Decision {
    pub count: Count,
    pub deciders: Vec<ParticipantId>,
    /// When it was reached (the model's sequence).
    pub seq: u64,
}

/// One job as the journal holds it.
#[derive(Clone, Debug)]
pub struct JobModel {
    pub state: JobState,
    pub decided: BTreeMap<u64, Decision>,
    /// Votes waiting for a verdict, in order.
    pub pending: BTreeMap<u64, Vec<(ParticipantId, Count)>>,
    /// When each unit was last reopened (a lapse, a hand-back, a recount):
    /// no lease issued before counts after a restart.
    pub reopened: BTreeMap<u64, u64>,
    /// Participants never to lease a unit again.
    pub bars: BTreeMap<u64, BTreeSet<ParticipantId>>,
    /// A done job whose counts were damaged on disk: the journal still
    /// says done (each start finds the damage again) until its state is
    /// journaled anew.
    pub done_in_journal: bool,
}

impl JobModel {
    fn new() -> JobModel {
        JobModel {
            state: JobState::Queued,
            decided: BTreeMap::new(),
            pending: BTreeMap::new(),
            reopened: BTreeMap::new(),
            bars: BTreeMap::new(),
            done_in_journal: false,
        }
    }

    pub fn barred(&self, unit: u64, who: &ParticipantId) -> bool {
        self.bars.get(&unit).is_some_and(|b| b.contains(who))
    }

    pub fn has_pending(&self, unit: u64, who: &ParticipantId) -> bool {
        self.pending
            .get(&unit)
            .is_some_and(|votes| votes.iter().any(|(p, _)| p == who))
    }
}

/// A participant's record: lost votes, forgiveness, lapses and strikes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Record {
    pub lost: u64,
    pub forgiven: u64,
    pub lapses: u64,
    pub strikes: u64,
    pub last_strike_ms: u64,
    /// Lapsed leases not yet repaid by counts taken.
    pub debt: u64,
}

/// What the journal holds once acknowledged.
#[derive(Clone, Debug, Default)]
pub struct Durable {
    pub jobs: Vec<JobModel>,
    pub records: BTreeMap<ParticipantId, Record>,
    pub revoked: BTreeSet<ParticipantId>,
    /// When each participant was quarantined (the model's sequence).
    pub quarantined_at: BTreeMap<ParticipantId, Vec<u64>>,
}

/// A lease the table holds now.
#[derive(Clone, Debug)]
pub struct LiveLease {
    pub job: usize,
    pub unit: u64,
    pub epoch: Epoch,
    pub who: ParticipantId,
    pub session: SessionId,
    pub deadline_ms: u64,
}

/// The table's memory, lost in a restart.
#[derive(Clone, Debug, Default)]
pub struct Volatile {
    pub leases: Vec<LiveLease>,
    /// Per unit: the participants whose leases of it lapsed, and how many
    /// leases did, since the table (or the job) was built.
    pub lapsed: BTreeMap<(usize, u64), (BTreeSet<ParticipantId>, u32)>,
    /// Quarantined since the reaper last asked.
    pub newly_quarantined: BTreeSet<ParticipantId>,
}

/// A lease as its participant knows it: what its tag names.
#[derive(Clone, Debug)]
pub struct Issued {
    pub job: usize,
    pub unit: u64,
    pub epoch: Epoch,
    /// The table generation (restarts so far) that issued it.
    pub generation: u32,
    /// When it was issued (the model's sequence).
    pub seq: u64,
}

/// The oracle.
#[derive(Debug)]
pub struct Model {
    pub live: Durable,
    pub acked: Durable,
    pub vol: Volatile,
    pub seq: u64,
    pub generation: u32,
    pub standing: Standing,
    pub hostile: BTreeSet<ParticipantId>,
    pub plans: Vec<&'static Plan>,
    pub job_ids: Vec<JobId>,
    /// Every epoch issued so far, the highest: epochs only grow.
    pub max_epoch: u64,
    /// Units that found no majority, so far.
    pub no_majority: u64,
    /// Jobs whose failure this step is justified (a poison unit, no
    /// majority).
    justified: BTreeSet<usize>,
}

/// An invariant broken, as text.
pub type Broken = String;

impl Model {
    pub fn new(standing: Standing, hostile: BTreeSet<ParticipantId>) -> Model {
        Model {
            live: Durable::default(),
            acked: Durable::default(),
            vol: Volatile::default(),
            seq: 0,
            generation: 0,
            standing,
            hostile,
            plans: Vec::new(),
            job_ids: Vec::new(),
            max_epoch: 0,
            no_majority: 0,
            justified: BTreeSet::new(),
        }
    }

    pub fn tick(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    /// A job was submitted (its plan journaled before).
    pub fn add_job(&mut self, id: JobId, plan: &'static Plan) {
        self.job_ids.push(id);
        self.plans.push(plan);
        self.live.jobs.push(JobModel::new());
        self.acked.jobs.push(JobModel::new());
    }

    pub fn job_index(&self, id: &JobId) -> usize {
        self.job_ids
            .iter()
            .position(|j| j == id)
            .unwrap_or_else(|| panic!("an unknown job {id} in an op"))
    }

    pub fn record(&self, p: &ParticipantId) -> Record {
        self.live.records.get(p).copied().unwrap_or_default()
    }

    pub fn quarantined(&self, p: &ParticipantId) -> bool {
        let r = self.record(p);
        self.standing
            .quarantine_after
            .is_some_and(|n| r.lost.saturating_sub(r.forgiven) >= n)
    }

    fn strikes_at(&self, r: &Record, now_ms: u64) -> u64 {
        let faded = now_ms.saturating_sub(r.last_strike_ms) / self.standing.strike_fade_ms.max(1);
        r.strikes.saturating_sub(faded)
    }

    pub fn suspended(&self, p: &ParticipantId, now_ms: u64) -> bool {
        !p.is_builtin() && self.strikes_at(&self.record(p), now_ms) >= self.standing.lapse_limit
    }

    pub fn is_hostile(&self, p: &ParticipantId) -> bool {
        self.hostile.contains(p)
    }

    /// The journal took everything so far.
    pub fn acknowledge(&mut self) {
        self.acked = self.live.clone();
    }

    /// A crash: the table's memory and every change not acknowledged go.
    pub fn crash(&mut self) {
        self.live = self.acked.clone();
        self.vol = Volatile::default();
        self.generation += 1;
        // A table rebuilt from the journal owes every quarantined
        // participant its recount.
        self.vol.newly_quarantined = self
            .live
            .records
            .keys()
            .filter(|p| self.quarantined(p))
            .cloned()
            .collect();
    }

    /// The journal's count of `unit` of job `job` was damaged on disk while
    /// the coordinator was stopped: the unit is counted again.
    pub fn forget(&mut self, job: usize, unit: u64) {
        for durable in [&mut self.acked, &mut self.live] {
            let model = &mut durable.jobs[job];
            model.decided.remove(&unit);
            if model.state == JobState::Done {
                // Running until the unit is counted again; the journal
                // says done until the job's state is journaled again.
                model.state = JobState::Running;
                model.done_in_journal = true;
            }
        }
    }

    /// A job was rebuilt from the journal (a recount, a resume): the
    /// leases it held and its lapse counts go.
    pub fn rebuilt(&mut self, job: usize) {
        self.vol.leases.retain(|l| l.job != job);
        self.vol.lapsed.retain(|&(j, _), _| j != job);
    }

    /// Whether the lease `issued` of `who` still stands: held by the table,
    /// or issued before the restart that built it and its unit not
    /// reopened since (nor barred to `who`).
    pub fn stands(&self, issued: &Issued, who: &ParticipantId) -> bool {
        let job = &self.live.jobs[issued.job];
        if issued.generation == self.generation {
            self.vol.leases.iter().any(|l| {
                l.job == issued.job && l.unit == issued.unit && l.epoch == issued.epoch && l.who == *who
            })
        } else {
            job.reopened.get(&issued.unit).is_none_or(|&at| at < issued.seq) && !job.barred(issued.unit, who)
        }
    }

    /// What the table must answer to `who`'s count for the lease `issued`.
    pub fn expect_report(&self, issued: &Issued, who: &ParticipantId) -> Reported {
        let job = &self.live.jobs[issued.job];
        if self.quarantined(who) {
            Reported::Refused
        } else if job.state.is_final()
            || job.decided.contains_key(&issued.unit)
            || job.has_pending(issued.unit, who)
        {
            Reported::Ignored
        } else if !self.stands(issued, who) {
            Reported::Stale
        } else {
            Reported::Accepted
        }
    }

    /// A count was taken: the reporter's lease of the unit ends.
    /// Each count taken repays one lapsed lease; none left clears the
    /// strikes.
    pub fn counted(&mut self, job: usize, unit: u64, who: &ParticipantId) {
        self.vol
            .leases
            .retain(|l| !(l.job == job && l.unit == unit && l.who == *who));
        let mut r = self.record(who);
        if r.debt > 0 {
            r.debt -= 1;
            if r.debt == 0 {
                r.strikes = 0;
            }
            self.live.records.insert(who.clone(), r);
        }
    }

    /// Leases ended without a count (lost sessions, deadlines): each is
    /// charged to its participant, one strike a participant a pass, and a
    /// unit that lapsed with enough participants is poison. Returns the
    /// jobs that must fail.
    pub fn lapse(&mut self, ended: &[LiveLease], now_ms: u64) -> BTreeSet<usize> {
        let mut per_participant: BTreeMap<ParticipantId, u64> = BTreeMap::new();
        let mut poisoned = BTreeSet::new();
        for lease in ended {
            self.vol.leases.retain(|l| l.epoch != lease.epoch);
            *per_participant.entry(lease.who.clone()).or_default() += 1;
            let (who, failures) = self.vol.lapsed.entry((lease.job, lease.unit)).or_default();
            who.insert(lease.who.clone());
            *failures += 1;
            let owner_only = who.iter().all(ParticipantId::is_builtin);
            if *failures >= MAX_UNIT_FAILURES && (who.len() >= POISON_PARTICIPANTS || owner_only) {
                poisoned.insert(lease.job);
            }
        }
        for (p, leases) in per_participant {
            let mut r = self.record(&p);
            r.lapses += leases;
            r.debt += leases;
            r.strikes = self.strikes_at(&r, now_ms) + 1;
            r.last_strike_ms = now_ms;
            self.live.records.insert(p, r);
        }
        self.justified.extend(poisoned.iter().copied());
        poisoned
    }

    /// An admin lifted `p`'s quarantine and/or strikes.
    pub fn lift(&mut self, p: &ParticipantId, quarantine: bool, lapses: bool) {
        let mut r = self.record(p);
        if quarantine {
            r.forgiven = r.lost;
        }
        if lapses {
            r.strikes = 0;
            r.debt = 0;
        }
        self.live.records.insert(p.clone(), r);
    }

    /// Starts a step: no failure is justified yet.
    pub fn begin_step(&mut self) {
        self.justified.clear();
    }

    /// Folds the ops the table queued, checking what each says.
    pub fn observe(&mut self, ops: &[Op]) -> Result<(), Broken> {
        for op in ops {
            self.observe_one(op)?;
        }
        Ok(())
    }

    fn observe_one(&mut self, op: &Op) -> Result<(), Broken> {
        match op {
            Op::Result {
                job_id,
                unit_id,
                count,
                deciders,
            } => {
                let j = self.job_index(job_id);
                let unit = unit_id.0;
                let truth = self.plans[j].truth[unit as usize];
                if let Some(before) = self.live.jobs[j].decided.get(&unit) {
                    return Err(format!(
                        "invariant 10: a unit's count is accepted once, yet {job_id}/u{unit} was decided again ({} by {:?}, before {} by {:?})",
                        count.leaves.leaves, deciders, before.count.leaves.leaves, before.deciders
                    ));
                }
                // (1) A wrong count stands only on hostile votes.
                if *count != truth && deciders.iter().any(|d| !self.is_hostile(d)) {
                    return Err(format!(
                        "invariant 1: {job_id}/u{unit} decided {} (true count {}) with an honest participant among its deciders {:?}",
                        count.leaves.leaves, truth.leaves.leaves, deciders
                    ));
                }
                // (2) No verdict counts a participant quarantined or revoked.
                for d in deciders {
                    if self.quarantined(d) || self.live.revoked.contains(d) {
                        return Err(format!(
                            "invariant 2: {job_id}/u{unit} decided {} with {d} among its deciders {:?}, though it is {}",
                            count.leaves.leaves,
                            deciders,
                            if self.quarantined(d) {
                                "quarantined"
                            } else {
                                "revoked"
                            }
                        ));
                    }
                }
                let pending = self.live.jobs[j].pending.remove(&unit).unwrap_or_default();
                for (voter, vote) in &pending {
                    if (vote == count) != deciders.contains(voter) {
                        return Err(format!(
                            "invariant 10: {job_id}/u{unit}: the deciders {deciders:?} of {} are not the votes equal to it {pending:?}",
                            count.leaves.leaves
                        ));
                    }
                }
                let seq = self.tick();
                for (loser, vote) in &pending {
                    if vote != count {
                        let was = self.quarantined(loser);
                        let mut r = self.record(loser);
                        r.lost += 1;
                        self.live.records.insert(loser.clone(), r);
                        if !was && self.quarantined(loser) {
                            self.live
                                .quarantined_at
                                .entry(loser.clone())
                                .or_default()
                                .push(seq);
                            self.vol.newly_quarantined.insert(loser.clone());
                        }
                    }
                }
                self.live.jobs[j].decided.insert(
                    unit,
                    Decision {
                        count: *count,
                        deciders: deciders.clone(),
                        seq,
                    },
                );
                self.vol.leases.retain(|l| !(l.job == j && l.unit == unit));
                self.vol.lapsed.remove(&(j, unit));
            }
            Op::Vote {
                job_id,
                unit_id,
                voter,
                count,
                ..
            } => {
                let j = self.job_index(job_id);
                if self.quarantined(voter) || self.live.revoked.contains(voter) {
                    return Err(format!(
                        "invariant 2: a vote of {voter} taken for {job_id}/u{} though it is quarantined or revoked",
                        unit_id.0
                    ));
                }
                self.live.jobs[j]
                    .pending
                    .entry(unit_id.0)
                    .or_default()
                    .push((voter.clone(), *count));
            }
            Op::ClearVotes { job_id, unit_id } => {
                let j = self.job_index(job_id);
                self.live.jobs[j].pending.remove(&unit_id.0);
            }
            Op::DropVotesOf { voter } => {
                for job in &mut self.live.jobs {
                    for votes in job.pending.values_mut() {
                        votes.retain(|(p, _)| p != voter);
                    }
                    job.pending.retain(|_, votes| !votes.is_empty());
                }
            }
            Op::Disagreement { job_id, disagreement } => {
                let j = self.job_index(job_id);
                if disagreement.decided.is_none() {
                    if disagreement.votes.len() < MAX_VOTES as usize {
                        return Err(format!(
                            "invariant 4: {job_id}/u{} found no majority with only {} votes",
                            disagreement.unit_id.0,
                            disagreement.votes.len()
                        ));
                    }
                    self.justified.insert(j);
                    self.no_majority += 1;
                }
            }
            Op::JobState {
                job_id, state, error, ..
            } => {
                let j = self.job_index(job_id);
                let was = self.live.jobs[j].state;
                // (4) A job fails only on a poison unit or no majority.
                if *state == JobState::Failed && was != JobState::Failed && !self.justified.contains(&j) {
                    return Err(format!(
                        "invariant 4: {job_id} failed ({}) with no poison unit and no unit without a majority",
                        error.as_deref().unwrap_or("no reason")
                    ));
                }
                self.live.jobs[j].state = *state;
                self.live.jobs[j].done_in_journal = false;
                if state.is_final() {
                    self.vol.leases.retain(|l| l.job != j);
                    self.vol.lapsed.retain(|&(job, _), _| job != j);
                }
            }
            Op::Floors { job_id, unit_ids, .. } => {
                let j = self.job_index(job_id);
                let seq = self.tick();
                for u in unit_ids {
                    self.live.jobs[j].reopened.insert(u.0, seq);
                }
            }
            Op::Reopen {
                job_id,
                unit_ids,
                barred,
                ..
            } => {
                let j = self.job_index(job_id);
                let seq = self.tick();
                let job = &mut self.live.jobs[j];
                for u in unit_ids {
                    job.decided.remove(&u.0);
                    job.reopened.insert(u.0, seq);
                    if let Some(p) = barred {
                        job.bars.entry(u.0).or_default().insert(p.clone());
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    /// The total of a job's decided counts.
    pub fn total(&self, job: usize) -> u128 {
        self.plans[job].total(self.live.jobs[job].decided.iter().map(|(&u, d)| (u, d.count)))
    }

    /// Units of a job some lease is held on.
    pub fn units_leased(&self, job: usize) -> u64 {
        self.vol
            .leases
            .iter()
            .filter(|l| l.job == job)
            .map(|l| l.unit)
            .collect::<BTreeSet<_>>()
            .len() as u64
    }
}
