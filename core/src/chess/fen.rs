//! FEN: `board side castling en-passant halfmove fullmove`. EPD's first
//! four fields alone are accepted too (the clocks then read 0 and 1).
//! Parsing validates the position; [`Display`](std::fmt::Display) writes
//! all six fields.

use crate::kernel::Portable;
use std::fmt;
use std::str::FromStr;

use super::bitboard::{RANK_1, RANK_8, Squares, bit, parse_square, square_name};
use super::castling;
use super::fen_castling;
use super::fen_error::FenError;
use super::position::{Chess, Colour, NO_SQUARE, Piece};
use crate::echoed as echo;

/// The piece and colour of a FEN letter.
fn piece_of(letter: char) -> Option<(Colour, Piece)> {
    let colour = if letter.is_ascii_uppercase() {
        Colour::White
    } else {
        Colour::Black
    };
    let piece = Piece::ALL
        .into_iter()
        .find(|p| p.letter() == letter.to_ascii_lowercase())?;
    Some((colour, piece))
}

fn parse_board(field: &str, pos: &mut Chess) -> Result<(), FenError> {
    let ranks: Vec<&str> = field.split('/').collect();
    if ranks.len() != 8 {
        return Err(FenError::RankCount { found: ranks.len() });
    }
    for (i, text) in ranks.iter().enumerate() {
        let rank = 7 - i as u8;
        let mut file = 0u8;
        for c in text.chars() {
            if let Some(empty) = c.to_digit(10).filter(|d| (1..=8).contains(d)) {
                file += empty as u8;
            } else {
                let (colour, piece) = piece_of(c).ok_or_else(|| FenError::BadPiece {
                    rank: rank + 1,
                    found: echo(&c.to_string()),
                })?;
                if file < 8 {
                    let b = bit(rank * 8 + file);
                    pos.colours[colour.index()] |= b;
                    pos.pieces[piece.index()] |= b;
                }
                file += 1;
            }
            if file > 8 {
                break;
            }
        }
        if file != 8 {
            return Err(FenError::RankLength {
                rank: rank + 1,
                found: echo(text),
            });
        }
    }
    Ok(())
}

fn parse_clock(field: Option<&str>, clock: &'static str, min: u16, default: u16) -> Result<u16, FenError> {
    let Some(text) = field else { return Ok(default) };
    match text.parse::<u16>() {
        Ok(n) if n >= min => Ok(n),
        _ => Err(FenError::BadClock {
            clock,
            min,
            found: echo(text),
        }),
    }
}

/// The checks that make a set of pieces a position that can exist.
pub(super) fn validate(pos: &Chess) -> Result<(), FenError> {
    for colour in [Colour::White, Colour::Black] {
        let mine = pos.colours[colour.index()];
        let kings = (pos.pieces[Piece::King.index()] & mine).count_ones();
        if kings != 1 {
            return Err(FenError::KingCount {
                colour: colour.name(),
                count: kings,
            });
        }
        if mine.count_ones() > 16 {
            return Err(FenError::TooManyPieces {
                colour: colour.name(),
                count: mine.count_ones(),
            });
        }
        let count = |piece: Piece| (pos.pieces[piece.index()] & mine).count_ones();
        let missing = 8u32.saturating_sub(count(Piece::Pawn));
        let extra = count(Piece::Queen).saturating_sub(1)
            + count(Piece::Rook).saturating_sub(2)
            + count(Piece::Bishop).saturating_sub(2)
            + count(Piece::Knight).saturating_sub(2);
        if extra > missing {
            return Err(FenError::TooManyPromoted {
                colour: colour.name(),
                extra,
                missing,
            });
        }
    }
    if let Some(square) = Squares(pos.pieces[Piece::Pawn.index()] & (RANK_1 | RANK_8)).next() {
        return Err(FenError::PawnOnBackRank {
            square: square_name(square),
        });
    }
    let waiting = pos.side.other();
    if pos.is_attacked(Portable, pos.king(waiting), pos.side, pos.occupied()) {
        return Err(FenError::OpponentInCheck {
            colour: waiting.name(),
            to_move: pos.side.name(),
        });
    }
    fen_castling::validate(pos)?;
    Ok(())
}

/// The en passant field, checked against the board by [`en_passant`].
fn parse_en_passant(field: &str, pos: &Chess) -> Result<u8, FenError> {
    if field == "-" {
        return Ok(NO_SQUARE);
    }
    let rank = if pos.side == Colour::White { 6 } else { 3 };
    let square = parse_square(field).ok_or_else(|| FenError::BadEnPassant {
        rank,
        found: echo(field),
    })?;
    en_passant(square, pos)
}

