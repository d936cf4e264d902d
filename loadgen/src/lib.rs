//! Deep Perft's load generator: what a coordinator costs under thousands
//! of workers and every participant at its budgets.
//!
//! It owns the simulation: the load's job, split so that every unit is
//! one ply deep ([`submit_job`]); simulated workers that lease its units,
//! count them and report at once, with each report's acknowledgement time
//! in a histogram and, when asked, a log ([`simulate`],
//! [`Simulated::write_log`]); participants of their own for them
//! ([`worker_credentials`]); and worker sessions and job watches held open
//! up to each credential's budget and one past it ([`hold_sessions`],
//! [`hold_streams`], charged to the credentials of [`HoldCredentials`]).
//! Every call goes through `perft-client`. Its only files are the ones it
//! is named: the secrets it reads, the latency log it writes. It must not
//! print, read arguments, or touch any job but the one it submits or is
//! given: its workers are pinned to it.

mod error;
mod hold;
mod latency;
mod load;
mod secrets;
mod simulate;

pub use error::LoadgenError;
pub use hold::{Held, HeldStreams, Holding, hold, hold_sessions, hold_streams};
pub use latency::Latency;
pub use load::{LoadJob, submit_job, worker_credentials};
pub use secrets::HoldCredentials;
pub use simulate::{Simulated, own_participants, simulate};
