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
/// sequence: one that cannot jump further, or a man just crowned. The four
/// directions are written out (the backward two for kings only): a loop
/// over them costs more than the jumps.
#[inline(always)]
fn follow_captures<const DARK: bool, F: FnMut(CheckersMove)>(j: Jumping, empty: u32, sink: &mut F) {
    let [f1, f2] = forward::<DARK>();
    let mut extended = jump::<DARK, F>(j, f1, empty, sink) | jump::<DARK, F>(j, f2, empty, sink);
    if j.king {
        let [b1, b2] = backward::<DARK>();
        extended |= jump::<DARK, F>(j, b1, empty, sink) | jump::<DARK, F>(j, b2, empty, sink);
    }
    if !extended && j.jumps > 0 {
        sink(finish(j));
    }
}

/// The sequences of `j` going on with a jump in `direction`, if it can
/// make one (then true).
#[inline(always)]
fn jump<const DARK: bool, F: FnMut(CheckersMove)>(
    j: Jumping,
    direction: Direction,
    empty: u32,
    sink: &mut F,
) -> bool {
    let over = direction.step(j.at) & j.takeable;
    let land = direction.step(over) & empty;
    if land == 0 {
        return false;
    }
    let next = Jumping {
        at: land,
        takeable: j.takeable & !over,
        captured: j.captured | over,
        path: j.path | ((direction as u32) << (2 * j.jumps)),
        jumps: j.jumps + 1,
        ..j
    };
    if !j.king && land & crown_row::<DARK>() != 0 {
        // Crowned mid-capture: the move ends here.
        sink(finish(next));
    } else {
        follow_captures_rec::<DARK, F>(next, empty, sink);
    }
    true
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
///
/// For each direction the squares whose neighbour that way is empty are
/// found once and serve twice: the pieces among them can step (one move
/// each), and the opponent pieces among them can be jumped from the square
/// behind. Kings' directions are skipped when the side has no king.
#[inline(always)]
pub(super) fn count<const DARK: bool>(pos: &Checkers) -> u64 {
    count_sides::<DARK>(sides::<DARK>(pos))
}

/// [`count`] of the position seen as `s`.
#[inline(always)]
fn count_sides<const DARK: bool>(s: Sides) -> u64 {
    let [f1, f2] = forward::<DARK>();
    let [b1, b2] = backward::<DARK>();
    let (back1, back2) = (f1.opposite(), f2.opposite());
    let (free1, free2) = (back1.step(s.empty), back2.step(s.empty));
    // Squares a piece could jump forward from on this board.
    let jump1 = back1.step(free1 & s.them);
    let jump2 = back2.step(free2 & s.them);
    let mut starts = (jump1 | jump2) & s.us;
    let mut steps = (free1 & s.us).count_ones() + (free2 & s.us).count_ones();
    if s.kings != 0 {
        let (back3, back4) = (b1.opposite(), b2.opposite());
        let (free3, free4) = (back3.step(s.empty), back4.step(s.empty));
        starts |= (back3.step(free3 & s.them) | back4.step(free4 & s.them)) & s.kings;
        steps += (free3 & s.kings).count_ones() + (free4 & s.kings).count_ones();
    }
    if starts != 0 {
        return count_captures::<DARK>(s, starts, jump1 | jump2);
    }
    u64::from(steps)
}

/// The row where the men of the side to move are crowned.
#[inline(always)]
const fn crown_row<const DARK: bool>() -> u32 {
    if DARK {
        super::board::DARK_CROWN_ROW
    } else {
        super::board::LIGHT_CROWN_ROW
    }
}

/// The number of capture sequences of the side to move, `starts` being the
/// pieces that can jump: what `captures` hands out, counted without
/// building a move.
///
/// The first jumps of all men are found at once, one direction at a time.
/// A man's sequence goes on only forwards, away from the square it left
/// and the piece it took, so whether it can jump again from its landing
/// square is the same bit-parallel test on the unchanged board; the
/// landings that end the sequence (no further jump, or crowned) are
/// counted by popcount and only the others are followed one by one. Kings
/// are followed piece by piece. `goes_on` are the squares a piece could
/// jump forward from on this board.
#[inline(always)]
fn count_captures<const DARK: bool>(s: Sides, starts: u32, goes_on: u32) -> u64 {
    let [f1, f2] = forward::<DARK>();
    let crown = crown_row::<DARK>();
    let men = s.us & !s.kings;
    let mut n = 0u64;
    for direction in [f1, f2] {
        let lands = direction.step(direction.step(men) & s.them) & s.empty;
        let ends = lands & (crown | !goes_on);
        n += u64::from(ends.count_ones());
        let mut rest = lands & !ends;
        while rest != 0 {
            let land = rest & rest.wrapping_neg();
            rest &= rest - 1;
            let over = direction.opposite().step(land);
            let from = direction.opposite().step(over);
            n += count_sequences_rec::<DARK>(land, false, s.them & !over, s.empty | from);
        }
    }
    let mut kings = starts & s.kings;
    while kings != 0 {
        let at = kings & kings.wrapping_neg();
        kings &= kings - 1;
        n += jumps_from::<DARK>(at, true, s.them, s.empty | at);
    }
    n
}

/// The sequences that continue with a jump from `at` (none when it cannot
/// jump); `takeable` are the opponent pieces not yet taken.
#[inline(always)]
fn jumps_from<const DARK: bool>(at: u32, king: bool, takeable: u32, empty: u32) -> u64 {
    let [f1, f2] = forward::<DARK>();
    let mut n = jumps_towards::<DARK>(at, king, takeable, empty, f1)
        + jumps_towards::<DARK>(at, king, takeable, empty, f2);
    if king {
        let [b1, b2] = backward::<DARK>();
        n += jumps_towards::<DARK>(at, king, takeable, empty, b1)
            + jumps_towards::<DARK>(at, king, takeable, empty, b2);
    }
    n
}

/// The sequences that continue with a jump from `at` in `direction`.
#[inline(always)]
fn jumps_towards<const DARK: bool>(
    at: u32,
    king: bool,
    takeable: u32,
    empty: u32,
    direction: Direction,
) -> u64 {
    let over = direction.step(at) & takeable;
    let land = direction.step(over) & empty;
    if land == 0 {
        0
    } else if !king && land & crown_row::<DARK>() != 0 {
        // Crowned mid-capture: the move ends here.
        1
    } else {
        count_sequences_rec::<DARK>(land, king, takeable & !over, empty)
    }
}

/// The complete sequences through a piece that has just landed on `at`:
/// those going on from it, or this one when it can jump no further.
#[inline(never)]
fn count_sequences_rec<const DARK: bool>(at: u32, king: bool, takeable: u32, empty: u32) -> u64 {
    jumps_from::<DARK>(at, king, takeable, empty).max(1)
}

/// The leaves two plies below `pos` (`DARK` must match its side to move,
/// `OTHER` be its opposite): the number of moves of every child.
///
/// A child after a step is not built as a position: the step's two
/// squares toggle the mover's pieces and the empty squares, the child's
/// side and its kings are the parent's opponent and its kings, and the
/// child's moves are counted from those masks. `None` when the side must
/// capture: the kernel then plays each capture as usual (its loop body is
/// compiled for the kernel's instructions; a closure here would not be).
#[inline(always)]
pub(super) fn count_two_plies<const DARK: bool, const OTHER: bool>(pos: &Checkers) -> Option<u64> {
    debug_assert!(DARK != OTHER);
    let s = sides::<DARK>(pos);
    let starts = capture_starts::<DARK>(s);
    if starts != 0 {
        return None;
    }
    let their_kings = pos.kings & s.them;
    let [f1, f2] = forward::<DARK>();
    let [b1, b2] = backward::<DARK>();
    let mut n = 0u64;
    for (direction, movers) in [(f1, s.us), (f2, s.us), (b1, s.kings), (b2, s.kings)] {
        let mut targets = direction.step(movers) & s.empty;
        while targets != 0 {
            let to = targets & targets.wrapping_neg();
            targets &= targets - 1;
            let moved = direction.opposite().step(to) | to;
            n += count_sides::<OTHER>(Sides {
                us: s.them,
                them: s.us ^ moved,
                kings: their_kings,
                empty: s.empty ^ moved,
            });
        }
    }
    Some(n)
}

#[cfg(test)]
mod tests {
    use crate::Checkers;
    use crate::game::Game;
    use crate::kernel::Portable;

    /// Positions of long pseudo-random games (kings, multi-jumps and both
    /// sides to move included), from a fixed seed.
    fn playout_positions() -> Vec<Checkers> {
        use rand::rngs::StdRng;
        use rand::{Rng, SeedableRng};
        let mut rng = StdRng::seed_from_u64(0x9E37_79B9_7F4A_7C15);
        let mut positions = Vec::new();
        for _ in 0..200 {
            let mut pos = Checkers::start();
            for _ in 0..120 {
                let moves = pos.legal_moves();
                if moves.is_empty() {
                    break;
                }
                pos = pos.play(moves[rng.random_range(0..moves.len())]);
                positions.push(pos);
            }
        }
        positions
    }

    #[test]
    fn bulk_counts_match_the_move_lists() {
        let positions = playout_positions();
        assert!(positions.iter().any(|p| p.kings() != 0));
        let mut two_plies_counted = 0;
        for pos in &positions {
            let moves = pos.legal_moves();
            assert_eq!(pos.count_moves(), moves.len() as u64, "{pos}");
            let grandchildren: u64 = moves
                .iter()
                .map(|&mv| pos.play(mv).legal_moves().len() as u64)
                .sum();
            if let Some(n) = pos.count_two_plies_on(Portable) {
                assert_eq!(n, grandchildren, "{pos}");
                two_plies_counted += 1;
            }
        }
        assert!(two_plies_counted > positions.len() / 2);
    }
}
