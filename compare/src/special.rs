//! The built-in positions `perft check` walks by default: for each game, a
//! few positions whose first plies hold every special move (chess:
//! castling, en passant with and without a discovered check, promotions,
//! pins and checks, from the Chess Programming Wiki's perft positions;
//! checkers: multi-jumps, crowning and kings; Reversi: passes and a game
//! over), so that a generator missing one is found without options.

use perft_core::Game;

use crate::cases::{Case, CaseOrigin};

/// A built-in position: its text, and what it exercises.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpecialPosition {
    pub text: &'static str,
    pub exercises: &'static str,
}

const fn special(text: &'static str, exercises: &'static str) -> SpecialPosition {
    SpecialPosition { text, exercises }
}

const CHESS: &[SpecialPosition] = &[
    special(
        "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
        "en passant at once",
    ),
    special(
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "castling both ways, en passant, pins (Kiwipete)",
    ),
    special(
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        "en passant that uncovers a check",
    ),
    special(
        "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
        "promotions, captures into promotion, castling out of reach",
    ),
    special(
        "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
        "promotion by capture, checks",
    ),
];

const CHECKERS: &[SpecialPosition] = &[
    special("B:W18,19,26,27,29,32:BK22", "a king's multi-jumps"),
    special("B:W14,23:B9", "a jump that must continue"),
    special("W:W25:BK30", "kings moving backward"),
    special("W:W6,7:B20", "crowning ends the move"),
];

const REVERSI: &[SpecialPosition] = &[
    special(
        "----------------------------X------XO--------------------------- X",
        "passes",
    ),
    special(
        "---------------------------XO------O---------------------------- X",
        "an edge case of flips and passes",
    ),
    special(
        "XO-------------------------------------------------------------- X",
        "a game that ends",
    ),
];

/// The built-in positions of game `G`.
pub fn special_positions<G: Game>() -> &'static [SpecialPosition] {
    match G::NAME {
        "chess" => CHESS,
        "checkers" => CHECKERS,
        "reversi" => REVERSI,
        _ => &[],
    }
}

/// The built-in positions of `G` as cases at `depth` (at most 3 plies:
/// their special moves lie in the first plies, and the engine compared
/// may be slow), numbered from 1.
pub fn special_cases<G: Game>(depth: u32) -> Vec<Case<G>> {
    special_positions::<G>()
        .iter()
        .enumerate()
        .filter_map(|(i, special)| {
            Some(Case {
                origin: CaseOrigin::BuiltIn(i + 1, special.exercises),
                position: special.text.parse().ok()?,
                depth: depth.min(3),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use perft_core::{Checkers, Chess, Reversi};

    /// Every built-in position parses: none is silently dropped.
    #[test]
    fn every_built_in_position_parses() {
        assert_eq!(special_cases::<Chess>(5).len(), CHESS.len());
        assert_eq!(special_cases::<Checkers>(5).len(), CHECKERS.len());
        assert_eq!(special_cases::<Reversi>(5).len(), REVERSI.len());
        assert!(special_cases::<Chess>(5).iter().all(|case| case.depth == 3));
    }
}
