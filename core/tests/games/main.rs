//! The games' tests against published tables and reference generators,
//! one module a concern, built as one test binary (a binary each compiled
//! the move generators again, minutes of every CI run).

mod reference;

mod checkers_rules;
mod chess;
mod chess960;
mod chess_stats;
mod game_stats;
mod kernels;
mod packed;
mod playouts;
mod position_text;
mod published;
mod reversi_empty_centre;
mod reversi_oeis;
mod suites;
mod table;
