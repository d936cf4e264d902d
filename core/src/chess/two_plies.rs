//! The last two plies of perft in one pass: every legal move is played the
//! moment the generator hands it out, with its piece and kind known at
//! that place, and the child's moves are counted at once. No move list is
//! written, read back or dispatched on.
//!
//! The child counter is one out-of-line function per instruction set, so
//! the generator's twenty-odd hand-out places each inline a short `play`
//! and a call, not a whole move generator.

use super::bitboard::{Square, bit};
use super::movegen::{count_moves_on, generate};
use super::position::{Chess, ChessMove, Colour, MoveKind, NO_SQUARE, Piece};
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
/// when `WHITE`: a quiet move off every square of `fixed` for its piece
/// adds `replies` unplayed (see [`unchanged_replies`]), any other move is
/// played and its child counted.
struct CountChildren<'p, const WHITE: bool, I: Isa> {
    pos: &'p Chess,
    isa: I,
    replies: u64,
    fixed: FixedSquares,
    total: u64,
}

impl<'p, const WHITE: bool, I: Isa> CountChildren<'p, WHITE, I> {
    /// Ready to count the children of `pos`, whose side to move is the
    /// other colour than `WHITE` says.
    #[inline(always)]
    fn new(pos: &'p Chess, isa: I) -> Self {
        let (replies, fixed) = match unchanged_replies::fixed_squares(pos, isa, !WHITE) {
            Some(fixed) => {
                let mut passed = *pos;
                passed.side = pos.side.other();
                passed.en_passant = NO_SQUARE;
                (count_child::<WHITE, I>(&passed, isa), fixed)
            }
            None => (0, FixedSquares::ALL),
        };
        CountChildren {
            pos,
            isa,
            replies,
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
        let fixed = self.fixed.of(piece);
        let same = if fixed & bit(from) == 0 {
            targets & !fixed
        } else {
            0
        };
        self.add_unplayed(same);
        Played(self).targets(from, piece, targets ^ same);
    }

    #[inline(always)]
    fn pawns(&mut self, targets: u64, offset: i8, kind: MoveKind) {
        let same = if matches!(kind, MoveKind::Normal) {
            // A target's `from` is `offset` behind it: shift the fixed
            // squares as far forward to test both at once.
            let fixed = self.fixed.of(Piece::Pawn);
            let fixed_behind = if offset > 0 {
                fixed << offset
            } else {
                fixed >> -offset
            };
            targets & !fixed & !fixed_behind
        } else {
            0
        };
        self.add_unplayed(same);
        Played(self).pawns(targets ^ same, offset, kind);
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
    use crate::chess::playouts::Playouts;
    use crate::game::Game;

    /// The sum over the move list of each child's count, the slow way.
    fn two_plies_by_list(pos: &Chess) -> u64 {
        pos.legal_moves()
            .iter()
            .map(|&mv| pos.play(mv).count_moves())
            .sum()
    }

    /// Every kernel's two-ply count agrees with playing the move list, on
    /// positions of random playouts and on the standard test positions.
    #[test]
    fn two_plies_agree_with_the_move_list_on_every_kernel() {
        let mut positions: Vec<Chess> = [
            "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
            "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
            "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
            "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
        ]
        .iter()
        .map(|fen| fen.parse().expect("a valid FEN"))
        .collect();
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
