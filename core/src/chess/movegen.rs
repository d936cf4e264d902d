//! Fully legal move generation: the king's targets are tested against
//! the squares the other side attacks, every other piece is limited by
//! the check mask (what captures or blocks a single checker) and, when
//! pinned, by its pin ray. Nothing is played
//! to find out whether it was legal, except en passant (see
//! [`Chess::en_passant_is_legal`]).
//!
//! Generation is generic over the colour to move (`WHITE`) and over a
//! [`Sink`], so counting at depth 1 runs the same code with popcounts in
//! place of pushes (on x86-64-v3 and v4 the free sliders' moves are
//! counted all at once, by [`fills::moves`]).

use super::attacks;
use super::bitboard::{
    BETWEEN, BISHOP_RAYS, FILE_A, FILE_H, KING, KNIGHT, LINE, RANK_1, RANK_8, ROOK_RAYS, Square, Squares, bit,
};
use super::castling;
use super::fills;
use super::position::{Chess, ChessMove, ChessMoves, Colour, MoveKind, NO_SQUARE, Piece, pawn_attackers_of};
use super::sink::{Count, Sink};
use crate::kernel::{Isa, Portable};

/// Whether a board has two squares or more (no popcount needed).
#[inline(always)]
const fn more_than_one(board: u64) -> bool {
    board & board.wrapping_sub(1) != 0
}

/// One rank forward for the side to move.
#[inline(always)]
const fn forward<const WHITE: bool>(board: u64) -> u64 {
    if WHITE { board << 8 } else { board >> 8 }
}

/// Every legal move of the side to move (`WHITE` must match it) into `sink`,
/// sliders looked up on `isa`.
///
/// No closures here or below: a closure is compiled with the target
/// features of the function it is written in, and this code is inlined into
/// each kernel copy of the recursion.
#[inline(always)]
pub(super) fn generate<const WHITE: bool, S: Sink, I: Isa>(pos: &Chess, sink: &mut S, isa: I) {
    let (us, them) = if WHITE {
        (Colour::White, Colour::Black)
    } else {
        (Colour::Black, Colour::White)
    };
    let ours = pos.colours[us.index()];
    let theirs = pos.colours[them.index()];
    let occupied = ours | theirs;
    let pieces = &pos.pieces;
    let queens = pieces[Piece::Queen.index()];
    let king = pos.king(us);
    let k = usize::from(king);
    let their_rooks = (pieces[Piece::Rook.index()] | queens) & theirs;
    let their_bishops = (pieces[Piece::Bishop.index()] | queens) & theirs;

    // Enemy sliders on the king's lines, seen through our own pieces: with
    // nothing between, a checker; with one of ours alone between, a pin.
    // Leapers and pawns are the only other checkers.
    let mut checkers = (KNIGHT[k] & pieces[Piece::Knight.index()] & theirs)
        | (pawn_attackers_of(them, king) & pieces[Piece::Pawn.index()] & theirs);
    let mut pinned = 0u64;
    // Most often no enemy slider stands on the king's lines at all, and
    // the lookup is skipped.
    let mut snipers = 0;
    if ROOK_RAYS[k] & their_rooks != 0 {
        snipers |= attacks::rook(isa, king, theirs) & their_rooks;
    }
    if BISHOP_RAYS[k] & their_bishops != 0 {
        snipers |= attacks::bishop(isa, king, theirs) & their_bishops;
    }
    for sniper in Squares(snipers) {
        let between = BETWEEN[k][usize::from(sniper)] & occupied;
        if between == 0 {
            checkers |= bit(sniper);
        } else if !more_than_one(between) {
            pinned |= between & ours;
        }
    }

    // The king, tested with itself off the board so it cannot hide behind
    // itself from a slider. Squares next to their king are dropped up
    // front. A lone square is tested alone; two or more against every
    // square they attack, found once (which castling then reuses).
    let without_king = occupied ^ bit(king);
    let candidates = KING[k] & !ours & !KING[usize::from(pos.king(them))];
    let attacked = if more_than_one(candidates) {
        Some(pos.attacked_squares(isa, them, without_king))
    } else {
        None
    };
    let king_targets = match attacked {
        Some(attacked) => candidates & !attacked,
        None if candidates != 0
            && !pos.is_attacked(isa, candidates.trailing_zeros() as Square, them, without_king) =>
        {
            candidates
        }
        None => 0,
    };
    sink.targets(king, Piece::King, king_targets);
    if more_than_one(checkers) {
        return;
    }

    let check_mask = if checkers == 0 {
        !0
    } else {
        BETWEEN[k][(checkers.trailing_zeros() & 63) as usize] | checkers
    };
    let allowed = !ours & check_mask;

    // Unpinned pieces first; a pinned piece moves along its pin ray (a
    // pinned knight never moves).
    let free = ours & !pinned;
    for from in Squares(pieces[Piece::Knight.index()] & free) {
        sink.targets(from, Piece::Knight, KNIGHT[usize::from(from)] & allowed);
    }
    if S::COUNTS {
        // A counting sink takes the free sliders' moves as one number
        // (filled in lanes on x86-64-v3 and v4, else a lookup a slider).
        sink.count(fills::moves(
            isa,
            (pieces[Piece::Rook.index()] | queens) & free,
            (pieces[Piece::Bishop.index()] | queens) & free,
            occupied,
            allowed,
        ));
    } else {
        free_sliders(pos, sink, free, occupied, allowed, isa);
    }
    if pinned != 0 {
        for from in Squares(pinned & !pieces[Piece::Pawn.index()]) {
            let ray = LINE[k][usize::from(from)] & allowed;
            let b = bit(from);
            if pieces[Piece::Bishop.index()] & b != 0 {
                sink.targets(from, Piece::Bishop, attacks::bishop(isa, from, occupied) & ray);
            } else if pieces[Piece::Rook.index()] & b != 0 {
                sink.targets(from, Piece::Rook, attacks::rook(isa, from, occupied) & ray);
            } else if queens & b != 0 {
                sink.targets(from, Piece::Queen, attacks::queen(isa, from, occupied) & ray);
            }
        }
    }

    pawn_moves::<WHITE, S>(pos, sink, pinned, check_mask, king);

    if pos.en_passant != NO_SQUARE {
        let to = pos.en_passant;
        let capturers = pawn_attackers_of(us, to) & pieces[Piece::Pawn.index()] & ours;
        // The square is kept only when some capture is legal (a
        // `Chess` invariant), so a lone capturer needs no test.
        let lone = !more_than_one(capturers);
        for from in Squares(capturers) {
            if lone || pos.en_passant_is_legal(isa, from, to) {
                sink.one(ChessMove {
                    from,
                    to,
                    piece: Piece::Pawn,
                    kind: MoveKind::EnPassant,
                });
            }
        }
    }

    if checkers == 0 {
        castling::generate::<WHITE, S, I>(pos, sink, king, occupied, king_targets, attacked, isa);
    }
}

