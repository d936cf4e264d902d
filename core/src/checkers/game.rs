//! Checkers as a [`Game`]: compulsory, completed captures; a side with no
//! move has lost, so a game over contributes no leaf.

use super::movegen;
use super::position::{Checkers, CheckersMove, CheckersMoves, MAX_MOVES, Side};
use crate::game::{BenchCase, BenchCases, Game, MoveError};
use crate::kernel::Isa;
use crate::published::Published;

impl Game for Checkers {
    type Move = CheckersMove;
    type Moves = CheckersMoves;
    type Key = [u64; 2];
    type PositionError = super::fen::FenError;

    const NAME: &'static str = "checkers";
    // perft(28) is 1.6e19 with a branching factor under 5: depth 40 stays
    // below 1e28, far inside u128.
    const MAX_DEPTH: u32 = 40;
    /// Three boards and the side byte.
    const PACKED_BYTES: usize = super::packed::BYTES;
    const MAX_MOVES: u32 = MAX_MOVES as u32;
    const GAME_OVER_IS_LEAF: bool = false;
    /// Measured best (perft(16) with a 2 GiB table, one thread): 4 counts
    /// in 0.77x the time of 3; 5 in 1.27x that of 4. Depth-3 subtrees are
    /// cheaper to recount from the bulk-counted last plies than to look up.
    const MIN_STORED_DEPTH: u32 = 4;
    const ABOUT: &'static str = "English draughts 8x8; positions as PDN FEN";
    const BENCH: BenchCases = BenchCases {
        quick: &[
            BenchCase {
                depth: 11,
                table: false,
            },
            BenchCase {
                depth: 14,
                table: true,
            },
        ],
        full: &[
            BenchCase {
                depth: 12,
                table: false,
            },
            BenchCase {
                depth: 15,
                table: true,
            },
            BenchCase {
                depth: 16,
                table: true,
            },
        ],
    };

    fn start() -> Checkers {
        Checkers {
            dark: 0x0000_0FFF,
            light: 0xFFF0_0000,
            kings: 0,
            to_move: Side::Dark,
        }
    }

    fn pack(&self, out: &mut Vec<u8>) {
        super::packed::pack(self, out);
    }

    fn unpack(bytes: &[u8]) -> Result<Checkers, crate::game::UnpackError> {
        super::packed::unpack(bytes)
    }

    /// Side to move first, seen as dark: with light to move the board is
    /// turned 180 degrees (square n becomes 33 - n) and the colours swapped.
    #[inline(always)]
    fn table_key(&self) -> [u64; 2] {
        let (us, them, kings) = match self.to_move {
            Side::Dark => (self.dark, self.light, self.kings),
            Side::Light => (
                self.light.reverse_bits(),
                self.dark.reverse_bits(),
                self.kings.reverse_bits(),
            ),
        };
        [u64::from(us) | (u64::from(them) << 32), u64::from(kings)]
    }

    #[inline(always)]
    fn legal_moves(&self) -> CheckersMoves {
        let mut moves = CheckersMoves::new();
        match self.to_move {
            Side::Dark => movegen::generate::<true, _>(self, |mv| moves.push(mv)),
            Side::Light => movegen::generate::<false, _>(self, |mv| moves.push(mv)),
        }
        moves
    }

    /// Straight from the generator's sink: no list in between.
    #[inline(always)]
    fn for_each_move(&self, f: impl FnMut(CheckersMove)) {
        match self.to_move {
            Side::Dark => movegen::generate::<true, _>(self, f),
            Side::Light => movegen::generate::<false, _>(self, f),
        }
    }

    #[inline(always)]
    fn count_moves(&self) -> u64 {
        match self.to_move {
            Side::Dark => movegen::count::<true>(self),
            Side::Light => movegen::count::<false>(self),
        }
    }

    /// Steps' children counted from masks, without building them;
    /// `None` when the side to move must capture.
    #[inline(always)]
    fn count_two_plies_on<I: Isa>(&self, isa: I) -> Option<u64> {
        let _ = isa;
        match self.to_move {
            Side::Dark => movegen::count_two_plies::<true, false>(self),
            Side::Light => movegen::count_two_plies::<false, true>(self),
        }
    }

    #[inline(always)]
    fn play(&self, mv: CheckersMove) -> Checkers {
        let from = 1u32 << mv.from;
        let to = 1u32 << mv.to;
        // A king's capture may end where it began: then nothing moves.
        let moved = from ^ to;
        let (mut us, mut them) = match self.to_move {
            Side::Dark => (self.dark, self.light),
            Side::Light => (self.light, self.dark),
        };
        us ^= moved;
        them &= !mv.captured;
        let mut kings = self.kings & !mv.captured;
        if kings & from != 0 {
            kings ^= moved;
        } else {
            kings |= to & self.to_move.crown_row();
        }
        let (dark, light) = match self.to_move {
            Side::Dark => (us, them),
            Side::Light => (them, us),
        };
        Checkers {
            dark,
            light,
            kings,
            to_move: self.to_move.other(),
        }
    }

    /// Multi-jumps and crownings (a man reaching the far row).
    fn is_edge_case(&self, mv: CheckersMove) -> bool {
        let man = self.kings & (1 << mv.from) == 0;
        let far_row = match self.to_move {
            Side::Dark => 28..=31,
            Side::Light => 0..=3,
        };
        mv.jumps >= 2 || (man && far_row.contains(&mv.to))
    }

    fn format_move(&self, mv: CheckersMove) -> String {
        let separator = if mv.is_capture() { "x" } else { "-" };
        let mut text = mv.from_square().to_string();
        for square in mv.landings() {
            text.push_str(separator);
            text.push_str(&square.to_string());
        }
        text
    }

    fn published(depth: u32) -> Option<Published> {
        super::published::start(depth)
    }

    fn published_depths() -> Vec<u32> {
        super::published::start_depths()
    }

    /// Accepts the full notation (`11-15`, `1x10x19`) and, for a capture,
    /// the short `from x to` when only one sequence matches it.
    fn parse_move(&self, text: &str) -> Result<CheckersMove, MoveError> {
        let wanted = text.trim();
        let moves = self.legal_moves();
        if let Some(&mv) = moves.iter().find(|&&mv| self.format_move(mv) == wanted) {
            return Ok(mv);
        }
        let short: Vec<CheckersMove> = moves
            .iter()
            .copied()
            .filter(|&mv| mv.is_capture())
            .filter(|&mv| format!("{}x{}", mv.from_square(), mv.to_square()) == wanted)
            .collect();
        match short.as_slice() {
            [mv] => Ok(*mv),
            [] => Err(MoveError::Illegal {
                text: crate::echoed(wanted),
                position: self.to_string(),
            }),
            several => Err(MoveError::Ambiguous {
                text: crate::echoed(wanted),
                candidates: several.iter().map(|&mv| self.format_move(mv)).collect(),
            }),
        }
    }
}
