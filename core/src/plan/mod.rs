//! Tree splitting: a perft is planned as distinct frontier positions
//! ("units"), each weighted by how many paths reach it from each first move.
//!
//! Expansion goes level by level and merges transposed positions (equal
//! table keys, so symmetric positions too), so a position reached by many
//! paths is counted once. Pure logic, no I/O: the local run and the
//! coordinator share it, so their results cannot diverge.

mod error;
mod frontier;
mod unit_size;
mod weight;

pub use error::PlanError;
pub use frontier::Frontier;
pub use weight::{CountOverflow, Weight, weighted_sum};

use crate::count::Leaves;
use crate::divide::Divide;
use crate::game::{Game, MoveSet};
use crate::measure::{Counted, Measure};
use crate::perft::perft;
use frontier::LevelBuilder;

/// A node without a move met above the split depth, so never a unit: its
/// leaves (a game-over leaf, where the game counts those) are settled while
/// expanding. Kept so that other counts of the same tree (statistics) can
/// settle it their way.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SettledNode<G> {
    /// The position.
    pub position: G,
    /// Plies from it to full depth (at least 1).
    pub depth: u32,
    /// Paths reaching it from each first move.
    pub weights: Vec<Weight>,
}

/// A perft split into units.
#[derive(Clone, Debug)]
pub struct Plan<G: Game> {
    root: G,
    depth: u32,
    split_depth: u32,
    first_moves: Vec<G::Move>,
    units: Frontier<G>,
    /// Leaves per first move met while expanding: game-over nodes above the
    /// split depth, counted directly.
    settled: Vec<Leaves>,
    /// The nodes those leaves were settled from.
    settled_nodes: Vec<SettledNode<G>>,
}

impl<G: Game> Plan<G> {
    /// Expands `root` exactly `split_depth` plies (1..=depth) for a perft of
    /// `depth`.
    pub fn new(root: G, depth: u32, split_depth: u32) -> Result<Plan<G>, PlanError> {
        Self::bounded(root, depth, split_depth, usize::MAX)
    }

    /// As [`Plan::new`], but stops with [`PlanError::TooManyUnits`] as soon
    /// as a level passes `max_units` distinct positions.
    pub fn bounded(root: G, depth: u32, split_depth: u32, max_units: usize) -> Result<Plan<G>, PlanError> {
        if split_depth == 0 || split_depth > depth {
            return Err(PlanError::SplitDepth { split_depth, depth });
        }
        Self::expand(root, depth, max_units, false, |ply, _| ply == split_depth)
    }

    /// Expands until there are at least `min_units` units, stopping early at
    /// `depth - 2` (so units keep some depth) or at `depth` for very shallow
    /// perfts, or before a level that would pass `max_units`. `depth` must
    /// be at least 1.
    pub fn with_min_units(
        root: G,
        depth: u32,
        min_units: usize,
        max_units: usize,
    ) -> Result<Plan<G>, PlanError> {
        Self::with_unit_size(root, depth, min_units, max_units, f64::INFINITY)
    }

    /// As [`Plan::with_min_units`], but past `min_units` it goes on
    /// expanding while the next level's units would still count at least
    /// `min_unit_leaves` leaves each (estimated), or a sixteenth of that
    /// when the next level closes its units to the table: a cluster's
    /// plan, where a deeper level merges more transpositions exactly, so
    /// no two workers count the same position there. An infinite
    /// `min_unit_leaves` is [`Plan::with_min_units`].
    pub fn with_unit_size(
        root: G,
        depth: u32,
        min_units: usize,
        max_units: usize,
        min_unit_leaves: f64,
    ) -> Result<Plan<G>, PlanError> {
        if depth == 0 {
            return Err(PlanError::SplitDepth {
                split_depth: 1,
                depth,
            });
        }
        let deepest = depth.saturating_sub(2).max(1);
        Self::expand(root, depth, max_units, true, |ply, level| {
            let big_enough = || {
                if !min_unit_leaves.is_finite() {
                    return false;
                }
                let leaves = unit_size::next_level_unit_leaves(level, depth - ply);
                // `ply < deepest` here, so the next level's units keep a ply.
                leaves >= min_unit_leaves
                    || (unit_size::closes_to_the_table::<G>(depth - ply - 1)
                        && leaves >= min_unit_leaves / unit_size::TABLE_CLOSED_SMALLER)
            };
            ply >= deepest || (level.len() >= min_units && !big_enough())
        })
    }

