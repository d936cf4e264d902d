//! Moves in UCI notation, standard and Chess960's.

use super::bitboard::square_name;
use super::castling;
use super::position::{ChessMove, MoveKind};

impl ChessMove {
    /// The move in UCI: `e2e4`, `e7e8q`, castling as the king's two-square
    /// move `e1g1` (in Chess960, ambiguous: see [`ChessMove::uci_chess960`]).
    pub fn uci(&self) -> String {
        let to = match self.kind {
            MoveKind::Castle => castling::destinations(self.from, self.to).0,
            _ => self.to,
        };
        let mut text = square_name(self.from) + &square_name(to);
        if let MoveKind::Promotion(piece) = self.kind {
            text.push(piece.letter());
        }
        text
    }

    /// The move as engines write it with UCI_Chess960: castling as the
    /// king taking its rook (`e1h1`), everything else as [`ChessMove::uci`].
    pub fn uci_chess960(&self) -> String {
        match self.kind {
            MoveKind::Castle => square_name(self.from) + &square_name(self.to),
            _ => self.uci(),
        }
    }
}
