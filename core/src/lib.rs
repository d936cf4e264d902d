//! Deep Perft's engine: games as bitboard move generators, and exact
//! bulk-counted perft and divide over any of them.
//!
//! Every hot loop is generic over [`Game`] and monomorphized per game; nothing
//! on the counting path goes through `dyn`. This crate does no I/O: the
//! coordinator, the worker and the CLI read and write; this one counts.
//!
//! # Counting a position
//!
//! [`perft`](fn@perft) counts the leaves `depth` plies below a position, bulk-counted
//! (at depth 1 a node's legal moves are its leaves):
//!
//! ```
//! use perft_core::{Chess, Game, perft};
//!
//! assert_eq!(perft(&Chess::start(), 3).leaves, 8_902);
//! ```
//!
//! # A divide
//!
//! [`divide`](fn@divide) splits the count by first move, in generation order, as
//! engine authors compare it line by line; [`Game::format_move`] writes a
//! move as its game does (UCI for chess, `9-13` for draughts, `d3` for
//! Reversi):
//!
//! ```
//! use perft_core::{Checkers, Game, divide};
//!
//! let start = Checkers::start();
//! let split = divide(&start, 3);
//! assert_eq!(split.total.leaves, 302);
//! let lines: Vec<(String, u128)> = split
//!     .moves
//!     .iter()
//!     .map(|&(mv, below)| (start.format_move(mv), below.leaves))
//!     .collect();
//! assert_eq!(lines.len(), 7);
//! assert_eq!(lines[0], ("9-13".to_owned(), 48));
//! ```
//!
//! # Parsing each game's position
//!
//! Each game parses its own text with [`str::parse`]: chess FEN (X-FEN
//! and Shredder-FEN for Chess960), PDN FEN for English draughts, and 64
//! squares a1..h8 then the side to move for Reversi. Reversi counts a
//! node where neither side can move as one leaf, also [`Leaves::higher`]
//! when it comes before full depth (Bik's convention; [`ReversiOeis`]
//! counts such a game as nothing, as OEIS A124004 does):
//!
//! ```
//! use perft_core::{Checkers, Chess, Game, Reversi, perft};
//!
//! let kiwipete: Chess = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
//!     .parse()
//!     .unwrap();
//! assert_eq!(perft(&kiwipete, 2).leaves, 2_039);
//!
//! let draughts: Checkers = "B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12"
//!     .parse()
//!     .unwrap();
//! assert_eq!(draughts, Checkers::start());
//!
//! let reversi: Reversi = concat!(
//!     "--------", "--------", "--------", // ranks 1 to 3, a to h
//!     "---OX---", "---XO---",             // d4 e4, d5 e5
//!     "--------", "--------", "--------", // ranks 6 to 8
//!     " X",                               // dark to move
//! )
//! .parse()
//! .unwrap();
//! assert_eq!(reversi, Reversi::start());
//! assert_eq!(perft(&reversi, 6).leaves, 8_200);
//! ```
//!
//! # A position refused
//!
//! A text that is no position is a typed error whose message says what is
//! wrong, never a panic:
//!
//! ```
//! use perft_core::Chess;
//!
//! let refused = "8/8/8 w - - 0 1".parse::<Chess>().unwrap_err();
//! assert_eq!(refused.to_string(), "the board has 3 ranks separated by '/', expected 8");
//! ```

pub mod checkers;
pub mod chess;
pub mod convention;
pub mod count;
pub mod divide;
pub mod echo;
pub mod game;
pub mod kernel;
pub mod kind;
pub mod measure;
pub mod parallel;
pub mod perft;
pub mod plan;
pub mod published;
pub mod reversi;
pub mod root;
pub mod stats;
pub mod suite;
pub mod table;
pub mod table_key;
pub mod table_size;

pub use checkers::Checkers;
pub use chess::Chess;
pub use convention::{Convention, UnknownConvention};
pub use count::Leaves;
pub use divide::{Divide, StatsDivide, divide, divide_by, divide_stats};
pub use echo::{ECHOED_CHARS, echoed, must_escape};
pub use game::{BenchCase, BenchCases, Game, MoveError, MoveSet, UnpackError};
pub use kernel::Kernel;
pub use kind::{ConventionRefused, GameFacts, GameFns, GameKind, GameVisitor, PositionRefused, UnknownGame};
pub use measure::{ByKind, Counted, Measure, Plain, SharedTable, TableTooSmall};
pub use parallel::{count_units, count_units_watched, divide_parallel, divide_plan, local_plan};
pub use perft::{Counter, TableStats, perft};
pub use plan::{CountOverflow, Frontier, Plan, PlanError, SettledNode, Weight, weighted_sum};
pub use reversi::{Reversi, ReversiOeis};
pub use root::{RootRefused, RootSetup};
pub use stats::{
    GameStats, LeafStats, NamedStats, StatsCounter, StatsTable, StatsVisitor, Tally, perft_stats,
};
pub use suite::{SuiteError, SuiteLine, parse_suite};
pub use table::{PreparedTable, TranspositionTable};
