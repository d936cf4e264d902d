//! Jobs as the journal holds them, read back to rebuild the job table
//! after a restart or a failed write.

use crate::count::Count;

use crate::ids::{Epoch, JobId, ParticipantId, UnitId};
use crate::jobs::{Credit, Disagreement, JobSpec, JobState, Summary};
use crate::planning::PlannedJob;

/// A vote read back from the journal.
#[derive(Debug, Clone)]
pub struct RestoredVote {
    pub unit_id: UnitId,
    pub voter: ParticipantId,
    pub label: String,
    pub count: Count,
}

/// A job read back from the journal.
#[derive(Debug, Clone)]
pub struct RestoredJob {
    pub id: JobId,
    pub spec: JobSpec,
    /// The plan; its units only for an open job (or one without summary).
    pub plan: PlannedJob,
    pub units_total: u64,
    /// A finished job's summary; with one, nothing per unit is read.
    pub summary: Option<Summary>,
    pub state: JobState,
    pub error: Option<String>,
    pub started_ms: Option<u64>,
    pub finished_ms: Option<u64>,
    pub released: u64,
    pub results: Vec<(UnitId, Count)>,
    pub votes: Vec<RestoredVote>,
    pub disagreements: Vec<Disagreement>,
    /// Parts of the plan whose checksum failed: the job cannot be trusted.
    pub damage: Vec<String>,
    /// Units whose stored count failed its checksum: counted again.
    pub damaged_counts: Vec<UnitId>,
    /// Units of a done job whose counts failed the check against its
    /// Merkle root at start: counted again, and shown until they are.
    pub recount: Vec<UnitId>,
    /// Units reopened since their first lease, with the first epoch still
    /// valid for them.
    pub floors: Vec<(UnitId, Epoch)>,
    /// Units a participant may never lease again (reopened because of its
    /// counts).
    pub bars: Vec<(UnitId, ParticipantId)>,
}

/// What the journal holds of the jobs and of who counted them.
#[derive(Debug, Default)]
pub struct Restored {
    pub jobs: Vec<RestoredJob>,
    /// Every participant's credit.
    pub credit: Vec<(ParticipantId, Credit)>,
}
