//! Deep Perft's comparison with another perft engine, for engine authors.
//!
//! It owns talking to that engine over its protocol ([`Engine`]: UCI,
//! perftree's, or a plain one) to get its divide; finding where its divide
//! and ours first differ, by walking down the first move they count
//! differently until the move lists themselves differ
//! ([`find_difference`]); and the positions to compare, above all random
//! playouts biased toward the moves generators get wrong ([`cases`]).
//!
//! It must not print, parse command lines (an engine's own command text
//! aside) or read files other than by running the engine: the CLI reads
//! its arguments and a suite, calls this crate, and renders a
//! [`Difference`].

pub mod cases;
mod difference;
mod engine;
mod error;
mod special;

pub use cases::{Case, CaseOrigin};
pub use difference::{Difference, Miscount, find_difference, our_divide};
pub use engine::{Engine, Protocol, parse_divide};
pub use error::CompareError;
pub use special::{SpecialPosition, special_cases, special_positions};
