//! One job: its plan's units while it is open, the queue of units wanting
//! a lease, and its progress, kept incrementally so that a view costs the
//! same for ten units or ten million. A job that finishes keeps only its
//! summary (the divide so far and its counters) and releases its units.

use std::collections::{BTreeSet, HashMap};

use perft_model::Count;

use super::fresh_units::FreshUnits;
use super::retry::{Retry, Wanted};
use super::unit::Unit;
use super::{Disagreement, JobSpec, JobView};
use crate::columns::{Bits, UnitColumns};
use crate::jobs::Op;
use crate::planning::PlannedJob;
use perft_model::JobState;
use perft_model::{Epoch, JobId, ParticipantId, SessionId, UnitId};

/// What a job keeps once it is finished: its divide so far, per first
/// move, and its counters. Journaled with its final state, so a restart
/// need not load a finished job's units.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    /// Units decided.
    pub done: u64,
    /// Decided counts times their paths, per first move (settled leaves
    /// not included); checked, never wrapping.
    pub per_move: Vec<Count>,
    /// Units below each first move, and how many of them are decided.
    pub move_units: Vec<u64>,
    pub move_done: Vec<u64>,
    /// Estimated work of all units and of the decided ones.
    pub work_total: f64,
    pub work_done: f64,
}

/// The units of a job that is still open, and who works on them.
#[derive(Debug)]
pub(super) struct OpenUnits {
    pub columns: UnitColumns,
    pub decided: Bits,
    /// Units never handed out since the job was loaded: queued implicitly,
    /// in stretches of plan order, one worker session to a stretch, so
    /// that a worker gets neighbouring subtrees (which share positions).
    fresh: FreshUnits,
    /// Decided units among the fresh ones.
    done_ahead: u64,
    /// Units handed out before that want a lease again (handed back,
    /// expired, verification's next copy), most urgent first.
    retry: Retry,
    /// Units with leases or votes: open work only.
    pub active: HashMap<UnitId, Unit>,
    /// Units some worker holds.
    pub leased: u64,
    /// Units reopened (a lapse, a hand-back, a recount) since their first
    /// lease, with the first epoch still valid for them: a lease from
    /// before a restart below it was ended by the reopening.
    pub floors: HashMap<UnitId, Epoch>,
    /// Units reopened because of a participant's counts, with the
    /// participants never to lease them again.
    pub bars: HashMap<UnitId, Vec<ParticipantId>>,
    /// Units of a done job whose counts the journal held damaged at start
    /// (see the journal's counts roots): the job says so until each is
    /// counted again.
    pub recounting: BTreeSet<UnitId>,
}

#[derive(Debug)]
pub(super) struct Job {
    pub id: JobId,
    pub spec: JobSpec,
    pub split_depth: u32,
    pub remaining_depth: u32,
    pub first_moves: Vec<String>,
    pub settled: Vec<Count>,
    /// A root with no move: its whole count, found when planning.
    pub root_leaves: Option<Count>,
    pub units_total: u64,
    /// `None` once finished: the units are released.
    pub open: Option<OpenUnits>,
    pub summary: Summary,
    pub released: u64,
    pub state: JobState,
    pub error: Option<String>,
    /// When it was submitted (ms since the Unix epoch); `None` for a job
    /// from a journal that did not record it.
    pub submitted_ms: Option<u64>,
    pub started_ms: Option<u64>,
    pub finished_ms: Option<u64>,
    pub disagreements: Vec<Disagreement>,
}

impl Job {
    /// A queued job of `plan`, every unit open.
    pub fn new(id: JobId, spec: JobSpec, plan: PlannedJob) -> Job {
        let moves = plan.first_moves.len();
        let n = plan.units.len();
        let mut summary = Summary {
            per_move: vec![Count::zero(spec.kinds()); moves],
            move_units: vec![0; moves],
            move_done: vec![0; moves],
            ..Summary::default()
        };
        for i in 0..n {
            summary.work_total += f64::from(plan.units.estimate(i));
            for w in plan.units.weights(i) {
                if let Some(slot) = summary.move_units.get_mut(w.first_move as usize) {
                    *slot += 1;
                }
            }
        }
        Job {
            id,
            spec,
            split_depth: plan.split_depth,
            remaining_depth: plan.remaining_depth,
            first_moves: plan.first_moves,
            settled: plan.settled,
            root_leaves: plan.root_leaves,
            units_total: n as u64,
            open: Some(OpenUnits {
                decided: Bits::new(n),
                fresh: FreshUnits::new(n as u64),
                done_ahead: 0,
                retry: Retry::default(),
                active: HashMap::new(),
                leased: 0,
                floors: HashMap::new(),
                bars: HashMap::new(),
                recounting: BTreeSet::new(),
                columns: plan.units,
            }),
            summary,
            released: 0,
            state: JobState::Queued,
            error: None,
            submitted_ms: None,
            started_ms: None,
            finished_ms: None,
            disagreements: Vec::new(),
        }
    }

