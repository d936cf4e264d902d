//! Chess: bitboards, magic slider attacks, fully legal move generation,
//! FEN (X-FEN and Shredder-FEN for Chess960), UCI moves and a
//! colour-normalised table key.
//!
//! Squares are numbered a1 = 0 to h8 = 63. Perft follows the standard
//! convention: legal moves only, a promotion is four moves, castling one,
//! checkmate and stalemate above full depth contribute nothing, no draw
//! rules.

mod attacks;
mod bitboard;
mod castling;
mod fen;
mod fen_castling;
mod fen_error;
mod fills;
mod game;
mod key;
mod movegen;
mod packed;
mod play;
#[cfg(test)]
mod playouts;
mod position;
mod published;
mod reply_mobility;
mod sink;
mod stats;
mod two_plies;
mod uci;
mod unchanged_replies;

pub use bitboard::{Square, parse_square, square_name};
pub use fen_error::FenError;
pub use position::{Chess, ChessMove, ChessMoves, Colour, MAX_MOVES, MoveKind, Piece};
pub use published::{PositionRow, published_rows};
pub use stats::ChessStats;