/// The moves of the `free` (unpinned) bishops, rooks and queens onto
/// `allowed` squares. A queen's diagonal and straight moves are handed out
/// separately (they are disjoint): one loop per direction set, no loop for
/// queens.
#[inline(always)]
fn free_sliders<S: Sink, I: Isa>(pos: &Chess, sink: &mut S, free: u64, occupied: u64, allowed: u64, isa: I) {
    let pieces = &pos.pieces;
    let queens = pieces[Piece::Queen.index()];
    for from in Squares((pieces[Piece::Bishop.index()] | queens) & free) {
        let piece = if queens & bit(from) != 0 {
            Piece::Queen
        } else {
            Piece::Bishop
        };
        sink.targets(from, piece, attacks::bishop(isa, from, occupied) & allowed);
    }
    for from in Squares((pieces[Piece::Rook.index()] | queens) & free) {
        let piece = if queens & bit(from) != 0 {
            Piece::Queen
        } else {
            Piece::Rook
        };
        sink.targets(from, piece, attacks::rook(isa, from, occupied) & allowed);
    }
}

/// Pushes, double pushes, captures and promotions (en passant apart).
#[inline(always)]
fn pawn_moves<const WHITE: bool, S: Sink>(
    pos: &Chess,
    sink: &mut S,
    pinned: u64,
    check_mask: u64,
    king: Square,
) {
    let us = if WHITE { Colour::White } else { Colour::Black };
    let ours = pos.colours[us.index()];
    let theirs = pos.colours[us.other().index()];
    let empty = !(ours | theirs);
    let pawns = pos.pieces[Piece::Pawn.index()] & ours;
    let last_rank = if WHITE { RANK_8 } else { RANK_1 };
    // The rank a single push reaches from the start rank.
    let third_rank = if WHITE { RANK_1 << 16 } else { RANK_8 >> 16 };
    let up: i8 = if WHITE { 8 } else { -8 };

    // Unpinned pawns in bulk.
    let free = pawns & !pinned;
    let single = forward::<WHITE>(free) & empty;
    let double = forward::<WHITE>(single & third_rank) & empty & check_mask;
    let single = single & check_mask;
    let targets = theirs & check_mask;
    // Captures towards file a and towards file h, with their offsets.
    let (west, west_offset, east, east_offset) = if WHITE {
        (
            (free & !FILE_A) << 7 & targets,
            7i8,
            (free & !FILE_H) << 9 & targets,
            9i8,
        )
    } else {
        (
            (free & !FILE_A) >> 9 & targets,
            -9i8,
            (free & !FILE_H) >> 7 & targets,
            -7i8,
        )
    };
    sink.pawns(single & !last_rank, up, MoveKind::Normal);
    sink.pawns(double, 2 * up, MoveKind::DoublePush);
    sink.pawns(west & !last_rank, west_offset, MoveKind::Normal);
    sink.pawns(east & !last_rank, east_offset, MoveKind::Normal);
    sink.promotions(single & last_rank, up);
    sink.promotions(west & last_rank, west_offset);
    sink.promotions(east & last_rank, east_offset);

    // Pinned pawns one by one, along their pin ray.
    for from in Squares(pawns & pinned) {
        let ray = LINE[usize::from(king)][usize::from(from)] & check_mask;
        let one = forward::<WHITE>(bit(from)) & empty;
        let two = forward::<WHITE>(one & third_rank) & empty;
        let captures = pawn_attackers_of(us.other(), from) & theirs;
        let moves = (one | captures) & ray;
        for to in Squares(moves) {
            if bit(to) & last_rank != 0 {
                sink.promotions(bit(to), to.wrapping_sub(from) as i8);
            } else {
                sink.pawns(bit(to), to.wrapping_sub(from) as i8, MoveKind::Normal);
            }
        }
        sink.pawns(two & ray, 2 * up, MoveKind::DoublePush);
    }
}

