//! PDN FEN for checkers: `B:W21,22,...,32:B1,2,...,12`. The first letter is
//! the side to move; each colour lists its squares, kings prefixed `K`,
//! ranges such as `1-12` accepted, an optional final `.` ignored.

use std::fmt;
use std::str::FromStr;

use super::position::{Checkers, Side};

/// Why a FEN text was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FenError {
    /// The side to move is not `B` or `W`.
    #[error("the FEN must start with the side to move, B or W, found '{found}'")]
    BadSide {
        /// What stood there.
        found: String,
    },
    /// A piece list does not start with `B` or `W`, or a colour comes twice.
    #[error("expected a piece list starting with W or B (each once), found '{found}'")]
    BadColour {
        /// The field as given.
        found: String,
    },
    /// Too many `:`-separated fields.
    #[error("a FEN has at most three fields (side:W...:B...), found {found}")]
    TooManyFields {
        /// Fields found.
        found: usize,
    },
    /// A square that is not a number from 1 to 32, or a bad range.
    #[error("'{found}' is not a square or range of squares: squares are numbered 1 to 32")]
    BadSquare {
        /// The item as given.
        found: String,
    },
    /// The same square given twice.
    #[error("square {square} is given more than once")]
    Overlap {
        /// The square, 1-32.
        square: u8,
    },
    /// A man on the row where it would already have been crowned.
    #[error("a {colour} man on square {square} cannot exist: men are crowned on reaching that row")]
    ManOnCrowningRow {
        /// `dark (B)` or `light (W)`.
        colour: &'static str,
        /// The square, 1-32.
        square: u8,
    },
    /// More than twelve pieces of one colour.
    #[error("{colour} has {count} pieces, but a side has at most 12")]
    TooManyPieces {
        /// `dark (B)` or `light (W)`.
        colour: &'static str,
        /// Pieces given.
        count: u32,
    },
}

const fn colour_name(side: Side) -> &'static str {
    match side {
        Side::Dark => "dark (B)",
        Side::Light => "light (W)",
    }
}

fn parse_square(text: &str) -> Result<u8, FenError> {
    match text.trim().parse::<u8>() {
        Ok(n @ 1..=32) => Ok(n),
        _ => Err(FenError::BadSquare {
            found: crate::echoed(text.trim()),
        }),
    }
}

/// Men and kings (as bit boards) of one piece list such as `WK1,5-8`.
fn parse_pieces(list: &str) -> Result<(u32, u32), FenError> {
    let (mut men, mut kings) = (0u32, 0u32);
    for item in list.split(',').map(str::trim).filter(|item| !item.is_empty()) {
        let (is_king, squares) = match item.strip_prefix(['K', 'k']) {
            Some(rest) => (true, rest),
            None => (false, item),
        };
        let (first, last) = match squares.split_once('-') {
            Some((a, b)) => (parse_square(a)?, parse_square(b)?),
            None => {
                let n = parse_square(squares)?;
                (n, n)
            }
        };
        if first > last {
            return Err(FenError::BadSquare {
                found: crate::echoed(item),
            });
        }
        for square in first..=last {
            let bit = 1u32 << (square - 1);
            if (men | kings) & bit != 0 {
                return Err(FenError::Overlap { square });
            }
            if is_king {
                kings |= bit;
            } else {
                men |= bit;
            }
        }
    }
    Ok((men, kings))
}

/// The invariants of [`Checkers`] that a text or a packed position can
/// break, checked alike for both: the colours are disjoint, at most 12 pieces
/// a side, no man on its crowning row. (FEN cannot put a king on an empty
/// square; the packed form checks that itself.)
pub(super) fn validate(dark: u32, light: u32, kings: u32) -> Result<(), FenError> {
    if let Some(square) = (1..=32u8).find(|&sq| dark & light & (1 << (sq - 1)) != 0) {
        return Err(FenError::Overlap { square });
    }
    for (side, pieces) in [(Side::Dark, dark), (Side::Light, light)] {
        if pieces.count_ones() > 12 {
            return Err(FenError::TooManyPieces {
                colour: colour_name(side),
                count: pieces.count_ones(),
            });
        }
        let crowned = pieces & !kings & side.crown_row();
        if crowned != 0 {
            return Err(FenError::ManOnCrowningRow {
                colour: colour_name(side),
                square: crowned.trailing_zeros() as u8 + 1,
            });
        }
    }
    Ok(())
}

impl FromStr for Checkers {
    type Err = FenError;

    fn from_str(text: &str) -> Result<Checkers, FenError> {
        let text = text.trim();
        let text = text.strip_suffix('.').unwrap_or(text);
        let fields: Vec<&str> = text.split(':').map(str::trim).collect();
        if fields.len() > 3 {
            return Err(FenError::TooManyFields { found: fields.len() });
        }
        let to_move = match fields[0] {
            "B" | "b" => Side::Dark,
            "W" | "w" => Side::Light,
            found => {
                return Err(FenError::BadSide {
                    found: crate::echoed(found),
                });
            }
        };
        let mut boards: [Option<(u32, u32)>; 2] = [None, None];
        for field in &fields[1..] {
            let slot = match field.chars().next() {
                Some('B' | 'b') => 0,
                Some('W' | 'w') => 1,
                _ => {
                    return Err(FenError::BadColour {
                        found: crate::echoed(field),
                    });
                }
            };
            if boards[slot].is_some() {
                return Err(FenError::BadColour {
                    found: crate::echoed(field),
                });
            }
            boards[slot] = Some(parse_pieces(&field[1..])?);
        }
        let (dark_men, dark_kings) = boards[0].unwrap_or_default();
        let (light_men, light_kings) = boards[1].unwrap_or_default();
        let (dark, light) = (dark_men | dark_kings, light_men | light_kings);
        let kings = dark_kings | light_kings;
        validate(dark, light, kings)?;
        Ok(Checkers {
            dark,
            light,
            kings,
            to_move,
        })
    }
}

fn write_pieces(f: &mut fmt::Formatter<'_>, colour: char, pieces: u32, kings: u32) -> fmt::Result {
    write!(f, "{colour}")?;
    let mut first = true;
    for square in (0..32).filter(|sq| pieces & (1 << sq) != 0) {
        let separator = if first { "" } else { "," };
        let king = if kings & (1 << square) != 0 { "K" } else { "" };
        write!(f, "{separator}{king}{}", square + 1)?;
        first = false;
    }
    Ok(())
}

impl fmt::Display for Checkers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let side = match self.to_move {
            Side::Dark => 'B',
            Side::Light => 'W',
        };
        write!(f, "{side}:")?;
        write_pieces(f, 'W', self.light, self.kings)?;
        write!(f, ":")?;
        write_pieces(f, 'B', self.dark, self.kings)
    }
}
