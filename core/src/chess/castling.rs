//! Castling for any king and rook placement (standard chess and Chess960):
//! where king and rook land, which squares must be empty and unattacked,
//! generation, and how a move updates the rights.
//!
//! A right is a rook that may still castle ([`Chess::castling_rooks`]); it
//! stands on its side's back rank with the king, and its side of the king
//! (towards file h or file a) says which castling it is. A castling move
//! is stored as the king taking its own rook (`from` the king, `to` the
//! rook), the one form that names every Chess960 castling unambiguously.

use super::bitboard::{KING, RANK_1, Square, Squares, bit};
use super::position::{Chess, ChessMove, Colour, MoveKind, Piece};
use super::sink::Sink;
use crate::kernel::Isa;

/// Where king and rook stand after castling with the rook on `rook`, the
/// king on `king` (the same rank): towards file h the king lands on g and
/// the rook on f; towards file a, on c and d.
#[inline(always)]
pub(super) const fn destinations(king: Square, rook: Square) -> (Square, Square) {
    let rank = king & 56;
    if rook > king {
        (rank + 6, rank + 5)
    } else {
        (rank + 2, rank + 3)
    }
}

/// The squares of rank 1 from file `a` to file `b`, both included, in
/// either order.
const fn span(a: u8, b: u8) -> u64 {
    let (low, high) = if a < b { (a, b) } else { (b, a) };
    (RANK_1 >> (7 - high)) & !((1u64 << low) - 1)
}

/// What castling needs on rank 1, for a king and rook on given files.
#[derive(Clone, Copy)]
struct Path {
    /// Squares that must be empty: everything king and rook cross or land
    /// on, except the two of them.
    empty: u64,
    /// Squares that must not be attacked: the king's way, its destination
    /// included (its start is not in check, which the caller knows).
    unattacked: u64,
}

/// [`Path`] for every king file (first index) and rook file (second) on
/// rank 1; black's are these moved to rank 8.
static PATHS: [[Path; 8]; 8] = {
    let mut paths = [[Path {
        empty: 0,
        unattacked: 0,
    }; 8]; 8];
    let mut king = 0u8;
    while king < 8 {
        let mut rook = 0u8;
        while rook < 8 {
            let (king_to, rook_to) = destinations(king, rook);
            let pieces = bit(king) | bit(rook);
            // The king's way without its start; when it stays put, its
            // square, which the rook may have shielded along the rank.
            let way = if king_to == king {
                bit(king)
            } else {
                span(king, king_to) & !bit(king)
            };
            paths[king as usize][rook as usize] = Path {
                empty: (span(king, king_to) | span(rook, rook_to)) & !pieces,
                unattacked: way,
            };
            rook += 1;
        }
        king += 1;
    }
    paths
};

/// For the castling of the king on `king` with the rook on `rook` (same
/// rank): the squares that must be empty and the squares that must not be
/// attacked, on that rank.
#[inline(always)]
pub(super) fn needed_squares(king: Square, rook: Square) -> (u64, u64) {
    let shift = king & 56;
    let path = &PATHS[usize::from(king & 7)][usize::from(rook & 7)];
    (path.empty << shift, path.unattacked << shift)
}

/// The castling moves of the side to move (`WHITE` must match it), which
/// is not in check. `king_targets` are the squares the king may step to: a
/// square next to the king outside them is attacked (with the rook in
/// place, so also without it) and ends the test early. `attacked`, when
/// known, holds every square they attack with the king off the board. A
/// rook standing between an enemy slider and the king's way shields it
/// only until it moves, and only along the back rank: with no enemy rook
/// or queen there, `attacked` decides and a king target is safe; else the
/// squares not known attacked are tested one by one with king and rook off
/// the board.
#[inline(always)]
pub(super) fn generate<const WHITE: bool, S: Sink, I: Isa>(
    pos: &Chess,
    sink: &mut S,
    king: Square,
    occupied: u64,
    king_targets: u64,
    attacked: Option<u64>,
    isa: I,
) {
    let (them, shift) = if WHITE {
        (Colour::Black, 0)
    } else {
        (Colour::White, 56)
    };
    let rooks = pos.castling_rooks & (RANK_1 << shift);
    let their_rank_sliders = (pos.pieces[Piece::Rook.index()] | pos.pieces[Piece::Queen.index()])
        & pos.colours[them.index()]
        & (RANK_1 << shift);
    // What is known before any test: squares attacked with the rook in
    // place stay attacked without it; safe ones stay safe unless an enemy
    // rook or queen stands on the rank.
    let (attacked, known_safe) = match attacked {
        Some(attacked) => (attacked, if their_rank_sliders == 0 { !attacked } else { 0 }),
        None => (0, if their_rank_sliders == 0 { king_targets } else { 0 }),
    };
    let unsafe_steps = KING[usize::from(king)] & !king_targets & !occupied;
    for rook in Squares(rooks) {
        let path = &PATHS[usize::from(king & 7)][usize::from(rook & 7)];
        // Most often something stands in the way: one test and done.
        if occupied & (path.empty << shift) != 0 {
            continue;
        }
        let unattacked = path.unattacked << shift;
        if unattacked & (unsafe_steps | attacked) != 0 {
            continue;
        }
        let safe = if unattacked & !known_safe == 0 {
            true
        } else {
            // A loop, not a closure: a closure would miss the target
            // features of the kernel this is inlined into.
            let without = occupied ^ bit(king) ^ bit(rook);
            let mut safe = true;
            for square in Squares(unattacked & !known_safe) {
                if pos.is_attacked(isa, square, them, without) {
                    safe = false;
                    break;
                }
            }
            safe
        };
        if safe {
            sink.one(ChessMove {
                from: king,
                to: rook,
                piece: Piece::King,
                kind: MoveKind::Castle,
            });
        }
    }
}

