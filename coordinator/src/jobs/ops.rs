//! The change vocabulary: every change the job table makes, in the order
//! it made them, for the journal to record (the journal depends on this,
//! never the reverse).

use perft_model::Count;

use crate::jobs::{Credit, Disagreement, JobSpec, Summary};
use crate::participants::StoredParticipant;
use crate::planning::PlannedJob;
use perft_model::JobState;
use perft_model::{Epoch, JobId, ParticipantId, UnitId};

/// One change to record.
#[derive(Debug, Clone)]
pub enum Op {
    /// A new job's row, its plan without the units (written next, in
    /// chunks); it stays "planning" until [`Op::Planned`].
    Submit {
        id: JobId,
        spec: JobSpec,
        /// The plan without its units ([`PlannedJob::header`]).
        plan: PlannedJob,
        units_total: u64,
        /// When it was submitted (ms since the Unix epoch).
        submitted_ms: u64,
    },
    /// Units `first_unit..` of a job's plan as a [`UnitColumns`] blob: one
    /// chunk, one transaction.
    Units {
        job_id: JobId,
        chunk: u64,
        first_unit: UnitId,
        blob: Vec<u8>,
    },
    /// Every chunk of the job's plan is written: the job is queued.
    Planned { job_id: JobId },
    /// A unit's decided count (its pending votes are dropped), with the
    /// participants whose counts agreed (stored one a line).
    Result {
        job_id: JobId,
        unit_id: UnitId,
        count: Count,
        deciders: Vec<ParticipantId>,
    },
    /// A count that does not decide its unit yet (verification).
    Vote {
        job_id: JobId,
        unit_id: UnitId,
        voter: ParticipantId,
        label: String,
        count: Count,
    },
    /// A unit's votes are dropped (a resumed job counts it afresh).
    ClearVotes { job_id: JobId, unit_id: UnitId },
    /// Workers sent different counts for a unit.
    Disagreement {
        job_id: JobId,
        disagreement: Disagreement,
    },
    /// The job's state, timing and counters.
    JobState {
        job_id: JobId,
        state: JobState,
        error: Option<String>,
        started_ms: Option<u64>,
        finished_ms: Option<u64>,
        released: u64,
        /// With a final state: what the job keeps once its units go.
        summary: Option<Summary>,
    },
    /// A participant's row: new, or revoked.
    Participant(StoredParticipant),
    /// An admin's budget figures for a participant (none: the defaults).
    Budget {
        participant: ParticipantId,
        overrides: crate::admission::Overrides,
    },
    /// A participant's credit as it now stands.
    Credit {
        participant: ParticipantId,
        total: Credit,
    },
    /// Every undecided vote of a participant is dropped (it was revoked).
    DropVotesOf { voter: ParticipantId },
    /// Units of a job are counted again: their counts go, a done job runs
    /// again, no lease older than `floor` counts for them, and `barred`
    /// (whose counts caused it) never leases them again.
    Reopen {
        job_id: JobId,
        unit_ids: Vec<UnitId>,
        floor: Epoch,
        barred: Option<ParticipantId>,
    },
    /// Leases of these units older than `floor` ended (lapsed or handed
    /// back): none of them counts, before or after a restart.
    Floors {
        job_id: JobId,
        unit_ids: Vec<UnitId>,
        floor: Epoch,
    },
    /// A cancelled job's plan, counts and votes go (its row, summary and
    /// disagreements stay); their pages are given back to the file system.
    DropPlan { job_id: JobId },
    /// A job goes entirely.
    DeleteJob { job_id: JobId },
}
