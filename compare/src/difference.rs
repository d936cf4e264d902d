//! Where another engine's divide and ours first differ: from the compared
//! position, follow the first move both list with different counts until
//! the move lists themselves differ (or, at depth 1, a move is counted as
//! other than one leaf).

use std::collections::BTreeMap;

use perft_core::{Game, divide};

use crate::engine::Engine;
use crate::error::CompareError;

/// Where the engine and Deep Perft part.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// Moves from the compared position to where the lists differ.
    pub path: Vec<String>,
    /// That position's text.
    pub position: String,
    /// Legal moves the engine did not list.
    pub missing: Vec<String>,
    /// Moves the engine listed that are not legal.
    pub extra: Vec<String>,
    /// Moves both list but count differently, at depth 1 only (an engine
    /// counting a move as other than one leaf).
    pub miscounted: Vec<Miscount>,
}

/// A move both divides list, with different counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Miscount {
    /// The move, in the game's notation.
    pub mv: String,
    /// Our count.
    pub ours: u128,
    /// The engine's count.
    pub theirs: u128,
}

/// Our divide of `pos` at `depth`, by move notation.
pub fn our_divide<G: Game>(pos: &G, depth: u32) -> BTreeMap<String, u128> {
    divide(pos, depth)
        .moves
        .iter()
        .map(|&(mv, leaves)| (pos.format_move(mv), leaves.leaves))
        .collect()
}

/// Compares `root` at `depth` (at least 1) with the engine; `None` when
/// they agree.
pub fn find_difference<G: Game>(
    engine: &mut Engine,
    root: &G,
    depth: u32,
) -> Result<Option<Difference>, CompareError> {
    let root_text = root.to_string();
    let (mut pos, mut depth, mut path) = (*root, depth, Vec::new());
    loop {
        let ours = our_divide(&pos, depth);
        let mut theirs: BTreeMap<String, u128> = BTreeMap::new();
        for (mv, count) in engine.divide(&root_text, &path, depth)? {
            *theirs.entry(mv).or_default() += count;
        }
        let missing: Vec<String> = ours
            .keys()
            .filter(|m| !theirs.contains_key(*m))
            .cloned()
            .collect();
        let extra: Vec<String> = theirs
            .keys()
            .filter(|m| !ours.contains_key(*m))
            .cloned()
            .collect();
        let miscounted: Vec<Miscount> = ours
            .iter()
            .filter_map(|(mv, &n)| {
                let theirs = *theirs.get(mv)?;
                (theirs != n).then(|| Miscount {
                    mv: mv.clone(),
                    ours: n,
                    theirs,
                })
            })
            .collect();
        if !missing.is_empty() || !extra.is_empty() || (depth == 1 && !miscounted.is_empty()) {
            return Ok(Some(Difference {
                path,
                position: pos.to_string(),
                missing,
                extra,
                miscounted: if depth == 1 { miscounted } else { Vec::new() },
            }));
        }
        let Some(first) = miscounted.into_iter().next() else {
            return Ok(None);
        };
        let parsed = pos
            .parse_move(&first.mv)
            .map_err(|source| CompareError::OurMove { source })?;
        pos = pos.play(parsed);
        path.push(first.mv);
        depth -= 1;
    }
}
