//! Reversi statistics: the two kinds of leaf the game has besides a disc
//! placed, passes and game overs, in either counting convention.

use super::bitboard::legal_moves_mask_on;
use super::oeis::ReversiOeis;
use super::position::{Reversi, ReversiMove};
use crate::count::Leaves;
use crate::game::Game;
use crate::kernel::{Isa, Portable};
use crate::stats::{GameStats, LeafStats, tally};

tally! {
    /// Reversi leaves by kind. Every leaf is one of: a disc placed at the
    /// last ply, a pass at the last ply, or a node where neither side can
    /// move (some of which a disc placed at the last ply also reached).
    ReversiStats {
        /// Full-depth leaves reached by a pass: the side to move had no
        /// move and its opponent had one.
        passes,
        /// Leaves where neither side can move, whatever their depth: a
        /// full-depth node where the game is over, and, in Bik's
        /// convention, each game-over leaf above full depth (the "higher"
        /// ones, and those one ply above, counted at full depth behind
        /// their final pass).
        game_overs,
    }
}

impl ReversiStats {
    /// Nothing is a sum of other kinds.
    fn parts_add_up(&self) -> bool {
        true
    }
}

/// Whether neither side has a move.
#[inline(always)]
fn is_over<I: Isa>(isa: I, player: u64, opponent: u64) -> bool {
    legal_moves_mask_on(isa, player, opponent) == 0 && legal_moves_mask_on(isa, opponent, player) == 0
}

/// The leaves one ply below `pos` and their kinds. A game over here (one
/// ply above full depth) is one full-depth game-over leaf where
/// `game_over_is_leaf`, nothing otherwise: what the plain count's depth 1
/// counts.
#[inline(always)]
fn children<I: Isa>(isa: I, pos: &Reversi, game_over_is_leaf: bool) -> LeafStats<ReversiStats> {
    let mut squares = legal_moves_mask_on(isa, pos.player, pos.opponent);
    if squares == 0 {
        let (leaves, kinds) = if legal_moves_mask_on(isa, pos.opponent, pos.player) != 0 {
            (
                1,
                ReversiStats {
                    passes: 1,
                    game_overs: 0,
                },
            )
        } else if game_over_is_leaf {
            (
                1,
                ReversiStats {
                    passes: 0,
                    game_overs: 1,
                },
            )
        } else {
            (0, ReversiStats::default())
        };
        return LeafStats {
            leaves: Leaves::full(leaves),
            kinds,
        };
    }
    let leaves = squares.count_ones();
    let mut game_overs = 0u32;
    while squares != 0 {
        let child = pos.play_on(isa, ReversiMove::place(squares.trailing_zeros() as u8));
        game_overs += u32::from(is_over(isa, child.player, child.opponent));
        squares &= squares - 1;
    }
    LeafStats {
        leaves: Leaves::full(leaves.into()),
        kinds: ReversiStats {
            passes: 0,
            game_overs: game_overs.into(),
        },
    }
}

/// The kinds of the leaf `mv` makes at the last ply: a pass, or a disc
/// placed that may end the game.
fn move_kinds(pos: &Reversi, mv: ReversiMove) -> ReversiStats {
    if mv.square().is_none() {
        return ReversiStats {
            passes: 1,
            game_overs: 0,
        };
    }
    let child = pos.play(mv);
    ReversiStats {
        passes: 0,
        game_overs: is_over(Portable, child.player, child.opponent).into(),
    }
}

impl GameStats for Reversi {
    type Stats = ReversiStats;

    /// A game over is a game-over leaf; any other node reached by no move
    /// has no kind.
    fn node_kinds(&self) -> ReversiStats {
        ReversiStats {
            passes: 0,
            game_overs: is_over(Portable, self.player, self.opponent).into(),
        }
    }

    #[inline(always)]
    fn children_stats<I: Isa>(&self, isa: I) -> LeafStats<ReversiStats> {
        children(isa, self, Self::GAME_OVER_IS_LEAF)
    }

    fn move_kinds(&self, mv: ReversiMove) -> ReversiStats {
        move_kinds(self, mv)
    }
}

impl GameStats for ReversiOeis {
    type Stats = ReversiStats;

    fn node_kinds(&self) -> ReversiStats {
        self.0.node_kinds()
    }

    #[inline(always)]
    fn children_stats<I: Isa>(&self, isa: I) -> LeafStats<ReversiStats> {
        children(isa, &self.0, Self::GAME_OVER_IS_LEAF)
    }

    fn move_kinds(&self, mv: ReversiMove) -> ReversiStats {
        move_kinds(&self.0, mv)
    }
}
