//! Making a certificate: from a plan and its counts (a local run), or from
//! the parts a coordinator keeps of a finished job.

use std::collections::HashMap;

use perft_core::{
    Convention, CountOverflow, Counted, Game, GameKind, GameVisitor, Leaves, Measure, Plan, Weight, perft,
    weighted_sum,
};

use perft_model::{Count, DeciderName};

use crate::text::text_fault;
use crate::{Certificate, Provenance, Unit};

/// Why a certificate could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// The parts do not fit together.
    #[error("{0}")]
    Inconsistent(String),
    /// The weighted counts pass `u128`: a count is wrong.
    #[error(transparent)]
    Overflow(#[from] perft_core::CountOverflow),
    /// A text of the provenance that a reader would refuse.
    #[error("the certificate's {field} cannot be written: {reason}")]
    Provenance {
        /// `job id` or `program`.
        field: &'static str,
        /// What is wrong, one line.
        reason: String,
    },
}

/// Refuses a provenance a reader would: a text too long or with a control
/// or layout character, or no program.
fn check_provenance(provenance: &Provenance) -> Result<(), BuildError> {
    for (field, text) in [("job id", &provenance.job), ("program", &provenance.program)] {
        if let Some(reason) = text_fault(text) {
            return Err(BuildError::Provenance { field, reason });
        }
    }
    if provenance.program.is_empty() {
        return Err(BuildError::Provenance {
            field: "program",
            reason: "empty: a certificate names the program that wrote it".to_owned(),
        });
    }
    Ok(())
}

/// What a certificate says about the job, apart from its units.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    /// The game.
    pub game: GameKind,
    /// The convention counted in (`None` for games without a choice).
    pub convention: Option<Convention>,
    /// The root, packed.
    pub root: Vec<u8>,
    /// Plies counted.
    pub depth: u32,
    /// Plies expanded into units.
    pub split_depth: u32,
    /// The root's first moves in notation, in plan order.
    pub first_moves: Vec<String>,
    /// Leaves per first move found while planning.
    pub settled: Vec<Leaves>,
    /// The kinds of leaves counted, in column order: the game's statistics
    /// kinds, or none for a certificate of leaves only.
    pub kinds: Vec<String>,
    /// Leaves by kind per first move found while planning (empty without
    /// kinds).
    pub settled_kinds: Vec<Vec<u128>>,
}

/// One counted unit as a coordinator hands it over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CountedUnit {
    /// The position, packed.
    pub position: Vec<u8>,
    /// Paths from each first move.
    pub weights: Vec<Weight>,
    /// Its leaves at the remaining depth and its leaves by kind, in the
    /// order of [`Header::kinds`] (none without kinds).
    pub count: Count,
    /// Those whose votes decided the count.
    pub deciders: Vec<DeciderName>,
}

/// The leaves of a root without moves, counted.
struct RootCount<'a>(&'a [u8], u32);

impl GameVisitor for RootCount<'_> {
    type Output = Option<Leaves>;
    fn visit<G: Game>(self) -> Option<Leaves> {
        G::unpack(self.0).ok().map(|root| perft(&root, self.1))
    }
}

/// Leaves by kind per first move: `settled` plus, for every unit, its
/// kinds times its paths from each first move; every product and sum
/// checked, every length matched against the number of kinds.
pub fn weighted_kinds<'u>(
    settled: &[Vec<u128>],
    units: impl IntoIterator<Item = (&'u [Weight], &'u [u128])>,
) -> Result<Vec<Vec<u128>>, BuildError> {
    let kinds = settled.first().map_or(0, Vec::len);
    if settled.iter().any(|line| line.len() != kinds) {
        return Err(BuildError::Inconsistent(
            "the settled kinds of the first moves differ in length".to_owned(),
        ));
    }
    let mut per_move = settled.to_vec();
    for (i, (weights, unit_kinds)) in units.into_iter().enumerate() {
        if unit_kinds.len() != kinds {
            return Err(BuildError::Inconsistent(format!(
                "unit {i} has {} kinds, the certificate counts {kinds}",
                unit_kinds.len()
            )));
        }
        for w in weights {
            let line = per_move.get_mut(w.first_move as usize).ok_or_else(|| {
                BuildError::Inconsistent(format!(
                    "unit {i} has a weight for a first move that does not exist"
                ))
            })?;
            for (sum, &n) in line.iter_mut().zip(unit_kinds) {
                *sum = n
                    .checked_mul(u128::from(w.paths))
                    .and_then(|weighted| sum.checked_add(weighted))
                    .ok_or(CountOverflow)?;
            }
        }
    }
    Ok(per_move)
}

