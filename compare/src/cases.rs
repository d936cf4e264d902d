//! The positions to compare: one position, each line of a suite, or random
//! playouts biased toward the moves generators get wrong.

use perft_core::{Game, MoveSet, SuiteLine};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// One position to compare, at one depth.
#[derive(Debug, Clone)]
pub struct Case<G> {
    /// Where it came from, for the report.
    pub origin: CaseOrigin,
    /// The position.
    pub position: G,
    /// The plies of the compared divides.
    pub depth: u32,
}

/// Where a [`Case`] came from; shown as `position`, `line N` or
/// `playout N`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaseOrigin {
    /// The position given.
    Position,
    /// A suite's line, 1-based.
    SuiteLine(usize),
    /// The n-th random playout, 1-based.
    Playout(u32),
    /// The n-th built-in position (1-based), and what it exercises.
    BuiltIn(usize, &'static str),
}

impl std::fmt::Display for CaseOrigin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CaseOrigin::Position => write!(f, "position"),
            CaseOrigin::SuiteLine(line) => write!(f, "line {line}"),
            CaseOrigin::Playout(n) => write!(f, "playout {n}"),
            CaseOrigin::BuiltIn(n, exercises) => write!(f, "built-in {n} ({exercises})"),
        }
    }
}

/// The one position given, at `depth`.
pub fn position<G: Game>(root: G, depth: u32) -> Vec<Case<G>> {
    vec![Case {
        origin: CaseOrigin::Position,
        position: root,
        depth,
    }]
}

/// Each suite line with its parsed position, at its deepest listed depth
/// but no deeper than `max_depth` (1 for a line listing none).
pub fn suite<G: Game>(lines: &[SuiteLine], positions: Vec<G>, max_depth: u32) -> Vec<Case<G>> {
    lines
        .iter()
        .zip(positions)
        .map(|(line, position)| {
            let deepest = line.expected.iter().map(|&(d, _)| d).max().unwrap_or(1);
            Case {
                origin: CaseOrigin::SuiteLine(line.line),
                position,
                depth: deepest.min(max_depth),
            }
        })
        .collect()
}

/// `count` random playouts from `root` of up to `plies` plies each (see
/// [`playout`]), drawn from `seed`, each compared at `depth`.
pub fn playouts<G: Game>(root: &G, count: u32, seed: u64, plies: u32, depth: u32) -> Vec<Case<G>> {
    let mut rng = StdRng::seed_from_u64(seed);
    (1..=count)
        .map(|n| Case {
            origin: CaseOrigin::Playout(n),
            position: playout(root, plies, &mut rng),
            depth,
        })
        .collect()
}

/// A random playout from `root` of up to `plies` plies, choosing an edge
/// case ([`Game::is_edge_case`]: castling, en passant, promotions,
/// multi-jumps, crownings, passes) three times in four when there is one.
/// It stops before a position with no moves, which has no divide to
/// compare.
pub fn playout<G: Game>(root: &G, plies: u32, rng: &mut StdRng) -> G {
    let mut pos = *root;
    for _ in 0..rng.random_range(0..=plies) {
        let moves: Vec<G::Move> = pos.legal_moves().into_iter().collect();
        if moves.is_empty() {
            break;
        }
        let edge: Vec<G::Move> = moves.iter().copied().filter(|&m| pos.is_edge_case(m)).collect();
        let from = if !edge.is_empty() && rng.random_bool(0.75) {
            &edge
        } else {
            &moves
        };
        let next = pos.play(from[rng.random_range(0..from.len())]);
        if next.legal_moves().is_empty() {
            break;
        }
        pos = next;
    }
    pos
}

#[cfg(test)]
mod tests {
    use super::*;
    use perft_core::Chess;

    #[test]
    fn playouts_repeat_from_their_seed_and_keep_moves_to_compare() {
        let root = Chess::start();
        let first = playouts(&root, 20, 7, 30, 2);
        let again = playouts(&root, 20, 7, 30, 2);
        assert_eq!(first.len(), 20);
        for (a, b) in first.iter().zip(&again) {
            assert_eq!(a.position.to_string(), b.position.to_string());
            assert!(!a.position.legal_moves().is_empty());
        }
        assert_eq!(first[19].origin.to_string(), "playout 20");
    }

    #[test]
    fn a_suite_line_is_compared_at_its_deepest_depth_within_the_limit() {
        let line = |n, expected: Vec<(u32, u128)>| SuiteLine {
            line: n,
            position: String::new(),
            expected,
        };
        let lines = [
            line(3, vec![(1, 20), (4, 197_281)]),
            line(5, vec![(2, 400)]),
            line(6, vec![]),
        ];
        let cases = suite(&lines, vec![Chess::start(); 3], 3);
        let depths: Vec<(String, u32)> = cases.iter().map(|c| (c.origin.to_string(), c.depth)).collect();
        assert_eq!(
            depths,
            [
                ("line 3".to_owned(), 3),
                ("line 5".to_owned(), 2),
                ("line 6".to_owned(), 1)
            ]
        );
    }
}
