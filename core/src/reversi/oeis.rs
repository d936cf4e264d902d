//! Reversi counted in OEIS A124004's convention, as its own [`Game`]: the
//! tree of Bik's convention (a side with no move passes, and the pass is a
//! ply), but a game that ends before full depth contributes nothing, where
//! Bik's counts it as one leaf.
//!
//! That is what the published terms are: A124004(9) equals Bik's perft(9)
//! (3,005,288), though 24 nodes at ply 8 must pass and their opponents
//! have 56 replies; were a pass free (the opponent moving within the same
//! ply) the term would be 3,005,320. From there on each term is Bik's
//! count less its game-over leaves: A124004(10) = 24,571,284 - 228 (the
//! games over at ply 9, which Bik's counts at full depth behind their
//! final pass). The position, its text, packed form, moves and table key
//! are Bik's Reversi's; only the game-over rule differs, so the counting
//! recursion is compiled once per convention.

use std::fmt;
use std::str::FromStr;

use super::bitboard::{count_three_plies_on, count_two_plies_on};
use super::position::{Reversi, ReversiMove, ReversiMoves};
use crate::convention::Convention;
use crate::game::{BenchCase, BenchCases, Game, MoveError, UnpackError};
use crate::kernel::{Isa, Kernel};
use crate::published::Published;

/// A Reversi position counted in A124004's convention.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReversiOeis(pub Reversi);

impl FromStr for ReversiOeis {
    type Err = super::text::PositionError;

    fn from_str(text: &str) -> Result<ReversiOeis, Self::Err> {
        text.parse().map(ReversiOeis)
    }
}

impl fmt::Display for ReversiOeis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl Game for ReversiOeis {
    type Move = ReversiMove;
    type Moves = ReversiMoves;
    type Key = [u64; 2];
    type PositionError = super::text::PositionError;

    const NAME: &'static str = Reversi::NAME;
    const ABOUT: &'static str = Reversi::ABOUT;
    const CONVENTION: Option<Convention> = Some(Convention::Oeis);
    /// Apart from Bik's Reversi's entries, which share the key words.
    const TABLE_DEPTH_TAG: u32 = 128;
    const MAX_DEPTH: u32 = Reversi::MAX_DEPTH;
    const PACKED_BYTES: usize = Reversi::PACKED_BYTES;
    const MAX_MOVES: u32 = Reversi::MAX_MOVES;
    const GAME_OVER_IS_LEAF: bool = false;
    const MIN_STORED_DEPTH: u32 = Reversi::MIN_STORED_DEPTH;
    const KERNELS: &'static [Kernel] = Reversi::KERNELS;
    const V4_NEEDS_WHOLE_512_BITS: bool = Reversi::V4_NEEDS_WHOLE_512_BITS;
    /// Term 14 (184,041,761,768 leaves) is the speed target's case.
    const BENCH: BenchCases = BenchCases {
        quick: &[BenchCase {
            depth: 13,
            table: true,
        }],
        full: &[BenchCase {
            depth: 14,
            table: true,
        }],
    };

    fn start() -> ReversiOeis {
        ReversiOeis(Reversi::start())
    }

    fn pack(&self, out: &mut Vec<u8>) {
        self.0.pack(out);
    }

    fn unpack(bytes: &[u8]) -> Result<ReversiOeis, UnpackError> {
        Reversi::unpack(bytes).map(ReversiOeis)
    }

    #[inline(always)]
    fn table_key(&self) -> [u64; 2] {
        self.0.table_key()
    }

    #[inline(always)]
    fn legal_moves(&self) -> ReversiMoves {
        self.0.legal_moves()
    }

    #[inline(always)]
    fn for_each_move(&self, f: impl FnMut(ReversiMove)) {
        self.0.for_each_move(f);
    }

    #[inline(always)]
    fn for_each_move_on<I: Isa>(&self, isa: I, f: impl FnMut(ReversiMove)) {
        self.0.for_each_move_on(isa, f);
    }

    #[inline(always)]
    fn count_moves(&self) -> u64 {
        self.0.count_moves()
    }

    #[inline(always)]
    fn count_moves_on<I: Isa>(&self, isa: I) -> u64 {
        self.0.count_moves_on(isa)
    }

    /// Bik's vector count, with a child whose game is over counting
    /// nothing (a child that passes still counts its pass).
    #[inline(always)]
    fn count_two_plies_on<I: Isa>(&self, isa: I) -> Option<u64> {
        count_two_plies_on::<I, true>(isa, self.0.player, self.0.opponent)
    }

    /// Bik's lane count, with a grandchild whose game is over counting
    /// nothing.
    #[inline(always)]
    fn count_three_plies_on<I: Isa>(&self, isa: I) -> Option<u64> {
        count_three_plies_on::<I, true>(isa, self.0.player, self.0.opponent)
    }

    #[inline(always)]
    fn play(&self, mv: ReversiMove) -> ReversiOeis {
        ReversiOeis(self.0.play(mv))
    }

    #[inline(always)]
    fn play_on<I: Isa>(&self, isa: I, mv: ReversiMove) -> ReversiOeis {
        ReversiOeis(self.0.play_on(isa, mv))
    }

    fn format_move(&self, mv: ReversiMove) -> String {
        self.0.format_move(mv)
    }

    fn published(depth: u32) -> Option<Published> {
        super::published::oeis(depth)
    }

    fn published_depths() -> Vec<u32> {
        super::published::oeis_depths()
    }

    /// As Bik's Reversi: upper-case squares (`F5`) and `PASS` too.
    fn parse_move(&self, text: &str) -> Result<ReversiMove, MoveError> {
        self.0.parse_move(text)
    }
}
