//! The contract every game meets so that perft, divide, the splitter and the
//! transposition table can be written once and monomorphized per game.

use std::error::Error;
use std::fmt::{Debug, Display};
use std::hash::Hash;
use std::str::FromStr;

use crate::kernel::{Isa, Kernel};
use crate::published::Published;
use crate::table_key::TableKey;

/// One `perft bench` case: a depth from the start, counted bare (one
/// thread, no table) or by the whole engine with a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BenchCase {
    /// Plies from the start.
    pub depth: u32,
    /// Whether the case uses the table, planner and threads.
    pub table: bool,
}

/// A game's `perft bench` cases: quick ones (seconds) and the ones of the
/// speed targets (minutes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BenchCases {
    /// Cases of a plain `perft bench`.
    pub quick: &'static [BenchCase],
    /// Cases of `perft bench --full`.
    pub full: &'static [BenchCase],
}

/// A set of legal moves handed out in bulk, so that perft at depth 1 counts
/// with [`MoveSet::len`] and deeper levels iterate without allocation.
pub trait MoveSet<M>: IntoIterator<Item = M> {
    /// Number of moves in the set.
    fn len(&self) -> usize;

    /// True when the side to move has no move at all (not even a pass).
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A position of a two-player game, copy-made: [`Game::play`] returns the
/// child and leaves `self` untouched.
///
/// Positions are validated on the way in ([`FromStr`] returns a typed error),
/// so every value of an implementing type is a position that can exist.
pub trait Game:
    Copy + Eq + Hash + Debug + Display + FromStr<Err = Self::PositionError> + Send + Sync + 'static
{
    /// A move, including a pass where the game has passes.
    type Move: Copy + Eq + Debug + Send + Sync;
    /// The legal moves of a position, in a fixed-capacity container.
    type Moves: MoveSet<Self::Move>;
    /// The position as the transposition table keys it: normalised so that
    /// positions with equal perft counts share it (colour-free, and reduced
    /// by the board's symmetries where the game has them).
    type Key: TableKey + Hash;
    /// Why a position text was refused.
    type PositionError: Error + Send + Sync + 'static;

    /// Lower-case name used on the command line and the wire.
    const NAME: &'static str;
    /// One line for help texts: the game and how its positions are written.
    const ABOUT: &'static str;
    /// Whether divide tables list first moves sorted by their notation
    /// (chess: as Stockfish users and perftree compare them) rather than in
    /// generation order.
    const SORT_DIVIDE: bool = false;
    /// The depths `perft bench` measures from the start.
    const BENCH: BenchCases;
    /// Subtrees at least this deep are looked up in the table; shallower
    /// ones cost less to recount than a probe (at least
    /// [`SHALLOWEST_STORED_DEPTH`](crate::table_key::SHALLOWEST_STORED_DEPTH)).
    const MIN_STORED_DEPTH: u32 = crate::table_key::MIN_STORED_DEPTH;
    /// Deepest perft accepted, so that no total can overflow `u128`.
    const MAX_DEPTH: u32;
    /// Bytes of the packed form.
    const PACKED_BYTES: usize;
    /// Most legal moves any accepted position can have: bounds every count,
    /// so a count from outside the process that no tree can reach is
    /// refused ([`Game::max_leaves`]).
    const MAX_MOVES: u32;
    /// Whether a node where the game is over before full depth counts as a
    /// leaf (Reversi: yes; checkers: no, it has no children and contributes
    /// nothing). Such a node two or more plies above full depth is reported
    /// as "higher"; one ply above, its final pass reaches full depth, so it
    /// is a full-depth leaf.
    const GAME_OVER_IS_LEAF: bool;
    /// The counting convention, for games with a choice
    /// ([`GameKind::conventions`](crate::GameKind::conventions)).
    const CONVENTION: Option<crate::Convention> = None;
    /// Added to the depth the table keys an entry by, so that game types
    /// sharing key words but counting differently (Reversi's two
    /// conventions) never read each other's entries in one table. The
    /// tagged depth must stay below 256.
    const TABLE_DEPTH_TAG: u32 = 0;
    /// The kernels this game counts on, fastest first; the first one the
    /// CPU runs is its default ([`Game::best_kernel`]). x86-64-v4 is listed
    /// only by games with AVX-512 code: for the others its copy of the
    /// recursion measured slower than v3's.
    const KERNELS: &'static [Kernel] = &[Kernel::X86_64V3, Kernel::Portable];

    /// Whether this game's x86-64-v4 code gains only where 512-bit
    /// operations run whole: on a CPU that splits them
    /// ([`Kernel::avx512_is_split`]), its v3 kernel is the default.
    const V4_NEEDS_WHOLE_512_BITS: bool = false;

    /// [`Game::KERNELS`] on this CPU: without x86-64-v4 where the game's v4
    /// code needs whole 512-bit operations and the CPU splits them.
    fn preferred_kernels() -> &'static [Kernel] {
        match Self::KERNELS {
            [Kernel::X86_64V4, rest @ ..] if Self::V4_NEEDS_WHOLE_512_BITS && Kernel::avx512_is_split() => {
                rest
            }
            all => all,
        }
    }