/// The en passant square to store for `square` (0..64) in `pos`, whose
/// board and side are set: the square must lie just behind a pawn that has
/// just pushed two squares; it is kept only when a legal en passant capture
/// exists ([`NO_SQUARE`] otherwise), so equal positions store equal squares.
pub(super) fn en_passant(square: u8, pos: &Chess) -> Result<u8, FenError> {
    let rank = if pos.side == Colour::White { 6 } else { 3 };
    if square >= 64 || square / 8 + 1 != rank {
        return Err(FenError::BadEnPassant {
            rank,
            found: if square < 64 {
                square_name(square)
            } else {
                square.to_string()
            },
        });
    }
    let pusher = pos.side.other();
    // The pawn stands one square further from its home than `square`; the
    // squares it crossed (the en passant square and its start) are empty.
    let (pawn, start) = if pusher == Colour::Black {
        (square - 8, square + 8)
    } else {
        (square + 8, square - 8)
    };
    let pushed = pos.pieces[Piece::Pawn.index()] & pos.colours[pusher.index()] & bit(pawn) != 0
        && pos.occupied() & (bit(square) | bit(start)) == 0;
    if !pushed {
        return Err(FenError::EnPassantWithoutPush {
            square: square_name(square),
            colour: pusher.name(),
        });
    }
    Ok(pos.legal_en_passant(Portable, square))
}

impl FromStr for Chess {
    type Err = FenError;

    fn from_str(text: &str) -> Result<Chess, FenError> {
        let fields: Vec<&str> = text.split_whitespace().collect();
        if !(4..=6).contains(&fields.len()) {
            return Err(FenError::FieldCount { found: fields.len() });
        }
        let mut pos = Chess::EMPTY;
        parse_board(fields[0], &mut pos)?;
        pos.side = match fields[1] {
            "w" => Colour::White,
            "b" => Colour::Black,
            found => return Err(FenError::BadSide { found: echo(found) }),
        };
        pos.castling_rooks = fen_castling::parse(fields[2], &pos)?;
        validate(&pos)?;
        // Shredder-FEN's file letters are Chess960 notation's; X-FEN asks
        // for it only where the placement needs it.
        let shredder = fields[2]
            .chars()
            .any(|c| !matches!(c, 'K' | 'Q' | 'k' | 'q' | '-'));
        pos.chess960 = shredder || !castling::standard_placement(&pos);
        pos.en_passant = parse_en_passant(fields[3], &pos)?;
        pos.halfmove = parse_clock(fields.get(4).copied(), "halfmove", 0, 0)?;
        pos.fullmove = parse_clock(fields.get(5).copied(), "fullmove", 1, 1)?;
        Ok(pos)
    }
}

impl Chess {
    /// The position in Shredder-FEN: as `Display`'s FEN, with every
    /// castling right written as its rook's file (`HAha`).
    pub fn shredder_fen(&self) -> String {
        let mut text = String::new();
        self.write_fen(&mut text, true)
            .unwrap_or_else(|_| unreachable!("a String takes any text"));
        text
    }

    /// Whether moves are written as UCI_Chess960 engines write them
    /// (castling as the king taking its rook, `e1h1`).
    pub const fn chess960_notation(&self) -> bool {
        self.chess960
    }

    /// The same position, its moves written (and read) as UCI_Chess960
    /// engines write them when `on`, as `UCI_Chess960` off otherwise. A
    /// Chess960 placement needs the king-takes-rook form and keeps it.
    pub fn with_chess960_notation(mut self, on: bool) -> Chess {
        self.chess960 = on || !castling::standard_placement(&self);
        self
    }

    /// The six FEN fields, the castling field in Shredder-FEN when
    /// `shredder`, else in X-FEN (which standard FEN is).
    fn write_fen(&self, f: &mut impl fmt::Write, shredder: bool) -> fmt::Result {
        for rank in (0..8u8).rev() {
            let mut empty = 0;
            for file in 0..8u8 {
                match self.piece_on(rank * 8 + file) {
                    None => empty += 1,
                    Some((colour, piece)) => {
                        if empty > 0 {
                            write!(f, "{empty}")?;
                            empty = 0;
                        }
                        let letter = piece.letter();
                        let letter = if colour == Colour::White {
                            letter.to_ascii_uppercase()
                        } else {
                            letter
                        };
                        write!(f, "{letter}")?;
                    }
                }
            }
            if empty > 0 {
                write!(f, "{empty}")?;
            }
            if rank > 0 {
                f.write_str("/")?;
            }
        }
        let side = if self.side == Colour::White { "w" } else { "b" };
        write!(f, " {side} ")?;
        fen_castling::write(self, shredder, f)?;
        match self.en_passant() {
            None => f.write_str(" -")?,
            Some(square) => write!(f, " {}", square_name(square))?,
        }
        write!(f, " {} {}", self.halfmove, self.fullmove)
    }
}

impl fmt::Display for Chess {
    /// FEN, the castling field in X-FEN.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_fen(f, false)
    }
}
