//! Squares and bitboards: bit `8 * rank + file` is the square, a1 = 0,
//! h1 = 7, a8 = 56. The leaper and line tables are built at compile time.

use perft_slider_layout::{BISHOP_STEPS, ROOK_STEPS, ray_attacks};

/// A square index, 0 (a1) to 63 (h8).
pub type Square = u8;

/// Squares of file a.
pub const FILE_A: u64 = 0x0101_0101_0101_0101;
/// Squares of file h.
pub const FILE_H: u64 = FILE_A << 7;
/// Squares of rank 1.
pub const RANK_1: u64 = 0xFF;
/// Squares of rank 8.
pub const RANK_8: u64 = RANK_1 << 56;

/// Every square a knight on some square of `knights` jumps to, by shifts
/// (no table, no loop).
#[inline(always)]
pub const fn knight_attacks(knights: u64) -> u64 {
    let not_a = !FILE_A;
    let not_ab = !(FILE_A | FILE_A << 1);
    let not_h = !FILE_H;
    let not_gh = !(FILE_H | FILE_H >> 1);
    (knights << 17 | knights >> 15) & not_a
        | (knights << 15 | knights >> 17) & not_h
        | (knights << 10 | knights >> 6) & not_ab
        | (knights << 6 | knights >> 10) & not_gh
}

/// Every square next to some square of `squares`, by shifts.
#[inline(always)]
pub const fn king_attacks(squares: u64) -> u64 {
    let sideways = (squares << 1) & !FILE_A | (squares >> 1) & !FILE_H;
    let row = squares | sideways;
    sideways | row << 8 | row >> 8
}

/// The single-bit board of `square`.
#[inline(always)]
pub const fn bit(square: Square) -> u64 {
    1u64 << square
}

/// File of a square, 0 (a) to 7 (h).
#[inline(always)]
pub const fn file_of(square: Square) -> u8 {
    square & 7
}

/// Rank of a square, 0 (rank 1) to 7 (rank 8).
#[inline(always)]
pub const fn rank_of(square: Square) -> u8 {
    square >> 3
}

/// The square as written in UCI and FEN (`e4`).
pub fn square_name(square: Square) -> String {
    let file = char::from(b'a' + file_of(square));
    let rank = char::from(b'1' + rank_of(square));
    format!("{file}{rank}")
}

/// Parses `e4` into a square.
pub fn parse_square(text: &str) -> Option<Square> {
    match text.as_bytes() {
        &[file @ b'a'..=b'h', rank @ b'1'..=b'8'] => Some((rank - b'1') * 8 + (file - b'a')),
        _ => None,
    }
}

/// Iterates the squares of a bitboard, lowest first.
#[derive(Clone, Copy, Debug)]
pub struct Squares(pub u64);

impl Iterator for Squares {
    type Item = Square;
    #[inline(always)]
    fn next(&mut self) -> Option<Square> {
        if self.0 == 0 {
            return None;
        }
        // `& 63` tells the compiler the square indexes 64-entry tables
        // (no bounds checks); the board is not empty, so it changes nothing.
        let square = (self.0.trailing_zeros() & 63) as Square;
        self.0 &= self.0 - 1;
        Some(square)
    }
}

/// The squares reached from `square` by each (file, rank) step in `steps`,
/// without leaving the board.
const fn leaper(square: usize, steps: &[(i32, i32)]) -> u64 {
    let (file, rank) = ((square % 8) as i32, (square / 8) as i32);
    let mut targets = 0u64;
    let mut i = 0;
    while i < steps.len() {
        let (f, r) = (file + steps[i].0, rank + steps[i].1);
        if f >= 0 && f < 8 && r >= 0 && r < 8 {
            targets |= 1u64 << (r * 8 + f);
        }
        i += 1;
    }
    targets
}

const fn leaper_table(steps: &[(i32, i32)]) -> [u64; 64] {
    let mut table = [0u64; 64];
    let mut square = 0;
    while square < 64 {
        table[square] = leaper(square, steps);
        square += 1;
    }
    table
}

