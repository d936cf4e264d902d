//! The game registry: the one place that lists the games. Code that learns
//! the game at run time (the CLI, the wire) names it with [`GameKind`] and
//! reaches it two ways:
//!
//! - cold paths (parsing, showing, packing, published tables, limits) call
//!   the game's plain functions, [`GameKind::fns`];
//! - counting and other hot generic code runs through
//!   [`GameKind::dispatch`], monomorphised per game, never through `dyn`.
//!
//! Adding a game is a new folder implementing [`Game`](crate::Game) plus
//! one line in the `registry!` call.

mod convention;
mod facts;
mod fns;
mod registry;

pub use convention::ConventionRefused;
pub use facts::GameFacts;
pub use fns::{GameFns, PositionRefused};
pub use registry::{GameKind, GameVisitor, UnknownGame};
