//! The last two plies of perft in one pass: every legal move is handed
//! out by the generator with its piece and kind known at that place, and
//! its child's moves are counted at once: from the parent's replies where
//! the move keeps them or changes only the other side's free sliders' and
//! pawns' moves ([`unchanged_replies`]), else by playing it. No move list
//! is written, read back or dispatched on.
//!
//! The child counter is one out-of-line function per instruction set, so
//! the generator's twenty-odd hand-out places each inline a short `play`
//! and a call, not a whole move generator.

use super::bitboard::{Square, Squares, bit};
use super::movegen::{count_moves_on, generate};
use super::position::{Chess, ChessMove, Colour, MoveKind, NO_SQUARE, Piece};
use super::reply_mobility::Mobility;
use super::sink::{Count, EachMove, Sink};
use super::unchanged_replies::{self, FixedSquares};
use crate::kernel::{Isa, Portable};

/// The number of legal moves of `pos`, whose side to move is white when
/// `WHITE`, out of line, compiled for `isa`'s instructions.
#[inline(always)]
fn count_child<const WHITE: bool, I: Isa>(pos: &Chess, isa: I) -> u64 {
    let _ = isa;
    debug_assert_eq!(pos.side == Colour::White, WHITE);
    #[cfg(target_arch = "x86_64")]
    {
        if I::AVX512 {
            // SAFETY: `I::AVX512` holds only for an `Isa` whose values exist
            // only on CPUs running x86-64-v4, and `isa` is such a value.
            return unsafe { v4::count_child::<WHITE>(pos) };
        }
        if I::BMI2 {
            // SAFETY: as above, for x86-64-v3 (every `Isa` with BMI2 has
            // the whole of v3).
            return unsafe { v3::count_child::<WHITE>(pos) };
        }
    }
    count_child_portable(pos)
}

/// The move count of `pos` for `WHITE` to move, on `isa` (which must
/// include popcnt, as v3 and v4 do).
#[inline(always)]
fn count_as<const WHITE: bool, I: Isa>(pos: &Chess, isa: I) -> u64 {
    let mut count = Count(0);
    generate::<WHITE, Count, I>(pos, &mut count, isa);
    count.0
}

/// [`count_child`] for any CPU.
#[inline(never)]
fn count_child_portable(pos: &Chess) -> u64 {
    count_moves_on(pos, Portable)
}

/// [`count_child`] for one x86-64 kernel's proof, compiled with
/// `$features`, in a module named after the kernel.
macro_rules! child_counter {
    ($module:ident, $proof:ident, $features:literal) => {
        #[cfg(target_arch = "x86_64")]
        mod $module {
            use super::{Chess, count_as};

            /// The move count of `pos`, `WHITE` to move.
            #[target_feature(enable = $features)]
            #[inline(never)]
            pub(super) fn count_child<const WHITE: bool>(pos: &Chess) -> u64 {
                // SAFETY: only called by `count_child` on a proof of this
                // kernel or better, so the CPU runs it.
                count_as::<WHITE, _>(pos, unsafe { crate::kernel::$proof::new_unchecked() })
            }
        }
    };
}
child_counter!(v3, V3, "avx2,bmi1,bmi2,lzcnt,popcnt");
// The v4 counter is compiled with v3's features too and calls the AVX-512
// slider fills out of line: compiled with v4's, LLVM read the child's
// boards with 128-bit loads straddling the caller's 64-bit stores, which
// cannot be forwarded (7% of the counter's samples on one load).
child_counter!(v4, V4, "avx2,bmi1,bmi2,lzcnt,popcnt");

/// Adds up the children's move counts, the children having white to move
/// when `WHITE`: a quiet move off the kept squares of `fixed` for its
/// piece adds `replies` unplayed, a quiet move or capture off its
/// recounted squares adds them with the repliers' [`Mobility`] recounted
/// on its board (see [`unchanged_replies`]), any other move is played and
/// its child counted.
struct CountChildren<'p, const WHITE: bool, I: Isa> {
    pos: &'p Chess,
    isa: I,
    replies: u64,
    /// `replies` less the [`Mobility`] on the parent's board.
    immobile_replies: u64,
    mobility: Mobility,
    fixed: FixedSquares,
    total: u64,
}

impl<'p, const WHITE: bool, I: Isa> CountChildren<'p, WHITE, I> {
    /// Ready to count the children of `pos`, whose side to move is the
    /// other colour than `WHITE` says.
    #[inline(always)]
    fn new(pos: &'p Chess, isa: I) -> Self {
        let (replies, immobile_replies, mobility, fixed) =
            match unchanged_replies::fixed_squares(pos, isa, !WHITE) {
                Some((fixed, mobility)) => {
                    let mut passed = *pos;
                    passed.side = pos.side.other();
                    passed.en_passant = NO_SQUARE;
                    let replies = count_child::<WHITE, I>(&passed, isa);
                    (replies, replies - mobility.base(), mobility, fixed)
                }
                None => (0, 0, Mobility::NONE, FixedSquares::ALL),
            };
        CountChildren {
            pos,
            isa,
            replies,
            immobile_replies,
            mobility,
            fixed,
            total: 0,
        }
    }

    /// Plays `mv` and counts the child. Every hand-out place of the
    /// generator inlines this with the move's kind a constant, so
    /// `play_board_only` folds to that kind's few updates.
    #[inline(always)]
    fn play(&mut self, mv: ChessMove) {
        let child = self.pos.play_board_only(self.isa, mv);
        self.total += count_child::<WHITE, I>(&child, self.isa);
    }

    /// Adds the unchanged replies of `same` children.
    #[inline(always)]
    fn add_unplayed(&mut self, same: u64) {
        self.total += u64::from(same.count_ones()) * self.replies;
    }

