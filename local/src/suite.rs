//! An EPD perft suite counted on this machine: every line's position at
//! each of its depths, each count beside the one the suite expects.

use perft_core::{Game, Plain, SuiteLine, TranspositionTable, divide_parallel};

use crate::error::LocalError;
use crate::table::TableChoice;

/// The table a suite's counts share when no size was chosen: they are
/// many and small, so no sizing to the work.
const SUITE_TABLE_BYTES: u64 = 256 << 20;

/// One count of a suite line at one depth, with the one it expects.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SuiteCount {
    /// The suite file's 1-based line.
    pub line: usize,
    /// Plies counted.
    pub depth: u32,
    /// The leaves the suite lists.
    pub expected: u128,
    /// The leaves counted.
    pub counted: u128,
    /// The line's position, as the suite writes it.
    pub position: String,
}

/// Counts each of `lines` (whose positions, parsed, are `positions`) at
/// each of its depths up to `max_depth`, shallowest first, on `threads`
/// threads sharing one table (`table`, by default 256 MiB).
pub fn count_suite<G: Game>(
    lines: &[SuiteLine],
    positions: &[G],
    max_depth: Option<u32>,
    threads: usize,
    table: TableChoice,
) -> Result<Vec<SuiteCount>, LocalError> {
    let table = match table.bytes_or(|| SUITE_TABLE_BYTES) {
        None => None,
        Some(bytes) => {
            Some(TranspositionTable::for_game::<G>(bytes).ok_or(LocalError::SuiteTable { bytes })?)
        }
    };
    let mut counted = Vec::new();
    for (line, pos) in lines.iter().zip(positions) {
        let mut depths = line.expected.clone();
        depths.sort_unstable();
        for (depth, expected) in depths {
            if max_depth.is_some_and(|max| depth > max) {
                continue;
            }
            let (result, _) =
                divide_parallel::<G, Plain>(pos, depth, threads, table.as_ref()).map_err(|source| {
                    LocalError::SuiteLine {
                        line: line.line,
                        source,
                    }
                })?;
            counted.push(SuiteCount {
                line: line.line,
                depth,
                expected,
                counted: result.total.leaves,
                position: line.position.clone(),
            });
        }
    }
    Ok(counted)
}

#[cfg(test)]
mod tests {
    use perft_core::{Chess, parse_suite};

    use super::*;

    #[test]
    fn each_depth_up_to_the_most_is_counted_shallowest_first() {
        let start = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";
        let lines = parse_suite(&format!("# a suite\n{start} ;D3 8902 ;D1 20 ;D2 401\n")).expect("a suite");
        let positions: Vec<Chess> = vec![start.parse().expect("a position")];
        let counted = count_suite(&lines, &positions, Some(2), 2, TableChoice::Default).expect("counted");
        let found: Vec<_> = counted
            .iter()
            .map(|c| (c.line, c.depth, c.expected, c.counted))
            .collect();
        assert_eq!(found, [(2, 1, 20, 20), (2, 2, 401, 400)]);
        assert_eq!(counted[0].position, start);
    }
}
