//! Playing a move: the position after it, its castling rights and en
//! passant square updated.

use super::bitboard::bit;
use super::castling;
use super::position::{Chess, ChessMove, Colour, MoveKind, NO_SQUARE, Piece};
use crate::kernel::Isa;

impl Chess {
    /// The position after `mv`, which must be legal here.
    #[inline(always)]
    pub(super) fn play_move<I: Isa>(&self, isa: I, mv: ChessMove) -> Chess {
        let mut next = self.play_board_only(isa, mv);
        let capture = self.colours[self.side.other().index()] & bit(mv.to) != 0;
        next.halfmove = if capture || mv.piece == Piece::Pawn {
            0
        } else {
            self.halfmove.saturating_add(1)
        };
        if self.side == Colour::Black {
            next.fullmove = self.fullmove.saturating_add(1);
        }
        next
    }

    /// [`Chess::play_move`] without the clocks, which keep this position's
    /// values: for positions that are only counted or keyed, never shown
    /// (`Game::play_on`).
    #[inline(always)]
    pub(super) fn play_board_only<I: Isa>(&self, isa: I, mv: ChessMove) -> Chess {
        let mut next = *self;
        let (us, them) = (self.side.index(), self.side.other().index());
        let (from, to) = (bit(mv.from), bit(mv.to));
        let capture = self.colours[them] & to != 0;
        if capture {
            next.colours[them] &= !to;
            for board in &mut next.pieces {
                *board &= !to;
            }
        }
        next.colours[us] ^= from | to;
        // Every board, masked to the moving piece's: where the piece is
        // not a constant, an indexed store into boards held in vector
        // registers would stall the reload that follows.
        for (index, board) in next.pieces.iter_mut().enumerate() {
            *board ^= (from | to) & 0u64.wrapping_sub(u64::from(index == mv.piece.index()));
        }
        next.en_passant = NO_SQUARE;
        match mv.kind {
            MoveKind::Normal => {}
            MoveKind::DoublePush => {
                next.side = self.side.other();
                next.en_passant = next.legal_en_passant(isa, (mv.from + mv.to) / 2);
            }
            MoveKind::EnPassant => {
                let captured = bit(mv.to ^ 8);
                next.colours[them] ^= captured;
                next.pieces[Piece::Pawn as usize] ^= captured;
            }
            MoveKind::Castle => {
                // From this position's boards: king, rook and their
                // destinations may share squares.
                let (king_to, rook_to) = castling::destinations(mv.from, mv.to);
                let (king_to, rook_to) = (bit(king_to), bit(rook_to));
                next.colours[us] = (self.colours[us] & !(from | to)) | king_to | rook_to;
                next.pieces[Piece::King as usize] = (self.pieces[Piece::King as usize] & !from) | king_to;
                next.pieces[Piece::Rook as usize] = (self.pieces[Piece::Rook as usize] & !to) | rook_to;
            }
            MoveKind::Promotion(piece) => {
                next.pieces[Piece::Pawn as usize] ^= to;
                next.pieces[piece.index()] |= to;
            }
        }
        next.castling_rooks =
            castling::rights_after(self.castling_rooks, self.side, mv.piece, mv.from, mv.to);
        next.side = self.side.other();
        next
    }
}