/// The kinds of all `lines` (each of `kinds` counts) summed, checked.
pub fn summed_kinds(lines: &[Vec<u128>], kinds: usize) -> Result<Vec<u128>, CountOverflow> {
    let mut total = vec![0u128; kinds];
    for line in lines {
        for (sum, &n) in total.iter_mut().zip(line) {
            *sum = sum.checked_add(n).ok_or(CountOverflow)?;
        }
    }
    Ok(total)
}

/// The kinds of the leaves of a root without moves, counted.
fn root_kinds(game: GameKind, convention: Option<Convention>, root: &[u8], depth: u32) -> Option<Vec<u128>> {
    let fns = game.fns_in(convention).ok()?;
    fns.count_packed_stats(root, depth).ok().map(|stats| stats.counts)
}

impl Certificate {
    /// A certificate of `header`'s job from its counted units in plan
    /// order, made as `provenance` says: the divide table and total are
    /// summed from them (checked), the participants table is made of the
    /// deciders met, and the Merkle root is computed. The coordinator's
    /// entry point.
    pub fn build(
        header: Header,
        provenance: Provenance,
        units: impl IntoIterator<Item = CountedUnit>,
    ) -> Result<Certificate, BuildError> {
        check_provenance(&provenance)?;
        let Header {
            game,
            convention,
            ref root,
            depth,
            ref first_moves,
            ref settled,
            ref kinds,
            ref settled_kinds,
            ..
        } = header;
        if game.resolve_convention(convention).ok() != Some(convention) {
            return Err(BuildError::Inconsistent(format!(
                "convention {convention:?} does not apply to {game}"
            )));
        }
        if settled.len() != first_moves.len() {
            return Err(BuildError::Inconsistent(
                "one settled count per first move".to_owned(),
            ));
        }
        if !kinds.is_empty()
            && kinds
                .iter()
                .map(String::as_str)
                .ne(game.stats_kinds().iter().copied())
        {
            return Err(BuildError::Inconsistent(format!(
                "the kinds [{}] are not {game}'s [{}]",
                kinds.join(" "),
                game.stats_kinds().join(" ")
            )));
        }
        if !kinds.is_empty() && header.split_depth >= depth {
            return Err(BuildError::Inconsistent(format!(
                "split depth {} is not below the depth {depth}: units counted by kind need a ply",
                header.split_depth
            )));
        }
        let settled_lines = if kinds.is_empty() { 0 } else { first_moves.len() };
        if settled_kinds.len() != settled_lines || settled_kinds.iter().any(|line| line.len() != kinds.len())
        {
            return Err(BuildError::Inconsistent(format!(
                "the settled kinds are not {settled_lines} lines of {} kinds",
                kinds.len()
            )));
        }
        let mut participants: Vec<DeciderName> = Vec::new();
        let mut index: HashMap<DeciderName, u32> = HashMap::new();
        let mut kept = Vec::new();
        for unit in units {
            if unit.position.len() != game.packed_bytes() {
                return Err(BuildError::Inconsistent(format!(
                    "a packed {game} position is {} bytes, unit {} has {}",
                    game.packed_bytes(),
                    kept.len(),
                    unit.position.len()
                )));
            }
            if unit
                .weights
                .iter()
                .any(|w| w.first_move as usize >= first_moves.len())
            {
                return Err(BuildError::Inconsistent(format!(
                    "unit {} has a weight for a first move that does not exist",
                    kept.len()
                )));
            }
            let deciders = unit
                .deciders
                .into_iter()
                .map(|id| {
                    *index.entry(id.clone()).or_insert_with(|| {
                        participants.push(id);
                        (participants.len() - 1) as u32
                    })
                })
                .collect();
            if unit.count.kinds().len() != kinds.len() {
                return Err(BuildError::Inconsistent(format!(
                    "unit {} has {} kinds, the certificate counts {}",
                    kept.len(),
                    unit.count.kinds().len(),
                    kinds.len()
                )));
            }
            kept.push(Unit {
                position: unit.position,
                weights: unit.weights,
                count: unit.count,
                deciders,
            });
        }
        let divide = weighted_sum(
            settled,
            kept.iter().map(|u| (u.weights.as_slice(), u.count.leaves)),
        )?;
        let divide_kinds = if kinds.is_empty() {
            Vec::new()
        } else {
            weighted_kinds(
                settled_kinds,
                kept.iter().map(|u| (u.weights.as_slice(), u.count.kinds())),
            )?
        };
        let total = if first_moves.is_empty() {
            game.dispatch_in(convention, RootCount(root, depth))
                .ok()
                .flatten()
                .ok_or_else(|| BuildError::Inconsistent(format!("the root is no packed {game} position")))?
        } else {
            divide
                .iter()
                .try_fold(Leaves::ZERO, |sum, &line| sum.checked_add(line))
                .ok_or(perft_core::CountOverflow)?
        };
        let total_kinds = if kinds.is_empty() {
            Vec::new()
        } else if first_moves.is_empty() {
            root_kinds(game, convention, root, depth)
                .ok_or_else(|| BuildError::Inconsistent(format!("the root is no packed {game} position")))?
        } else {
            summed_kinds(&divide_kinds, kinds.len())?
        };
        let mut cert = Certificate {
            header,
            participants,
            units: kept,
            divide,
            total,
            divide_kinds,
            total_kinds,
            merkle_root: [0; 32],
            provenance: Some(provenance),
        };
        cert.merkle_root = cert.computed_merkle_root();
        Ok(cert)
    }
}

