//! One first move's line of a divide table, as the coordinator sums it
//! and a client reads it.

use crate::Count;

/// One first move's line of a divide table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DivideLine {
    /// The move in the game's notation.
    pub first_move: String,
    pub count: Count,
    /// Units below the move, and how many of them are decided.
    pub units_total: u64,
    pub units_done: u64,
}
