//! Children counted without being played. Two plies above the leaves, the
//! opponent's replies are counted once on the parent's board, as if the
//! side to move passed; a quiet move that neither leaves nor enters a
//! square those replies depend on leaves their number as it was, so its
//! child's count is known without playing it (the depth-2 "null move"
//! reuse of MPerft and perft_gpu).
//!
//! Why that holds. Say M moves and O replies. How many moves a piece of O
//! has depends on the occupancy of its slider attack sets (a square filled
//! cuts a ray short, one emptied lets it run on), of its pawns' push and
//! capture squares, of its king's squares and castling paths; a knight or
//! king has as many targets whether a target is empty or M's. Which of
//! them are legal depends on M's attacks on O's king, its neighbours and
//! castling path (by a piece standing next to them, a knight's jump away,
//! or on a clear line), on pins (a line from O's king through one piece),
//! and on check. A quiet move of M changes only its two squares: it takes
//! nothing, promotes nothing, leaves no en passant square and changes no
//! right of O. When neither square is one of the above, O's legal moves
//! are the same set. M must not be in check: passing would leave O a king
//! to take.

use super::attacks;
use super::bitboard::{FILE_A, FILE_H, KING, KNIGHT, RANK_1, RANK_8, Squares, bit};
use super::castling;
use super::position::{Chess, Colour, Piece};
use crate::kernel::Isa;

/// The squares a quiet move by the side to move may neither leave nor
/// enter if its child is to keep the replies of the parent's board.
#[derive(Clone, Copy)]
pub(super) struct FixedSquares {
    /// For a move of any piece but a knight.
    pub(super) any: u64,
    /// For a knight's move: also where a knight attacks their king's
    /// watched squares from.
    pub(super) knight: u64,
}

impl FixedSquares {
    /// Every square: no move keeps the replies.
    pub(super) const ALL: FixedSquares = FixedSquares { any: !0, knight: !0 };
}

/// [`FixedSquares`] of `pos`, whose side to move is white when `white` (a
/// constant where this is inlined); `None` when the side to move is in
/// check.
#[inline(always)]
pub(super) fn fixed_squares<I: Isa>(pos: &Chess, isa: I, white: bool) -> Option<FixedSquares> {
    debug_assert_eq!(pos.side == Colour::White, white);
    let (us, them) = if white {
        (Colour::White, Colour::Black)
    } else {
        (Colour::Black, Colour::White)
    };
    let occupied = pos.occupied();
    if pos.is_attacked(isa, pos.king(us), them, occupied) {
        return None;
    }
    let theirs = pos.colours[them.index()];
    let pieces = &pos.pieces;
    let queens = pieces[Piece::Queen.index()];

    // What their own pieces can reach: slider rays, pawn pushes and
    // captures, king steps and castling paths.
    let mut their_rays = 0;
    for from in Squares((pieces[Piece::Bishop.index()] | queens) & theirs) {
        their_rays |= attacks::bishop(isa, from, occupied);
    }
    for from in Squares((pieces[Piece::Rook.index()] | queens) & theirs) {
        their_rays |= attacks::rook(isa, from, occupied);
    }
    let their_pawns = pieces[Piece::Pawn.index()] & theirs;
    let pawn_squares = if white {
        let one = their_pawns >> 8;
        one | (one & (RANK_8 >> 16)) >> 8 | (their_pawns & !FILE_A) >> 9 | (their_pawns & !FILE_H) >> 7
    } else {
        let one = their_pawns << 8;
        one | (one & (RANK_1 << 16)) << 8 | (their_pawns & !FILE_A) << 7 | (their_pawns & !FILE_H) << 9
    };
    let their_king = pos.king(them);
    // Squares whose being attacked decides a move of their king.
    let mut watched = KING[usize::from(their_king)] | bit(their_king);
    let mut reached = theirs | their_rays | pawn_squares | watched;
    for rook in Squares(pos.castling_rooks & theirs) {
        let (empty, unattacked) = castling::needed_squares(their_king, rook);
        reached |= empty;
        watched |= unattacked;
    }

    // Lines to the watched squares (where a piece of ours attacks them,
    // or would block or unblock a line that does), one blocker further
    // from their king (pins), and the squares a knight of ours attacks
    // them from. A queen's lookup holds every square next to its own, so
    // the lines hold where a king or pawn of ours attacks them from too.
    let from_king_diagonals = attacks::bishop(isa, their_king, occupied);
    let from_king_lines = attacks::rook(isa, their_king, occupied);
    let mut lines = from_king_diagonals
        | from_king_lines
        | attacks::bishop(isa, their_king, occupied & !from_king_diagonals)
        | attacks::rook(isa, their_king, occupied & !from_king_lines);
    let mut knight_squares = 0;
    for square in Squares(watched) {
        if square != their_king {
            lines |= attacks::queen(isa, square, occupied);
        }
        knight_squares |= KNIGHT[usize::from(square)];
    }
    let any = reached | lines;
    Some(FixedSquares {
        any,
        knight: any | knight_squares,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::playouts::Playouts;
    use crate::chess::position::{MoveKind, NO_SQUARE};
    use crate::game::Game;
    use crate::kernel::Portable;

    /// Positions of random playouts from the standard start and from
    /// Chess960 starts (castling rooks off the corners).
    fn playout_positions() -> Vec<Chess> {
        let suite = crate::parse_suite(include_str!("../../data/chess960.epd")).expect("the suite parses");
        let mut starts: Vec<Chess> = suite
            .iter()
            .step_by(24)
            .map(|line| line.position.parse().expect("a suite position"))
            .collect();
        starts.push(Chess::start());
        starts.push(
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
                .parse()
                .expect("Kiwipete"),
        );
        let mut playouts = Playouts::new(0x9E37_79B9_7F4A_7C15);
        let mut positions = Vec::new();
        for start in starts {
            for _ in 0..60 {
                positions.push(playouts.end(start, 90));
            }
        }
        positions
    }

    /// Every quiet move the masks let through has a child with exactly the
    /// replies of the parent's board with its side to move passing; and
    /// the masks let some through, or the test would prove nothing.
    #[test]
    fn a_quiet_move_off_the_fixed_squares_keeps_the_replies() {
        let mut kept = 0;
        let mut played = 0;
        for pos in playout_positions() {
            let Some(fixed) = fixed_squares(&pos, Portable, pos.side == Colour::White) else {
                assert!(pos.in_check(), "{pos}");
                continue;
            };
            let mut passed = pos;
            passed.side = pos.side.other();
            passed.en_passant = NO_SQUARE;
            let replies = passed.count_moves();
            for mv in pos.legal_moves() {
                let mask = if matches!(mv.piece(), Piece::Knight) {
                    fixed.knight
                } else {
                    fixed.any
                };
                let quiet = matches!(mv.kind(), MoveKind::Normal) && pos.piece_on(mv.to()).is_none();
                if quiet && mask & (bit(mv.from()) | bit(mv.to())) == 0 {
                    assert_eq!(pos.play(mv).count_moves(), replies, "{pos} {mv:?}");
                    kept += 1;
                } else {
                    played += 1;
                }
            }
        }
        assert!(kept > 100 && played > 100, "kept {kept}, played {played}");
    }
}
