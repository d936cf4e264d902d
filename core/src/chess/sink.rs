//! Where the move generator hands its moves: a [`Sink`] takes them in bulk
//! (a piece's targets as one board), so counting runs the generator's own
//! code with popcounts in place of pushes; an [`EachMove`] takes them one
//! at a time.

use super::bitboard::{Square, Squares};
use super::position::{ChessMove, ChessMoves, MoveKind, Piece};

/// Where generated moves go.
pub(super) trait Sink {
    /// `piece` on `from` may go to each square of `targets`.
    fn targets(&mut self, from: Square, piece: Piece, targets: u64);
    /// Pawns may move to each square of `targets` from `offset` squares
    /// behind it (`to - offset`), none of them promoting.
    fn pawns(&mut self, targets: u64, offset: i8, kind: MoveKind);
    /// Pawns promote on each square of `targets`, from `to - offset`:
    /// four moves each.
    fn promotions(&mut self, targets: u64, offset: i8);
    /// One special move (en passant, castling).
    fn one(&mut self, mv: ChessMove);
    /// Whether the sink only counts, so that moves may be handed to
    /// [`Sink::count`] as a number.
    const COUNTS: bool = false;
    /// `moves` more moves, for a sink that only counts.
    #[inline(always)]
    fn count(&mut self, moves: u64) {
        debug_assert!(
            Self::COUNTS,
            "{moves} moves handed as a number to a sink that takes moves"
        );
    }
}

/// Counts moves without making them.
pub(super) struct Count(pub(super) u64);

impl Sink for Count {
    #[inline(always)]
    fn targets(&mut self, _: Square, _: Piece, targets: u64) {
        self.0 += u64::from(targets.count_ones());
    }
    #[inline(always)]
    fn pawns(&mut self, targets: u64, _: i8, _: MoveKind) {
        self.0 += u64::from(targets.count_ones());
    }
    #[inline(always)]
    fn promotions(&mut self, targets: u64, _: i8) {
        self.0 += 4 * u64::from(targets.count_ones());
    }
    #[inline(always)]
    fn one(&mut self, _: ChessMove) {
        self.0 += 1;
    }
    const COUNTS: bool = true;
    #[inline(always)]
    fn count(&mut self, moves: u64) {
        self.0 += moves;
    }
}

/// The pieces a pawn may promote to, in UCI letter order of Stockfish's
/// output (queen first).
const PROMOTIONS: [Piece; 4] = [Piece::Queen, Piece::Rook, Piece::Bishop, Piece::Knight];

/// A sink that takes moves one at a time; the bulk hand-outs of
/// [`Sink`] are expanded into single moves for it.
pub(super) trait EachMove {
    /// One legal move.
    fn each(&mut self, mv: ChessMove);
}

impl<T: EachMove> Sink for T {
    #[inline(always)]
    fn targets(&mut self, from: Square, piece: Piece, targets: u64) {
        for to in Squares(targets) {
            self.each(ChessMove {
                from,
                to,
                piece,
                kind: MoveKind::Normal,
            });
        }
    }
    #[inline(always)]
    fn pawns(&mut self, targets: u64, offset: i8, kind: MoveKind) {
        for to in Squares(targets) {
            self.each(ChessMove {
                from: to.wrapping_sub(offset as u8),
                to,
                piece: Piece::Pawn,
                kind,
            });
        }
    }
    #[inline(always)]
    fn promotions(&mut self, targets: u64, offset: i8) {
        for to in Squares(targets) {
            for piece in PROMOTIONS {
                self.each(ChessMove {
                    from: to.wrapping_sub(offset as u8),
                    to,
                    piece: Piece::Pawn,
                    kind: MoveKind::Promotion(piece),
                });
            }
        }
    }
    #[inline(always)]
    fn one(&mut self, mv: ChessMove) {
        self.each(mv);
    }
}

impl EachMove for ChessMoves {
    #[inline(always)]
    fn each(&mut self, mv: ChessMove) {
        self.push(mv);
    }
}
