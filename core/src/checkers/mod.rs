//! English draughts (American checkers) 8x8 on three 32-bit boards.
//!
//! Bit `n - 1` is square `n` of the standard 1-32 numbering. Dark (`B` in
//! FEN) starts on 1-12, moves first and moves towards 32; light (`W`) starts
//! on 21-32. Captures are compulsory and completed; sequences over the same
//! pieces in another order count as different moves.

mod board;
mod fen;
mod game;
mod movegen;
mod packed;
mod position;
mod published;
mod stats;

pub use board::Direction;
pub use fen::FenError;
pub use position::{Checkers, CheckersMove, CheckersMoves, Side};
pub use stats::CheckersStats;