/// A certificate of `plan` counted under measure `M` as `counts` (one per
/// unit, in plan order), each count decided by `deciders`, made as
/// `provenance` says: what `perft run --certificate` writes, with the
/// leaves' kinds when `M` counts them.
pub fn from_plan<G: Game, M: Measure<G>>(
    game: GameKind,
    plan: &Plan<G>,
    counts: &[M::Count],
    deciders: &[DeciderName],
    provenance: Provenance,
) -> Result<Certificate, BuildError>
where
    M::Count: Into<Count>,
{
    let kinds = M::Count::KINDS.iter().map(|&k| k.to_owned()).collect();
    let settled_kinds = if M::Count::KINDS.is_empty() {
        Vec::new()
    } else {
        plan.settled_counts::<M>().iter().map(Counted::kinds).collect()
    };
    let counts = counts.iter().map(|&count| count.into());
    of_plan(game, plan, counts, deciders, kinds, settled_kinds, provenance)
}

/// A certificate of `plan` from its counts, with kinds or without.
fn of_plan<G: Game>(
    game: GameKind,
    plan: &Plan<G>,
    counts: impl ExactSizeIterator<Item = Count>,
    deciders: &[DeciderName],
    kinds: Vec<String>,
    settled_kinds: Vec<Vec<u128>>,
    provenance: Provenance,
) -> Result<Certificate, BuildError> {
    if counts.len() != plan.units().len() {
        return Err(BuildError::Inconsistent(format!(
            "{} counts for {} units",
            counts.len(),
            plan.units().len()
        )));
    }
    let pack = |pos: &G| {
        let mut out = Vec::with_capacity(G::PACKED_BYTES);
        pos.pack(&mut out);
        out
    };
    let header = Header {
        game,
        convention: G::CONVENTION,
        root: pack(plan.root()),
        depth: plan.depth(),
        split_depth: plan.split_depth(),
        first_moves: plan
            .first_moves()
            .iter()
            .map(|&mv| plan.root().format_move(mv))
            .collect(),
        settled: plan.settled().to_vec(),
        kinds,
        settled_kinds,
    };
    let units = plan
        .units()
        .iter()
        .zip(counts)
        .map(|((pos, weights), count)| CountedUnit {
            position: pack(pos),
            weights: weights.to_vec(),
            count,
            deciders: deciders.to_vec(),
        });
    Certificate::build(header, provenance, units)
}
