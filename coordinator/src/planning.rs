//! Turning a submitted job into units: validation, then the core planner
//! (the same one `perft run` uses), with the units' positions packed: the
//! coordinator never parses a unit's position, and shows one only to
//! people.

use perft_core::{
    ByKind, Convention, Game, GameKind, GameStats, Measure, Plain, Plan, PlanError, StatsVisitor, perft,
};

use crate::columns::UnitColumns;
use perft_model::{Count, kinds_of};

/// A job request as submitted.
#[derive(Clone, Debug)]
pub struct PlanRequest {
    /// Root position text; `None` for the start.
    pub position: Option<String>,
    pub depth: u32,
    /// Plies to expand; `None` chooses: at least `min_units` units, and
    /// deeper while units stay at `min_unit_leaves` leaves (estimated).
    pub split_depth: Option<u32>,
    pub min_units: usize,
    pub min_unit_leaves: f64,
    /// Refuse plans with more units than this.
    pub max_units: usize,
    /// The counting convention (`None`: the game's default); the plan's
    /// settled leaves depend on it.
    pub convention: Option<Convention>,
    /// Count leaves by kind too.
    pub stats: bool,
}

impl PlanRequest {
    /// From the start to `depth`, expanded exactly `split_depth` plies
    /// however small the units, plain counts in the default convention: a
    /// caller that fixes the split (tests, above all) changes only that.
    pub fn split_at(depth: u32, split_depth: u32) -> PlanRequest {
        PlanRequest {
            position: None,
            depth,
            split_depth: Some(split_depth),
            min_units: 1,
            min_unit_leaves: f64::INFINITY,
            max_units: 1 << 20,
            convention: None,
            stats: false,
        }
    }
}

/// A plan with the game erased: the root and moves as text for people, the
/// units' positions packed ([`Game::pack`]).
#[derive(Clone, Debug)]
pub struct PlannedJob {
    /// Canonical text of the root.
    pub position: String,
    pub split_depth: u32,
    pub remaining_depth: u32,
    pub first_moves: Vec<String>,
    pub settled: Vec<Count>,
    /// The whole count when the root has no move (no units then).
    pub root_leaves: Option<Count>,
    /// The units: packed positions, weights, estimated sizes.
    pub units: UnitColumns,
}

impl PlannedJob {
    /// The plan without its units (what the journal's job row holds).
    pub fn header(&self) -> PlannedJob {
        PlannedJob {
            position: self.position.clone(),
            split_depth: self.split_depth,
            remaining_depth: self.remaining_depth,
            first_moves: self.first_moves.clone(),
            settled: self.settled.clone(),
            root_leaves: self.root_leaves,
            units: UnitColumns::new(self.units.stride()),
        }
    }
}

impl PlannedJob {
    /// Whether the job counts a list of units rather than a root: the one
    /// kind of plan with units and no split.
    pub fn is_unit_list(&self) -> bool {
        self.split_depth == 0 && !self.units.is_empty()
    }
}

/// The one divide line of a job that counts a list of units: their sum.
pub const UNIT_LIST_LINE: &str = "units";

/// Why a job cannot be planned: all of these are the client's to fix.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlanningError {
    #[error("invalid {game} position '{}': {reason}", perft_core::echoed(.text))]
    BadPosition {
        game: GameKind,
        text: String,
        reason: String,
    },
    #[error("depth must be at least 1")]
    ZeroDepth,
    #[error("depth {depth} is above the {game} limit of {limit}")]
    TooDeep { game: GameKind, depth: u32, limit: u32 },
    #[error("split depth {split_depth} must be at least 1 and below the depth {depth}")]
    SplitDepth { split_depth: u32, depth: u32 },
    #[error("{0}")]
    Plan(#[from] PlanError),
    #[error("{0}")]
    Columns(#[from] crate::columns::ColumnsError),
    #[error("{0}")]
    Convention(#[from] perft_core::ConventionRefused),
    #[error("{units} units, more than this coordinator's limit of {max}")]
    TooManyUnits { units: usize, max: usize },
    #[error("unit {index} is no packed {game} position: {reason}")]
    BadUnit {
        game: GameKind,
        index: usize,
        reason: String,
    },
    #[error("a job of units has no root position and no split depth")]
    UnitsWithRoot,
    #[error(
        "a statistics job needs depth 2 or more: a unit's leaves take their kinds from its moves (count depth 1 with `perft run --stats`)"
    )]
    StatsTooShallow,
}

struct Planner<'r>(&'r PlanRequest, GameKind);

impl StatsVisitor for Planner<'_> {
    type Output = Result<PlannedJob, PlanningError>;

    /// The one runtime choice of what is counted, made into a type.
    fn visit<G: GameStats>(self) -> Self::Output {
        if self.0.stats {
            self.plan::<G, ByKind>()
        } else {
            self.plan::<G, Plain>()
        }
    }
}

