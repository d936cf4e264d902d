//! `perft check --engine CMD`: compares another engine's divides with ours
//! (`perft_compare`) over one position, an EPD suite, or random playouts,
//! and prints where they part: the move path with the missing and extra
//! moves.

use perft_compare::{Case, Difference, Engine, cases, find_difference};
use perft_core::{Game, GameVisitor, RootSetup};

use crate::args::CheckArgs;
use crate::error::CliError;
use crate::suite::{read_suite, suite_positions};

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
    for miscount in &difference.miscounted {
        outln!(
            "  miscounted:  {}: {} leaves at depth 1, expected {}",
            miscount.mv,
            miscount.theirs,
            miscount.ours
        )?;
    }
    Ok(())
}

/// The positions the arguments ask to check.
fn cases_asked<G: Game>(args: &CheckArgs) -> Result<Vec<Case<G>>, CliError> {
    if let Some(path) = &args.suite {
        let lines = read_suite(path)?;
        let positions: Vec<G> = suite_positions(path, &lines, args.chess960)?;
        return Ok(cases::suite(&lines, positions, args.depth));
    }
    let root: G = RootSetup {
        chess960: args.chess960,
        moves: &args.moves,
        ..RootSetup::new(args.position.as_deref(), args.depth)
    }
    .root()?;
    Ok(match args.random {
        // Nothing asked: the start, then the built-in positions that hold
        // every special move, so a default check cannot pass a generator
        // that lacks one.
        None if by_default(args) => {
            let mut cases = cases::position(root, args.depth);
            cases.extend(perft_compare::special_cases::<G>(args.depth));
            cases
        }
        None => cases::position(root, args.depth),
        Some(count) => cases::playouts(&root, count, args.seed, args.plies, args.depth),
    })
}

/// No position, moves, suite or playouts asked for.
fn by_default(args: &CheckArgs) -> bool {
    args.position.is_none() && args.moves.is_empty() && args.suite.is_none() && args.random.is_none()
}

/// What a check covered, for its last line.
fn covered<G: Game>(args: &CheckArgs, checked: usize) -> String {
    let positions = if checked == 1 { "position" } else { "positions" };
    if !by_default(args) {
        return format!("{checked} {positions}");
    }
    let built_in: Vec<&str> = perft_compare::special_positions::<G>()
        .iter()
        .map(|special| special.exercises)
        .collect();
    format!(
        "{checked} {positions}: the start to depth {} and {} built-in ones to depth {} ({})",
        args.depth,
        built_in.len(),
        args.depth.min(3),
        built_in.join("; ")
    )
}

struct Check<'a>(&'a CheckArgs);

impl GameVisitor for Check<'_> {
    type Output = Result<(usize, usize, String), CliError>;
    fn visit<G: Game>(self) -> Self::Output {
        let args = self.0;
        if args.depth == 0 || args.depth > G::MAX_DEPTH {
            return Err(CliError::usage(format!(
                "--depth must be 1 to {} for {}",
                G::MAX_DEPTH,
                G::NAME
            )));
        }
        let cases = cases_asked::<G>(args)?;
        let mut engine = Engine::start(&args.engine, args.protocol.into(), args.chess960)?;
        let (mut checked, mut differing) = (0, 0);
        for Case {
            origin,
            position,
            depth,
        } in cases
        {
            checked += 1;
            match find_difference(&mut engine, &position, depth)? {
                None => {
                    if args.verbose {
                        outln!("agrees   {origin}: {position} depth {depth}")?;
                    }
                }
                Some(difference) => {
                    differing += 1;
                    report(&origin.to_string(), &position.to_string(), depth, &difference)?;
                }
            }
        }
        Ok((checked, differing, covered::<G>(args, checked)))
    }
}

/// `perft check`.
pub fn check(args: &CheckArgs) -> Result<(), CliError> {
    let (checked, differing, covered) = args.game.dispatch(Check(args))?;
    if differing > 0 {
        return Err(CliError::failed(format!(
            "the engine differs from perft on {differing} of {checked} positions"
        )));
    }
    outln!("the engine agrees with perft on {covered}")?;
    Ok(())
}
