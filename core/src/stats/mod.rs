//! Perft statistics: the leaves of a perft counted by kind (chess's
//! captures, checks and mates; Reversi's passes and game overs; checkers'
//! captures, multi-jumps and crownings), as the Chess Programming Wiki and
//! the Grand Chess Tree publish them.
//!
//! A statistic counts leaves: a kind of move counts the moves played at the
//! last ply, a kind of node the leaf nodes, never anything above full depth
//! (except a game-over leaf above it, where the game counts one).
//!
//! The statistics path is its own recursion, generic over [`GameStats`]
//! and compiled per game and per kernel beside the plain one, which it
//! leaves untouched: the plain count compiles as before. Its table, when it
//! has one, is a [`StatsTable`] of its own, so a statistics entry can never
//! be read as a plain count nor the other way round. Every sum is `u128`
//! and checked.

mod count;
mod game_stats;
mod named;
mod table;
mod tally;

pub(crate) use count::min_stats_stored_depth;
pub use count::{StatsCounter, perft_stats};
pub use game_stats::{GameStats, StatsVisitor};
pub use named::{NamedStats, StatsRequestError, count_packed_stats};
pub use table::StatsTable;
pub use tally::{LeafStats, Tally};
pub(crate) use tally::{checked_sum, none_above, tally};
