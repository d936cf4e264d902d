//! Making a certificate: from a plan and its counts (a local run), or from
//! the parts a coordinator keeps of a finished job.

use std::collections::HashMap;

use perft_core::{Convention, Game, GameKind, GameVisitor, Leaves, Plan, Weight, perft, weighted_sum};

use crate::{Certificate, ParticipantId, Unit};

/// Why a certificate could not be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BuildError {
    /// The parts do not fit together.
    #[error("{0}")]
    Inconsistent(String),
    /// The weighted counts pass `u128`: a count is wrong.
    #[error(transparent)]
    Overflow(#[from] perft_core::CountOverflow),
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
}

/// One counted unit as a coordinator hands it over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CountedUnit {
    /// The position, packed.
    pub position: Vec<u8>,
    /// Paths from each first move.
    pub weights: Vec<Weight>,
    /// Its leaves at the remaining depth.
    pub count: Leaves,
    /// Those whose votes decided the count.
    pub deciders: Vec<ParticipantId>,
}

/// The leaves of a root without moves, counted.
struct RootCount<'a>(&'a [u8], u32);

impl GameVisitor for RootCount<'_> {
    type Output = Option<Leaves>;
    fn visit<G: Game>(self) -> Option<Leaves> {
        G::unpack(self.0).ok().map(|root| perft(&root, self.1))
    }
}

impl Certificate {
    /// A certificate of `header`'s job from its counted units in plan
    /// order: the divide table and total are summed from them (checked),
    /// the participants table is made of the deciders met, and the Merkle
    /// root is computed. The coordinator's entry point.
    pub fn build(
        header: Header,
        units: impl IntoIterator<Item = CountedUnit>,
    ) -> Result<Certificate, BuildError> {
        let Header {
            game,
            convention,
            ref root,
            depth,
            ref first_moves,
            ref settled,
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
        let mut participants: Vec<ParticipantId> = Vec::new();
        let mut index: HashMap<ParticipantId, u32> = HashMap::new();
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
            kept.push(Unit {
                position: unit.position,
                weights: unit.weights,
                count: unit.count,
                deciders,
            });
        }
        let divide = weighted_sum(settled, kept.iter().map(|u| (u.weights.as_slice(), u.count)))?;
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
        let mut cert = Certificate {
            header,
            participants,
            units: kept,
            divide,
            total,
            merkle_root: [0; 32],
        };
        cert.merkle_root = cert.computed_merkle_root();
        Ok(cert)
    }
}

/// A certificate of `plan` counted as `counts` (one per unit, in plan
/// order), each count decided by `deciders`: what `perft run
/// --certificate` writes.
pub fn from_plan<G: Game>(
    game: GameKind,
    plan: &Plan<G>,
    counts: &[Leaves],
    deciders: &[ParticipantId],
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
    };
    let units = plan
        .units()
        .iter()
        .zip(counts)
        .map(|((pos, weights), &count)| CountedUnit {
            position: pack(pos),
            weights: weights.to_vec(),
            count,
            deciders: deciders.to_vec(),
        });
    Certificate::build(header, units)
}
