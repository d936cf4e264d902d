//! The packed Reversi position, 17 bytes: the side to move's discs (`u64`
//! little-endian, bit = square a1 = 0 ... h8 = 63), the opponent's discs,
//! and the colour to move (0 dark `X`, 1 light `O`). Used where positions
//! travel or are stored in bulk, so no text is parsed on the way.

use super::position::{Disc, Reversi};
use crate::game::{UnpackError, packed_array};

/// Bytes of a packed Reversi position.
pub(super) const BYTES: usize = 17;

/// Appends the 17 bytes of `pos`.
pub(super) fn pack(pos: &Reversi, out: &mut Vec<u8>) {
    out.extend_from_slice(&pos.player.to_le_bytes());
    out.extend_from_slice(&pos.opponent.to_le_bytes());
    out.push(match pos.to_move {
        Disc::Dark => 0,
        Disc::Light => 1,
    });
}

/// The position of 17 packed bytes: refused unless the boards are disjoint
/// and the side byte is 0 or 1.
pub(super) fn unpack(bytes: &[u8]) -> Result<Reversi, UnpackError> {
    let bytes: [u8; BYTES] = packed_array("reversi", bytes)?;
    let invalid = |reason: String| UnpackError::Invalid {
        game: "reversi",
        reason,
    };
    let board = |at: usize| {
        let mut word = [0u8; 8];
        word.copy_from_slice(&bytes[at..at + 8]);
        u64::from_le_bytes(word)
    };
    let (player, opponent) = (board(0), board(8));
    let to_move = match bytes[16] {
        0 => Disc::Dark,
        1 => Disc::Light,
        found => {
            return Err(invalid(format!(
                "side to move byte {found}, expected 0 (X) or 1 (O)"
            )));
        }
    };
    let both = player & opponent;
    if both != 0 {
        let square = super::text::square_name(both.trailing_zeros() as u8);
        return Err(invalid(format!("square {square} holds discs of both colours")));
    }
    Ok(Reversi {
        player,
        opponent,
        to_move,
    })
}
