//! A participant as an admin reads it: its role, its standing, its credit
//! and its budget. A running coordinator's `ListParticipants` and the
//! offline listing of a stopped one's data dir both answer in it.

use crate::{ParticipantId, Role};

/// A participant with its credit and reliability.
#[derive(Clone, Debug, PartialEq)]
pub struct Participant {
    pub name: ParticipantId,
    pub role: Role,
    pub revoked: bool,
    /// It lost too many majority votes: no more leases.
    pub quarantined: bool,
    /// Its leases lapsed too often lately: no more leases for a while.
    pub suspended: bool,
    pub created_ms: u64,
    /// Counts it sent that were taken, and their leaves.
    pub units: u64,
    pub leaves: u128,
    pub cpu_seconds: f64,
    /// Counts it sent that lost a majority vote, and those an admin forgave.
    pub lost_votes: u64,
    pub lost_votes_forgiven: u64,
    /// Leases it let lapse, and the lapses not yet faded.
    pub lapses: u64,
    pub strikes: u64,
    /// Live worker sessions (machines) and their threads.
    pub machines: u32,
    pub threads: u32,
    /// What it may hold at once and holds now, a line a resource (empty
    /// offline: the next coordinator's defaults are unknown).
    pub budget: Vec<BudgetLine>,
}

/// One resource of a participant's budget.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BudgetLine {
    /// open_jobs, open_units, sessions, streams or dashboard_sessions.
    pub resource: String,
    /// What it may hold; `None`: no limit.
    pub limit: Option<u64>,
    /// What it holds now.
    pub used: u64,
    /// An admin set the figure (else it is the coordinator's default).
    pub overridden: bool,
}
