//! Deep Perft's load generator: what a coordinator costs under thousands
//! of workers and every participant at its budgets.
//!
//! It owns the simulation: simulated workers that lease tiny units of one
//! job, count them and report at once, with each report's acknowledgement
//! time in a histogram ([`simulate`]); participants of their own for them
//! ([`own_participants`]); and worker sessions and job watches held open
//! up to each credential's budget and one past it ([`hold_sessions`],
//! [`hold_streams`]). Every call goes through `perft-client`. It must not
//! print, read arguments or files, or touch any job but the one it is
//! given: its workers are pinned to it.

mod error;
mod hold;
mod latency;
mod simulate;

pub use error::LoadgenError;
pub use hold::{Held, HeldStreams, hold_sessions, hold_streams};
pub use latency::Latency;
pub use simulate::{Simulated, own_participants, simulate};
