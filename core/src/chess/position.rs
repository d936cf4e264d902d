//! The chess position and its moves, with the attack queries the move
//! generator, FEN and playing share: the vocabulary of the chess folder,
//! importing only bitboards and slider attacks.

use arrayvec::ArrayVec;

use super::attacks;
use super::bitboard::{
    BISHOP_RAYS, BLACK_PAWN_ATTACKS, FILE_A, FILE_H, KING, KNIGHT, ROOK_RAYS, Square, WHITE_PAWN_ATTACKS,
    bit, knight_attacks,
};
use super::fills;
use crate::game::MoveSet;
use crate::kernel::Isa;

/// A side.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Colour {
    /// Moves first; pawns move up the board (towards rank 8).
    White = 0,
    /// Pawns move down the board.
    Black = 1,
}

impl Colour {
    /// The other side.
    pub const fn other(self) -> Colour {
        match self {
            Colour::White => Colour::Black,
            Colour::Black => Colour::White,
        }
    }

    /// Index into per-colour arrays.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// `white` or `black`, for messages.
    pub const fn name(self) -> &'static str {
        match self {
            Colour::White => "white",
            Colour::Black => "black",
        }
    }
}

/// A piece type; the value indexes [`Chess`]'s per-type boards.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Piece {
    /// Pawn.
    Pawn = 0,
    /// Knight.
    Knight = 1,
    /// Bishop.
    Bishop = 2,
    /// Rook.
    Rook = 3,
    /// Queen.
    Queen = 4,
    /// King.
    King = 5,
}

impl Piece {
    /// Every piece type, in index order.
    pub const ALL: [Piece; 6] = [
        Piece::Pawn,
        Piece::Knight,
        Piece::Bishop,
        Piece::Rook,
        Piece::Queen,
        Piece::King,
    ];

    /// Index into per-type arrays.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The lower-case letter of FEN (black) and of UCI promotions.
    pub const fn letter(self) -> char {
        match self {
            Piece::Pawn => 'p',
            Piece::Knight => 'n',
            Piece::Bishop => 'b',
            Piece::Rook => 'r',
            Piece::Queen => 'q',
            Piece::King => 'k',
        }
    }
}

/// No en passant square.
pub(super) const NO_SQUARE: u8 = 64;

/// A chess position: pieces by colour and by type, the side to move,
/// castling rights, the en passant square and the two clocks.
///
/// Invariants (checked when parsing, kept by `play`): one king a side,
/// no pawn on rank 1 or 8, the side not to move is not in check, every
/// castling rook stands on its side's back rank with its king, at most one
/// on each side of the king, and `en_passant` is set only when a legal en
/// passant capture exists.
#[derive(Clone, Copy, Debug)]
pub struct Chess {
    pub(super) colours: [u64; 2],
    pub(super) pieces: [u64; 6],
    pub(super) side: Colour,
    /// The rooks that may still castle (any file: Chess960's too).
    pub(super) castling_rooks: u64,
    /// The square a pawn passed over, or [`NO_SQUARE`].
    pub(super) en_passant: u8,
    pub(super) halfmove: u16,
    pub(super) fullmove: u16,
    /// Moves are written as UCI_Chess960 engines write them: castling as
    /// the king taking its rook. Set when parsing a Chess960 placement, or
    /// by [`Chess::with_chess960_notation`]; it changes no count or key.
    pub(super) chess960: bool,
}

impl Chess {
    /// Everything but the notation flag, which is not part of the position.
    fn identity(&self) -> (&[u64; 2], &[u64; 6], Colour, u64, u8, u16, u16) {
        (
            &self.colours,
            &self.pieces,
            self.side,
            self.castling_rooks,
            self.en_passant,
            self.halfmove,
            self.fullmove,
        )
    }
}

/// Equal positions are equal whichever notation their moves are written in.
impl PartialEq for Chess {
    fn eq(&self, other: &Chess) -> bool {
        self.identity() == other.identity()
    }
}

impl Eq for Chess {}

impl std::hash::Hash for Chess {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.identity().hash(state);
    }
}

impl Chess {
    /// No piece, white to move, no rights: where the FEN parser and the
    /// packed decoder start filling in a position.
    pub(super) const EMPTY: Chess = Chess {
        colours: [0; 2],
        pieces: [0; 6],
        side: Colour::White,
        castling_rooks: 0,
        en_passant: NO_SQUARE,
        halfmove: 0,
        fullmove: 1,
        chess960: false,
    };
}

/// What a move does besides moving one piece.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MoveKind {
    /// A plain move or capture.
    Normal,
    /// A pawn's two-square advance.
    DoublePush,
    /// A pawn taking en passant.
    EnPassant,
    /// Castling: the king takes its own rook (`to` is the rook's square)
    /// and both land on their castled squares.
    Castle,
    /// A pawn reaching the last rank, becoming this piece.
    Promotion(Piece),
}

