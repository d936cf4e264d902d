//! Deep Perft's engine: games as bitboard move generators, and exact
//! bulk-counted perft and divide over any of them.
//!
//! Every hot loop is generic over [`Game`] and monomorphized per game; nothing
//! on the counting path goes through `dyn`.

pub mod checkers;
pub mod chess;
pub mod convention;
pub mod count;
pub mod game;
pub mod kernel;
pub mod kind;
pub mod parallel;
pub mod perft;
pub mod plan;
pub mod published;
pub mod reversi;
pub mod shown;
pub mod stats;
pub mod suite;
pub mod table;
pub mod table_key;
pub mod table_size;

pub use checkers::Checkers;
pub use chess::Chess;
pub use convention::{Convention, UnknownConvention};
pub use count::Leaves;
pub use game::{BenchCase, BenchCases, Game, MoveError, MoveSet, UnpackError};
pub use kernel::Kernel;
pub use kind::{ConventionRefused, GameFacts, GameFns, GameKind, GameVisitor, UnknownGame};
pub use parallel::{divide_parallel, divide_plan, local_plan};
pub use perft::{Counter, Divide, TableStats, divide, perft};
pub use plan::{CountOverflow, Frontier, Plan, PlanError, SettledNode, Weight, weighted_sum};
pub use reversi::{Reversi, ReversiOeis};
pub use shown::{must_escape, shown};
pub use stats::{
    GameStats, LeafStats, NamedStats, StatsCounter, StatsDivide, StatsTable, StatsVisitor, Tally,
    divide_stats, perft_stats, plan_settled_stats,
};
pub use suite::{SuiteError, SuiteLine, parse_suite};
pub use table::TranspositionTable;
