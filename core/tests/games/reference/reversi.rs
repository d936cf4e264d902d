//! A naive square-by-square Reversi mover (no bitboards, no code shared
//! with the engine) and perft by the rules as docs/conventions.md states them, with
//! the statistics too: what the engine's counts are checked against.
//! Included by the tests that use it (`#[path]`), so each has its copy.

#![allow(dead_code)]

use perft_core::Leaves;

/// A board as 64 cells a1..h8: 1 the side to move, 2 the opponent, 0 empty.
pub type Cells = [u8; 64];

/// The squares flipped when the side to move plays on the empty `square`.
fn reference_flips(cells: &Cells, square: usize) -> Vec<usize> {
    let mut flipped = Vec::new();
    // Every direction: each (file step, rank step) but standing still.
    let directions = (-1..=1).flat_map(|df| (-1..=1).map(move |dr| (df, dr)));
    for (df, dr) in directions.filter(|&step| step != (0, 0)) {
        let (mut file, mut rank) = ((square % 8) as i32 + df, (square / 8) as i32 + dr);
        let mut run = Vec::new();
        while (0..8).contains(&file) && (0..8).contains(&rank) {
            let at = (rank * 8 + file) as usize;
            match cells[at] {
                2 => run.push(at),
                1 => {
                    flipped.extend(&run);
                    break;
                }
                _ => break,
            }
            file += df;
            rank += dr;
        }
    }
    flipped
}

/// Every legal square of the side to move: empty and flipping something.
pub fn reference_moves(cells: &Cells) -> Vec<usize> {
    (0..64)
        .filter(|&sq| cells[sq] == 0 && !reference_flips(cells, sq).is_empty())
        .collect()
}

/// The board from the other side's point of view.
pub fn swapped(cells: &Cells) -> Cells {
    cells.map(|c| match c {
        1 => 2,
        2 => 1,
        _ => 0,
    })
}

/// The cells after the side to move plays `sq`, from the opponent's point
/// of view.
fn played(cells: &Cells, sq: usize) -> Cells {
    let mut next = *cells;
    for at in reference_flips(cells, sq) {
        next[at] = 1;
    }
    next[sq] = 1;
    swapped(&next)
}

/// Perft by the rules as docs/conventions.md states them: a side with no move
/// passes if the opponent can move (the pass is a ply); a node where
/// neither side can move is one leaf, counted as `higher` when it lies
/// above the last ply, except one ply above it (the final pass's node).
pub fn reference_perft(cells: &Cells, depth: u32) -> Leaves {
    if depth == 0 {
        return Leaves::full(1);
    }
    let moves = reference_moves(cells);
    if moves.is_empty() {
        let other = swapped(cells);
        if !reference_moves(&other).is_empty() {
            return reference_perft(&other, depth - 1);
        }
        return if depth == 1 {
            Leaves::full(1)
        } else {
            Leaves { leaves: 1, higher: 1 }
        };
    }
    moves
        .into_iter()
        .map(|sq| reference_perft(&played(cells, sq), depth - 1))
        .sum()
}

/// The cells of a position text, from the side to move's point of view.
pub fn cells_of(text: &str) -> Cells {
    let (board, side) = text.split_once(' ').expect("board, space, side");
    let mut cells = [0u8; 64];
    for (cell, ch) in cells.iter_mut().zip(board.chars()) {
        *cell = match (ch, side) {
            ('X', "X") | ('O', "O") => 1,
            ('X', _) | ('O', _) => 2,
            _ => 0,
        };
    }
    cells
}

/// Leaves and their kinds as the statistics define them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReferenceStats {
    pub leaves: Leaves,
    /// Full-depth leaves reached by a pass.
    pub passes: u128,
    /// Leaves where neither side can move.
    pub game_overs: u128,
}

impl std::ops::Add for ReferenceStats {
    type Output = ReferenceStats;
    fn add(self, rhs: ReferenceStats) -> ReferenceStats {
        ReferenceStats {
            leaves: self.leaves + rhs.leaves,
            passes: self.passes + rhs.passes,
            game_overs: self.game_overs + rhs.game_overs,
        }
    }
}

/// Perft with statistics. `bik`: Bik's convention (a game over above full
/// depth is one leaf, "higher" two or more plies above); otherwise
/// A124004's (such a game counts nothing). `passed`: the move that led
/// here was a pass.
pub fn reference_stats(cells: &Cells, depth: u32, bik: bool, passed: bool) -> ReferenceStats {
    let moves = reference_moves(cells);
    let other = swapped(cells);
    let over = moves.is_empty() && reference_moves(&other).is_empty();
    if depth == 0 {
        return ReferenceStats {
            leaves: Leaves::full(1),
            passes: u128::from(passed),
            game_overs: u128::from(over),
        };
    }
    if over {
        return match (bik, depth) {
            (false, _) => ReferenceStats::default(),
            (true, 1) => ReferenceStats {
                leaves: Leaves::full(1),
                passes: 0,
                game_overs: 1,
            },
            (true, _) => ReferenceStats {
                leaves: Leaves { leaves: 1, higher: 1 },
                passes: 0,
                game_overs: 1,
            },
        };
    }
    if moves.is_empty() {
        return reference_stats(&other, depth - 1, bik, true);
    }
    moves
        .into_iter()
        .map(|sq| reference_stats(&played(cells, sq), depth - 1, bik, false))
        .fold(ReferenceStats::default(), |a, b| a + b)
}
