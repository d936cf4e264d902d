//! The table key: the whole position in three words, seen from the side to
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
//!
//! The key's first word is the occupied squares (every piece has a code of
//! at least 1); each plane is then kept only on those squares, gathered in
//! square order (BMI2's `pext`), two planes a word. A position has at most
//! 32 pieces (the FEN parser and the packed format refuse more, and play
//! never adds one), so a gathered plane fits in 32 bits and the key keeps
//! every plane bit: equal keys are still equal positions.

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
pub(super) fn table_key(pos: &Chess) -> [u64; 3] {
    let planes = planes(pos);
    let occupied = planes[0] | planes[1] | planes[2] | planes[3];
    debug_assert!(occupied.count_ones() <= 32, "{pos}");
    let [a, b, c, d] = gather(planes, occupied);
    [occupied, a | b << 32, c | d << 32]
}

/// Each of `planes` with its bits on `mask` gathered into the low bits, in
/// square order.
#[inline(always)]
fn gather(planes: [u64; 4], mask: u64) -> [u64; 4] {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("bmi2") {
        // SAFETY: the CPU has BMI2, just checked.
        return unsafe { gather_bmi2(planes, mask) };
    }
    planes.map(|plane| gather_portable(plane, mask))
}

/// [`gather`] with BMI2's `pext`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi2")]
fn gather_bmi2(planes: [u64; 4], mask: u64) -> [u64; 4] {
    use std::arch::x86_64::_pext_u64;
    planes.map(|plane| _pext_u64(plane, mask))
}

/// [`gather`] of one plane, a bit at a time, for any CPU.
fn gather_portable(plane: u64, mask: u64) -> u64 {
    let mut gathered = 0;
    for (i, square) in super::bitboard::Squares(mask).enumerate() {
        gathered |= (plane >> square & 1) << i;
    }
    gathered
}

/// The four code planes of `pos`, seen from the side to move.
#[inline(always)]
fn planes(pos: &Chess) -> [u64; 4] {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::playouts::Playouts;
    use crate::game::Game;

    /// The planes spread back from a key: the inverse of [`table_key`].
    fn planes_of_key(key: [u64; 3]) -> [u64; 4] {
        let gathered = [
            key[1] & 0xFFFF_FFFF,
            key[1] >> 32,
            key[2] & 0xFFFF_FFFF,
            key[2] >> 32,
        ];
        gathered.map(|bits| {
            let mut plane = 0;
            for (i, square) in super::super::bitboard::Squares(key[0]).enumerate() {
                plane |= (bits >> i & 1) << square;
            }
            plane
        })
    }

    /// Every plane bit survives the gathering (so equal keys are equal
    /// positions), and the BMI2 and portable gathers agree, on positions of
    /// random playouts and on 32-piece positions.
    #[test]
    fn keys_keep_every_plane_bit_on_every_gather() {
        let mut positions: Vec<Chess> = [
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
            "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9",
        ]
        .iter()
        .map(|fen| fen.parse().expect("a valid FEN"))
        .collect();
        positions.push(Chess::start());
        let mut playouts = Playouts::new(0x2545_F491_4F6C_DD1D);
        for _ in 0..200 {
            positions.extend(playouts.line(Chess::start(), 80));
        }
        for pos in &positions {
            let key = table_key(pos);
            assert_eq!(planes_of_key(key), planes(pos), "{pos}");
            let occupied = key[0];
            let portable = planes(pos).map(|plane| gather_portable(plane, occupied));
            assert_eq!(gather(planes(pos), occupied), portable, "{pos}");
        }
    }
}
