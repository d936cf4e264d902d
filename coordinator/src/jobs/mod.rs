//! Jobs and their units as an explicit state machine, without I/O: the
//! scheduler's event loop owns it and runs the gRPC services' and the
//! lease reaper's tasks on it, and every change it makes is queued for the
//! journal in the order it happened.
//!
//! Job: Queued -> Running -> Done | Failed; Queued | Running -> Cancelled;
//! Failed -> Running (resumed). Unit: see [`unit`]: leased to one machine
//! (two with verification) until enough equal counts decide it; an expired,
//! overdue or handed-back lease puts it back in the queue. A count is
//! taken only for a lease its unit still holds (or, after a restart, a
//! lease issued before it that no reopening has ended since), from a
//! participant in good standing; a unit's count is accepted once.
//!
//! The table reads time only through its [`Clock`] and holds no
//! randomness, so a run of it is replayed exactly from its inputs.

mod deadlines;
mod fresh_units;
mod job;
mod leasing;
mod ledger;
mod ops;
mod report;
mod restore;
mod retry;
mod unit;
mod views;

use std::collections::HashMap;
use std::sync::Arc;

use crate::clock::{Clock, SystemClock};

use perft_core::{Convention, GameKind};

use perft_model::{Count, CountRefused, kinds_of};

use crate::planning::PlannedJob;
use deadlines::Deadlines;
use job::Job;
pub use job::Summary;
use leasing::Holder;
use ledger::Ledger;
pub use ledger::{Credit, DEFAULT_LAPSE_LIMIT, MAX_CPU_MS_PER_COUNT, STRIKE_FADE_MS, Standing};
pub use ops::Op;
use perft_model::{Epoch, JobId, JobState, ParticipantId, SessionId, UnitId};
pub use report::Reported;
pub use restore::{Restored, RestoredJob, RestoredVote};
pub use unit::{MAX_VOTES, POISON_PARTICIPANTS, Vote};
pub use views::{DivideView, JobView, JobsStats};

/// What a client asked for, validated.
#[derive(Clone, Debug)]
pub struct JobSpec {
    pub game: GameKind,
    /// The convention counted in: the game's own (`Some(Bik)` by default
    /// for Reversi, `None` for games without a choice).
    pub convention: Option<Convention>,
    /// Canonical text of the root.
    pub position: String,
    pub depth: u32,
    /// Count every unit for two different participants.
    pub verify: bool,
    /// The participant that submitted it.
    pub owner: ParticipantId,
    /// Count leaves by kind too.
    pub stats: bool,
}

impl JobSpec {
    /// A job of `planned` to `depth` owned by `owner`: the game's default
    /// convention, counted once, no statistics; other jobs change a field.
    pub fn plain(game: GameKind, planned: &PlannedJob, depth: u32, owner: ParticipantId) -> JobSpec {
        JobSpec {
            game,
            convention: game.conventions().first().copied(),
            position: planned.position.clone(),
            depth,
            verify: false,
            owner,
            stats: false,
        }
    }

    /// How many kinds each count carries: the game's with statistics,
    /// else none.
    pub fn kinds(&self) -> usize {
        kinds_of(self.game, self.stats)
    }

    /// Equal counts from distinct participants that decide a unit.
    fn quorum(&self) -> u32 {
        if self.verify { 2 } else { 1 }
    }
}

/// Who is asking for or answering leases: a worker session, the
/// participant it belongs to (the identity verification counts), and how
/// people know it. Cheap to clone: its parts are shared.
#[derive(Clone, Debug)]
pub struct LeaseHolder {
    pub session: SessionId,
    pub identity: ParticipantId,
    pub label: Arc<str>,
}

impl LeaseHolder {
    /// A worker whose session, participant and label are all `name` (one
    /// worker per participant, as tests play them); why not, for a name
    /// that is no participant's.
    pub fn named(name: &str) -> Result<LeaseHolder, perft_model::IdError> {
        Ok(LeaseHolder {
            identity: ParticipantId::parse(name)?,
            session: SessionId::parse(name)?,
            label: Arc::from(name),
        })
    }
}

/// A unit whose workers sent different counts, and what was decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Disagreement {
    pub unit_id: UnitId,
    pub position: String,
    /// Every count received, in order.
    pub votes: Vec<Vote>,
    /// The count taken (the majority), if one was reached.
    pub decided: Option<Count>,
}

/// A unit handed to a worker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeasedUnit {
    pub unit_id: UnitId,
    pub epoch: Epoch,
    /// The game's packed position.
    pub position: Vec<u8>,
}

/// Units of one job handed to a worker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeasedJob {
    pub job_id: JobId,
    pub game: GameKind,
    /// The convention the units are counted in.
    pub convention: Option<Convention>,
    pub depth: u32,
    /// Count the units' leaves by kind.
    pub stats: bool,
    pub units: Vec<LeasedUnit>,
}

