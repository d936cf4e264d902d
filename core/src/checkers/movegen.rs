//! Checkers move generation, monomorphized per side to move.
//!
//! Steps and the existence of a capture are found bit-parallel over all
//! pieces; capture sequences are then followed piece by piece by a small
//! recursion that visits every sequence once, so counting and listing share
//! one code path (a sink closure).

use super::board::Direction;
use super::position::{Checkers, CheckersMove};

/// Forward directions of the men of a side.
#[inline(always)]
const fn forward<const DARK: bool>() -> [Direction; 2] {
    if DARK {
        [Direction::DownLeft, Direction::DownRight]
    } else {
        [Direction::UpLeft, Direction::UpRight]
    }
}

/// Backward directions, open to kings only.
#[inline(always)]
const fn backward<const DARK: bool>() -> [Direction; 2] {
    if DARK {
        [Direction::UpLeft, Direction::UpRight]
    } else {
        [Direction::DownLeft, Direction::DownRight]
    }
}

/// What the side to move works with.
#[derive(Clone, Copy)]
struct Sides {
    us: u32,
    them: u32,
    kings: u32,
    empty: u32,
}

#[inline(always)]
fn sides<const DARK: bool>(pos: &Checkers) -> Sides {
    let (us, them) = if DARK {
        (pos.dark, pos.light)
    } else {
        (pos.light, pos.dark)
    };
    Sides {
        us,
        them,
        kings: us & pos.kings,
        empty: !(pos.dark | pos.light),
    }
}

/// Pieces of `movers` that can jump in `direction` right now.
#[inline(always)]
fn jumpers(movers: u32, them: u32, empty: u32, direction: Direction) -> u32 {
    let back = direction.opposite();
    back.step(back.step(empty) & them) & movers
}

/// The pieces of the side to move that can jump now: when not empty, the
/// side must capture, and only these pieces can start a sequence.
#[inline(always)]
fn capture_starts<const DARK: bool>(s: Sides) -> u32 {
    let [f1, f2] = forward::<DARK>();
    let [b1, b2] = backward::<DARK>();
    jumpers(s.us, s.them, s.empty, f1)
        | jumpers(s.us, s.them, s.empty, f2)
        | jumpers(s.kings, s.them, s.empty, b1)
        | jumpers(s.kings, s.them, s.empty, b2)
}

/// A capture sequence in progress.
#[derive(Clone, Copy)]
struct Jumping {
    from: u8,
    at: u32,
    king: bool,
    /// Opponent pieces not yet taken: a piece cannot be jumped twice.
    takeable: u32,
    captured: u32,
    path: u32,
    jumps: u8,
}

/// Follows every capture sequence from `j`, calling `sink` once per complete
/// sequence: one that cannot jump further, or a man just crowned.
#[inline(always)]
fn follow_captures<const DARK: bool, F: FnMut(CheckersMove)>(j: Jumping, empty: u32, sink: &mut F) {
    let mut extended = false;
    let [f1, f2] = forward::<DARK>();
    let [b1, b2] = backward::<DARK>();
    for (i, direction) in [f1, f2, b1, b2].into_iter().enumerate() {
        if i >= 2 && !j.king {
            break;
        }
        let over = direction.step(j.at) & j.takeable;
        let land = direction.step(over) & empty;
        if land == 0 {
            continue;
        }
        extended = true;
        let next = Jumping {
            at: land,
            takeable: j.takeable & !over,
            captured: j.captured | over,
            path: j.path | ((direction as u32) << (2 * j.jumps)),
            jumps: j.jumps + 1,
            ..j
        };
        let crown_row = if DARK {
            super::board::DARK_CROWN_ROW
        } else {
            super::board::LIGHT_CROWN_ROW
        };
        if !j.king && land & crown_row != 0 {
            // Crowned mid-capture: the move ends here.
            sink(finish(next));
        } else {
            follow_captures_rec::<DARK, F>(next, empty, sink);
        }
    }
    if !extended && j.jumps > 0 {
        sink(finish(j));
    }
}

/// The recursive step, kept out of line so the first level can inline.
#[inline(never)]
fn follow_captures_rec<const DARK: bool, F: FnMut(CheckersMove)>(j: Jumping, empty: u32, sink: &mut F) {
    follow_captures::<DARK, F>(j, empty, sink);
}

#[inline(always)]
fn finish(j: Jumping) -> CheckersMove {
    CheckersMove {
        from: j.from,
        to: j.at.trailing_zeros() as u8,
        jumps: j.jumps,
        path: j.path,
        captured: j.captured,
    }
}

/// Every capture sequence of the side to move, followed only from the
/// pieces in `starts` (those that can jump): the other pieces have none.
#[inline(always)]
fn captures<const DARK: bool, F: FnMut(CheckersMove)>(s: Sides, starts: u32, sink: &mut F) {
    let mut pieces = starts;
    while pieces != 0 {
        let at = pieces & pieces.wrapping_neg();
        pieces &= pieces - 1;
        let start = Jumping {
            from: at.trailing_zeros() as u8,
            at,
            king: s.kings & at != 0,
            takeable: s.them,
            captured: 0,
            path: 0,
            jumps: 0,
        };
        // The piece has left its square: a king may come back to it.
        follow_captures::<DARK, F>(start, s.empty | at, sink);
    }
}

/// Calls `sink` with every legal move of the side to move (`DARK` must match
/// `pos.to_move`).
#[inline(always)]
pub(super) fn generate<const DARK: bool, F: FnMut(CheckersMove)>(pos: &Checkers, mut sink: F) {
    let s = sides::<DARK>(pos);
    let starts = capture_starts::<DARK>(s);
    if starts != 0 {
        captures::<DARK, F>(s, starts, &mut sink);
        return;
    }
    let [f1, f2] = forward::<DARK>();
    let [b1, b2] = backward::<DARK>();
    for (direction, movers) in [(f1, s.us), (f2, s.us), (b1, s.kings), (b2, s.kings)] {
        let mut targets = direction.step(movers) & s.empty;
        while targets != 0 {
            let to = targets & targets.wrapping_neg();
            targets &= targets - 1;
            sink(CheckersMove {
                from: direction.opposite().step(to).trailing_zeros() as u8,
                to: to.trailing_zeros() as u8,
                jumps: 0,
                path: 0,
                captured: 0,
            });
        }
    }
}

/// The number of legal moves, with steps counted by popcount.
#[inline(always)]
pub(super) fn count<const DARK: bool>(pos: &Checkers) -> u64 {
    let s = sides::<DARK>(pos);
    let starts = capture_starts::<DARK>(s);
    if starts != 0 {
        let mut n = 0u64;
        captures::<DARK, _>(s, starts, &mut |_| n += 1);
        return n;
    }
    let [f1, f2] = forward::<DARK>();
    let [b1, b2] = backward::<DARK>();
    u64::from(
        (f1.step(s.us) & s.empty).count_ones()
            + (f2.step(s.us) & s.empty).count_ones()
            + (b1.step(s.kings) & s.empty).count_ones()
            + (b2.step(s.kings) & s.empty).count_ones(),
    )
}
