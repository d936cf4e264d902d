//! Slow, obviously correct move generators the fast ones are checked
//! against.

pub mod checkers;
pub mod reversi;
