//! The replies that a move changes by occupancy alone. Two plies above the
//! leaves, most moves of the side to move leave every reply legal as it
//! was and only open or close squares for the other side's free (unpinned)
//! sliders and pawns (see [`unchanged_replies`](super::unchanged_replies)
//! for when). Their child's count is then the parent's replies with those
//! pieces' moves recounted on the child's board: one slider fill and a few
//! pawn shifts in place of a whole move generation.

use super::bitboard::{FILE_A, FILE_H, KNIGHT, RANK_1, RANK_8, Square, bit};
use super::fills;
use crate::kernel::Isa;

/// The replying side's free pieces whose moves the occupancy decides.
#[derive(Clone, Copy)]
pub(super) struct FreePieces {
    /// Its free rooks and queens.
    pub(super) straight: u64,
    /// Its free bishops and queens.
    pub(super) diagonal: u64,
    /// Its free pawns.
    pub(super) pawns: u64,
    /// Its free knights, whose number of moves changes only when one of
    /// them is taken or a square they attack changes colour.
    pub(super) knights: u64,
}

/// The moves of the replying side's [`FreePieces`] on the parent's board,
/// and what they depend on, to recount them on a child's.
#[derive(Clone, Copy)]
pub(super) struct Mobility {
    free: FreePieces,
    /// Every piece of the replying side: what its moves may not land on.
    repliers: u64,
    /// Every piece of the side to move, before its move.
    movers: u64,
    /// The squares the free sliders' moves depend on: their rays.
    slider_squares: u64,
    /// The squares the free pawns' moves depend on: their pushes and
    /// captures.
    pawn_squares: u64,
    /// The free sliders' moves on the parent's board.
    base_sliders: u64,
    /// The free pawns' moves on the parent's board.
    base_pawns: u64,
}

impl Mobility {
    /// No pieces: for a parent whose children are all played.
    pub(super) const NONE: Mobility = Mobility {
        free: FreePieces {
            straight: 0,
            diagonal: 0,
            pawns: 0,
            knights: 0,
        },
        repliers: 0,
        movers: 0,
        slider_squares: 0,
        pawn_squares: 0,
        base_sliders: 0,
        base_pawns: 0,
    };

    /// The mobility of `free` pieces of the replying side (white when
    /// `WHITE`), whose pieces are `repliers`, against `movers`; their
    /// sliders' rays are `slider_squares`, their pawns' pushes and captures
    /// `pawn_squares`.
    #[inline(always)]
    pub(super) fn new<const WHITE: bool, I: Isa>(
        isa: I,
        free: FreePieces,
        repliers: u64,
        movers: u64,
        slider_squares: u64,
        pawn_squares: u64,
    ) -> Mobility {
        let mut mobility = Mobility {
            free,
            repliers,
            movers,
            slider_squares,
            pawn_squares,
            base_sliders: 0,
            base_pawns: 0,
        };
        let occupied = repliers | movers;
        mobility.base_sliders = mobility.sliders(isa, occupied);
        mobility.base_pawns = mobility.pawns::<WHITE>(occupied, movers);
        mobility
    }

    /// The free sliders' and pawns' moves on the parent's board.
    #[inline(always)]
    pub(super) fn base(&self) -> u64 {
        self.base_sliders + self.base_pawns
    }

    /// Every piece of the replying side.
    #[inline(always)]
    pub(super) fn repliers(&self) -> u64 {
        self.repliers
    }

    /// The replying side's (white's when `WHITE`) free sliders' and pawns'
    /// moves once a quiet move has left and entered the squares of
    /// `moved`, each part recounted only when the move touches a square it
    /// depends on.
    #[inline(always)]
    pub(super) fn after_quiet<const WHITE: bool, I: Isa>(&self, isa: I, moved: u64) -> u64 {
        let movers = self.movers ^ moved;
        let occupied = movers | self.repliers;
        let sliders = if moved & self.slider_squares != 0 {
            self.sliders(isa, occupied)
        } else {
            self.base_sliders
        };
        let pawns = if moved & self.pawn_squares != 0 {
            self.pawns::<WHITE>(occupied, movers)
        } else {
            self.base_pawns
        };
        sliders + pawns
    }

    /// The replies after the mover's piece left the square of `from` (a
    /// board) and took on `to`, given the replies the parent's board has
    /// beside the mobility (`immobile`): the taken piece's own moves gone,
    /// each free knight attacking `to` one move richer, the free sliders
    /// and pawns recounted.
    #[inline(always)]
    pub(super) fn replies_after_capture<const WHITE: bool, I: Isa>(
        &self,
        isa: I,
        immobile: u64,
        from: u64,
        to: Square,
    ) -> u64 {
        let taken = bit(to);
        let attacking = KNIGHT[usize::from(to)];
        // A taken knight's moves are in `immobile`; any other piece's are
        // the mobility's, which leaves it out below.
        let lost = if self.free.knights & taken != 0 {
            u64::from((attacking & !self.repliers).count_ones())
        } else {
            0
        };
        let gained = u64::from((attacking & self.free.knights).count_ones());
        let without = Mobility {
            free: FreePieces {
                straight: self.free.straight & !taken,
                diagonal: self.free.diagonal & !taken,
                pawns: self.free.pawns & !taken,
                knights: self.free.knights & !taken,
            },
            repliers: self.repliers ^ taken,
            ..*self
        };
        let movers = self.movers ^ from ^ taken;
        let occupied = movers | without.repliers;
        immobile - lost + gained + without.sliders(isa, occupied) + without.pawns::<WHITE>(occupied, movers)
    }

    /// The free sliders' moves with `occupied` blocking.
    #[inline(always)]
    fn sliders<I: Isa>(&self, isa: I, occupied: u64) -> u64 {
        fills::moves(
            isa,
            self.free.straight,
            self.free.diagonal,
            occupied,
            !self.repliers,
        )
    }

    /// The free pawns' moves (white's when `WHITE`), with `occupied`
    /// blocking and `movers` to take.
    #[inline(always)]
    fn pawns<const WHITE: bool>(&self, occupied: u64, movers: u64) -> u64 {
        let empty = !occupied;
        let pawns = self.free.pawns;
        let (single, double, west, east, last) = if WHITE {
            let single = pawns << 8 & empty;
            (
                single,
                (single & RANK_1 << 16) << 8 & empty,
                (pawns & !FILE_A) << 7 & movers,
                (pawns & !FILE_H) << 9 & movers,
                RANK_8,
            )
        } else {
            let single = pawns >> 8 & empty;
            (
                single,
                (single & RANK_8 >> 16) >> 8 & empty,
                (pawns & !FILE_A) >> 9 & movers,
                (pawns & !FILE_H) >> 7 & movers,
                RANK_1,
            )
        };
        // A promotion is four moves.
        let promoting =
            (single & last).count_ones() + (west & last).count_ones() + (east & last).count_ones();
        let moves =
            single.count_ones() + double.count_ones() + west.count_ones() + east.count_ones() + 3 * promoting;
        u64::from(moves)
    }
}
