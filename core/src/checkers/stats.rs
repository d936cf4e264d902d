//! Checkers statistics: the leaf moves that capture, that capture more than
//! once, and that crown a man.

use super::position::{Checkers, CheckersMove};
use crate::count::Leaves;
use crate::game::Game;
use crate::kernel::Isa;
use crate::stats::{GameStats, LeafStats, tally};

tally! {
    /// Checkers leaves by kind: what the move played at the last ply did.
    CheckersStats {
        /// Leaf moves that capture (one piece or more).
        captures,
        /// Leaf moves that capture two pieces or more (a multi-jump); they
        /// are captures too.
        multi_jumps,
        /// Leaf moves that make a man a king by ending on the far row, by
        /// a step or a capture.
        crownings,
    }
}

impl CheckersStats {
    /// Multi-jumps are among the captures.
    fn parts_add_up(&self) -> bool {
        self.multi_jumps <= self.captures
    }
}

impl GameStats for Checkers {
    type Stats = CheckersStats;

    /// A leaf no move led to has no kind.
    fn node_kinds(&self) -> CheckersStats {
        CheckersStats::default()
    }

    /// Read off the moves as generated: nothing is played.
    #[inline(always)]
    fn children_stats<I: Isa>(&self, isa: I) -> LeafStats<CheckersStats> {
        let (mut leaves, mut captures, mut multi_jumps, mut crownings) = (0u32, 0u32, 0u32, 0u32);
        self.for_each_move_on(isa, |mv: CheckersMove| {
            let [capture, multi_jump, crowning] = kinds_of(self, mv);
            leaves += 1;
            captures += u32::from(capture);
            multi_jumps += u32::from(multi_jump);
            crownings += u32::from(crowning);
        });
        LeafStats {
            leaves: Leaves::full(leaves.into()),
            kinds: CheckersStats {
                captures: captures.into(),
                multi_jumps: multi_jumps.into(),
                crownings: crownings.into(),
            },
        }
    }

    fn move_kinds(&self, mv: CheckersMove) -> CheckersStats {
        let [capture, multi_jump, crowning] = kinds_of(self, mv).map(u128::from);
        CheckersStats {
            captures: capture,
            multi_jumps: multi_jump,
            crownings: crowning,
        }
    }
}

/// Whether `mv` captures, captures twice or more, and crowns a man.
#[inline(always)]
fn kinds_of(pos: &Checkers, mv: CheckersMove) -> [bool; 3] {
    let man = pos.kings & (1 << mv.from) == 0;
    [
        mv.jumps > 0,
        mv.jumps > 1,
        man && pos.to_move.crown_row() & (1 << mv.to) != 0,
    ]
}