/// Every legal move into `sink`, sliders looked up on `isa`.
#[inline(always)]
pub(super) fn generate_into<S: Sink, I: Isa>(pos: &Chess, sink: &mut S, isa: I) {
    match pos.side {
        Colour::White => generate::<true, S, I>(pos, sink, isa),
        Colour::Black => generate::<false, S, I>(pos, sink, isa),
    }
}

/// Every legal move.
pub(super) fn legal_moves(pos: &Chess) -> ChessMoves {
    let mut moves = ChessMoves::new();
    generate_into(pos, &mut moves, Portable);
    moves
}

/// The number of legal moves, counted without making them, sliders looked
/// up on `isa`. Counting is popcounts: where `isa` does not include
/// popcnt (the default x86-64 target has none) but the CPU has it, the
/// counter runs a copy compiled to use it.
#[inline(always)]
pub(super) fn count_moves_on<I: Isa>(pos: &Chess, isa: I) -> u64 {
    if I::POPCNT {
        return count_moves_portable(pos, isa);
    }
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("popcnt") {
        // SAFETY: `count_moves_popcnt` only needs the popcnt instruction,
        // which the CPU was just found to have.
        return unsafe { count_moves_popcnt(pos) };
    }
    count_moves_portable(pos, isa)
}

/// [`count_moves_portable`] compiled with the popcnt instruction.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
pub(super) fn count_moves_popcnt(pos: &Chess) -> u64 {
    count_moves_portable(pos, Portable)
}

/// The number of legal moves, for any CPU.
#[inline(always)]
pub(super) fn count_moves_portable<I: Isa>(pos: &Chess, isa: I) -> u64 {
    let mut count = Count(0);
    generate_into(pos, &mut count, isa);
    count.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::playouts::Playouts;
    use crate::game::Game;

    /// Both counters agree with the move list on positions of random
    /// playouts (this runs the popcnt copy where the CPU has popcnt).
    #[test]
    fn popcnt_and_portable_counters_agree_with_the_move_list() {
        let mut playouts = Playouts::new(0x9E37_79B9_7F4A_7C15);
        for _ in 0..200 {
            let start = Chess::start();
            for pos in std::iter::once(start).chain(playouts.line(start, 120)) {
                let moves = legal_moves(&pos);
                let expected = moves.len() as u64;
                assert_eq!(count_moves_portable(&pos, Portable), expected, "{pos}");
                assert_eq!(count_moves_on(&pos, Portable), expected, "{pos}");
                if let Some(v3) = crate::kernel::V3::detect() {
                    assert_eq!(count_moves_on(&pos, v3), expected, "{pos}");
                    let mut on_v3 = ChessMoves::new();
                    generate_into(&pos, &mut on_v3, v3);
                    assert_eq!(on_v3, moves, "{pos}");
                }
                if let Some(v4) = crate::kernel::V4::detect() {
                    assert_eq!(count_moves_on(&pos, v4), expected, "{pos}");
                }
                #[cfg(target_arch = "x86_64")]
                if std::arch::is_x86_feature_detected!("popcnt") {
                    // SAFETY: the CPU has popcnt (checked just above).
                    assert_eq!(unsafe { count_moves_popcnt(&pos) }, expected, "{pos}");
                }
            }
        }
    }
}
