//! Why a FEN text was refused: the one error of the FEN parser and its
//! castling field.

/// Why a FEN text was refused. Each message is one line naming the fault;
/// text from the input is cut to 80 characters, control characters escaped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FenError {
    /// Not 4 to 6 space-separated fields.
    #[error(
        "a FEN has 6 fields (board, side, castling, en passant, halfmove, fullmove) or EPD's first 4, found {found}"
    )]
    FieldCount {
        /// Fields found.
        found: usize,
    },
    /// The board does not have eight `/`-separated ranks.
    #[error("the board has {found} ranks separated by '/', expected 8")]
    RankCount {
        /// Ranks found.
        found: usize,
    },
    /// A rank that does not describe exactly eight squares.
    #[error("rank {rank} '{found}' does not describe exactly 8 squares")]
    RankLength {
        /// The rank, 1-8.
        rank: u8,
        /// The rank's text.
        found: String,
    },
    /// A character that is neither a piece letter nor a digit 1-8.
    #[error("'{found}' in rank {rank} is not a piece letter (PNBRQK, pnbrqk) or a digit 1-8")]
    BadPiece {
        /// The rank, 1-8.
        rank: u8,
        /// The character, escaped.
        found: String,
    },
    /// The side to move is not `w` or `b`.
    #[error("the side to move must be 'w' or 'b', found '{found}'")]
    BadSide {
        /// The field as given.
        found: String,
    },
    /// A castling field that is not `-` or letters of X-FEN (`KQkq`) or
    /// Shredder-FEN (rook files `A`-`H`, `a`-`h`).
    #[error(
        "the castling field must be '-' or letters KQkq (X-FEN) or rook files A-H/a-h (Shredder-FEN), found '{found}'"
    )]
    BadCastling {
        /// The field as given.
        found: String,
    },
    /// Two castling rights for one side of a king.
    #[error("the castling field '{found}' gives {colour} two rights on the {side}-side of its king")]
    CastlingSideTwice {
        /// The field as given.
        found: String,
        /// Whose rights.
        colour: &'static str,
        /// The side, by the file it points at: `h` or `a`.
        side: char,
    },
    /// An en passant field that is not `-` or a square on the rank a pawn
    /// of the side not to move has just passed.
    #[error("the en passant field must be '-' or a square on rank {rank}, found '{found}'")]
    BadEnPassant {
        /// The rank it must be on, 3 or 6.
        rank: u8,
        /// The field as given.
        found: String,
    },
    /// An en passant square no double push can have left.
    #[error(
        "en passant square {square} needs a {colour} pawn just past it and the two squares behind it empty"
    )]
    EnPassantWithoutPush {
        /// The square.
        square: String,
        /// The side that pushed.
        colour: &'static str,
    },
    /// A clock that is not a number in range.
    #[error("the {clock} clock must be a number from {min} to 65535, found '{found}'")]
    BadClock {
        /// `halfmove` or `fullmove`.
        clock: &'static str,
        /// Its smallest value.
        min: u16,
        /// The field as given.
        found: String,
    },
    /// Not exactly one king of a colour.
    #[error("{colour} has {count} kings, a side needs exactly one")]
    KingCount {
        /// `white` or `black`.
        colour: &'static str,
        /// Kings found.
        count: u32,
    },
    /// More than sixteen pieces of a colour.
    #[error("{colour} has {count} pieces, a side has at most 16")]
    TooManyPieces {
        /// `white` or `black`.
        colour: &'static str,
        /// Pieces found.
        count: u32,
    },
    /// More pieces than the side's missing pawns could have promoted to:
    /// such material bounds no move count (the move list holds 256; a
    /// position within this rule has at most 218).
    #[error(
        "{colour} has {extra} more queens, rooks, bishops or knights than its {missing} missing pawns could have become"
    )]
    TooManyPromoted {
        /// `white` or `black`.
        colour: &'static str,
        /// Pieces beyond the starting set.
        extra: u32,
        /// Pawns off the board.
        missing: u32,
    },
    /// A pawn on rank 1 or 8.
    #[error("a pawn on {square} cannot exist: pawns never stand on rank 1 or 8")]
    PawnOnBackRank {
        /// The square.
        square: String,
    },
    /// The side that just moved left its king attacked.
    #[error("{colour} is in check but it is {to_move}'s move")]
    OpponentInCheck {
        /// The side in check.
        colour: &'static str,
        /// The side to move.
        to_move: &'static str,
    },
    /// A castling right whose king is not on its back rank.
    #[error("castling right '{right}' needs the {colour} king on rank {rank}")]
    CastlingWithoutKing {
        /// The letter of the right.
        right: char,
        /// Whose right.
        colour: &'static str,
        /// The back rank, 1 or 8.
        rank: u8,
    },
    /// A castling right without its rook.
    #[error("castling right '{right}' needs a {colour} rook {rook}")]
    CastlingWithoutRook {
        /// The letter of the right.
        right: char,
        /// Whose right.
        colour: &'static str,
        /// Where the rook must stand (`on h1`, `on rank 1 on the h-side of
        /// its king`).
        rook: String,
    },
}
