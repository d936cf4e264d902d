//! Reversi as a [`Game`]: Aart Bik's convention, where a pass is a ply
//! and a game over above full depth is one "higher" leaf.

use super::bitboard::{
    count_three_plies_on, count_two_plies_on, flips_on, legal_moves_mask, legal_moves_mask_on,
};
use super::position::{Disc, Reversi, ReversiMove, ReversiMoves};
use crate::convention::Convention;
use crate::game::{BenchCase, BenchCases, Game, MoveError};
use crate::kernel::{Isa, Kernel, Portable};
use crate::published::Published;

impl Game for Reversi {
    type Move = ReversiMove;
    type Moves = ReversiMoves;
    type Key = [u64; 2];
    type PositionError = super::text::PositionError;

    const NAME: &'static str = "reversi";
    // Growth slows below 10x a ply; 10^30 is far inside u128.
    const MAX_DEPTH: u32 = 30;
    /// Two boards and the side byte.
    const PACKED_BYTES: usize = super::packed::BYTES;
    /// One move per square at most.
    const MAX_MOVES: u32 = 64;
    const GAME_OVER_IS_LEAF: bool = true;
    const CONVENTION: Option<Convention> = Some(Convention::Bik);
    /// Measured best (perft(14) with a 2 GiB table, one thread): 4 counts
    /// in 0.79x the time of 3; 5 in 1.1x that of 4. Depth-3 subtrees are
    /// cheaper to recount with the vector kernels than to look up.
    const MIN_STORED_DEPTH: u32 = 4;
    /// Its flips use AVX-512 (1.38x the v3 kernel's raw speed).
    const KERNELS: &'static [Kernel] = &[Kernel::X86_64V4, Kernel::X86_64V3, Kernel::Portable];
    const ABOUT: &'static str = "Reversi (Othello) 8x8; positions as 64 squares a1..h8 and X or O";
    const BENCH: BenchCases = BenchCases {
        quick: &[
            BenchCase {
                depth: 11,
                table: false,
            },
            BenchCase {
                depth: 13,
                table: true,
            },
        ],
        full: &[
            BenchCase {
                depth: 12,
                table: false,
            },
            BenchCase {
                depth: 14,
                table: true,
            },
        ],
    };

    fn start() -> Reversi {
        // d5 and e4 dark, d4 and e5 light; dark to move.
        Reversi {
            player: (1 << 35) | (1 << 28),
            opponent: (1 << 27) | (1 << 36),
            to_move: Disc::Dark,
        }
    }

    fn pack(&self, out: &mut Vec<u8>) {
        super::packed::pack(self, out);
    }

    fn unpack(bytes: &[u8]) -> Result<Reversi, crate::game::UnpackError> {
        super::packed::unpack(bytes)
    }

    /// Colour-free and the smallest of the eight board symmetries.
    #[inline(always)]
    fn table_key(&self) -> [u64; 2] {
        super::symmetry::canonical(self.player, self.opponent)
    }

    #[inline(always)]
    fn legal_moves(&self) -> ReversiMoves {
        let squares = legal_moves_mask(self.player, self.opponent);
        ReversiMoves {
            squares,
            pass: squares == 0 && legal_moves_mask(self.opponent, self.player) != 0,
        }
    }

    /// The squares of the move mask in order, or the pass: no iterator
    /// state to test on every move.
    #[inline(always)]
    fn for_each_move(&self, f: impl FnMut(ReversiMove)) {
        self.for_each_move_on(Portable, f);
    }

    #[inline(always)]
    fn for_each_move_on<I: Isa>(&self, isa: I, mut f: impl FnMut(ReversiMove)) {
        let mut squares = legal_moves_mask_on(isa, self.player, self.opponent);
        if squares == 0 {
            if legal_moves_mask_on(isa, self.opponent, self.player) != 0 {
                f(ReversiMove::PASS);
            }
            return;
        }
        while squares != 0 {
            f(ReversiMove(squares.trailing_zeros() as u8));
            squares &= squares - 1;
        }
    }

    #[inline(always)]
    fn count_moves(&self) -> u64 {
        self.count_moves_on(Portable)
    }

    #[inline(always)]
    fn count_moves_on<I: Isa>(&self, isa: I) -> u64 {
        match legal_moves_mask_on(isa, self.player, self.opponent) {
            0 => u64::from(legal_moves_mask_on(isa, self.opponent, self.player) != 0),
            moves => u64::from(moves.count_ones()),
        }
    }

    /// Where the kernel has AVX2: every child's boards kept in vectors.
    /// A child without a move counts 1, as the kernel's depth 1 counts it
    /// (its pass, or its game over, lies at full depth); a parent without a
    /// move is left to the kernel.
    #[inline(always)]
    fn count_two_plies_on<I: Isa>(&self, isa: I) -> Option<u64> {
        count_two_plies_on::<I, false>(isa, self.player, self.opponent)
    }

    /// Where the kernel has AVX-512: the grandchildren eight at a time in
    /// lanes. `None` where a child has no move.
    #[inline(always)]
    fn count_three_plies_on<I: Isa>(&self, isa: I) -> Option<u64> {
        count_three_plies_on::<I, false>(isa, self.player, self.opponent)
    }

    #[inline(always)]
    fn play(&self, mv: ReversiMove) -> Reversi {
        self.play_on(Portable, mv)
    }

    #[inline(always)]
    fn play_on<I: Isa>(&self, isa: I, mv: ReversiMove) -> Reversi {
        let (player, opponent) = match mv.square() {
            None => (self.player, self.opponent),
            Some(square) => {
                let flipped = flips_on(isa, self.player, self.opponent, square);
                (self.player | flipped | (1 << square), self.opponent & !flipped)
            }
        };
        Reversi {
            player: opponent,
            opponent: player,
            to_move: self.to_move.other(),
        }
    }

    /// Passes.
    fn is_edge_case(&self, mv: ReversiMove) -> bool {
        mv.square().is_none()
    }

    fn format_move(&self, mv: ReversiMove) -> String {
        match mv.square() {
            None => "pass".to_owned(),
            Some(square) => super::text::square_name(square),
        }
    }

    fn published(depth: u32) -> Option<Published> {
        super::published::bik(depth)
    }

    fn published_depths() -> Vec<u32> {
        super::published::bik_depths()
    }

    /// Also accepts the upper-case squares of Othello literature (`F5`)
    /// and `PASS`.
    fn parse_move(&self, text: &str) -> Result<ReversiMove, MoveError> {
        let wanted = text.trim();
        self.legal_moves()
            .into_iter()
            .find(|&mv| self.format_move(mv).eq_ignore_ascii_case(wanted))
            .ok_or_else(|| MoveError::Illegal {
                text: wanted.to_owned(),
                position: self.to_string(),
            })
    }
}