    /// Expands level by level until `done(ply, level)`. A level that passes
    /// `max_units` is abandoned as soon as it does: an error, or with
    /// `keep_last` the level before it is the plan.
    fn expand(
        root: G,
        depth: u32,
        max_units: usize,
        keep_last: bool,
        done: impl Fn(u32, &Frontier<G>) -> bool,
    ) -> Result<Plan<G>, PlanError> {
        let first_moves: Vec<G::Move> = root.legal_moves().into_iter().collect();
        let mut settled = vec![Leaves::ZERO; first_moves.len()];
        let mut first = LevelBuilder::new(1, max_units);
        for (i, &mv) in first_moves.iter().enumerate() {
            let weight = Weight {
                first_move: i as u32,
                paths: 1,
            };
            first.add(root.play(mv), &[weight])?;
        }
        let mut level = first.finish();
        let mut settled_nodes = Vec::new();
        let mut ply = 1;
        'levels: while !done(ply, &level) {
            let mut next = LevelBuilder::new(ply + 1, max_units);
            let mut next_settled = settled.clone();
            let mut level_settled_nodes = Vec::new();
            for (position, weights) in level.iter() {
                let moves = position.legal_moves();
                if moves.is_empty() {
                    let leaves = perft(position, depth - ply);
                    for w in weights {
                        next_settled[w.first_move as usize] += leaves * u128::from(w.paths);
                    }
                    level_settled_nodes.push(SettledNode {
                        position: *position,
                        depth: depth - ply,
                        weights: weights.to_vec(),
                    });
                    continue;
                }
                for mv in moves {
                    match next.add(position.play(mv), weights) {
                        Err(PlanError::TooManyUnits { .. }) if keep_last => break 'levels,
                        other => other?,
                    }
                }
            }
            level = next.finish();
            settled = next_settled;
            settled_nodes.append(&mut level_settled_nodes);
            ply += 1;
        }
        Ok(Plan {
            root,
            depth,
            split_depth: ply,
            first_moves,
            units: level,
            settled,
            settled_nodes,
        })
    }

    /// The root position.
    pub fn root(&self) -> &G {
        &self.root
    }

    /// Depth of the whole perft.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    /// Plies expanded.
    pub fn split_depth(&self) -> u32 {
        self.split_depth
    }

    /// Depth at which every unit is counted.
    pub fn remaining_depth(&self) -> u32 {
        self.depth - self.split_depth
    }

    /// The root's legal moves; weights index into this.
    pub fn first_moves(&self) -> &[G::Move] {
        &self.first_moves
    }

    /// The distinct frontier positions with their weights.
    pub fn units(&self) -> &Frontier<G> {
        &self.units
    }

    /// The frontier, the plan's bulk, taken out (read the rest first).
    pub fn into_units(self) -> Frontier<G> {
        self.units
    }

    /// Leaves per first move found while expanding.
    pub fn settled(&self) -> &[Leaves] {
        &self.settled
    }

    /// The nodes without a move found while expanding, whose leaves are
    /// [`Plan::settled`].
    pub fn settled_nodes(&self) -> &[SettledNode<G>] {
        &self.settled_nodes
    }

    /// The settled nodes' counts under measure `M`, per first move: what a
    /// divide adds its units' counts to, on one machine or a cluster. For
    /// plain leaves, [`Plan::settled`].
    pub fn settled_counts<M: Measure<G>>(&self) -> Vec<M::Count> {
        let mut settled = vec![M::Count::default(); self.first_moves.len()];
        for node in &self.settled_nodes {
            let count = M::perft(&node.position, node.depth);
            for w in &node.weights {
                let slot = &mut settled[w.first_move as usize];
                *slot = count
                    .checked_mul(u128::from(w.paths))
                    .and_then(|weighted| slot.checked_add(weighted))
                    .expect("true counts within MAX_DEPTH fit in u128");
            }
        }
        settled
    }

    /// The divide table under measure `M` from each unit's count
    /// (`counts[i]` for unit `i`): per first move, the settled counts plus
    /// paths x count.
    pub fn divide<M: Measure<G>>(&self, counts: &[M::Count]) -> Divide<G::Move, M::Count> {
        assert_eq!(counts.len(), self.units.len(), "one count per unit");
        assert!(
            self.remaining_depth() >= M::UNIT_PLIES || self.units.is_empty(),
            "this measure's units need {} plies left",
            M::UNIT_PLIES
        );
        if self.first_moves.is_empty() {
            return Divide {
                moves: Vec::new(),
                total: M::perft(&self.root, self.depth),
            };
        }
        let weighted = self
            .units
            .iter()
            .map(|(_, weights)| weights)
            .zip(counts.iter().copied());
        let per_move = weighted_sum(&self.settled_counts::<M>(), weighted)
            .expect("true counts within MAX_DEPTH fit in u128");
        let total = per_move
            .iter()
            .try_fold(M::Count::default(), |sum, &n| sum.checked_add(n))
            .expect("true counts within MAX_DEPTH fit in u128");
        Divide {
            moves: self.first_moves.iter().copied().zip(per_move).collect(),
            total,
        }
    }
}