/// The rights left after a move of `piece` from `from` to `to` by `us`:
/// a rook that moves or is taken loses its right, a king that moves (or
/// castles) loses both of its side's.
#[inline(always)]
pub(super) fn rights_after(castling_rooks: u64, us: Colour, piece: Piece, from: Square, to: Square) -> u64 {
    let mut kept = castling_rooks & !(bit(from) | bit(to));
    if matches!(piece, Piece::King) {
        kept &= !(RANK_1 << (56 * us.index()));
    }
    kept
}

/// Whether a castling with these rights could be written in standard UCI
/// and FEN without ambiguity: every castling rook in a corner and its king
/// on file e. Otherwise the position is Chess960's.
pub(super) fn standard_placement(pos: &Chess) -> bool {
    const CORNERS: u64 = bit(0) | bit(7) | bit(56) | bit(63);
    let kings_on_e =
        |colour: Colour, rank_bits: u64| pos.castling_rooks & rank_bits == 0 || pos.king(colour) & 7 == 4;
    pos.castling_rooks & !CORNERS == 0
        && kings_on_e(Colour::White, RANK_1)
        && kings_on_e(Colour::Black, RANK_1 << 56)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_of_standard_and_chess960_castlings() {
        // e1 with h1: f1 and g1 empty and safe.
        let path = PATHS[4][7];
        assert_eq!(path.empty, bit(5) | bit(6));
        assert_eq!(path.unattacked, bit(5) | bit(6));
        // e1 with a1: b1, c1, d1 empty; only d1 and c1 must be safe.
        let path = PATHS[4][0];
        assert_eq!(path.empty, bit(1) | bit(2) | bit(3));
        assert_eq!(path.unattacked, bit(2) | bit(3));
        // b1 with a1 (Chess960): king to c1, rook to d1, over nothing.
        let path = PATHS[1][0];
        assert_eq!(path.empty, bit(2) | bit(3));
        assert_eq!(path.unattacked, bit(2));
        // g1 with h1: the king stays, the rook goes to f1.
        let path = PATHS[6][7];
        assert_eq!(path.empty, bit(5));
        assert_eq!(path.unattacked, bit(6));
        // f1 with g1: king to g1 (where the rook was), rook to f1.
        let path = PATHS[5][6];
        assert_eq!(path.empty, 0);
        assert_eq!(path.unattacked, bit(6));
    }

    /// Castles of the side to move in `fen`.
    fn castles(fen: &str) -> usize {
        let pos: Chess = fen.parse().expect("a valid FEN");
        crate::game::Game::legal_moves(&pos)
            .iter()
            .filter(|mv| matches!(mv.kind(), MoveKind::Castle))
            .count()
    }

    /// c1 is a king target of the king on d1 while the rook on b1 shields
    /// it, but the rook leaves as the king arrives: an enemy rook or queen
    /// on a1 forbids the castling; a bishop there, or nothing, does not.
    #[test]
    fn a_target_the_castling_rook_shielded_is_tested_again() {
        assert_eq!(castles("7k/8/8/8/8/8/8/rR1K4 w B - 0 1"), 0);
        assert_eq!(castles("7k/8/8/8/8/8/8/qR1K4 w B - 0 1"), 0);
        assert_eq!(castles("7k/8/8/8/8/8/8/bR1K4 w B - 0 1"), 1);
        assert_eq!(castles("7k/8/8/8/8/8/8/1R1K4 w B - 0 1"), 1);
    }
}
