//! The participants: how each kind behaves, and what it knows.

use std::sync::Arc;

use perft_coordinator::jobs::LeaseHolder;
use perft_model::Count;
use perft_model::{ParticipantId, SessionId};

use super::model::Issued;

/// How a participant behaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Counts truly and reports promptly.
    Honest,
    /// Counts truly and reports late, some leases past their deadline.
    Slow,
    /// The coordinator's owner (a built-in participant), honest; its
    /// sessions get lost now and then.
    Owner,
    /// Reports wrong counts.
    Forger,
    /// Reports, keeps what it reported and sends it again later.
    Replayer,
    /// Leases and goes silent: its session is found lost.
    Lapser,
    /// Leases, never reports, hands back leases it no longer holds.
    Parker,
    /// Two of them report the same wrong count.
    Colluder,
}

impl Kind {
    pub fn hostile(self) -> bool {
        !matches!(self, Kind::Honest | Kind::Slow | Kind::Owner)
    }

    pub fn honest(self) -> bool {
        !self.hostile()
    }
}

/// A participant with one worker session at a time.
#[derive(Debug)]
pub struct Actor {
    pub name: String,
    pub id: ParticipantId,
    pub kind: Kind,
    pub session: SessionId,
    pub(super) sessions: u32,
    /// Sessions a restarted worker left behind: the worker registry finds
    /// them silent at the reaper's next pass.
    pub(super) left_behind: Vec<SessionId>,
    /// Leases delivered and not counted yet.
    pub(super) held: Vec<Issued>,
    /// Counts ready to send.
    pub(super) outbox: Vec<(Issued, Count)>,
    /// Counts sent whose answer waits for the journal: sent again after a
    /// crash.
    pub(super) in_flight: Vec<(Issued, Count)>,
    /// Every lease delivered to it: what its lease tags let it name.
    pub(super) issued: Vec<Issued>,
    /// What a replayer sent, to send again.
    pub(super) memory: Vec<(Issued, Count)>,
    /// Revoked: the door refuses its every call.
    pub revoked: bool,
    /// Stopped acting (hostile ones, once honest workers finish the jobs).
    pub(super) retired: bool,
}

impl Actor {
    pub(super) fn new(name: String, kind: Kind) -> Actor {
        Actor {
            id: ParticipantId::parse(&name).expect("a participant name"),
            session: SessionId::parse(&format!("{name}.0")).expect("a session id"),
            name,
            kind,
            sessions: 0,
            left_behind: Vec::new(),
            held: Vec::new(),
            outbox: Vec::new(),
            in_flight: Vec::new(),
            issued: Vec::new(),
            memory: Vec::new(),
            revoked: false,
            retired: false,
        }
    }

    /// A second machine of `first`'s participant: its own sessions, the
    /// same identity.
    pub(super) fn machine_of(first: &Actor) -> Actor {
        let name = format!("{}.m2", first.name);
        Actor {
            id: first.id.clone(),
            session: SessionId::parse(&format!("{name}.0")).expect("a session id"),
            ..Actor::new(name, first.kind)
        }
    }

    pub(super) fn new_session(&mut self) {
        self.sessions += 1;
        self.session = SessionId::parse(&format!("{}.{}", self.name, self.sessions)).expect("a session id");
    }

    pub(super) fn active(&self) -> bool {
        !self.revoked && !self.retired
    }

    pub(super) fn holder(&self) -> LeaseHolder {
        LeaseHolder {
            session: self.session.clone(),
            identity: self.id.clone(),
            label: Arc::from(self.name.as_str()),
        }
    }
}

/// What happened over the seeds, for the summary line.
#[derive(Clone, Copy, Debug, Default)]
pub struct Stats {
    pub steps: u64,
    pub crashes: u64,
    /// Starts after the journal was damaged on disk.
    pub damaged: u64,
    pub accepted: u64,
    pub stale: u64,
    pub refused: u64,
    pub ignored: u64,
    pub lapsed: u64,
    pub quarantined: u64,
    pub recounted_units: u64,
    pub revoked: u64,
    pub resumed: u64,
    pub failed: u64,
    pub wrong_standing: u64,
    /// Jobs failed by a poison unit, by no majority.
    pub poisoned: u64,
    pub no_majority: u64,
}

impl Stats {
    pub fn add(&mut self, o: &Stats) {
        self.steps += o.steps;
        self.crashes += o.crashes;
        self.damaged += o.damaged;
        self.accepted += o.accepted;
        self.stale += o.stale;
        self.refused += o.refused;
        self.ignored += o.ignored;
        self.lapsed += o.lapsed;
        self.quarantined += o.quarantined;
        self.recounted_units += o.recounted_units;
        self.revoked += o.revoked;
        self.resumed += o.resumed;
        self.failed += o.failed;
        self.wrong_standing += o.wrong_standing;
        self.poisoned += o.poisoned;
        self.no_majority += o.no_majority;
    }
}
