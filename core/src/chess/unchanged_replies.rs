//! Children counted without being played. Two plies above the leaves, the
//! opponent's replies are counted once on the parent's board, as if the
//! side to move passed. A quiet move that neither leaves nor enters a
//! square those replies depend on leaves their number as it was, so its
//! child's count is known without playing it (the depth-2 "null move"
//! reuse of MPerft and perft_gpu). A quiet move or a capture that changes
//! what stands on the squares of the opponent's free sliders' rays and
//! free pawns' pushes and captures, but not which replies are legal,
//! changes only those pieces' moves, which [`Mobility`] recounts on the
//! child's board. Any other move is played and its child counted.
//!
//! Why that holds. Say M moves and O replies. How many moves a piece of O
//! has depends on the occupancy of its slider attack sets (a square filled
//! cuts a ray short, one emptied lets it run on), of its pawns' push and
//! capture squares, of its king's squares and castling paths; a knight or
//! king has as many targets whether a target is empty or M's. Which of
//! them are legal depends on M's attacks on O's king, on the squares it
//! may step to and on its castling path, and on pins (a line from O's king
//! through one piece of O to a slider of M). A quiet move of M changes
//! only its two squares: it takes nothing, promotes nothing, leaves no en
//! passant square (a double push with no pawn of O beside its square
//! neither) and changes no right of O. A capture empties the square left
//! and keeps the square taken occupied, by M's piece now; it removes the
//! taken piece's moves, gives O's pieces that attack the square one move
//! more, and takes a castling right when it takes a castling rook. M's
//! attacks on a square change only when the moving piece attacks it from
//! one of its squares (by its own kind of move) or when one of them lies
//! on a line between the square and a slider of M; a square a pawn,
//! knight or king of M attacks stays attacked while another piece moves.
//! When neither square of the move is one of these, nor on a pin's
//! segment, next to O's king, on a castling path O's own pieces leave
//! open or a castling rook's, O's legal moves are those of the parent's
//! board but for the free sliders and pawns whose squares the move
//! changes (and, for a capture, the knights of O attacking the square
//! taken and the taken piece). A pinned piece of O moves on its pin's
//! segment only, so the squares off it do not matter. M must not be in
//! check: passing would leave O a king to take.

use super::attacks;
use super::bitboard::{
    BETWEEN, FILE_A, FILE_H, KING, RANK_1, RANK_8, Squares, bit, king_attacks, knight_attacks,
};
use super::castling;
use super::fills;
use super::position::{Chess, Colour, Piece, pawn_attacks};
use super::reply_mobility::{FreePieces, Mobility};
use crate::kernel::Isa;

/// The squares a quiet move or a capture by the side to move may leave or
/// enter, for each kind of piece that moves, and what its child's replies
/// then are.
#[derive(Clone, Copy)]
pub(super) struct FixedSquares {
    /// A quiet move touching none of these keeps every reply: indexed by
    /// [`Piece::index`]. Every piece of the replying side is one (a
    /// capture never keeps them all).
    kept: [u64; 6],
    /// A move touching one of these must be played and its child counted;
    /// a quiet move or capture touching only squares outside these changes
    /// only the replies [`Mobility`] recounts. A subset of `kept`, piece by
    /// piece.
    recounted: [u64; 6],
    /// The squares a double push may land on without giving the replying
    /// side an en passant capture: none of its pawns beside them.
    no_en_passant: u64,
}

impl FixedSquares {
    /// Every square: no move keeps the replies.
    pub(super) const ALL: FixedSquares = FixedSquares {
        kept: [!0; 6],
        recounted: [!0; 6],
        no_en_passant: 0,
    };

    /// The squares a quiet move of `piece` must avoid to keep every reply.
    #[inline(always)]
    pub(super) fn kept(&self, piece: Piece) -> u64 {
        self.kept[piece.index()]
    }

    /// The squares a double push may land on without giving the replying
    /// side an en passant capture.
    #[inline(always)]
    pub(super) fn no_en_passant(&self) -> u64 {
        self.no_en_passant
    }

    /// The squares a quiet move or capture of `piece` must avoid for its
    /// child's replies to be the parent's with only [`Mobility`] recounted.
    #[inline(always)]
    pub(super) fn recounted(&self, piece: Piece) -> u64 {
        self.recounted[piece.index()]
    }
}

