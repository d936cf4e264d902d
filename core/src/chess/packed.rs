//! The packed chess position, 30 bytes, little-endian:
//!
//! - 8: the occupied squares (`u64`, bit = square a1 = 0 ... h8 = 63);
//! - 16: a 4-bit code per occupied square in square order, low nibble
//!   first (1-6 white pawn, knight, bishop, rook, queen, king; 7-12 black),
//!   the nibbles past the last piece zero;
//! - 1: the side to move in bit 0 (1 = black), castling rights `KQkq` in
//!   bits 1-4, the rest zero;
//! - 1: the en passant square, 64 for none;
//! - 2 + 2: the halfmove and fullmove clocks.
//!
//! Used where positions travel or are stored in bulk, so no FEN is parsed
//! on the way; decoding runs the FEN parser's own checks.

use super::bitboard::{Squares, bit, square_name};
use super::fen;
use super::position::{Chess, Colour, NO_SQUARE, Piece};
use crate::game::{UnpackError, packed_array};

/// Bytes of a packed chess position.
pub(super) const BYTES: usize = 30;

/// Where the piece nibbles start, after the occupancy.
const NIBBLES: usize = 8;
/// Where the side-and-castling byte stands, after 32 nibbles.
const FLAGS: usize = NIBBLES + 16;

/// Appends the 30 bytes of `pos`.
pub(super) fn pack(pos: &Chess, out: &mut Vec<u8>) {
    let occupied = pos.occupied();
    out.extend_from_slice(&occupied.to_le_bytes());
    let mut nibbles = [0u8; 16];
    for (i, square) in Squares(occupied).enumerate().take(32) {
        let code = pos.piece_on(square).map_or(0, |(colour, piece)| {
            1 + 6 * colour.index() as u8 + piece.index() as u8
        });
        nibbles[i / 2] |= code << (4 * (i % 2));
    }
    out.extend_from_slice(&nibbles);
    out.push(pos.side.index() as u8 | (pos.castling << 1));
    out.push(pos.en_passant);
    out.extend_from_slice(&pos.halfmove.to_le_bytes());
    out.extend_from_slice(&pos.fullmove.to_le_bytes());
}

/// The position of 30 packed bytes, refused unless it is the one way `pack`
/// writes a position the FEN parser would accept: at most 32 pieces, valid
/// codes, zero padding, the parser's board, castling and en passant checks
/// (the same functions), an en passant square only where a capture is
/// legal, and a fullmove number from 1.
pub(super) fn unpack(bytes: &[u8]) -> Result<Chess, UnpackError> {
    let bytes: [u8; BYTES] = packed_array("chess", bytes)?;
    let invalid = |reason: String| UnpackError::Invalid {
        game: "chess",
        reason,
    };
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[..NIBBLES]);
    let occupied = u64::from_le_bytes(word);
    let count = occupied.count_ones() as usize;
    if count > 32 {
        return Err(invalid(format!("{count} occupied squares, at most 32 fit")));
    }
    let nibble = |i: usize| (bytes[NIBBLES + i / 2] >> (4 * (i % 2))) & 0x0F;
    let mut pos = Chess::EMPTY;
    for (i, square) in Squares(occupied).enumerate() {
        let code = nibble(i);
        if !(1..=12).contains(&code) {
            return Err(invalid(format!(
                "piece code {code} on {}, expected 1 to 12",
                square_name(square)
            )));
        }
        let colour = if code <= 6 { Colour::White } else { Colour::Black };
        let piece = Piece::ALL[usize::from((code - 1) % 6)];
        pos.colours[colour.index()] |= bit(square);
        pos.pieces[piece.index()] |= bit(square);
    }
    if let Some(i) = (count..32).find(|&i| nibble(i) != 0) {
        return Err(invalid(format!("nibble {i} is past the last piece but not zero")));
    }
    let flags = bytes[FLAGS];
    if flags >> 5 != 0 {
        return Err(invalid(format!("flags byte {flags:#04x} has bits above 4 set")));
    }
    pos.side = if flags & 1 == 0 {
        Colour::White
    } else {
        Colour::Black
    };
    pos.castling = flags >> 1;
    fen::validate(&pos).map_err(|e| invalid(e.to_string()))?;
    let en_passant = bytes[FLAGS + 1];
    if en_passant > NO_SQUARE {
        return Err(invalid(format!(
            "en passant byte {en_passant}, expected a square 0-63 or 64 for none"
        )));
    }
    if en_passant != NO_SQUARE {
        let kept = fen::en_passant(en_passant, &pos).map_err(|e| invalid(e.to_string()))?;
        if kept != en_passant {
            return Err(invalid(format!(
                "en passant square {} allows no legal capture, so it is stored as none",
                square_name(en_passant)
            )));
        }
        pos.en_passant = en_passant;
    }
    pos.halfmove = u16::from_le_bytes([bytes[FLAGS + 2], bytes[FLAGS + 3]]);
    pos.fullmove = u16::from_le_bytes([bytes[FLAGS + 4], bytes[FLAGS + 5]]);
    if pos.fullmove == 0 {
        return Err(invalid("fullmove number 0, it starts at 1".to_owned()));
    }
    Ok(pos)
}