/// A chess move: the piece, where it goes, and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ChessMove {
    pub(super) from: Square,
    pub(super) to: Square,
    pub(super) piece: Piece,
    pub(super) kind: MoveKind,
}

impl ChessMove {
    /// The square the piece leaves.
    pub const fn from(&self) -> Square {
        self.from
    }

    /// The square it goes to (for castling, the castling rook's).
    pub const fn to(&self) -> Square {
        self.to
    }

    /// The piece that moves.
    pub const fn piece(&self) -> Piece {
        self.piece
    }

    /// What else the move does.
    pub const fn kind(&self) -> MoveKind {
        self.kind
    }
}

/// Most legal moves any chess position has is 218; 256 leaves room.
pub const MAX_MOVES: usize = 256;

/// The legal moves of a chess position.
pub type ChessMoves = ArrayVec<ChessMove, MAX_MOVES>;

impl MoveSet<ChessMove> for ChessMoves {
    #[inline(always)]
    fn len(&self) -> usize {
        ArrayVec::len(self)
    }
}

/// Every square some pawn of `colour` on `pawns` attacks, by shifts.
#[inline(always)]
pub(super) const fn pawn_attacks(colour: Colour, pawns: u64) -> u64 {
    match colour {
        Colour::White => (pawns & !FILE_A) << 7 | (pawns & !FILE_H) << 9,
        Colour::Black => (pawns & !FILE_A) >> 9 | (pawns & !FILE_H) >> 7,
    }
}

/// Squares from which a pawn of `colour` attacks `square`.
#[inline(always)]
pub(super) fn pawn_attackers_of(colour: Colour, square: Square) -> u64 {
    // A white pawn attacks `square` from where a black pawn on `square`
    // would attack.
    match colour {
        Colour::White => BLACK_PAWN_ATTACKS[usize::from(square)],
        Colour::Black => WHITE_PAWN_ATTACKS[usize::from(square)],
    }
}

impl Chess {
    /// The pieces of one side.
    pub const fn side_pieces(&self, colour: Colour) -> u64 {
        self.colours[colour.index()]
    }

    /// The pieces of one type, both sides.
    pub const fn pieces_of(&self, piece: Piece) -> u64 {
        self.pieces[piece.index()]
    }

    /// The side to move.
    pub const fn side_to_move(&self) -> Colour {
        self.side
    }

    /// Whether the side to move is in check.
    pub fn in_check(&self) -> bool {
        let king = self.king(self.side);
        self.is_attacked(crate::kernel::Portable, king, self.side.other(), self.occupied())
    }

    /// The en passant square, kept only when a legal capture exists there.
    pub const fn en_passant(&self) -> Option<Square> {
        if self.en_passant == NO_SQUARE {
            None
        } else {
            Some(self.en_passant)
        }
    }

    /// All pieces.
    #[inline(always)]
    pub(super) const fn occupied(&self) -> u64 {
        self.colours[0] | self.colours[1]
    }

    /// The king square of `colour`.
    #[inline(always)]
    pub(super) const fn king(&self, colour: Colour) -> Square {
        // Every position has both kings, so `& 63` changes nothing (and
        // spares bounds checks where the square indexes a table).
        ((self.pieces[Piece::King as usize] & self.colours[colour.index()]).trailing_zeros() & 63) as Square
    }

    /// The piece on `square`, if any.
    pub fn piece_on(&self, square: Square) -> Option<(Colour, Piece)> {
        let b = bit(square);
        let colour = if self.colours[0] & b != 0 {
            Colour::White
        } else if self.colours[1] & b != 0 {
            Colour::Black
        } else {
            return None;
        };
        let piece = Piece::ALL.into_iter().find(|p| self.pieces[p.index()] & b != 0)?;
        Some((colour, piece))
    }

    /// Pieces of `by` attacking `square`, with `occupied` as the blockers
    /// and `removed` taken off `by`'s pieces.
    #[inline(always)]
    pub(super) fn attackers<I: Isa>(
        &self,
        isa: I,
        square: Square,
        by: Colour,
        occupied: u64,
        removed: u64,
    ) -> u64 {
        let theirs = self.colours[by.index()] & !removed;
        let s = usize::from(square);
        let rooks = (self.pieces[Piece::Rook as usize] | self.pieces[Piece::Queen as usize]) & theirs;
        let bishops = (self.pieces[Piece::Bishop as usize] | self.pieces[Piece::Queen as usize]) & theirs;
        let mut found = (KNIGHT[s] & self.pieces[Piece::Knight as usize] & theirs)
            | (KING[s] & self.pieces[Piece::King as usize] & theirs)
            | (pawn_attackers_of(by, square) & self.pieces[Piece::Pawn as usize] & theirs);
        // A slider is looked up only when one stands on the square's lines.
        if ROOK_RAYS[s] & rooks != 0 {
            found |= attacks::rook(isa, square, occupied) & rooks;
        }
        if BISHOP_RAYS[s] & bishops != 0 {
            found |= attacks::bishop(isa, square, occupied) & bishops;
        }
        found
    }

