//! Deep Perft's counting on this machine: planning a root into units,
//! sizing and building the table, counting the units on OS threads,
//! summing the divide, the benchmark cases and their measurement. `perft
//! run`, `perft bench`, `perft audit`'s recount and `perft suite` all count
//! through here, and so can any other program that links it.
//!
//! It must not print, parse arguments or reach the network: callers say
//! what to count in its types ([`LocalJob`], [`TableChoice`]) and render
//! what comes back. The hot recursions, tables and kernels are `perft-core`'s;
//! this crate only arranges them, generic over the game and the measure.
//!
//! ```
//! use perft_core::{Game, GameKind, Plain, Reversi};
//! use perft_local::{LocalJob, TableChoice, count_planned};
//!
//! // Reversi perft(4) from the start on two threads with a small table:
//! // 244 leaves.
//! let job = LocalJob::new(GameKind::Reversi, 4, 2, TableChoice::Bytes(1 << 20));
//! let counted = count_planned::<Reversi, Plain>(&Reversi::start(), &job)?;
//! assert_eq!(counted.divide.total.leaves, 244);
//! assert!(counted.table.is_some());
//! # Ok::<(), perft_local::LocalError>(())
//! ```

mod audit;
pub mod bench;
mod count;
mod error;
mod memory;
mod recount;
mod suite;
mod table;

pub use audit::{AuditFindings, Recount, audit};
pub use count::{LocalCount, LocalJob, Progress, count_planned, count_raw};
pub use error::LocalError;
pub use memory::{available_memory_bytes, peak_memory_bytes};
pub use recount::recount;
pub use suite::{SuiteCount, count_suite};
pub use table::{TableChoice, TableReport, table_for};
