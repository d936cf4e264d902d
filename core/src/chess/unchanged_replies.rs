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
//! them are legal depends on M's attacks on O's king, on the squares it
//! may step to and on its castling path, and on pins (a line from O's king
//! through one piece of O to a slider of M). A quiet move of M changes
//! only its two squares: it takes nothing, promotes nothing, leaves no en
//! passant square and changes no right of O. M's attacks on a square
//! change only when the moving piece attacks it from one of its squares
//! (by its own kind of move) or when one of them lies on a line between
//! the square and a slider of M; a square a pawn, knight or king of M
//! attacks stays attacked while another piece moves. When neither square
//! of the move is one of these, O's legal moves are the same set. M must
//! not be in check: passing would leave O a king to take.

use super::attacks;
use super::bitboard::{BETWEEN, KING, RANK_1, RANK_8, Squares, bit, king_attacks, knight_attacks};
use super::castling;
use super::position::{Chess, Colour, Piece, pawn_attacks};
use crate::kernel::Isa;

/// The squares a quiet move by the side to move may neither leave nor
/// enter if its child is to keep the replies of the parent's board, for
/// each kind of piece that moves.
#[derive(Clone, Copy)]
pub(super) struct FixedSquares {
    /// Indexed by [`Piece::index`].
    by_piece: [u64; 6],
}

impl FixedSquares {
    /// Every square: no move keeps the replies.
    pub(super) const ALL: FixedSquares = FixedSquares { by_piece: [!0; 6] };

    /// The fixed squares for a move of `piece`.
    #[inline(always)]
    pub(super) fn of(&self, piece: Piece) -> u64 {
        self.by_piece[piece.index()]
    }
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
    let ours = pos.colours[us.index()];
    let theirs = pos.colours[them.index()];
    let pieces = &pos.pieces;
    let queens = pieces[Piece::Queen.index()];
    let diagonal_sliders = pieces[Piece::Bishop.index()] | queens;
    let straight_sliders = pieces[Piece::Rook.index()] | queens;

    // What their own pieces can reach: slider rays, pawn pushes and
    // captures, king steps and castling paths.
    let mut their_rays = 0;
    for from in Squares(diagonal_sliders & theirs) {
        their_rays |= attacks::bishop(isa, from, occupied);
    }
    for from in Squares(straight_sliders & theirs) {
        their_rays |= attacks::rook(isa, from, occupied);
    }
    let their_pawns = pieces[Piece::Pawn.index()] & theirs;
    let pawn_squares = if white {
        let one = their_pawns >> 8;
        one | (one & (RANK_8 >> 16)) >> 8 | pawn_attacks(them, their_pawns)
    } else {
        let one = their_pawns << 8;
        one | (one & (RANK_1 << 16)) << 8 | pawn_attacks(them, their_pawns)
    };
    let their_king = pos.king(them);
    // Squares whose being attacked by us decides their moves: their
    // king's (check), its steps (not those its own pieces hold) and its
    // castling path.
    let ring = KING[usize::from(their_king)];
    let mut watched = ring & !theirs | bit(their_king);
    let mut reached = theirs | their_rays | pawn_squares | ring;
    for rook in Squares(pos.castling_rooks & theirs) {
        let (empty, unattacked) = castling::needed_squares(their_king, rook);
        reached |= empty;
        watched |= unattacked;
    }

    // The lines from the watched squares to their first blocker: where a
    // slider of ours attacks one, or would on arriving. A square a pawn,
    // knight or king of ours attacks stays attacked whatever another
    // piece does, so its lines do not matter. From their king also one
    // blocker further (where a pin begins or ends).
    let our_pawn_attacks = pawn_attacks(us, pieces[Piece::Pawn.index()] & ours);
    let leaper_attacked = our_pawn_attacks
        | knight_attacks(pieces[Piece::Knight.index()] & ours)
        | KING[usize::from(pos.king(us))];
    let king_diagonals = attacks::bishop(isa, their_king, occupied);
    let king_straights = attacks::rook(isa, their_king, occupied);
    let behind_diagonals = attacks::bishop(isa, their_king, occupied & !king_diagonals);
    let behind_straights = attacks::rook(isa, their_king, occupied & !king_straights);
    let (mut diagonals, mut straights) = (
        king_diagonals | behind_diagonals,
        king_straights | behind_straights,
    );
    for square in Squares(watched & !leaper_attacked & !bit(their_king)) {
        diagonals |= attacks::bishop(isa, square, occupied);
        straights |= attacks::rook(isa, square, occupied);
    }

    // Where our sliders' lines run: a square on one of them and on a line
    // of a watched square may block or unblock our attack on it (or a pin
    // on their king). A piece of theirs pinned by one of ours is freed by
    // anything arriving between: the whole segment from king to pinner.
    let (mut our_diagonals, mut our_straights) = (0, 0);
    for from in Squares(diagonal_sliders & ours) {
        our_diagonals |= attacks::bishop(isa, from, occupied);
    }
    for from in Squares(straight_sliders & ours) {
        our_straights |= attacks::rook(isa, from, occupied);
    }
    // A piece of ours first from their king may leave a piece of theirs
    // alone between the king and a slider of ours further on.
    let mut pin_segments = (king_diagonals | king_straights) & ours;
    let pinners = (behind_diagonals & diagonal_sliders | behind_straights & straight_sliders) & ours;
    for pinner in Squares(pinners) {
        pin_segments |= BETWEEN[usize::from(their_king)][usize::from(pinner)];
    }
    let any = reached | pin_segments | (our_diagonals | our_straights) & (diagonals | straights);

    // What the moving piece itself attacks from its two squares.
    // Where a pawn of ours attacks a watched square from: where one of
    // theirs there would attack.
    let pawn_sources = pawn_attacks(them, watched);
    Some(FixedSquares {
        by_piece: [
            any | pawn_sources,
            any | knight_attacks(watched),
            any | diagonals,
            any | straights,
            any | diagonals | straights,
            any | king_attacks(watched),
        ],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::playouts::Playouts;
    use crate::chess::position::{MoveKind, NO_SQUARE};
    use crate::game::Game;
    use crate::kernel::Portable;

    /// Positions two plies from Kiwipete and of random playouts from the
    /// standard start, Kiwipete and Chess960 starts (castling rooks off
    /// the corners).
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
        // Every position two plies from Kiwipete, where sliders are many,
        // then playouts.
        let mut positions = Vec::new();
        let kiwipete = starts[starts.len() - 1];
        for first in kiwipete.legal_moves() {
            let after = kiwipete.play(first);
            for second in after.legal_moves() {
                positions.push(after.play(second));
            }
        }
        let mut playouts = Playouts::new(0x9E37_79B9_7F4A_7C15);
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
                let mask = fixed.of(mv.piece());
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