/// [`FixedSquares`] of `pos`, whose side to move is white when `white` (a
/// constant where this is inlined), and the [`Mobility`] of the other
/// side; `None` when the side to move is in check.
#[inline(always)]
pub(super) fn fixed_squares<I: Isa>(pos: &Chess, isa: I, white: bool) -> Option<(FixedSquares, Mobility)> {
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
    let ours = pos.colours[us.index()];
    let theirs = pos.colours[them.index()];
    let pieces = &pos.pieces;
    let queens = pieces[Piece::Queen.index()];
    let diagonal_sliders = pieces[Piece::Bishop.index()] | queens;
    let straight_sliders = pieces[Piece::Rook.index()] | queens;
    let their_king = pos.king(them);

    // The lines from their king, to its first blocker and one further
    // (where a pin begins or ends), and the pins of their pieces.
    let king_diagonals = attacks::bishop(isa, their_king, occupied);
    let king_straights = attacks::rook(isa, their_king, occupied);
    let behind_diagonals = attacks::bishop(isa, their_king, occupied & !king_diagonals);
    let behind_straights = attacks::rook(isa, their_king, occupied & !king_straights);
    // A piece of ours first from their king may leave a piece of theirs
    // alone between the king and a slider of ours further on; a piece of
    // theirs pinned by one of ours is freed by anything arriving between:
    // the whole segment from king to pinner.
    let mut pin_segments = (king_diagonals | king_straights) & ours;
    let pinners = (behind_diagonals & diagonal_sliders | behind_straights & straight_sliders) & ours;
    for pinner in Squares(pinners) {
        pin_segments |= BETWEEN[usize::from(their_king)][usize::from(pinner)];
    }
    // Each segment holds one piece, the first blocker.
    let their_pinned = pin_segments & theirs;
    let their_free = theirs & !their_pinned;

    // What their free pieces can reach: slider rays and pawn pushes and
    // captures (their mobility); a pinned piece moves on its segment.
    let their_rays = fills::attacked(
        isa,
        straight_sliders & their_free,
        diagonal_sliders & their_free,
        occupied,
    );
    let all_their_pawns = pieces[Piece::Pawn.index()] & theirs;
    let their_pawns = all_their_pawns & their_free;
    let pawn_squares = if white {
        let one = their_pawns >> 8;
        one | (one & (RANK_8 >> 16)) >> 8 | pawn_attacks(them, their_pawns)
    } else {
        let one = their_pawns << 8;
        one | (one & (RANK_1 << 16)) << 8 | pawn_attacks(them, their_pawns)
    };
    // Squares whose being attacked by us decides their moves: their
    // king's (check), its steps (not those its own pieces hold) and its
    // castling path. The king's steps and the castling path also change
    // with what stands on them.
    let ring = KING[usize::from(their_king)];
    let mut watched = ring & !theirs | bit(their_king);
    // A castling that a piece of theirs blocks stays blocked whatever we
    // do (a capture there leaves a piece of ours), so only the others
    // count; a castling rook taken takes a right with it.
    let mut stood_on = ring;
    for rook in Squares(pos.castling_rooks & theirs) {
        let (empty, unattacked) = castling::needed_squares(their_king, rook);
        if empty & theirs == 0 {
            stood_on |= empty | bit(rook);
            watched |= unattacked;
        }
    }

    // The lines from the watched squares to their first blocker: where a
    // slider of ours attacks one, or would on arriving. A square a pawn,
    // knight or king of ours attacks stays attacked whatever another
    // piece does, so its lines do not matter.
    let our_pawn_attacks = pawn_attacks(us, pieces[Piece::Pawn.index()] & ours);
    let leaper_attacked = our_pawn_attacks
        | knight_attacks(pieces[Piece::Knight.index()] & ours)
        | KING[usize::from(pos.king(us))];
    let lined = watched & !leaper_attacked & !bit(their_king);
    let watched_lines = fills::rays(isa, lined, lined, occupied).or(&fills::rays(
        isa,
        bit(their_king),
        bit(their_king),
        occupied & !(king_diagonals | king_straights) | ours,
    ));
    let (diagonals, straights) = (watched_lines.diagonal(), watched_lines.straight());

    // Where our sliders' lines meet those: a square there may block or
    // unblock our attack on a watched square (or a pin on their king).
    let our_lines = fills::rays(isa, straight_sliders & ours, diagonal_sliders & ours, occupied);
    let any = stood_on | pin_segments | our_lines.meeting(&watched_lines);
    let mobile = their_rays | pawn_squares;

    // What the moving piece itself attacks from its two squares.
    // Where a pawn of ours attacks a watched square from: where one of
    // theirs there would attack.
    let recounted = [
        any | pawn_attacks(them, watched),
        any | knight_attacks(watched),
        any | diagonals,
        any | straights,
        any | diagonals | straights,
        any | king_attacks(watched),
    ];
    let free_pieces = FreePieces {
        straight: straight_sliders & their_free,
        diagonal: diagonal_sliders & their_free,
        pawns: their_pawns,
        knights: pieces[Piece::Knight.index()] & their_free,
    };
    let mobility = if white {
        Mobility::new::<false, I>(isa, free_pieces, theirs, ours, their_rays, pawn_squares)
    } else {
        Mobility::new::<true, I>(isa, free_pieces, theirs, ours, their_rays, pawn_squares)
    };
    Some((
        FixedSquares {
            kept: recounted.map(|squares| squares | mobile | theirs),
            recounted,
            no_en_passant: !((all_their_pawns & !FILE_A) >> 1 | (all_their_pawns & !FILE_H) << 1),
        },
        mobility,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::playouts::varied_positions;
    use crate::chess::position::{ChessMove, MoveKind, NO_SQUARE};
    use crate::game::Game;
    use crate::kernel::Portable;

    /// The replies of the child of `mv` from the parent's counts when
    /// only the mobility changes: `replies` with the side to move passing.
    fn recounted_replies(pos: &Chess, mobility: &Mobility, replies: u64, mv: ChessMove) -> u64 {
        let (from, to) = (bit(mv.from()), bit(mv.to()));
        let immobile = replies - mobility.base();
        let capture = mobility.repliers() & to != 0;
        match (pos.side, capture) {
            (Colour::White, true) => {
                mobility.replies_after_capture::<false, _>(Portable, immobile, from, mv.to())
            }
            (Colour::White, false) => immobile + mobility.after_quiet::<false, _>(Portable, from | to),
            (Colour::Black, true) => {
                mobility.replies_after_capture::<true, _>(Portable, immobile, from, mv.to())
            }
            (Colour::Black, false) => immobile + mobility.after_quiet::<true, _>(Portable, from | to),
        }
    }

    /// Every quiet move the masks let through has a child with exactly the
    /// replies of the parent's board with its side to move passing (off
    /// the kept squares); every quiet move or capture off the recounted
    /// squares one with those replies, the repliers' mobility recounted
    /// on the child's board. A double push is quiet where it gives no en
    /// passant capture. The masks let some through of each kind, or the
    /// test would prove nothing.
    #[test]
    fn a_move_off_the_fixed_squares_keeps_the_replies_or_changes_only_their_mobility() {
        let (mut kept, mut remobilised, mut captures, mut played) = (0, 0, 0, 0);
        for pos in varied_positions() {
            let Some((fixed, mobility)) = fixed_squares(&pos, Portable, pos.side == Colour::White) else {
                assert!(pos.in_check(), "{pos}");
                continue;
            };
            let mut passed = pos;
            passed.side = pos.side.other();
            passed.en_passant = NO_SQUARE;
            let replies = passed.count_moves();
            for mv in pos.legal_moves() {
                let moved = bit(mv.from()) | bit(mv.to());
                let capture = pos.piece_on(mv.to()).is_some();
                let open = match mv.kind() {
                    MoveKind::Normal => true,
                    MoveKind::DoublePush => fixed.no_en_passant() & bit(mv.to()) != 0,
                    _ => false,
                };
                let child = pos.play(mv).count_moves();
                if open && !capture && fixed.kept(mv.piece()) & moved == 0 {
                    assert_eq!(child, replies, "{pos} {mv:?}");
                    kept += 1;
                } else if open && fixed.recounted(mv.piece()) & moved == 0 {
                    assert_eq!(
                        child,
                        recounted_replies(&pos, &mobility, replies, mv),
                        "{pos} {mv:?}"
                    );
                    if capture {
                        captures += 1;
                    } else {
                        remobilised += 1;
                    }
                } else {
                    played += 1;
                }
            }
        }
        assert!(
            kept > 100 && remobilised > 100 && captures > 100 && played > 100,
            "kept {kept}, remobilised {remobilised}, captures {captures}, played {played}"
        );
    }
}