    /// The kernel this game counts on by default: the one named by
    /// `PERFT_KERNEL` when this CPU runs it, else the first of
    /// [`Game::preferred_kernels`] it runs.
    fn best_kernel() -> Kernel {
        Kernel::best_of(Self::preferred_kernels())
    }

    /// Most leaves a tree of `depth` plies can have: `MAX_MOVES^depth`
    /// (a game-over node counts at most one leaf), `u128::MAX` past that.
    fn max_leaves(depth: u32) -> u128 {
        u128::from(Self::MAX_MOVES)
            .checked_pow(depth)
            .unwrap_or(u128::MAX)
    }

    /// The standard starting position.
    fn start() -> Self;

    /// Appends exactly `PACKED_BYTES` bytes to `out`.
    fn pack(&self, out: &mut Vec<u8>);

    /// The position packed by `pack`, validated with the same invariants the text parser enforces.
    fn unpack(bytes: &[u8]) -> Result<Self, UnpackError>;

    /// The normalised key of this position. Two positions with the same key
    /// have the same perft count at every depth.
    fn table_key(&self) -> Self::Key;

    /// All legal moves. A side that must pass gets exactly one pass move; an
    /// empty set means the game is over.
    fn legal_moves(&self) -> Self::Moves;

    /// Calls `f` with every legal move, in the order of [`Game::legal_moves`].
    /// The counting recursion walks moves this way so that no move list is
    /// built or copied; games override it to hand out moves as generated.
    #[inline(always)]
    fn for_each_move(&self, mut f: impl FnMut(Self::Move)) {
        for mv in self.legal_moves() {
            f(mv);
        }
    }

    /// The number of legal moves, as `legal_moves().len()` but as cheap as
    /// the game can make it: this is the whole work of a depth-1 node.
    fn count_moves(&self) -> u64;

    /// The position after `mv`, which must be one of `self.legal_moves()`.
    fn play(&self, mv: Self::Move) -> Self;

    /// [`Game::for_each_move`] on the instructions `isa` allows: what the
    /// counting kernels call.
    #[inline(always)]
    fn for_each_move_on<I: Isa>(&self, isa: I, f: impl FnMut(Self::Move)) {
        let _ = isa;
        self.for_each_move(f);
    }

    /// [`Game::count_moves`] on the instructions `isa` allows.
    #[inline(always)]
    fn count_moves_on<I: Isa>(&self, isa: I) -> u64 {
        let _ = isa;
        self.count_moves()
    }

    /// The leaves two plies below, all at full depth, when the game counts
    /// them faster than by playing each move and counting its child's
    /// moves; `None` (the default) lets the kernel do that. A game whose
    /// game-over nodes are leaves ([`Game::GAME_OVER_IS_LEAF`]) must return
    /// `None` wherever a leaf could lie above full depth.
    #[inline(always)]
    fn count_two_plies_on<I: Isa>(&self, isa: I) -> Option<u64> {
        let _ = isa;
        None
    }

