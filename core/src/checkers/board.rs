//! Board geometry of the 32 playable squares: one-step shifts in the four
//! diagonal directions, and the rows where men are crowned.
//!
//! Square rows alternate: on rows 0, 2, 4, 6 (squares 1-4, 9-12, ...) the
//! squares stand on files b, d, f, h; on the odd rows on files a, c, e, g.
//! So a step towards 32 is +4 or +5 from an even row and +3 or +4 from an
//! odd one, with masks for the edge files.

/// Squares on even rows (1-4, 9-12, 17-20, 25-28).
const EVEN_ROWS: u32 = 0x0F0F_0F0F;
/// Squares on odd rows (5-8, 13-16, 21-24, 29-32).
const ODD_ROWS: u32 = 0xF0F0_F0F0;
/// First square of each row: on odd rows that is the a file.
const FIRST_OF_ROW: u32 = 0x1111_1111;
/// Last square of each row: on even rows that is the h file.
const LAST_OF_ROW: u32 = 0x8888_8888;

/// Squares 29-32, where dark men are crowned.
pub(crate) const DARK_CROWN_ROW: u32 = 0xF000_0000;
/// Squares 1-4, where light men are crowned.
pub(crate) const LIGHT_CROWN_ROW: u32 = 0x0000_000F;

/// A diagonal direction on the board seen with square 1 at the top left.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Direction {
    /// Towards 32, towards the a file (+4 / +3): forward for dark.
    DownLeft = 0,
    /// Towards 32, towards the h file (+5 / +4): forward for dark.
    DownRight = 1,
    /// Towards 1, towards the a file (-4 / -5): forward for light.
    UpLeft = 2,
    /// Towards 1, towards the h file (-3 / -4): forward for light.
    UpRight = 3,
}

impl Direction {
    /// All four, in the order of their numeric codes.
    pub const ALL: [Direction; 4] = [
        Direction::DownLeft,
        Direction::DownRight,
        Direction::UpLeft,
        Direction::UpRight,
    ];

    /// The direction with code `code & 3`.
    pub(crate) const fn from_code(code: u32) -> Direction {
        Direction::ALL[(code & 3) as usize]
    }

    /// Moves every square of `squares` one step; squares that would leave
    /// the board vanish.
    #[inline(always)]
    pub const fn step(self, squares: u32) -> u32 {
        match self {
            Direction::DownLeft => ((squares & EVEN_ROWS) << 4) | ((squares & ODD_ROWS & !FIRST_OF_ROW) << 3),
            Direction::DownRight => ((squares & EVEN_ROWS & !LAST_OF_ROW) << 5) | ((squares & ODD_ROWS) << 4),
            Direction::UpLeft => ((squares & EVEN_ROWS) >> 4) | ((squares & ODD_ROWS & !FIRST_OF_ROW) >> 5),
            Direction::UpRight => ((squares & EVEN_ROWS & !LAST_OF_ROW) >> 3) | ((squares & ODD_ROWS) >> 4),
        }
    }

    /// The direction back.
    #[inline(always)]
    pub const fn opposite(self) -> Direction {
        match self {
            Direction::DownLeft => Direction::UpRight,
            Direction::DownRight => Direction::UpLeft,
            Direction::UpLeft => Direction::DownRight,
            Direction::UpRight => Direction::DownLeft,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Direction;

    /// (row, file) of a square 1..=32 on the 8x8 board.
    fn coordinates(square: u32) -> (i32, i32) {
        let row = ((square - 1) / 4) as i32;
        let index = ((square - 1) % 4) as i32;
        (row, 2 * index + i32::from(row % 2 == 0))
    }

    #[test]
    fn steps_match_board_coordinates() {
        for (direction, (dr, df)) in Direction::ALL
            .into_iter()
            .zip([(1, -1), (1, 1), (-1, -1), (-1, 1)])
        {
            for square in 1..=32u32 {
                let (row, file) = coordinates(square);
                let target = (1..=32).find(|&t| coordinates(t) == (row + dr, file + df));
                let stepped = direction.step(1 << (square - 1));
                assert_eq!(
                    stepped,
                    target.map_or(0, |t| 1 << (t - 1)),
                    "{direction:?} from {square}"
                );
                assert_eq!(
                    direction.opposite().step(stepped),
                    if stepped == 0 { 0 } else { 1 << (square - 1) }
                );
            }
        }
    }

    #[test]
    fn standard_corners() {
        // 1-5 and 1-6 from the double corner; 4 has a single neighbour, 8.
        assert_eq!(Direction::DownLeft.step(1), 1 << 4);
        assert_eq!(Direction::DownRight.step(1), 1 << 5);
        assert_eq!(Direction::DownLeft.step(1 << 3), 1 << 7);
        assert_eq!(Direction::DownRight.step(1 << 3), 0);
    }
}
