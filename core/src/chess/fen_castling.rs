//! FEN's castling field in both Chess960 dialects: X-FEN (`KQkq` for the
//! outermost rook on each side of the king, a file letter for an inner
//! one; standard FEN is X-FEN) and Shredder-FEN (the rook's file, `HAha`).
//! Both are read, mixed too (`Hk`); X-FEN is written by `Display`,
//! Shredder-FEN by [`Chess::shredder_fen`].

use std::fmt;

use super::bitboard::{RANK_1, Square, Squares, bit, square_name};
use super::fen_error::FenError;
use super::position::{Chess, Colour, Piece};
use crate::echoed as echo;

/// The back rank of `colour` (rank 1 or 8) as a board.
const fn back_rank(colour: Colour) -> u64 {
    RANK_1 << (56 * colour as u32)
}

/// Rank 1 or 8, for messages.
const fn rank_number(colour: Colour) -> u8 {
    match colour {
        Colour::White => 1,
        Colour::Black => 8,
    }
}

/// The squares above `square` (higher index).
const fn above(square: Square) -> u64 {
    (u64::MAX << square) ^ bit(square)
}

/// The squares below `square`.
const fn below(square: Square) -> u64 {
    bit(square) - 1
}

/// The side of the king a rook on `rook` castles to, named by the file it
/// points at, for messages.
const fn side_name(king: Square, rook: Square) -> char {
    if rook > king { 'h' } else { 'a' }
}

/// The castling rooks of a field, for a position whose board is set.
pub(super) fn parse(field: &str, pos: &Chess) -> Result<u64, FenError> {
    if field == "-" {
        return Ok(0);
    }
    let bad = || FenError::BadCastling { found: echo(field) };
    if field.is_empty() {
        return Err(bad());
    }
    let mut castling_rooks = 0u64;
    for right in field.chars() {
        let letter = right.to_ascii_lowercase();
        if !matches!(letter, 'k' | 'q' | 'a'..='h') || !right.is_ascii() {
            return Err(bad());
        }
        let colour = if right.is_ascii_uppercase() {
            Colour::White
        } else {
            Colour::Black
        };
        let rank = back_rank(colour);
        let mine = pos.colours[colour.index()];
        let Some(king) = Squares(pos.pieces[Piece::King.index()] & mine & rank).next() else {
            return Err(FenError::CastlingWithoutKing {
                right,
                colour: colour.name(),
                rank: rank_number(colour),
            });
        };
        let rooks = pos.pieces[Piece::Rook.index()] & mine & rank;
        let rook = match letter {
            // The outermost rook on the side: the highest or lowest file.
            'k' => Some(rooks & above(king))
                .filter(|&r| r != 0)
                .map(|r| 63 - r.leading_zeros() as Square),
            'q' => Some(rooks & below(king))
                .filter(|&r| r != 0)
                .map(|r| r.trailing_zeros() as Square),
            file => {
                let square = (rank.trailing_zeros() as u8) + (file as u8 - b'a');
                Some(square).filter(|&s| rooks & bit(s) != 0)
            }
        };
        let Some(rook) = rook else {
            let wanted = match letter {
                'k' => format!("on rank {} on the h-side of its king", rank_number(colour)),
                'q' => format!("on rank {} on the a-side of its king", rank_number(colour)),
                file => format!("on {file}{}", rank_number(colour)),
            };
            return Err(FenError::CastlingWithoutRook {
                right,
                colour: colour.name(),
                rook: wanted,
            });
        };
        let same_side = Squares(castling_rooks & rank).any(|other| (other > king) == (rook > king));
        if same_side {
            return Err(FenError::CastlingSideTwice {
                found: echo(field),
                colour: colour.name(),
                side: side_name(king, rook),
            });
        }
        castling_rooks |= bit(rook);
    }
    Ok(castling_rooks)
}

/// The checks on a position's castling rooks, wherever they came from:
/// each is a rook of its side on its back rank with its king, one at most
/// on each side of the king.
pub(super) fn validate(pos: &Chess) -> Result<(), FenError> {
    for colour in [Colour::White, Colour::Black] {
        let rank = back_rank(colour);
        let castling = pos.castling_rooks & rank;
        if castling == 0 {
            continue;
        }
        let mine = pos.colours[colour.index()];
        let rooks = pos.pieces[Piece::Rook.index()] & mine;
        if let Some(square) = Squares(castling & !rooks).next() {
            return Err(FenError::CastlingWithoutRook {
                right: file_letter(colour, square),
                colour: colour.name(),
                rook: format!("on {}", square_name(square)),
            });
        }
        let king = pos.king(colour);
        if bit(king) & rank == 0 {
            return Err(FenError::CastlingWithoutKing {
                right: file_letter(colour, castling.trailing_zeros() as Square),
                colour: colour.name(),
                rank: rank_number(colour),
            });
        }
        let king_side = (castling & above(king)).count_ones();
        let queen_side = (castling & below(king)).count_ones();
        if king_side > 1 || queen_side > 1 {
            let mut field = String::new();
            write(pos, true, &mut field).unwrap_or_else(|_| unreachable!("a String takes any text"));
            return Err(FenError::CastlingSideTwice {
                found: field,
                colour: colour.name(),
                side: if king_side > 1 { 'h' } else { 'a' },
            });
        }
    }
    Ok(())
}

/// Shredder-FEN's letter for a castling rook of `colour` on `square`.
fn file_letter(colour: Colour, square: Square) -> char {
    let letter = char::from(b'a' + (square & 7));
    match colour {
        Colour::White => letter.to_ascii_uppercase(),
        Colour::Black => letter,
    }
}

/// Writes the castling field: white's rights, then black's, each side's
/// king side first; as file letters when `shredder`, else in X-FEN
/// (`K`/`Q` for an outermost rook, the file letter for an inner one).
pub(super) fn write(pos: &Chess, shredder: bool, out: &mut impl fmt::Write) -> fmt::Result {
    if pos.castling_rooks == 0 {
        return out.write_char('-');
    }
    for colour in [Colour::White, Colour::Black] {
        let rank = back_rank(colour);
        let castling = pos.castling_rooks & rank;
        let rooks = pos.pieces[Piece::Rook.index()] & pos.colours[colour.index()] & rank;
        let king = pos.king(colour);
        let mut squares: Vec<Square> = Squares(castling).collect();
        squares.reverse();
        for rook in squares {
            let beyond = if rook > king {
                rooks & above(rook)
            } else {
                rooks & below(rook)
            };
            let letter = if shredder || beyond != 0 {
                file_letter(colour, rook)
            } else {
                let letter = if rook > king { 'k' } else { 'q' };
                match colour {
                    Colour::White => letter.to_ascii_uppercase(),
                    Colour::Black => letter,
                }
            };
            out.write_char(letter)?;
        }
    }
    Ok(())
}