/// A unit whose lapses were all the coordinator owner's own fails the
/// job after this many leases ended without a result (a participant's
/// lapses never fail a job: see [`POISON_PARTICIPANTS`]).
pub const MAX_UNIT_FAILURES: u32 = 8;

/// How the table judges participants and leases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Policy {
    /// Quarantine and suspension.
    pub standing: Standing,
    /// A lease of a unit of average size must bring its count this soon
    /// (ms); a larger unit gets proportionally longer.
    pub progress_ms: u64,
}

impl Default for Policy {
    fn default() -> Policy {
        Policy {
            standing: Standing::default(),
            progress_ms: 1_800_000,
        }
    }
}

/// Why a job operation was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum JobError {
    /// The id as it was asked for: it may be no well-formed id at all.
    #[error("no job '{}'", perft_core::echoed(.0))]
    NotFound(String),
    #[error("job {id} is {state:?}, not failed: only a failed job can be resumed")]
    NotFailed { id: JobId, state: JobState },
    #[error("job {id} cannot be resumed: {reason}")]
    CannotResume { id: JobId, reason: String },
    #[error("job {id} is {}: cancel it before deleting it", .state.name())]
    NotFinished { id: JobId, state: JobState },
}

/// A new job with its units laid out, built where it costs nothing to
/// others (its summary takes one step per unit) before [`Jobs::add`].
#[derive(Debug)]
pub struct NewJob(Job);

impl NewJob {
    /// The job `id` of `plan`, submitted at `submitted_ms` (the time its
    /// journal row holds).
    pub fn new(id: JobId, spec: JobSpec, plan: PlannedJob, submitted_ms: u64) -> NewJob {
        let mut job = Job::new(id, spec, plan);
        job.submitted_ms = Some(submitted_ms);
        NewJob(job)
    }
}

/// Every job, in submission order.
#[derive(Debug)]
pub struct Jobs {
    order: Vec<JobId>,
    jobs: HashMap<JobId, Job>,
    holders: HashMap<SessionId, Holder>,
    next_epoch: u64,
    /// The first epoch this table issued: leases below it were issued
    /// before the restart that built it, and are known only by their tags
    /// and the units' floors.
    boot_epoch: u64,
    /// Every lease's progress deadline.
    deadlines: Deadlines,
    /// Changes not yet handed to the journal, in the order they happened.
    outbox: Vec<Op>,
    /// Who counted what, and who is in good standing.
    ledger: Ledger,
    policy: Policy,
    clock: Arc<dyn Clock>,
}

impl Default for Jobs {
    fn default() -> Jobs {
        Jobs::new(Policy::default(), Arc::new(SystemClock), Vec::new())
    }
}

fn not_found(job_id: &JobId) -> JobError {
    JobError::NotFound(job_id.to_string())
}

impl Jobs {
    /// No jobs, judged by `policy`, reading time from `clock`, with the
    /// participants' credit read back from the journal.
    pub fn new(policy: Policy, clock: Arc<dyn Clock>, credit: Vec<(ParticipantId, Credit)>) -> Jobs {
        let now = clock.now_ms();
        // Epochs go on growing across restarts (a thousand a millisecond of
        // the clock), so a lease from before a restart is never mistaken for
        // a new one; `restore` also moves past every journaled floor.
        let first_epoch = now.saturating_mul(1000);
        Jobs {
            order: Vec::new(),
            jobs: HashMap::new(),
            holders: HashMap::new(),
            next_epoch: first_epoch,
            boot_epoch: first_epoch.saturating_add(1),
            deadlines: Deadlines::default(),
            outbox: Vec::new(),
            ledger: Ledger::new(credit, policy.standing, now),
            policy,
            clock,
        }
    }

    /// A floor that ends every lease issued so far (for [`Op::Reopen`]).
    pub fn fresh_floor(&self) -> Epoch {
        Epoch(self.next_epoch + 1)
    }

    /// The time now, as the table's clock reads it.
    pub fn now_ms(&self) -> u64 {
        self.clock.now_ms()
    }

    /// The changes made since the last call, for the journal, in order
    /// (credit last, merged per participant).
    pub fn take_ops(&mut self) -> Vec<Op> {
        let mut ops = std::mem::take(&mut self.outbox);
        ops.extend(self.ledger.take_ops(self.clock.now_ms()));
        ops
    }

    /// How many changes wait for the journal.
    pub fn pending_ops(&self) -> usize {
        self.outbox.len() + usize::from(self.ledger.has_pending(self.clock.now_ms()))
    }

    /// Records a change that is not a job's state: a participant's row, a
    /// plan's chunk, units to count again.
    pub fn record(&mut self, op: Op) {
        self.outbox.push(op);
    }