    /// The leaves three plies below, all at full depth, when the game
    /// counts them faster than the recursion over [`Game::count_two_plies_on`];
    /// `None` (the default) lets the kernel recurse. The same rule on leaves
    /// above full depth holds.
    #[inline(always)]
    fn count_three_plies_on<I: Isa>(&self, isa: I) -> Option<u64> {
        let _ = isa;
        None
    }

    /// [`Game::play`] on the instructions `isa` allows, for the counting
    /// recursion only: fields that change no count and no table key (chess's
    /// clocks) may keep the parent's values.
    #[inline(always)]
    fn play_on<I: Isa>(&self, isa: I, mv: Self::Move) -> Self {
        let _ = isa;
        self.play(mv)
    }

    /// The move in the game's notation (`d3`, `pass`, `11-15`, `1x10x19`,
    /// `e7e8q`).
    fn format_move(&self, mv: Self::Move) -> String;

    /// Whether `mv` is of a kind move generators most often get wrong
    /// (chess: castling, en passant, promotions, double pushes; checkers:
    /// multi-jumps and crownings; Reversi: passes): random playouts that
    /// look for bugs prefer these. Cold path.
    fn is_edge_case(&self, mv: Self::Move) -> bool {
        let _ = mv;
        false
    }

    /// What was published for this game from its start at `depth`, if
    /// anything (the tables shipped in `core/data`).
    fn published(depth: u32) -> Option<Published>;

    /// The depths with a published count from the start, deepest last.
    fn published_depths() -> Vec<u32>;

    /// Parses a move in the game's notation and checks that it is legal here.
    /// The text must be exactly what [`Game::format_move`] writes (surrounding
    /// spaces aside): case matters in notations such as chess's `e7e8q`. A
    /// game with aliases overrides this.
    fn parse_move(&self, text: &str) -> Result<Self::Move, MoveError> {
        let wanted = text.trim();
        self.legal_moves()
            .into_iter()
            .find(|&mv| self.format_move(mv) == wanted)
            .ok_or_else(|| MoveError::Illegal {
                text: crate::echoed(wanted),
                position: self.to_string(),
            })
    }
}

/// Why bytes are no packed position of a game.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnpackError {
    /// Not the game's [`Game::PACKED_BYTES`].
    #[error("a packed {game} position is {expected} bytes, found {found}")]
    Length {
        /// [`Game::NAME`].
        game: &'static str,
        /// [`Game::PACKED_BYTES`].
        expected: usize,
        /// Bytes given.
        found: usize,
    },
    /// The right length, but no position that can exist (or not the one
    /// way `pack` writes it).
    #[error("packed {game} position: {reason}")]
    Invalid {
        /// [`Game::NAME`].
        game: &'static str,
        /// What is wrong, one line.
        reason: String,
    },
}

/// `bytes` as an array of the packed length `N`, or the [`UnpackError::Length`]
/// naming `game`: the first step of every `unpack`.
pub(crate) fn packed_array<const N: usize>(game: &'static str, bytes: &[u8]) -> Result<[u8; N], UnpackError> {
    bytes.try_into().map_err(|_| UnpackError::Length {
        game,
        expected: N,
        found: bytes.len(),
    })
}

/// Why a move text was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MoveError {
    /// The text is no legal move in the position.
    #[error("'{text}' is not a legal move in position '{position}'")]
    Illegal {
        /// The move as given.
        text: String,
        /// The position it was tried in.
        position: String,
    },
    /// A short capture text that fits several sequences.
    #[error("'{text}' fits several capture sequences ({}); give every landing square", candidates.join(", "))]
    Ambiguous {
        /// The move as given.
        text: String,
        /// The sequences it fits.
        candidates: Vec<String>,
    },
}
