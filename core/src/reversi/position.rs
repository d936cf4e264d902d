//! The Reversi position and its moves: the vocabulary the text, packed and
//! [`Game`](crate::Game) modules share.

use crate::game::MoveSet;

/// The colour of a disc. Dark (`X`) moves first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Disc {
    /// `X`, moves first.
    Dark,
    /// `O`.
    Light,
}

impl Disc {
    /// The other colour.
    pub const fn other(self) -> Disc {
        match self {
            Disc::Dark => Disc::Light,
            Disc::Light => Disc::Dark,
        }
    }
}

/// A Reversi position from the side to move's point of view: its discs, the
/// opponent's, and which colour it is (needed only to print the position).
///
/// Invariant: the two boards are disjoint (checked when parsing and
/// unpacking; kept by [`Game::play`](crate::Game::play)). Any disjoint
/// pair is a position.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Reversi {
    pub(super) player: u64,
    pub(super) opponent: u64,
    pub(super) to_move: Disc,
}

/// A Reversi move: a square (a1 = 0 ... h8 = 63) or a pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReversiMove(pub(super) u8);

impl ReversiMove {
    /// The pass, legal only when the side to move has no other move and the
    /// opponent has one.
    pub const PASS: ReversiMove = ReversiMove(64);

    /// A disc placed on `square` (0..64).
    pub const fn place(square: u8) -> ReversiMove {
        assert!(square < 64);
        ReversiMove(square)
    }

    /// The square played, or `None` for a pass.
    pub const fn square(self) -> Option<u8> {
        if self.0 < 64 { Some(self.0) } else { None }
    }
}

/// The legal moves of a Reversi position as a bit mask, plus the pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReversiMoves {
    pub(super) squares: u64,
    pub(super) pass: bool,
}

impl MoveSet<ReversiMove> for ReversiMoves {
    #[inline(always)]
    fn len(&self) -> usize {
        self.squares.count_ones() as usize + usize::from(self.pass)
    }
}

impl Iterator for ReversiMoves {
    type Item = ReversiMove;

    #[inline(always)]
    fn next(&mut self) -> Option<ReversiMove> {
        if self.squares != 0 {
            let square = self.squares.trailing_zeros() as u8;
            self.squares &= self.squares - 1;
            Some(ReversiMove(square))
        } else if self.pass {
            self.pass = false;
            Some(ReversiMove::PASS)
        } else {
            None
        }
    }
}

impl Reversi {
    /// The discs of the side to move.
    pub const fn player(&self) -> u64 {
        self.player
    }

    /// The discs of the side not to move.
    pub const fn opponent(&self) -> u64 {
        self.opponent
    }

    /// The colour of the side to move.
    pub const fn to_move(&self) -> Disc {
        self.to_move
    }

    /// Discs of one colour.
    pub const fn discs(&self, colour: Disc) -> u64 {
        if matches!(
            (colour, self.to_move),
            (Disc::Dark, Disc::Dark) | (Disc::Light, Disc::Light)
        ) {
            self.player
        } else {
            self.opponent
        }
    }
}