    /// A finished job read back with its summary only.
    pub fn finished(id: JobId, spec: JobSpec, plan: PlannedJob, units_total: u64, summary: Summary) -> Job {
        let mut job = Job::new(id, spec, plan);
        job.open = None;
        job.units_total = units_total;
        job.summary = summary;
        job
    }

    fn quorum(&self) -> u32 {
        self.spec.quorum()
    }

    /// Whether unit `u` is open and undecided.
    pub fn is_open(&self, u: UnitId) -> bool {
        self.open
            .as_ref()
            .is_some_and(|o| u.0 < self.units_total && !o.decided.get(u.0))
    }

    /// Unit `u`'s packed position, while the job is open.
    pub fn position(&self, u: UnitId) -> Option<&[u8]> {
        let open = self.open.as_ref()?;
        (u.0 < self.units_total).then(|| open.columns.position(u.0 as usize))
    }

    /// Unit `u`'s position as text, for people.
    pub fn shown_position(&self, u: UnitId) -> String {
        match self.position(u) {
            Some(bytes) => self
                .spec
                .game
                .fns()
                .show_packed(bytes)
                .unwrap_or_else(|e| e.to_string()),
            None => format!("unit {u}"),
        }
    }

    /// Runs `f` on unit `u`'s lease and vote state (made when first
    /// needed, dropped once idle), keeping the leased count. `None` when
    /// the unit is not open.
    pub fn with_unit<R>(&mut self, u: UnitId, f: impl FnOnce(&mut Unit) -> R) -> Option<R> {
        if !self.is_open(u) {
            return None;
        }
        let quorum = self.quorum();
        let open = self.open.as_mut()?;
        let unit = open.active.entry(u).or_insert_with(|| Unit::new(quorum));
        let before = unit.leased();
        let result = f(unit);
        let after = unit.leased();
        if unit.is_idle(quorum) {
            open.active.remove(&u);
        }
        match (before, after) {
            (false, true) => open.leased += 1,
            (true, false) => open.leased -= 1,
            _ => {}
        }
        Some(result)
    }

    /// Open units holding an undecided count of `identity`.
    pub fn units_voted_by(&self, identity: &ParticipantId) -> Vec<UnitId> {
        let Some(open) = &self.open else {
            return Vec::new();
        };
        let mut units: Vec<UnitId> = open
            .active
            .iter()
            .filter(|(_, unit)| unit.has_voter(identity))
            .map(|(&u, _)| u)
            .collect();
        units.sort_unstable();
        units
    }

    fn needs_lease(&self, u: UnitId) -> bool {
        self.open
            .as_ref()
            .is_some_and(|o| !o.decided.get(u.0) && o.active.get(&u).is_none_or(Unit::needs_lease))
    }

    fn can_take(&self, u: UnitId, identity: &ParticipantId) -> bool {
        self.open.as_ref().is_some_and(|o| {
            o.active.get(&u).is_none_or(|a| a.can_take(identity))
                && !o.bars.get(&u).is_some_and(|bars| bars.contains(identity))
        })
    }

    /// The participants that may not take unit `u` now.
    fn barred(&self, u: UnitId) -> Vec<ParticipantId> {
        let Some(open) = self.open.as_ref() else {
            return Vec::new();
        };
        let mut barred = open.active.get(&u).map_or_else(Vec::new, Unit::barred);
        if let Some(bars) = open.bars.get(&u) {
            barred.extend(bars.iter().cloned());
        }
        barred
    }

    /// True while unit `u` holds the lease `epoch`.
    pub fn holds_lease(&self, u: UnitId, epoch: Epoch) -> bool {
        self.open
            .as_ref()
            .and_then(|o| o.active.get(&u))
            .is_some_and(|unit| unit.holder_of(epoch).is_some())
    }

    /// True when a lease of unit `u` with `epoch`, issued before the
    /// restart that loaded this job, still stands: no reopening since.
    pub fn old_lease_stands(&self, u: UnitId, epoch: Epoch, identity: &ParticipantId) -> bool {
        self.open.as_ref().is_some_and(|o| {
            o.floors.get(&u).is_none_or(|floor| epoch >= *floor)
                && !o.bars.get(&u).is_some_and(|bars| bars.contains(identity))
        })
    }

    /// Ends every lease of unit `u` older than `floor`, before and after a
    /// restart (the caller journals it).
    pub fn raise_floor(&mut self, u: UnitId, floor: Epoch) {
        if let Some(open) = self.open.as_mut() {
            let at = open.floors.entry(u).or_insert(floor);
            *at = (*at).max(floor);
        }
    }

