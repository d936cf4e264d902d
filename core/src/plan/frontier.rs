//! A plan's frontier stored column-wise, and the level builder that merges
//! transposed positions as the expansion goes. Per unit the builder holds
//! the position, its key's hash, a list head and one 16-byte link per
//! weight, with no allocation of its own: ten million units plan in well
//! under a GiB.

use std::hash::BuildHasher;

use hashbrown::DefaultHashBuilder;
use hashbrown::HashTable;

use super::{PlanError, Weight};
use crate::game::Game;

/// Distinct frontier positions ("units") in plan order, each with its
/// weights as one range of a flat array.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frontier<G: Game> {
    positions: Vec<G>,
    /// Where each unit's weights end in `weights`.
    weight_ends: Vec<u32>,
    weights: Vec<Weight>,
}

impl<G: Game> Frontier<G> {
    /// Number of units.
    pub fn len(&self) -> usize {
        self.positions.len()
    }

    /// Whether there is no unit.
    pub fn is_empty(&self) -> bool {
        self.positions.is_empty()
    }

    /// The units' positions, in plan order.
    pub fn positions(&self) -> &[G] {
        &self.positions
    }

    /// Unit `i`'s weights: paths per first move, each first move once.
    pub fn weights(&self, i: usize) -> &[Weight] {
        let start = match i {
            0 => 0,
            _ => self.weight_ends[i - 1] as usize,
        };
        &self.weights[start..self.weight_ends[i] as usize]
    }

    /// Every unit's position with its weights.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&G, &[Weight])> {
        (0..self.len()).map(|i| (&self.positions[i], self.weights(i)))
    }

    /// The columns: positions, each unit's weight end, the flat weights.
    pub fn into_parts(self) -> (Vec<G>, Vec<u32>, Vec<Weight>) {
        (self.positions, self.weight_ends, self.weights)
    }
}

/// No link: the end of a unit's weight list.
const NONE: u32 = u32::MAX;

/// One weight of a unit under construction, chained to the unit's next.
#[derive(Clone, Copy, Debug)]
struct Link {
    first_move: u32,
    next: u32,
    paths: u64,
}

/// One level of the expansion while it is built: distinct positions found
/// through a hash index of their table keys (the whole key is compared on
/// every match, never the hash alone), each with a chain of weights.
pub(super) struct LevelBuilder<G: Game> {
    positions: Vec<G>,
    /// Hash of each position's table key, so growing the index recomputes
    /// no key.
    hashes: Vec<u64>,
    /// First link of each unit's weights.
    heads: Vec<u32>,
    links: Vec<Link>,
    /// Unit indices, by key hash.
    index: HashTable<u32>,
    hasher: DefaultHashBuilder,
    max_units: usize,
    ply: u32,
}

impl<G: Game> LevelBuilder<G> {
    /// An empty level at `ply`, refusing more than `max_units` positions.
    pub(super) fn new(ply: u32, max_units: usize) -> LevelBuilder<G> {
        LevelBuilder {
            positions: Vec::new(),
            hashes: Vec::new(),
            heads: Vec::new(),
            links: Vec::new(),
            index: HashTable::new(),
            hasher: DefaultHashBuilder::default(),
            max_units,
            ply,
        }
    }

    /// Adds `weights` (a parent's) to `position`'s unit, creating it when
    /// no equal key was met yet.
    pub(super) fn add(&mut self, position: G, weights: &[Weight]) -> Result<(), PlanError> {
        let key = position.table_key();
        let hash = self.hasher.hash_one(key);
        let positions = &self.positions;
        let unit = match self
            .index
            .find(hash, |&i| positions[i as usize].table_key() == key)
        {
            Some(&i) => i as usize,
            None => {
                let too_many = PlanError::TooManyUnits {
                    limit: self.max_units,
                    split_depth: self.ply,
                };
                if self.positions.len() >= self.max_units {
                    return Err(too_many);
                }
                let i = u32::try_from(self.positions.len()).map_err(|_| too_many)?;
                self.positions.push(position);
                self.hashes.push(hash);
                self.heads.push(NONE);
                let hashes = &self.hashes;
                self.index.insert_unique(hash, i, |&j| hashes[j as usize]);
                i as usize
            }
        };
        for w in weights {
            self.add_weight(unit, *w)?;
        }
        Ok(())
    }

    fn add_weight(&mut self, unit: usize, weight: Weight) -> Result<(), PlanError> {
        let mut at = self.heads[unit];
        while at != NONE {
            let link = &mut self.links[at as usize];
            if link.first_move == weight.first_move {
                link.paths = link
                    .paths
                    .checked_add(weight.paths)
                    .ok_or(PlanError::TooManyPaths)?;
                return Ok(());
            }
            at = link.next;
        }
        let new = u32::try_from(self.links.len())
            .ok()
            .filter(|&n| n != NONE)
            .ok_or(PlanError::TooManyWeights)?;
        self.links.push(Link {
            first_move: weight.first_move,
            next: self.heads[unit],
            paths: weight.paths,
        });
        self.heads[unit] = new;
        Ok(())
    }

    /// The level as a frontier, weights in the order first met.
    pub(super) fn finish(self) -> Frontier<G> {
        let LevelBuilder {
            positions,
            heads,
            links,
            index,
            hashes,
            ..
        } = self;
        drop(index);
        drop(hashes);
        let mut weights = Vec::with_capacity(links.len());
        let mut weight_ends = Vec::with_capacity(positions.len());
        for &head in &heads {
            let start = weights.len();
            let mut at = head;
            while at != NONE {
                let link = links[at as usize];
                weights.push(Weight {
                    first_move: link.first_move,
                    paths: link.paths,
                });
                at = link.next;
            }
            weights[start..].reverse();
            // At most u32::MAX links were made, so the end fits.
            weight_ends.push(weights.len() as u32);
        }
        Frontier {
            positions,
            weight_ends,
            weights,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Checkers, Reversi};

    fn weight(first_move: u32, paths: u64) -> Weight {
        Weight { first_move, paths }
    }

    #[test]
    fn equal_keys_merge_and_weights_keep_the_order_first_met() {
        let start = Reversi::start();
        let other = start.play(start.legal_moves().into_iter().next().expect("a move"));
        let mut level = LevelBuilder::new(1, 10);
        level.add(start, &[weight(2, 1)]).expect("room");
        level.add(other, &[weight(0, 5)]).expect("room");
        level.add(start, &[weight(1, 3), weight(2, 4)]).expect("room");
        let frontier = level.finish();
        assert_eq!(frontier.len(), 2);
        assert_eq!(frontier.positions(), &[start, other]);
        assert_eq!(frontier.weights(0), &[weight(2, 5), weight(1, 3)]);
        assert_eq!(frontier.weights(1), &[weight(0, 5)]);
    }

    #[test]
    fn the_unit_limit_and_path_overflow_are_errors() {
        let start = Checkers::start();
        let child = start.play(start.legal_moves().into_iter().next().expect("a move"));
        let mut level = LevelBuilder::new(3, 1);
        level.add(start, &[weight(0, u64::MAX)]).expect("room");
        assert_eq!(
            level.add(child, &[weight(0, 1)]),
            Err(PlanError::TooManyUnits {
                limit: 1,
                split_depth: 3
            })
        );
        assert_eq!(level.add(start, &[weight(0, 1)]), Err(PlanError::TooManyPaths));
    }
}
