//! The packed chess position, 30 bytes, little-endian:
//!
//! - 8: the occupied squares (`u64`, bit = square a1 = 0 ... h8 = 63);
//! - 16: a 4-bit code per occupied square in square order, low nibble
//!   first (1-6 white pawn, knight, bishop, rook, queen, king; 7-12 black;
//!   13 and 14 a white and a black rook that may castle, off the corners),
//!   the nibbles past the last piece zero;
//! - 1: the side to move in bit 0 (1 = black); castling rights of the
//!   corner rooks h1, a1, h8, a8 (`KQkq` in standard chess) in bits 1-4;
//!   Chess960 notation ([`Chess::chess960_notation`]) in bit 5; the rest
//!   zero;
//! - 1: the en passant square, 64 for none;
//! - 2 + 2: the halfmove and fullmove clocks.
//!
//! Used where positions travel or are stored in bulk, so no FEN is parsed
//! on the way; decoding runs the FEN parser's own checks.

use super::bitboard::{RANK_1, RANK_8, Square, Squares, bit, square_name};
use super::castling;
use super::fen;
use super::position::{Chess, Colour, NO_SQUARE, Piece};
use crate::game::{UnpackError, packed_array};

/// Bytes of a packed chess position.
pub(super) const BYTES: usize = 30;

/// Where the piece nibbles start, after the occupancy.
const NIBBLES: usize = 8;
/// Where the side-and-castling byte stands, after 32 nibbles.
const FLAGS: usize = NIBBLES + 16;
/// The corner rooks whose rights bits 1-4 of the flags byte carry, in order.
const CORNERS: [Square; 4] = [7, 0, 63, 56];
/// The piece code of a castling rook off the corners, white's; black's is
/// one more.
const CASTLING_ROOK: u8 = 13;
/// The flags bit of Chess960 notation.
const CHESS960: u8 = 1 << 5;

/// Appends the 30 bytes of `pos`.
pub(super) fn pack(pos: &Chess, out: &mut Vec<u8>) {
    let occupied = pos.occupied();
    out.extend_from_slice(&occupied.to_le_bytes());
    let mut nibbles = [0u8; 16];
    for (i, square) in Squares(occupied).enumerate().take(32) {
        let code = pos.piece_on(square).map_or(0, |(colour, piece)| {
            if pos.castling_rooks & bit(square) != 0 && !CORNERS.contains(&square) {
                CASTLING_ROOK + colour.index() as u8
            } else {
                1 + 6 * colour.index() as u8 + piece.index() as u8
            }
        });
        nibbles[i / 2] |= code << (4 * (i % 2));
    }
    out.extend_from_slice(&nibbles);
    let corners = CORNERS
        .iter()
        .enumerate()
        .filter(|&(_, &square)| pos.castling_rooks & bit(square) != 0)
        .fold(0u8, |flags, (i, _)| flags | 2 << i);
    let chess960 = if pos.chess960 { CHESS960 } else { 0 };
    out.push(pos.side.index() as u8 | corners | chess960);
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
        let (colour, piece) = match code {
            1..=12 => (
                if code <= 6 { Colour::White } else { Colour::Black },
                Piece::ALL[usize::from((code - 1) % 6)],
            ),
            13 | 14 if CORNERS.contains(&square) => {
                return Err(invalid(format!(
                    "castling rook code {code} on corner {}, whose right the flags byte carries",
                    square_name(square)
                )));
            }
            13 | 14 => {
                pos.castling_rooks |= bit(square);
                (
                    if code == CASTLING_ROOK {
                        Colour::White
                    } else {
                        Colour::Black
                    },
                    Piece::Rook,
                )
            }
            _ => {
                return Err(invalid(format!(
                    "piece code {code} on {}, expected 1 to 14",
                    square_name(square)
                )));
            }
        };
        pos.colours[colour.index()] |= bit(square);
        pos.pieces[piece.index()] |= bit(square);
    }
    if let Some(i) = (count..32).find(|&i| nibble(i) != 0) {
        return Err(invalid(format!("nibble {i} is past the last piece but not zero")));
    }
    let flags = bytes[FLAGS];
    if flags >> 6 != 0 {
        return Err(invalid(format!("flags byte {flags:#04x} has bits above 5 set")));
    }
    pos.side = if flags & 1 == 0 {
        Colour::White
    } else {
        Colour::Black
    };
    for (i, &square) in CORNERS.iter().enumerate() {
        if flags & 2 << i != 0 {
            pos.castling_rooks |= bit(square);
        }
    }
    let off_back_ranks = pos.castling_rooks & !(RANK_1 | RANK_8);
    if let Some(square) = Squares(off_back_ranks).next() {
        return Err(invalid(format!(
            "castling rook on {}, off the back ranks",
            square_name(square)
        )));
    }
    fen::validate(&pos).map_err(|e| invalid(e.to_string()))?;
    pos.chess960 = flags & CHESS960 != 0;
    if !pos.chess960 && !castling::standard_placement(&pos) {
        return Err(invalid(
            "a Chess960 castling placement without the Chess960 notation bit".to_owned(),
        ));
    }
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
