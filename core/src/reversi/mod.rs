//! Reversi (Othello) 8x8 on two bitboards: the side to move and its opponent.
//!
//! Squares are numbered a1 = 0, b1 = 1, ..., h8 = 63, the order of the
//! position text. A side with no move passes, and the pass is a ply.

mod bitboard;
mod game;
mod lanes;
mod oeis;
mod packed;
mod position;
mod published;
mod stats;
mod symmetry;
mod text;

pub use bitboard::{flips, legal_moves_mask};
pub use oeis::ReversiOeis;
pub use position::{Disc, Reversi, ReversiMove, ReversiMoves};
pub use stats::ReversiStats;
pub use symmetry::canonical;
pub use text::PositionError;