    /// Adds the replies of the child of a capture from `from` (a board)
    /// onto `to`, only the [`Mobility`] recounted.
    #[inline(always)]
    fn add_captured(&mut self, from: u64, to: Square) {
        self.total +=
            self.mobility
                .replies_after_capture::<WHITE, I>(self.isa, self.immobile_replies, from, to);
    }

    /// Adds the replies of the child of a quiet move that leaves and
    /// enters the squares of `moved`, only the [`Mobility`] recounted.
    #[inline(always)]
    fn add_remobilised(&mut self, moved: u64) {
        self.total += self.immobile_replies + self.mobility.after_quiet::<WHITE, I>(self.isa, moved);
    }
}

/// The moves [`CountChildren`] plays, one at a time: the bulk hand-outs
/// are expanded by [`Sink`]'s own expansion for an [`EachMove`].
struct Played<'c, 'p, const WHITE: bool, I: Isa>(&'c mut CountChildren<'p, WHITE, I>);

impl<const WHITE: bool, I: Isa> EachMove for Played<'_, '_, WHITE, I> {
    #[inline(always)]
    fn each(&mut self, mv: ChessMove) {
        self.0.play(mv);
    }
}

impl<const WHITE: bool, I: Isa> Sink for CountChildren<'_, WHITE, I> {
    #[inline(always)]
    fn targets(&mut self, from: Square, piece: Piece, targets: u64) {
        let recounted = self.fixed.recounted(piece);
        let from_bit = bit(from);
        if recounted & from_bit != 0 {
            Played(self).targets(from, piece, targets);
            return;
        }
        let kept = self.fixed.kept(piece);
        let same = if kept & from_bit == 0 { targets & !kept } else { 0 };
        self.add_unplayed(same);
        let open = targets & !recounted & !same;
        let repliers = self.mobility.repliers();
        for to in Squares(open & !repliers) {
            self.add_remobilised(from_bit | bit(to));
        }
        for to in Squares(open & repliers) {
            self.add_captured(from_bit, to);
        }
        Played(self).targets(from, piece, targets & recounted);
    }

    #[inline(always)]
    fn pawns(&mut self, targets: u64, offset: i8, kind: MoveKind) {
        // A double push that gives them no en passant capture is as quiet
        // as a single one: the square it crosses is empty before and after.
        // (A capture without promotion is `Normal` too.)
        let quiet = match kind {
            MoveKind::Normal => targets,
            MoveKind::DoublePush => targets & self.fixed.no_en_passant(),
            _ => 0,
        };
        // A target's `from` is `offset` behind it: shift the fixed
        // squares as far forward to test both at once.
        let kept = self.fixed.kept(Piece::Pawn);
        let recounted = self.fixed.recounted(Piece::Pawn);
        let same = quiet & !kept & !shifted_forward(kept, offset);
        let open = quiet & !recounted & !shifted_forward(recounted, offset) & !same;
        self.add_unplayed(same);
        let repliers = self.mobility.repliers();
        for to in Squares(open & !repliers) {
            self.add_remobilised(bit(to) | bit(to.wrapping_sub(offset as u8)));
        }
        for to in Squares(open & repliers) {
            self.add_captured(bit(to.wrapping_sub(offset as u8)), to);
        }
        Played(self).pawns(targets ^ same ^ open, offset, kind);
    }

    #[inline(always)]
    fn promotions(&mut self, targets: u64, offset: i8) {
        Played(self).promotions(targets, offset);
    }

    #[inline(always)]
    fn one(&mut self, mv: ChessMove) {
        self.play(mv);
    }
}

/// `squares` moved `offset` squares up the board (down when negative).
#[inline(always)]
fn shifted_forward(squares: u64, offset: i8) -> u64 {
    if offset > 0 {
        squares << offset
    } else {
        squares >> -offset
    }
}

/// The leaves two plies below `pos` (mates and stalemates one ply down
/// add nothing), sliders looked up on `isa`.
#[inline(always)]
pub(super) fn count_two_plies<I: Isa>(pos: &Chess, isa: I) -> u64 {
    match pos.side {
        Colour::White => {
            let mut children = CountChildren::<false, I>::new(pos, isa);
            generate::<true, _, I>(pos, &mut children, isa);
            children.total
        }
        Colour::Black => {
            let mut children = CountChildren::<true, I>::new(pos, isa);
            generate::<false, _, I>(pos, &mut children, isa);
            children.total
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::playouts::{Playouts, varied_positions};
    use crate::game::Game;

    /// The sum over the move list of each child's count, the slow way.
    fn two_plies_by_list(pos: &Chess) -> u64 {
        pos.legal_moves()
            .iter()
            .map(|&mv| pos.play(mv).count_moves())
            .sum()
    }

    /// Every kernel's two-ply count agrees with playing the move list, on
    /// the varied positions of the chess tests, position 5 and more random
    /// playouts.
    #[test]
    fn two_plies_agree_with_the_move_list_on_every_kernel() {
        let mut positions = varied_positions();
        positions.push(
            "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8"
                .parse()
                .expect("a valid FEN"),
        );
        let mut playouts = Playouts::new(0x2545_F491_4F6C_DD1D);
        for _ in 0..100 {
            positions.push(playouts.end(Chess::start(), 100));
        }
        for pos in &positions {
            let expected = two_plies_by_list(pos);
            assert_eq!(count_two_plies(pos, Portable), expected, "{pos}");
            if let Some(v3) = crate::kernel::V3::detect() {
                assert_eq!(count_two_plies(pos, v3), expected, "{pos}");
            }
            if let Some(v4) = crate::kernel::V4::detect() {
                assert_eq!(count_two_plies(pos, v4), expected, "{pos}");
            }
        }
    }
}
