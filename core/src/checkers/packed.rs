//! The packed checkers position, 13 bytes: dark pieces, light pieces and
//! kings (each a `u32` little-endian, bit `n - 1` = square `n`), then the
//! side to move (0 dark `B`, 1 light `W`). Used where positions travel or
//! are stored in bulk, so no FEN is parsed on the way.

use super::position::{Checkers, Side};
use crate::game::{UnpackError, packed_array};

/// Bytes of a packed checkers position.
pub(super) const BYTES: usize = 13;

/// Appends the 13 bytes of `pos`.
pub(super) fn pack(pos: &Checkers, out: &mut Vec<u8>) {
    for board in [pos.dark, pos.light, pos.kings] {
        out.extend_from_slice(&board.to_le_bytes());
    }
    out.push(match pos.to_move {
        Side::Dark => 0,
        Side::Light => 1,
    });
}

/// The position of 13 packed bytes, refused unless it keeps every invariant
/// the FEN parser enforces (the same check) and its kings stand on pieces.
pub(super) fn unpack(bytes: &[u8]) -> Result<Checkers, UnpackError> {
    let bytes: [u8; BYTES] = packed_array("checkers", bytes)?;
    let invalid = |reason: String| UnpackError::Invalid {
        game: "checkers",
        reason,
    };
    let board = |at: usize| u32::from_le_bytes([bytes[at], bytes[at + 1], bytes[at + 2], bytes[at + 3]]);
    let (dark, light, kings) = (board(0), board(4), board(8));
    let to_move = match bytes[12] {
        0 => Side::Dark,
        1 => Side::Light,
        found => {
            return Err(invalid(format!(
                "side to move byte {found}, expected 0 (B) or 1 (W)"
            )));
        }
    };
    super::fen::validate(dark, light, kings).map_err(|e| invalid(e.to_string()))?;
    let stray = kings & !(dark | light);
    if stray != 0 {
        let square = stray.trailing_zeros() + 1;
        return Err(invalid(format!(
            "a king on square {square}, which holds no piece"
        )));
    }
    Ok(Checkers {
        dark,
        light,
        kings,
        to_move,
    })
}