    /// Bars `participant` from unit `u` for good (the caller journals it).
    pub fn bar(&mut self, u: UnitId, participant: &ParticipantId) {
        if let Some(open) = self.open.as_mut() {
            let bars = open.bars.entry(u).or_default();
            if !bars.contains(participant) {
                bars.push(participant.clone());
            }
        }
    }

    /// How long a lease of unit `u` may go without its count: `progress_ms`
    /// for a unit of average estimated work, proportionally longer for a
    /// larger one (at most a hundred times).
    pub fn progress_allowance_ms(&self, u: UnitId, progress_ms: u64) -> u64 {
        let Some(open) = self.open.as_ref() else {
            return progress_ms;
        };
        let mean = self.summary.work_total / self.units_total.max(1) as f64;
        let estimate = if u.0 < self.units_total {
            f64::from(open.columns.estimate(u.0 as usize))
        } else {
            0.0
        };
        let factor = if mean > 0.0 && estimate.is_finite() {
            (estimate / mean).clamp(1.0, 100.0)
        } else {
            1.0
        };
        (progress_ms as f64 * factor) as u64
    }

    /// Puts a unit that wants a lease back in the queue, first (a unit
    /// already queued keeps its place unless who may take it changed).
    pub fn requeue(&mut self, u: UnitId) {
        if self.state.is_final() || !self.needs_lease(u) {
            return;
        }
        let barred = self.barred(u);
        let Some(open) = self.open.as_mut() else {
            return;
        };
        if open.fresh.contains(u.0) {
            return;
        }
        open.retry.push_front(u, barred);
    }

    /// The next unit the participant `identity` may take on its session
    /// `session`: a unit handed out before that wants another lease, else
    /// the next of the session's stretch of plan order.
    pub fn next_for(&mut self, identity: &ParticipantId, session: &SessionId) -> Option<UnitId> {
        let open = self.open.as_mut()?;
        let (decided, active, bars) = (&open.decided, &open.active, &open.bars);
        let barred_for_good = |u: UnitId| bars.get(&u).is_some_and(|b| b.contains(identity));
        let retried = open.retry.take_for(identity, |u| match active.get(&u) {
            _ if decided.get(u.0) => Wanted::Drop,
            Some(unit) if !unit.needs_lease() => Wanted::Drop,
            Some(unit) if !unit.can_take(identity) || barred_for_good(u) => {
                let mut barred = unit.barred();
                barred.extend(bars.get(&u).into_iter().flatten().cloned());
                Wanted::NotFrom(barred)
            }
            None if barred_for_good(u) => Wanted::NotFrom(bars[&u].clone()),
            _ => Wanted::Take,
        });
        if retried.is_some() {
            return retried;
        }
        loop {
            let open = self.open.as_mut()?;
            let decided = &open.decided;
            let (next, skipped) = open.fresh.next_for(session, |u| decided.get(u));
            open.done_ahead -= skipped;
            let u = UnitId(next?);
            if !self.needs_lease(u) {
                continue;
            }
            if self.can_take(u, identity) {
                return Some(u);
            }
            // Restored with this participant's vote: another one's turn.
            let barred = self.barred(u);
            self.open.as_mut()?.retry.push_back(u, barred);
        }
    }

    /// Whether any unit waits for a lease.
    pub fn has_queued(&self) -> bool {
        self.units_queued() > 0
    }

    /// Forgets where the lost session `session` worked: its stretch is
    /// left for others to take over.
    pub fn forget_session(&mut self, session: &SessionId) {
        if let Some(open) = self.open.as_mut() {
            open.fresh.forget(session);
        }
    }

    /// Units waiting for a lease.
    pub fn units_queued(&self) -> u64 {
        self.open
            .as_ref()
            .map_or(0, |o| (o.fresh.len() - o.done_ahead) + o.retry.len())
    }

    /// Units some worker holds.
    pub fn units_leased(&self) -> u64 {
        self.open.as_ref().map_or(0, |o| o.leased)
    }

    /// Ends the job; its units are released (a resumed job loads them
    /// again from the journal).
    pub fn finish(&mut self, state: JobState, error: Option<String>, now_ms: u64) {
        self.state = state;
        self.error = error;
        self.finished_ms = Some(now_ms);
        self.open = None;
    }

    /// The journal record of the job's state (with its summary once it is
    /// finished).
    pub fn state_op(&self) -> Op {
        Op::JobState {
            job_id: self.id.clone(),
            state: self.state,
            error: self.error.clone(),
            started_ms: self.started_ms,
            finished_ms: self.finished_ms,
            released: self.released,
            summary: self.state.is_final().then(|| self.summary.clone()),
        }
    }

