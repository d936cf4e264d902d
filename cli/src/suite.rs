//! `perft suite FILE.epd`: counts every position of an EPD perft suite at
//! its depths (on this machine through `perft_local`, or on a cluster) and
//! prints a table, mismatches first; exit 1 on a mismatch.

use std::collections::BTreeMap;
use std::time::Instant;

use perft_client::Positions;
use perft_core::{Game, GameVisitor, RootSetup, SuiteLine, parse_suite};
use perft_local::{SuiteCount, count_suite};

use crate::args::SuiteArgs;
use crate::client::connect;
use crate::cluster::runtime;
use crate::error::CliError;
use crate::units_on_cluster::count_units;

/// Reads and parses the suite file; a bad line is a usage error naming it.
pub fn read_suite(path: &std::path::Path) -> Result<Vec<SuiteLine>, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::usage_by(format!("cannot read '{}': {e}", path.display()), e))?;
    parse_suite(&text).map_err(|e| CliError::usage_by(format!("{}: {e}", path.display()), e))
}

/// Every line's position parsed as `G`, in Chess960 notation when asked;
/// a bad one is a usage error naming its line.
pub fn suite_positions<G: Game>(
    path: &std::path::Path,
    lines: &[SuiteLine],
    chess960: bool,
) -> Result<Vec<G>, CliError> {
    lines
        .iter()
        .map(|line| {
            let deepest = line.expected.iter().map(|&(d, _)| d).max().unwrap_or(0);
            let setup = RootSetup {
                chess960,
                ..RootSetup::new(Some(&line.position), deepest)
            };
            setup
                .root()
                .map_err(|e| CliError::usage_by(format!("{} line {}: {e}", path.display(), line.line), e))
        })
        .collect()
}

struct RunSuite<'a>(&'a SuiteArgs, &'a [SuiteLine]);

impl GameVisitor for RunSuite<'_> {
    type Output = Result<Vec<SuiteCount>, CliError>;
    fn visit<G: Game>(self) -> Self::Output {
        let RunSuite(args, lines) = self;
        let positions: Vec<G> = suite_positions(&args.file, lines, args.chess960)?;
        if let Some(url) = &args.on {
            let packed: Vec<Vec<u8>> = positions
                .iter()
                .map(|pos| {
                    let mut bytes = Vec::with_capacity(G::PACKED_BYTES);
                    pos.pack(&mut bytes);
                    bytes
                })
                .collect();
            return on_cluster(args, url, lines, &packed);
        }
        Ok(count_suite(
            lines,
            &positions,
            args.max_depth,
            args.engine.threads(),
            args.engine.table(),
        )?)
    }
}

/// The suite counted on the cluster of `url`: one job of explicit units
/// for each depth, holding every line that lists that depth.
fn on_cluster(
    args: &SuiteArgs,
    url: &str,
    lines: &[SuiteLine],
    packed: &[Vec<u8>],
) -> Result<Vec<SuiteCount>, CliError> {
    let coordinator = args.cluster.coordinator(url);
    let mut by_depth: BTreeMap<u32, Vec<(usize, u128)>> = BTreeMap::new();
    for (i, line) in lines.iter().enumerate() {
        for &(depth, expected) in &line.expected {
            if args.max_depth.is_none_or(|max| depth <= max) {
                by_depth.entry(depth).or_default().push((i, expected));
            }
        }
    }
    runtime()?.block_on(async {
        let client = connect(&coordinator).await?;
        let mut checked = Vec::new();
        for (depth, entries) in by_depth {
            let positions: Vec<Vec<u8>> = entries.iter().map(|&(i, _)| packed[i].clone()).collect();
            let positions = Positions {
                game: args.game,
                convention: None,
                depth,
                packed: &positions,
                stats: false,
            };
            let counted = count_units(&client, positions).await?;
            for (&(i, expected), counted) in entries.iter().zip(counted.counts) {
                checked.push(SuiteCount {
                    line: lines[i].line,
                    depth,
                    expected,
                    counted: counted.leaves.leaves,
                    position: lines[i].position.clone(),
                });
            }
        }
        Ok(checked)
    })
}

/// `perft suite`.
pub fn suite(args: &SuiteArgs) -> Result<(), CliError> {
    let lines = read_suite(&args.file)?;
    let started = Instant::now();
    let mut checked = args.game.dispatch(RunSuite(args, &lines))?;
    let seconds = started.elapsed().as_secs_f64();
    // Mismatches first, then by line and depth.
    checked.sort_by_key(|c| (c.expected == c.counted, c.line, c.depth));
    let mismatches = checked.iter().filter(|c| c.expected != c.counted).count();
    outln!("result    line  depth  expected              counted               position")?;
    for c in &checked {
        let result = if c.expected == c.counted { "ok" } else { "MISMATCH" };
        outln!(
            "{result:<8}  {:<4}  {:<5}  {:<20}  {:<20}  {}",
            c.line,
            c.depth,
            c.expected,
            c.counted,
            c.position
        )?;
    }
    outln!(
        "{} positions, {} counts, {} mismatches ({seconds:.2} s)",
        lines.len(),
        checked.len(),
        mismatches
    )?;
    if mismatches > 0 {
        return Err(CliError::failed(format!(
            "{mismatches} of {} counts differ from the suite",
            checked.len()
        )));
    }
    Ok(())
}
