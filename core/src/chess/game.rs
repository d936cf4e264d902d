//! Chess as a [`Game`]: legal moves only, a promotion is four moves,
//! castling one, checkmate and stalemate above full depth contribute
//! nothing, no draw rules.

use super::fen_error::FenError;
use super::position::{Chess, ChessMove, ChessMoves, MAX_MOVES, MoveKind};
use super::{key, movegen, packed, published, two_plies};
use crate::game::{BenchCase, BenchCases, Game};
use crate::kernel::{Isa, Kernel, Portable};
use crate::published::Published;

impl Game for Chess {
    type Move = ChessMove;
    type Moves = ChessMoves;
    type Key = [u64; 3];
    type PositionError = FenError;

    const NAME: &'static str = "chess";
    /// The leaf counter fills its sliders' rays with AVX-512: Kiwipete
    /// perft(6) in 0.93x the time of the v3 kernel before the fills; start
    /// perft(7) in 0.96x v3's time, same binary.
    const KERNELS: &'static [Kernel] = &[Kernel::X86_64V4, Kernel::X86_64V3, Kernel::Portable];
    /// On Zen 4, which splits 512-bit operations, the fills' v4 copy
    /// counted 3-6% slower than the v3 one (Kiwipete perft(6), start
    /// perft(7)); on an Intel Xeon 6% faster; on Zen 5, which runs them
    /// whole, within 10% either way after the replies' recount (start
    /// perft(7) 1.09x slower, Kiwipete perft(6) 0.94x the time; BENCHMARKS.md).
    const V4_NEEDS_WHOLE_512_BITS: bool = true;
    /// No position has more than 218 legal moves, and 218^16 < 2.5e37 is
    /// below u128's 3.4e38, so no perft to depth 16 can overflow; 218^17
    /// could. (The start position passes 2^64 at depth 14.)
    const MAX_DEPTH: u32 = 16;
    /// Occupancy, 32 piece nibbles, flags, en passant and the two clocks.
    const PACKED_BYTES: usize = packed::BYTES;
    /// The move list's capacity, which no accepted position exceeds.
    const MAX_MOVES: u32 = MAX_MOVES as u32;
    const GAME_OVER_IS_LEAF: bool = false;
    const ABOUT: &'static str = "chess and Chess960; positions as FEN, X-FEN or Shredder-FEN (or EPD's first four fields), moves in UCI";
    const SORT_DIVIDE: bool = true;
    /// Depth-2 nodes are stored too, since a lookup in a 32-byte entry
    /// (half a cache line) costs less than the two plies it saves: start
    /// perft(8) with a 1 GiB table counts 1.17x faster, Kiwipete perft(6)
    /// 1.36x, than storing from depth 3 (`BENCHMARKS.md`).
    const MIN_STORED_DEPTH: u32 = 2;
    const BENCH: BenchCases = BenchCases {
        quick: &[
            BenchCase {
                depth: 6,
                table: false,
            },
            BenchCase {
                depth: 7,
                table: true,
            },
        ],
        full: &[
            BenchCase {
                depth: 7,
                table: false,
            },
            BenchCase {
                depth: 8,
                table: true,
            },
        ],
    };

    fn start() -> Chess {
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"
            .parse()
            .unwrap_or_else(|e| unreachable!("the start FEN is valid: {e}"))
    }

    fn pack(&self, out: &mut Vec<u8>) {
        packed::pack(self, out);
    }

    fn unpack(bytes: &[u8]) -> Result<Chess, crate::game::UnpackError> {
        packed::unpack(bytes)
    }

    #[inline(always)]
    fn table_key(&self) -> [u64; 3] {
        key::table_key(self)
    }

    #[inline(always)]
    fn legal_moves(&self) -> ChessMoves {
        movegen::legal_moves(self)
    }

    #[inline(always)]
    fn count_moves(&self) -> u64 {
        movegen::count_moves_on(self, Portable)
    }

    #[inline(always)]
    fn play(&self, mv: ChessMove) -> Chess {
        self.play_move(Portable, mv)
    }

    /// Moves generated into a list on the stack, then handed out: the
    /// callback (the next ply of the recursion) is not inlined at every
    /// place generation produces a move.
    #[inline(always)]
    fn for_each_move_on<I: Isa>(&self, isa: I, mut f: impl FnMut(ChessMove)) {
        let mut moves = ChessMoves::new();
        movegen::generate_into(self, &mut moves, isa);
        for &mv in moves.iter() {
            f(mv);
        }
    }

    #[inline(always)]
    fn count_moves_on<I: Isa>(&self, isa: I) -> u64 {
        movegen::count_moves_on(self, isa)
    }

    /// Each move played where it is generated, its child's moves counted
    /// at once: no move list at the last two plies.
    #[inline(always)]
    fn count_two_plies_on<I: Isa>(&self, isa: I) -> Option<u64> {
        Some(two_plies::count_two_plies(self, isa))
    }

    /// Without the clocks, which no count or key reads.
    #[inline(always)]
    fn play_on<I: Isa>(&self, isa: I, mv: ChessMove) -> Chess {
        self.play_board_only(isa, mv)
    }

    /// UCI; castling as the king taking its rook in Chess960 notation
    /// ([`Chess::chess960_notation`]), as the king's two-square move else.
    fn format_move(&self, mv: ChessMove) -> String {
        if self.chess960 {
            mv.uci_chess960()
        } else {
            mv.uci()
        }
    }

    fn is_edge_case(&self, mv: ChessMove) -> bool {
        !matches!(mv.kind(), MoveKind::Normal)
    }

    fn published(depth: u32) -> Option<Published> {
        published::start(depth)
    }

    fn published_depths() -> Vec<u32> {
        published::start_depths()
    }
}