    /// Leaves counted so far, settled ones included; `None` past `u128`
    /// (only a forged or damaged count gets there, and fails the job).
    fn leaves_so_far(&self) -> Option<u128> {
        self.settled
            .iter()
            .chain(&self.summary.per_move)
            .try_fold(0u128, |sum, l| sum.checked_add(l.leaves.leaves))?
            .checked_add(self.root_leaves.map_or(0, |l| l.leaves.leaves))
    }

    /// The divide so far: settled plus decided leaves per first move.
    pub fn per_move(&self) -> Option<Vec<Count>> {
        self.settled
            .iter()
            .zip(&self.summary.per_move)
            .map(|(a, b)| a.checked_add(*b))
            .collect()
    }

    /// What a done job found damaged at start says until its damaged units
    /// are counted again.
    fn damage_note(&self) -> Option<String> {
        let recounting = &self.open.as_ref()?.recounting;
        if recounting.is_empty() {
            return None;
        }
        // A view is asked for on every status and dashboard poll: only the
        // units shown are read, not the whole set (all of a job's units
        // when its counts were altered).
        Some(format!(
            "damaged: the journal held the counts of units {} of this done job damaged at start; \
             they are being counted again ({} left), and its certificate waits for them",
            UnitId::listed_of(recounting.iter().copied(), recounting.len()),
            recounting.len()
        ))
    }

    /// The job as clients see it at `now_ms`.
    pub fn view(&self, now_ms: u64) -> JobView {
        let seconds = match (self.started_ms, self.finished_ms) {
            (Some(start), Some(end)) => end.saturating_sub(start) as f64 / 1000.0,
            (Some(start), None) => now_ms.saturating_sub(start) as f64 / 1000.0,
            _ => 0.0,
        };
        let work_done = if self.state == JobState::Done || self.summary.work_total <= 0.0 {
            if self.state == JobState::Done { 1.0 } else { 0.0 }
        } else {
            (self.summary.work_done / self.summary.work_total).clamp(0.0, 1.0)
        };
        JobView {
            id: self.id.clone(),
            spec: self.spec.clone(),
            split_depth: self.split_depth,
            state: self.state,
            error: self.error.clone().or_else(|| self.damage_note()),
            submitted_ms: self.submitted_ms,
            units_total: self.units_total,
            units_done: self.summary.done,
            units_released: self.released,
            units_queued: self.units_queued(),
            units_leased: self.units_leased(),
            leaves_done: self.leaves_so_far().unwrap_or(u128::MAX),
            seconds,
            disagreements: self.disagreements.len() as u64,
            work_done,
        }
    }

    /// Counts a decided unit in. A weighted sum past `u128` fails the job
    /// (returns false): no true count gets there.
    pub fn decided(&mut self, u: UnitId, count: Count, now_ms: u64) -> bool {
        let Some(open) = self.open.as_mut() else {
            return true;
        };
        if u.0 >= self.units_total || !open.decided.set(u.0) {
            return true;
        }
        if open.fresh.contains(u.0) {
            open.done_ahead += 1;
        }
        open.recounting.remove(&u);
        if let Some(unit) = open.active.remove(&u)
            && unit.leased()
        {
            open.leased -= 1;
        }
        let i = u.0 as usize;
        self.summary.done += 1;
        self.summary.work_done += f64::from(open.columns.estimate(i));
        let mut overflow = false;
        for w in open.columns.weights(i) {
            let m = w.first_move as usize;
            let (Some(sum), Some(done)) = (
                self.summary.per_move.get_mut(m),
                self.summary.move_done.get_mut(m),
            ) else {
                continue;
            };
            *done += 1;
            match count
                .checked_mul(u128::from(w.paths))
                .and_then(|n| sum.checked_add(n))
            {
                Some(total) => *sum = total,
                None => overflow = true,
            }
        }
        if !overflow && self.leaves_so_far().is_some() {
            return true;
        }
        let reason = format!(
            "the count of unit {u} ({}) makes the total overflow u128: a forged or damaged count",
            count.leaves.leaves
        );
        self.finish(JobState::Failed, Some(reason), now_ms);
        false
    }
}

impl Job {
    /// Heap bytes held for the job's units (none once finished).
    pub fn unit_bytes(&self) -> usize {
        self.open.as_ref().map_or(0, |o| {
            o.columns.heap_bytes()
                + o.decided.heap_bytes()
                + o.retry.heap_bytes()
                + o.fresh.heap_bytes()
                + o.active.capacity() * 96
                + o.floors.capacity() * 24
                + o.bars.capacity() * 48
        })
    }
}
