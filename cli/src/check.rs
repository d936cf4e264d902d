//! `perft check --engine CMD`: compares another engine's divides with ours
//! and, where they differ, walks down the first differing move until the
//! move lists themselves differ; prints that move path with the missing and
//! extra moves. Over one position, an EPD suite, or random playouts biased
//! toward the moves generators get wrong.

use std::collections::BTreeMap;

use perft_core::{Game, GameVisitor, MoveSet, divide};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::args::CheckArgs;
use crate::engine::Engine;
use crate::error::CliError;
use crate::root::{play_moves, root_position, with_chess960_notation};
use crate::suite::{read_suite, suite_positions};

/// Where the engine and Deep Perft part.
struct Difference {
    /// Moves from the checked position to where the lists differ.
    path: Vec<String>,
    /// That position's text.
    position: String,
    /// Legal moves the engine did not list.
    missing: Vec<String>,
    /// Moves the engine listed that are not legal.
    extra: Vec<String>,
    /// Moves both list, with our count and the engine's, at depth 1 (an
    /// engine counting a move as other than one leaf).
    miscounted: Vec<(String, u128, u128)>,
}

/// Our divide, by notation.
fn our_divide<G: Game>(pos: &G, depth: u32) -> BTreeMap<String, u128> {
    divide(pos, depth)
        .moves
        .iter()
        .map(|&(mv, leaves)| (pos.format_move(mv), leaves.leaves))
        .collect()
}

/// Compares `root` at `depth` with the engine; `None` when they agree.
fn find_difference<G: Game>(
    engine: &mut Engine,
    root: &G,
    depth: u32,
) -> Result<Option<Difference>, CliError> {
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
        let differing = ours
            .iter()
            .filter(|&(mv, n)| theirs.get(mv).is_some_and(|t| t != n))
            .map(|(mv, &n)| (mv.clone(), n, theirs[mv]));
        let miscounted: Vec<(String, u128, u128)> = differing.collect();
        if !missing.is_empty() || !extra.is_empty() || (depth == 1 && !miscounted.is_empty()) {
            return Ok(Some(Difference {
                path,
                position: pos.to_string(),
                missing,
                extra,
                miscounted: if depth == 1 { miscounted } else { Vec::new() },
            }));
        }
        let Some((mv, _, _)) = miscounted.into_iter().next() else {
            return Ok(None);
        };
        let parsed = pos.parse_move(&mv).map_err(|e| CliError::Failed(e.to_string()))?;
        pos = pos.play(parsed);
        path.push(mv);
        depth -= 1;
    }
}

/// Prints one finding.
fn report(label: &str, root: &str, depth: u32, difference: &Difference) -> Result<(), CliError> {
    let list = |moves: &[String]| {
        if moves.is_empty() {
            "(none)".to_owned()
        } else {
            moves.join(" ")
        }
    };
    outln!("DIFFERS  {label}: {root} depth {depth}")?;
    let path = if difference.path.is_empty() {
        "(the position itself)".to_owned()
    } else {
        difference.path.join(" ")
    };
    outln!("  move path:   {path}")?;
    outln!("  position:    {}", difference.position)?;
    outln!(
        "  missing:     {}   (legal, the engine lacks them)",
        list(&difference.missing)
    )?;
    outln!(
        "  extra:       {}   (the engine's, not legal)",
        list(&difference.extra)
    )?;
    for (mv, ours, theirs) in &difference.miscounted {
        outln!("  miscounted:  {mv}: {theirs} leaves at depth 1, expected {ours}")?;
    }
    Ok(())
}

/// A random playout from `root` of up to `plies` plies, choosing an edge
/// case ([`Game::is_edge_case`]) three times in four when there is one.
fn playout<G: Game>(root: &G, plies: u32, rng: &mut StdRng) -> G {
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

/// The positions to check, each with a label and depths.
fn cases<G: Game>(args: &CheckArgs) -> Result<Vec<(String, G, Vec<u32>)>, CliError> {
    if let Some(path) = &args.suite {
        let lines = read_suite(path)?;
        let positions: Vec<G> = suite_positions(path, &lines, args.chess960)?;
        return Ok(lines
            .iter()
            .zip(positions)
            .map(|(line, pos)| {
                let deepest = line.expected.iter().map(|&(d, _)| d).max().unwrap_or(1);
                let depth = deepest.min(args.depth);
                (format!("line {}", line.line), pos, vec![depth])
            })
            .collect());
    }
    let root: G = root_position(args.position.as_deref(), args.depth)?;
    let root = with_chess960_notation(root, args.chess960)?;
    let root = play_moves(root, &args.moves)?;
    match args.random {
        None => Ok(vec![("position".to_owned(), root, vec![args.depth])]),
        Some(count) => {
            let mut rng = StdRng::seed_from_u64(args.seed);
            Ok((1..=count)
                .map(|i| {
                    (
                        format!("playout {i}"),
                        playout(&root, args.plies, &mut rng),
                        vec![args.depth],
                    )
                })
                .collect())
        }
    }
}

struct Check<'a>(&'a CheckArgs);

impl GameVisitor for Check<'_> {
    type Output = Result<(usize, usize), CliError>;
    fn visit<G: Game>(self) -> Self::Output {
        let args = self.0;
        if args.depth == 0 || args.depth > G::MAX_DEPTH {
            return Err(CliError::Usage(format!(
                "--depth must be 1 to {} for {}",
                G::MAX_DEPTH,
                G::NAME
            )));
        }
        let cases = cases::<G>(args)?;
        let mut engine = Engine::start(&args.engine, args.protocol, args.chess960)?;
        let (mut checked, mut differing) = (0, 0);
        for (label, pos, depths) in cases {
            for depth in depths {
                checked += 1;
                match find_difference(&mut engine, &pos, depth)? {
                    None => {
                        if args.verbose {
                            outln!("agrees   {label}: {pos} depth {depth}")?;
                        }
                    }
                    Some(difference) => {
                        differing += 1;
                        report(&label, &pos.to_string(), depth, &difference)?;
                    }
                }
            }
        }
        Ok((checked, differing))
    }
}

/// `perft check`.
pub fn check(args: &CheckArgs) -> Result<(), CliError> {
    let (checked, differing) = args.game.dispatch(Check(args))?;
    if differing > 0 {
        return Err(CliError::Failed(format!(
            "the engine differs from perft on {differing} of {checked} positions"
        )));
    }
    outln!("the engine agrees with perft on {checked} positions")?;
    Ok(())
}