    /// A participant's credit.
    pub fn credit(&self, participant: &ParticipantId) -> Credit {
        self.ledger.get(participant)
    }

    /// Whether a participant lost too many votes to lease or count.
    pub fn is_quarantined(&self, participant: &ParticipantId) -> bool {
        self.ledger.is_quarantined(participant)
    }

    /// Whether a participant's leases lapsed too often lately to lease.
    pub fn is_suspended(&self, participant: &ParticipantId) -> bool {
        self.ledger.is_suspended(participant, self.clock.now_ms())
    }

    /// An admin lifts a participant's quarantine (forgiving its lost votes
    /// so far) and/or its suspension (forgiving its strikes); journaled.
    /// The units it was barred from stay barred to it.
    pub fn lift(&mut self, participant: &ParticipantId, quarantine: bool, lapses: bool) -> Credit {
        self.ledger.lift(participant, quarantine, lapses)
    }

    /// Participants quarantined since the last call (on a table just
    /// rebuilt from the journal, every quarantined one, whose recount a
    /// restart may have interrupted): what they decided alone is to be
    /// counted again.
    pub fn take_newly_quarantined(&mut self) -> Vec<ParticipantId> {
        self.ledger.take_newly_quarantined()
    }

    /// The count of a unit of the job as sent, or why no unit of it can
    /// have it: more leaves than its depth allows, or kinds other than the
    /// job's or impossible below its leaves. For no such job the count
    /// passes unchecked (the report then finds the job missing).
    pub fn checked_count(&self, job_id: &JobId, count: &perft_proto::Leaves) -> Result<Count, CountRefused> {
        let Some(job) = self.jobs.get(job_id) else {
            return Ok(Count::plain(count.to_core()));
        };
        let fns = job.spec.game.fns_in(job.spec.convention)?;
        let limit = fns.max_leaves(job.remaining_depth);
        let leaves = count.to_core();
        if leaves.leaves > limit {
            return Err(CountRefused::TooManyLeaves {
                leaves: leaves.leaves,
                depth: job.remaining_depth,
                limit,
            });
        }
        count.to_count(fns, job.spec.kinds())
    }

    /// Whether a job of that id exists.
    pub fn contains(&self, job_id: &JobId) -> bool {
        self.jobs.contains_key(job_id)
    }

    /// Jobs so far: the next job's place in the order.
    pub fn next_seq(&self) -> u64 {
        self.order.len() as u64
    }

    /// Takes a job whose plan the journal already holds (see
    /// [`Op::Submit`]): it is queued, or done at once when
    /// planning settled everything.
    pub fn submit(&mut self, id: JobId, spec: JobSpec, plan: PlannedJob) {
        let now = self.clock.now_ms();
        self.add(NewJob::new(id, spec, plan, now));
    }

    /// [`Jobs::submit`] of a job built beforehand, off the scheduler.
    pub fn add(&mut self, job: NewJob) {
        let now = self.clock.now_ms();
        let job = self.insert(job.0);
        if job.units_total == 0 {
            // Nothing to count: everything was settled while planning.
            job.started_ms = Some(now);
            job.finish(JobState::Done, None, now);
            let op = job.state_op();
            self.outbox.push(op);
        }
    }

    fn insert(&mut self, job: Job) -> &mut Job {
        let id = job.id.clone();
        self.order.push(id.clone());
        self.jobs.entry(id).insert_entry(job).into_mut()
    }

    /// Cancels a job that has not finished; its units are released and
    /// late results for it are ignored.
    pub fn cancel(&mut self, job_id: &JobId) -> Result<JobView, JobError> {
        let now = self.clock.now_ms();
        let job = self.jobs.get_mut(job_id).ok_or_else(|| not_found(job_id))?;
        if !job.state.is_final() {
            job.finish(JobState::Cancelled, None, now);
            self.outbox.push(job.state_op());
            // A cancelled job is never resumed: its plan and counts go, its
            // summary, divide and disagreements stay.
            self.outbox.push(Op::DropPlan {
                job_id: job_id.clone(),
            });
        }
        Ok(job.view(now))
    }

    /// Removes a finished job entirely, from the table and the journal; an
    /// open one must be cancelled first. Returns it as it was.
    pub fn delete(&mut self, job_id: &JobId) -> Result<JobView, JobError> {
        let job = self.jobs.get(job_id).ok_or_else(|| not_found(job_id))?;
        if !job.state.is_final() {
            return Err(JobError::NotFinished {
                id: job_id.clone(),
                state: job.state,
            });
        }
        let view = job.view(self.clock.now_ms());
        self.jobs.remove(job_id);
        self.order.retain(|id| id != job_id);
        for holder in self.holders.values_mut() {
            holder.units.retain(|(job, _)| job != job_id);
        }
        self.outbox.push(Op::DeleteJob {
            job_id: job_id.clone(),
        });
        Ok(view)
    }
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_leases;
