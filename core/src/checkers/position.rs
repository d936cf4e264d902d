//! The checkers position and its moves: the vocabulary the move
//! generator, FEN, packed and [`Game`](crate::Game) modules share.

use arrayvec::ArrayVec;

use super::board::{DARK_CROWN_ROW, Direction, LIGHT_CROWN_ROW};
use crate::game::MoveSet;

/// The side to move. Dark (`B` in FEN, squares 1-12 at the start) moves first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Side {
    /// `B`: starts on 1-12, men move towards 32.
    Dark,
    /// `W`: starts on 21-32, men move towards 1.
    Light,
}

impl Side {
    /// The other side.
    pub const fn other(self) -> Side {
        match self {
            Side::Dark => Side::Light,
            Side::Light => Side::Dark,
        }
    }

    /// The row where this side's men are crowned.
    pub(crate) const fn crown_row(self) -> u32 {
        match self {
            Side::Dark => DARK_CROWN_ROW,
            Side::Light => LIGHT_CROWN_ROW,
        }
    }
}

/// A checkers position: dark pieces, light pieces, which of them are kings,
/// and the side to move.
///
/// Invariant: dark and light are disjoint, kings lie on occupied squares, no
/// man stands on its crowning row, at most 12 pieces a side (checked when
/// parsing; kept by [`Game::play`](crate::Game::play)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Checkers {
    pub(super) dark: u32,
    pub(super) light: u32,
    pub(super) kings: u32,
    pub(super) to_move: Side,
}

/// A checkers move: a step, or a whole capture sequence with the direction of
/// each jump, so two sequences over the same pieces stay different moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CheckersMove {
    /// Bit index (square - 1) the piece leaves.
    pub(super) from: u8,
    /// Bit index where it stops.
    pub(super) to: u8,
    /// Number of jumps, 0 for a step.
    pub(super) jumps: u8,
    /// Direction code of jump `i` in bits `2i..2i+2`.
    pub(super) path: u32,
    /// Squares of the pieces taken.
    pub(super) captured: u32,
}

impl CheckersMove {
    /// The square (1-32) the piece leaves.
    pub const fn from_square(&self) -> u8 {
        self.from + 1
    }

    /// The square (1-32) where the piece stops.
    pub const fn to_square(&self) -> u8 {
        self.to + 1
    }

    /// True for a capture sequence.
    pub const fn is_capture(&self) -> bool {
        self.jumps > 0
    }

    /// The squares (1-32) of the pieces taken.
    pub const fn captured(&self) -> u32 {
        self.captured
    }

    /// Every square the piece lands on after `from`, in order.
    pub fn landings(&self) -> Vec<u8> {
        if self.jumps == 0 {
            return vec![self.to_square()];
        }
        let mut square = 1u32 << self.from;
        (0..self.jumps)
            .map(|i| {
                let direction = Direction::from_code(self.path >> (2 * i));
                square = direction.step(direction.step(square));
                square.trailing_zeros() as u8 + 1
            })
            .collect()
    }
}

/// Most moves a position can have. Steps are at most 48 (twelve kings with
/// four free squares each, which the board cannot even fit); a hill-climbing
/// search over legal positions found at most 42 moves, captures included, as
/// every sequence needs its own opponent pieces. 128 leaves a wide margin.
pub const MAX_MOVES: usize = 128;

/// The legal moves of a checkers position.
pub type CheckersMoves = ArrayVec<CheckersMove, MAX_MOVES>;

impl MoveSet<CheckersMove> for CheckersMoves {
    #[inline(always)]
    fn len(&self) -> usize {
        ArrayVec::len(self)
    }
}

impl Checkers {
    /// Pieces of one side.
    pub const fn pieces(&self, side: Side) -> u32 {
        match side {
            Side::Dark => self.dark,
            Side::Light => self.light,
        }
    }

    /// Kings of both sides.
    pub const fn kings(&self) -> u32 {
        self.kings
    }

    /// The side to move.
    pub const fn to_move(&self) -> Side {
        self.to_move
    }
}
