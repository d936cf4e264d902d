//! Reversi position text: 64 characters a1..h8 row-major (`X` dark, `O`
//! light, `-` or `.` empty), a space, and `X` or `O` for the side to move.
//! Any such text is a position: set-up boards, empty centres and the empty
//! board of the original game (where nobody can move) are all counted.

use std::fmt;
use std::str::FromStr;

use super::position::{Disc, Reversi};

/// Why a Reversi position text was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PositionError {
    /// Not 64 board characters.
    #[error("a Reversi board has 64 squares a1..h8, found {found} characters before the side to move")]
    BoardLength {
        /// Characters found.
        found: usize,
    },
    /// A board character that is not `X`, `O`, `-` or `.`.
    #[error("invalid character '{}' at square {square}: expected X, O, - or .", found.escape_default())]
    BadSquare {
        /// The character.
        found: char,
        /// The square's name, e.g. `c3`.
        square: String,
    },
    /// The side to move is missing or not `X`/`O`.
    #[error("the side to move must be X or O after a space, found '{found}'")]
    BadSide {
        /// What stood there.
        found: String,
    },
}

/// `a1` for 0 ... `h8` for 63.
pub(super) fn square_name(square: u8) -> String {
    let file = char::from(b'a' + square % 8);
    let rank = char::from(b'1' + square / 8);
    format!("{file}{rank}")
}

impl FromStr for Reversi {
    type Err = PositionError;

    fn from_str(text: &str) -> Result<Reversi, PositionError> {
        let text = text.trim();
        let (board, side) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
        if board.chars().count() != 64 {
            return Err(PositionError::BoardLength {
                found: board.chars().count(),
            });
        }
        let (mut dark, mut light) = (0u64, 0u64);
        for (square, ch) in (0u8..).zip(board.chars()) {
            match ch {
                'X' | 'x' => dark |= 1 << square,
                'O' | 'o' => light |= 1 << square,
                '-' | '.' => {}
                found => {
                    return Err(PositionError::BadSquare {
                        found,
                        square: square_name(square),
                    });
                }
            }
        }
        let to_move = match side.trim() {
            "X" | "x" => Disc::Dark,
            "O" | "o" => Disc::Light,
            found => {
                return Err(PositionError::BadSide {
                    found: crate::echoed(found),
                });
            }
        };
        let (player, opponent) = match to_move {
            Disc::Dark => (dark, light),
            Disc::Light => (light, dark),
        };
        Ok(Reversi {
            player,
            opponent,
            to_move,
        })
    }
}

impl fmt::Display for Reversi {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (dark, light) = (self.discs(Disc::Dark), self.discs(Disc::Light));
        let board: String = (0..64)
            .map(|sq| {
                let bit = 1u64 << sq;
                if dark & bit != 0 {
                    'X'
                } else if light & bit != 0 {
                    'O'
                } else {
                    '-'
                }
            })
            .collect();
        let side = match self.to_move {
            Disc::Dark => 'X',
            Disc::Light => 'O',
        };
        write!(f, "{board} {side}")
    }
}