    /// Whether some piece of `by` attacks `square`, with `occupied` as the
    /// blockers: [`Chess::attackers`] as a yes or no, stopping at the first
    /// kind found (leapers first, a slider looked up only when one stands
    /// on the square's lines).
    #[inline(always)]
    pub(super) fn is_attacked<I: Isa>(&self, isa: I, square: Square, by: Colour, occupied: u64) -> bool {
        let theirs = self.colours[by.index()];
        let s = usize::from(square);
        let rooks = (self.pieces[Piece::Rook as usize] | self.pieces[Piece::Queen as usize]) & theirs;
        let bishops = (self.pieces[Piece::Bishop as usize] | self.pieces[Piece::Queen as usize]) & theirs;
        (KNIGHT[s] & self.pieces[Piece::Knight as usize] & theirs) != 0
            || (pawn_attackers_of(by, square) & self.pieces[Piece::Pawn as usize] & theirs) != 0
            || (KING[s] & self.pieces[Piece::King as usize] & theirs) != 0
            || (ROOK_RAYS[s] & rooks != 0 && attacks::rook(isa, square, occupied) & rooks != 0)
            || (BISHOP_RAYS[s] & bishops != 0 && attacks::bishop(isa, square, occupied) & bishops != 0)
    }

    /// Every square some piece of `by` attacks, with `occupied` as the
    /// blockers: the sliders filled at once on x86-64-v3 and v4, else one
    /// lookup a slider; knights and pawns by shifts, the king by its table.
    #[inline(always)]
    pub(super) fn attacked_squares<I: Isa>(&self, isa: I, by: Colour, occupied: u64) -> u64 {
        let theirs = self.colours[by.index()];
        let queens = self.pieces[Piece::Queen as usize];
        let pawns = self.pieces[Piece::Pawn as usize] & theirs;
        let mut attacked =
            KING[usize::from(self.king(by))] | knight_attacks(self.pieces[Piece::Knight as usize] & theirs);
        attacked |= pawn_attacks(by, pawns);
        attacked
            | fills::attacked(
                isa,
                (self.pieces[Piece::Rook as usize] | queens) & theirs,
                (self.pieces[Piece::Bishop as usize] | queens) & theirs,
                occupied,
            )
    }

    /// Whether the side to move can take en passant from `from` onto
    /// `to` without leaving its king attacked. This is the one move tested
    /// on the board after it: taking removes two pieces from one rank, which
    /// no pin ray describes.
    #[inline(always)]
    pub(super) fn en_passant_is_legal<I: Isa>(&self, isa: I, from: Square, to: Square) -> bool {
        let captured = bit(to ^ 8);
        let occupied = (self.occupied() ^ bit(from) ^ captured) | bit(to);
        let king = self.king(self.side);
        self.attackers(isa, king, self.side.other(), occupied, captured) == 0
    }

    /// The en passant square to keep after a double push over `passed`:
    /// the square when some pawn of the side to move can legally take.
    #[inline(always)]
    pub(super) fn legal_en_passant<I: Isa>(&self, isa: I, passed: Square) -> u8 {
        let capturers = pawn_attackers_of(self.side, passed)
            & self.pieces[Piece::Pawn as usize]
            & self.colours[self.side.index()];
        // A loop, not a closure: this is inlined into each kernel copy.
        for from in super::bitboard::Squares(capturers) {
            if self.en_passant_is_legal(isa, from, passed) {
                return passed;
            }
        }
        NO_SQUARE
    }
}

impl Chess {
    /// The same position with colours swapped and the board flipped
    /// vertically: the mirror has the same perft counts and table key.
    pub fn colour_flipped(&self) -> Chess {
        let swap = |[white, black]: [u64; 2]| [black.swap_bytes(), white.swap_bytes()];
        Chess {
            colours: swap(self.colours),
            pieces: self.pieces.map(u64::swap_bytes),
            side: self.side.other(),
            castling_rooks: self.castling_rooks.swap_bytes(),
            en_passant: if self.en_passant == NO_SQUARE {
                self.en_passant
            } else {
                self.en_passant ^ 56
            },
            halfmove: self.halfmove,
            fullmove: self.fullmove,
            chess960: self.chess960,
        }
    }
}