impl Planner<'_> {
    /// Plans the job, its settled counts (and a root with no moves) counted
    /// under measure `M`.
    fn plan<G: GameStats, M: Measure<G>>(self) -> Result<PlannedJob, PlanningError>
    where
        M::Count: Into<Count>,
    {
        let Planner(req, game) = self;
        let root: G = match &req.position {
            None => G::start(),
            Some(text) if text.trim().is_empty() => G::start(),
            Some(text) => text
                .parse()
                .map_err(|e: G::PositionError| PlanningError::BadPosition {
                    game,
                    text: text.trim().to_owned(),
                    reason: e.to_string(),
                })?,
        };
        if req.depth == 0 {
            return Err(PlanningError::ZeroDepth);
        }
        if req.depth > G::MAX_DEPTH {
            return Err(PlanningError::TooDeep {
                game,
                depth: req.depth,
                limit: G::MAX_DEPTH,
            });
        }
        if req.depth <= M::UNIT_PLIES {
            return Err(PlanningError::StatsTooShallow);
        }
        if root.legal_moves().into_iter().next().is_none() {
            return Ok(PlannedJob {
                position: root.to_string(),
                split_depth: 0,
                remaining_depth: req.depth,
                first_moves: Vec::new(),
                settled: Vec::new(),
                root_leaves: Some(M::perft(&root, req.depth).into()),
                units: UnitColumns::new(G::PACKED_BYTES),
            });
        }
        let plan = match req.split_depth {
            Some(split_depth) if split_depth == 0 || split_depth >= req.depth => {
                return Err(PlanningError::SplitDepth {
                    split_depth,
                    depth: req.depth,
                });
            }
            // The expansion stops as soon as it passes the limit, so its
            // memory stays proportional to the limit.
            Some(split_depth) => Plan::bounded(root, req.depth, split_depth, req.max_units)?,
            None => Plan::with_unit_size(root, req.depth, req.min_units, req.max_units, req.min_unit_leaves)?,
        };
        let split_depth = plan.split_depth();
        let remaining_depth = plan.remaining_depth();
        let first_moves = plan
            .first_moves()
            .iter()
            .map(|&mv| root.format_move(mv))
            .collect();
        let settled = plan.settled_counts::<M>().into_iter().map(Into::into).collect();
        let (positions, weight_ends, weights) = plan.into_units().into_parts();
        let estimates = estimate_sizes(&positions, remaining_depth);
        let mut packed = Vec::with_capacity(positions.len() * G::PACKED_BYTES);
        for position in &positions {
            position.pack(&mut packed);
        }
        drop(positions);
        let units = UnitColumns::from_parts(G::PACKED_BYTES, packed, weight_ends, weights, estimates)?;
        Ok(PlannedJob {
            position: root.to_string(),
            split_depth,
            remaining_depth,
            first_moves,
            settled,
            root_leaves: None,
            units,
        })
    }
}

/// Each unit's size relative to the others' (units differ by orders of
/// magnitude), for the ETA: its perft of two plies (fewer if the units are
/// shallower), on every core, since a record plan has millions of units.
fn estimate_sizes<G: Game>(positions: &[G], remaining_depth: u32) -> Vec<f32> {
    let depth = remaining_depth.min(2);
    let mut estimates = vec![0f32; positions.len()];
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let chunk = positions.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        for (out, positions) in estimates.chunks_mut(chunk).zip(positions.chunks(chunk)) {
            scope.spawn(move || {
                for (estimate, position) in out.iter_mut().zip(positions) {
                    *estimate = perft(position, depth).leaves.max(1) as f32;
                }
            });
        }
    });
    estimates
}

/// Plans a list of packed positions, each counted to `depth` plies.
struct UnitLister<'r> {
    game: GameKind,
    units: &'r [Vec<u8>],
    depth: u32,
    max_units: usize,
    stats: bool,
}

impl StatsVisitor for UnitLister<'_> {
    type Output = Result<PlannedJob, PlanningError>;

    fn visit<G: GameStats>(self) -> Self::Output {
        let UnitLister {
            game,
            units,
            depth,
            max_units,
            stats,
        } = self;
        if depth == 0 {
            return Err(PlanningError::ZeroDepth);
        }
        if depth > G::MAX_DEPTH {
            return Err(PlanningError::TooDeep {
                game,
                depth,
                limit: G::MAX_DEPTH,
            });
        }
        if units.len() > max_units {
            return Err(PlanningError::TooManyUnits {
                units: units.len(),
                max: max_units,
            });
        }
        let positions = units
            .iter()
            .enumerate()
            .map(|(index, bytes)| {
                G::unpack(bytes).map_err(|e| PlanningError::BadUnit {
                    game,
                    index,
                    reason: e.to_string(),
                })
            })
            .collect::<Result<Vec<G>, _>>()?;
        let estimates = estimate_sizes(&positions, depth);
        let mut columns = UnitColumns::new(G::PACKED_BYTES);
        columns.reserve(positions.len(), positions.len());
        let one_path = [perft_core::Weight {
            first_move: 0,
            paths: 1,
        }];
        let mut packed = Vec::with_capacity(G::PACKED_BYTES);
        for (position, estimate) in positions.iter().zip(estimates) {
            // Stored as this build packs it, whatever bytes came.
            packed.clear();
            position.pack(&mut packed);
            columns.push(&packed, &one_path, estimate)?;
        }
        Ok(PlannedJob {
            position: format!("{} units", positions.len()),
            split_depth: 0,
            remaining_depth: depth,
            first_moves: vec![UNIT_LIST_LINE.to_owned()],
            settled: vec![Count::zero(kinds_of(game, stats))],
            root_leaves: None,
            units: columns,
        })
    }
}

/// Validates and plans a job of `units` (packed positions of `game`, each
/// counted to `depth` plies in `convention`, by kind too with `stats`),
/// refusing more than `max_units`. Unpacks every position: call it off the
/// async threads.
pub fn plan_units(
    game: GameKind,
    convention: Option<Convention>,
    units: &[Vec<u8>],
    depth: u32,
    max_units: usize,
    stats: bool,
) -> Result<PlannedJob, PlanningError> {
    game.dispatch_stats_in(
        convention,
        UnitLister {
            game,
            units,
            depth,
            max_units,
            stats,
        },
    )?
}

/// Validates and plans a job in its convention. Runs the expansion: call
/// it off the async threads.
pub fn plan(game: GameKind, req: &PlanRequest) -> Result<PlannedJob, PlanningError> {
    game.dispatch_stats_in(req.convention, Planner(req, game))?
}
