//! The table key: the whole position in four words, seen from the side to
//! move. Each square holds a 4-bit code spread over four bit planes:
//!
//! | code | piece                                             |
//! |------|---------------------------------------------------|
//! | 0    | empty                                             |
//! | 1-6  | the mover's pawn, knight, bishop, rook, queen, king |
//! | 7-12 | the opponent's, in the same order                 |
//! | 13   | the mover's rook that may still castle (any file) |
//! | 14   | the opponent's rook that may still castle         |
//! | 15   | the opponent's pawn that may be taken en passant  |
//!
//! With black to move the board is flipped vertically first, so a position
//! and its colour-mirrored twin share one key (and so one table entry).
//! Castling rights and the en passant square ride on the codes, so nothing
//! else is needed: equal keys are equal positions up to colour and clocks.

use super::bitboard::bit;
use super::position::{Chess, Colour, NO_SQUARE, Piece};

/// Adds `board`'s squares to the planes of `code`'s set bits.
#[inline(always)]
fn paint(planes: &mut [u64; 4], board: u64, code: u8) {
    for (i, plane) in planes.iter_mut().enumerate() {
        if code >> i & 1 != 0 {
            *plane |= board;
        }
    }
}

/// The colour-normalised key of `pos`.
#[inline]
pub(super) fn table_key(pos: &Chess) -> [u64; 4] {
    let flip = pos.side == Colour::Black;
    let view = |board: u64| if flip { board.swap_bytes() } else { board };
    let mover = view(pos.colours[pos.side.index()]);
    let opponent = view(pos.colours[pos.side.other().index()]);
    let mut planes = [0u64; 4];
    for piece in Piece::ALL {
        let board = view(pos.pieces[piece.index()]);
        let code = piece.index() as u8 + 1;
        paint(&mut planes, board & mover, code);
        paint(&mut planes, board & opponent, code + 6);
    }
    // Castling rooks (on any file, for Chess960): codes 4 -> 13 and
    // 10 -> 14 only add bits.
    let castling = view(pos.castling_rooks);
    paint(&mut planes, castling & mover, 13 ^ 4);
    paint(&mut planes, castling & opponent, 14 ^ 10);
    // The pawn that may be taken en passant: code 7 -> 15.
    if pos.en_passant != NO_SQUARE {
        paint(&mut planes, view(bit(pos.en_passant ^ 8)), 15 ^ 7);
    }
    planes
}
