//! How big a unit the next level of an expansion would make, estimated, so
//! a cluster's plan goes as deep as its units stay worth a lease. Deeper
//! levels merge more transpositions exactly (each distinct position is
//! counted by one worker, not by every worker whose units reach it).

use super::Frontier;
use crate::game::Game;

/// Estimated leaves each unit of the level after `level` would count for a
/// perft `plies_left` plies below `level`: the whole count as the paths to
/// `level` times their path-weighted branching to the power `plies_left`,
/// over one unit per child of a distinct position (transpositions make the
/// units fewer, so the estimate errs small). Only ever compared with a
/// threshold, so floating point is enough; 0 for an empty level.
pub(super) fn next_level_unit_leaves<G: Game>(level: &Frontier<G>, plies_left: u32) -> f64 {
    let (mut paths, mut weighted_moves, mut children) = (0f64, 0f64, 0f64);
    for (position, weights) in level.iter() {
        let moves = position.count_moves().max(1) as f64;
        let unit_paths: f64 = weights.iter().map(|w| w.paths as f64).sum();
        paths += unit_paths;
        weighted_moves += unit_paths * moves;
        children += moves;
    }
    if paths == 0.0 {
        return 0.0;
    }
    let branching = weighted_moves / paths;
    let whole = paths * branching.powi(plies_left.min(i32::MAX as u32) as i32);
    whole / children
}

/// How many times smaller than the usual unit size the units of a level
/// may be when that level closes them to the table ([`closes_to_the_table`]):
/// a worker now leases and reports small units by the hundred.
pub(super) const TABLE_CLOSED_SMALLER: f64 = 16.0;

/// Whether units of `remaining_depth` plies keep at most two levels of
/// table nodes: their children, which sibling units share (they follow
/// one another in plan order, so one worker leases them all), and the
/// children's children, the cheapest to count again. Two workers then
/// hardly count the same deep positions: chess perft(9) split at ply 5
/// made as many table probes on two workers as one count with one table,
/// and took 1.21x less workers' CPU than split at ply 4 (`BENCHMARKS.md`).
pub(super) fn closes_to_the_table<G: Game>(remaining_depth: u32) -> bool {
    remaining_depth <= G::MIN_STORED_DEPTH + 2
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Chess;
    use crate::plan::Plan;

    #[test]
    fn chess_estimates_follow_the_branching() {
        // Ply 1 from the start: 20 units of one path, each with 20 moves
        // (400 children); a perft(5) is 20 * 20^4 / 400 = 8000 a unit.
        let plan = Plan::new(Chess::start(), 5, 1).unwrap();
        assert_eq!(next_level_unit_leaves(plan.units(), 4), 8000.0);
        let plan = Plan::new(Chess::start(), 3, 3).unwrap();
        let estimate = next_level_unit_leaves(plan.units(), 0);
        // With no ply left the estimate is the paths over the children:
        // 8902 paths, every distinct ply-3 position's moves as children.
        let children: u64 = plan.units().positions().iter().map(Game::count_moves).sum();
        assert_eq!(estimate, 8902.0 / children as f64);
    }

    /// The split depth of an automatic chess plan from the start.
    fn cluster_split(depth: u32, min_unit_leaves: f64) -> u32 {
        Plan::with_unit_size(Chess::start(), depth, 256, 10_000_000, min_unit_leaves)
            .unwrap()
            .split_depth()
    }

    #[test]
    fn a_cluster_plan_goes_deeper_for_deeper_counts() {
        // 4 Mi leaves a unit: 256 units first (ply 2), then a level deeper
        // while units stay that big, and one more where that level's units
        // of a sixteenth of it have 4 plies (chess stores from 2 plies up):
        // ply 6 (9,417,681 units) for perft(10).
        let leaves = (1u64 << 22) as f64;
        assert_eq!(cluster_split(6, leaves), 2);
        assert_eq!(cluster_split(7, leaves), 2);
        assert_eq!(cluster_split(8, leaves), 4);
        assert_eq!(cluster_split(9, leaves), 5);
        assert_eq!(cluster_split(10, leaves), 6);
        // Without a unit size the plan stops at 256 units, whatever the depth.
        assert_eq!(cluster_split(10, f64::INFINITY), 2);
    }
}
