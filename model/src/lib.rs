//! Deep Perft's vocabulary: the ids and the count that the coordinator,
//! the worker, the certificate and the client all speak of.
//!
//! It owns the shared words: [`JobId`], [`UnitId`], [`Epoch`],
//! [`ParticipantId`], [`SessionId`], [`MachineName`], [`DeciderName`], a
//! job's [`JobState`], a participant's [`Role`] and its standing
//! ([`Participant`]), the [`Resource`]s a budget limits, and
//! [`Count`], one unit's leaves with their counts by kind, the one form a
//! count keeps from a worker's result to a certificate. Each id is checked
//! when it is made from text, so a holder of one never checks it again. It
//! must not do I/O, know the wire (`perft-proto` converts to and from it)
//! or hold any part's behaviour: only words and their rules.

mod count;
mod divide_line;
mod ids;
mod job_state;
mod participant;
mod resource;
mod role;
mod worker_figures;

pub use count::{Count, CountRefused, MAX_KINDS, kinds_of};
pub use divide_line::DivideLine;
pub use ids::{
    DeciderName, Epoch, IdError, JobId, MAX_ID_BYTES, MachineName, ParticipantId, SessionId, UnitId,
    printable,
};
pub use job_state::JobState;
pub use participant::{BudgetLine, Participant};
pub use resource::{Resource, UnknownResource};
pub use role::{Action, Role, UnknownRole};
pub use worker_figures::WorkerFigures;