/// Knight targets of each square.
pub static KNIGHT: [u64; 64] = leaper_table(&[
    (1, 2),
    (2, 1),
    (2, -1),
    (1, -2),
    (-1, -2),
    (-2, -1),
    (-2, 1),
    (-1, 2),
]);
/// King targets of each square.
pub static KING: [u64; 64] = leaper_table(&[
    (1, 0),
    (1, 1),
    (0, 1),
    (-1, 1),
    (-1, 0),
    (-1, -1),
    (0, -1),
    (1, -1),
]);
/// Squares a white pawn on each square attacks.
pub static WHITE_PAWN_ATTACKS: [u64; 64] = leaper_table(&[(-1, 1), (1, 1)]);
/// Squares a black pawn on each square attacks.
pub static BLACK_PAWN_ATTACKS: [u64; 64] = leaper_table(&[(-1, -1), (1, -1)]);

/// Rook moves from each square on an empty board: its rank and file.
pub static ROOK_RAYS: [u64; 64] = empty_board_rays(&ROOK_STEPS);
/// Bishop moves from each square on an empty board: its two diagonals.
pub static BISHOP_RAYS: [u64; 64] = empty_board_rays(&BISHOP_STEPS);

/// The slider's attacks from every square with no blocker.
const fn empty_board_rays(steps: &[(i32, i32); 4]) -> [u64; 64] {
    let mut rays = [0u64; 64];
    let mut square = 0;
    while square < 64 {
        rays[square] = ray_attacks(square, 0, steps);
        square += 1;
    }
    rays
}

/// Squares strictly between two squares on a common line, or 0.
/// Indexed `[a][b]`.
pub static BETWEEN: [[u64; 64]; 64] = line_tables().0;
/// The whole line (edge to edge) through two squares on a common line, or
/// 0. Indexed `[a][b]`.
pub static LINE: [[u64; 64]; 64] = line_tables().1;

const fn line_tables() -> ([[u64; 64]; 64], [[u64; 64]; 64]) {
    let mut between = [[0u64; 64]; 64];
    let mut line = [[0u64; 64]; 64];
    let all: [(i32, i32); 8] = [
        (1, 0),
        (-1, 0),
        (0, 1),
        (0, -1),
        (1, 1),
        (1, -1),
        (-1, 1),
        (-1, -1),
    ];
    let mut a = 0;
    while a < 64 {
        let mut d = 0;
        while d < 8 {
            let (df, dr) = all[d];
            // The full line through `a` in this direction, both ways.
            let mut full = 1u64 << a;
            let mut sign = -1;
            while sign <= 1 {
                let (mut f, mut r) = ((a % 8) as i32, (a / 8) as i32);
                loop {
                    f += sign * df;
                    r += sign * dr;
                    if f < 0 || f >= 8 || r < 0 || r >= 8 {
                        break;
                    }
                    full |= 1u64 << (r * 8 + f);
                }
                sign += 2;
            }
            let (mut f, mut r) = ((a % 8) as i32, (a / 8) as i32);
            let mut path = 0u64;
            loop {
                f += df;
                r += dr;
                if f < 0 || f >= 8 || r < 0 || r >= 8 {
                    break;
                }
                let b = (r * 8 + f) as usize;
                between[a][b] = path;
                line[a][b] = full;
                path |= 1u64 << b;
            }
            d += 1;
        }
        a += 1;
    }
    (between, line)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shifts reach exactly the table's squares, from every square and
    /// from all squares at once.
    #[test]
    fn knight_attacks_by_shifts_are_the_table() {
        let mut all = 0;
        for square in 0..64u8 {
            assert_eq!(
                knight_attacks(bit(square)),
                KNIGHT[usize::from(square)],
                "{square}"
            );
            all |= KNIGHT[usize::from(square)];
        }
        assert_eq!(knight_attacks(!0), all);
    }

    /// The shifts reach exactly the king table's squares.
    #[test]
    fn king_attacks_by_shifts_are_the_table() {
        for square in 0..64u8 {
            assert_eq!(king_attacks(bit(square)), KING[usize::from(square)], "{square}");
        }
        assert_eq!(king_attacks(bit(0) | bit(63)), KING[0] | KING[63]);
    }
}
