//! The exact checks of an audit, over the whole certificate: every unit's
//! count possible at all, the plan made again from the root, the divide
//! lines and total summed again from the units (leaves and, in a
//! statistics certificate, every kind), and the Merkle root recomputed.

use crate::{Certificate, merkle, summed_kinds, weighted_kinds};
use perft_core::{ByKind, GameFns, GameStats, Leaves, Plan, Tally, Weight, weighted_sum};

use super::{first_difference, shown_leaves};

/// The paths of a unit, sorted by first move, for comparison.
fn sorted(weights: &[Weight]) -> Vec<(u32, u64)> {
    let mut pairs: Vec<_> = weights.iter().map(|w| (w.first_move, w.paths)).collect();
    pairs.sort_unstable();
    pairs
}

/// Weights for people: `d3 x2, c4 x1`.
fn shown_weights(weights: &[(u32, u64)], first_moves: &[String]) -> String {
    weights
        .iter()
        .map(|&(mv, paths)| {
            let name = first_moves.get(mv as usize).map_or("?", String::as_str);
            format!("{name} x{paths}")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Check (0), on every unit, with no recount: its count is one a position
/// can have at the remaining depth. No more leaves than the game's most
/// legal moves raised to that depth (`max_leaves`, the bound a coordinator
/// refuses a worker's count by); no game-over ("higher") leaves where the
/// game (in its convention) counts none, nor below two plies, where even
/// Bik's Reversi counts a game-over node's final pass as a full-depth leaf;
/// kinds that fit the leaves (none above them, the game's totals the sums
/// of their parts). A sample recounts 1% of the units: a count that could
/// never be must not pass on the 99% it misses. Returns what it checked,
/// for people.
pub fn check_units_possible<G: GameStats>(cert: &Certificate, problems: &mut Vec<String>) -> String {
    let Some(depth) = cert.header.depth.checked_sub(cert.header.split_depth) else {
        problems.push(format!(
            "split depth {} is above the depth {}",
            cert.header.split_depth, cert.header.depth
        ));
        return "not checked: no remaining depth".to_owned();
    };
    // The game's functions in the certificate's convention: what
    // `GameKind::fns_in` gives the coordinator's check of a worker's count.
    let fns = GameFns::of::<G>();
    let most = fns.max_leaves(depth);
    let higher_possible = G::GAME_OVER_IS_LEAF && depth >= 2;
    for (i, unit) in cert.units.iter().enumerate() {
        let count = unit.count.leaves;
        if count.leaves > most {
            problems.push(format!(
                "unit {i}: {} leaves, more than a unit of remaining depth {depth} can have ({most}: {} legal moves at most a ply)",
                count.leaves,
                G::MAX_MOVES
            ));
        }
        if count.higher > 0 && !higher_possible {
            let why = if G::GAME_OVER_IS_LEAF {
                format!(
                    "a unit of remaining depth {depth} has none (a game-over node below two plies ends in a full-depth pass)"
                )
            } else {
                format!("{} counts none", game_in_convention(cert))
            };
            problems.push(format!("unit {i}: {} game-over leaves, but {why}", count.higher));
        }
        if !cert.header.kinds.is_empty()
            && let Some(why) = kinds_misfit(fns, &cert.header.kinds, &count, unit.count.kinds())
        {
            problems.push(format!("unit {i}: {why}"));
        }
    }
    let higher = if higher_possible {
        "game-over leaves no more than the leaves"
    } else if G::GAME_OVER_IS_LEAF {
        "no game-over leaves (none below two plies)"
    } else {
        "no game-over leaves"
    };
    let kinds = if cert.header.kinds.is_empty() {
        ""
    } else {
        ", kinds that fit the leaves"
    };
    format!(
        "every count checked at remaining depth {depth}: at most {most} leaves ({} moves a ply), {higher}{kinds}",
        G::MAX_MOVES
    )
}

/// The game and its convention, for people: `checkers`, `reversi (oeis
/// convention)`.
fn game_in_convention(cert: &Certificate) -> String {
    match cert.header.convention {
        None => cert.header.game.to_string(),
        Some(c) => format!("{} ({c} convention)", cert.header.game),
    }
}

/// Why `kinds` cannot be those of `leaves`, for people: the first kind
/// above the leaves, else a total that is not the sum of its parts;
/// `None` when they fit.
fn kinds_misfit(fns: GameFns, names: &[String], leaves: &Leaves, kinds: &[u128]) -> Option<String> {
    if fns.kinds_fit(leaves, kinds) {
        return None;
    }
    if kinds.len() != names.len() {
        return Some(format!(
            "it has {} kinds, the certificate names {}",
            kinds.len(),
            names.len()
        ));
    }
    let above = names.iter().zip(kinds).find(|&(_, &n)| n > leaves.leaves);
    Some(match above {
        Some((name, n)) => format!(
            "its kinds cannot be those of its {} leaves: {name} {n} is more than the leaves",
            shown_leaves(*leaves)
        ),
        None => format!(
            "its kinds cannot be those of its {} leaves: a total is not the sum of its parts",
            shown_leaves(*leaves)
        ),
    })
}

/// Check (1): the units are exactly the plan's frontier with its weights,
/// and the settled leaves (with their kinds) are the plan's.
pub fn check_plan<G: GameStats>(cert: &Certificate, root: G, problems: &mut Vec<String>) {
    // A file cannot make the auditor plan without end: a level with far
    // more positions than the certificate has units is a mismatch anyway.
    let limit = cert.units.len().saturating_mul(2).max(100_000);
    let plan = match Plan::bounded(root, cert.header.depth, cert.header.split_depth, limit) {
        Ok(plan) => plan,
        Err(e) => {
            problems.push(format!(
                "the root cannot be planned to split depth {}: {e}",
                cert.header.split_depth
            ));
            return;
        }
    };
    let first_moves: Vec<String> = plan
        .first_moves()
        .iter()
        .map(|&mv| root.format_move(mv))
        .collect();
    if first_moves != cert.header.first_moves {
        problems.push(format!(
            "first moves: the certificate lists [{}], the root has [{}]",
            cert.header.first_moves.join(" "),
            first_moves.join(" ")
        ));
        return;
    }
    for (i, (&planned, &claimed)) in plan.settled().iter().zip(&cert.header.settled).enumerate() {
        if planned != claimed {
            problems.push(format!(
                "settled leaves of first move {}: the certificate says {}, the plan finds {}",
                first_moves[i],
                shown_leaves(claimed),
                shown_leaves(planned)
            ));
        }
    }
    if !cert.header.kinds.is_empty() {
        let planned = plan.settled_counts::<ByKind>();
        for (i, (planned, claimed)) in planned.iter().zip(&cert.header.settled_kinds).enumerate() {
            if let Some((said, found)) =
                first_difference(&cert.header.kinds, claimed, &planned.kinds.counts())
            {
                problems.push(format!(
                    "settled kinds of first move {}: the certificate says {said}, the plan finds {found}",
                    first_moves[i]
                ));
            }
        }
    }
    let units = plan.units();
    if units.len() != cert.units.len() {
        problems.push(format!(
            "the certificate has {} units, the plan of split depth {} has {}",
            cert.units.len(),
            cert.header.split_depth,
            units.len()
        ));
    }
    let mut packed = Vec::with_capacity(G::PACKED_BYTES);
    for (i, ((pos, weights), unit)) in units.iter().zip(&cert.units).enumerate() {
        packed.clear();
        pos.pack(&mut packed);
        if packed != unit.position {
            let found = G::unpack(&unit.position).map_or_else(|e| e.to_string(), |p| p.to_string());
            problems.push(format!(
                "unit {i}: the plan has position {pos} there, the certificate {found}"
            ));
            continue;
        }
        let (planned, claimed) = (sorted(weights), sorted(&unit.weights));
        if planned != claimed {
            problems.push(format!(
                "unit {i} ({pos}): weights {} in the certificate, {} in the plan",
                shown_weights(&claimed, &first_moves),
                shown_weights(&planned, &first_moves)
            ));
        }
    }
}

/// Check (2): the weighted unit counts sum to every divide line and the
/// total, in checked `u128`; then the same for every kind.
pub fn check_sums(cert: &Certificate, problems: &mut Vec<String>) {
    let units = cert.units.iter().map(|u| (u.weights.as_slice(), u.count.leaves));
    check_kind_sums(cert, problems);
    let lines = match weighted_sum(&cert.header.settled, units) {
        Ok(lines) => lines,
        Err(e) => {
            problems.push(format!("divide table: {e}"));
            return;
        }
    };
    for ((name, &claimed), &summed) in cert.header.first_moves.iter().zip(&cert.divide).zip(&lines) {
        if claimed != summed {
            problems.push(format!(
                "divide line {name}: the certificate says {}, its units sum to {}",
                shown_leaves(claimed),
                shown_leaves(summed)
            ));
        }
    }
    if cert.header.first_moves.is_empty() {
        return;
    }
    match lines
        .iter()
        .try_fold(Leaves::ZERO, |sum, &line| sum.checked_add(line))
    {
        None => problems.push("total: the divide lines overflow u128".to_owned()),
        Some(summed) => {
            if summed != cert.total {
                problems.push(format!(
                    "total: the certificate says {}, its units sum to {}",
                    shown_leaves(cert.total),
                    shown_leaves(summed)
                ));
            }
        }
    }
}

/// Check (2) for the kinds of a statistics certificate: every settled
/// line's kinds can be those of its leaves (none above them, the game's
/// totals equal to their parts; the units' are check (0)), and the
/// weighted unit kinds sum to every divide line's and the total's, kind by
/// kind.
fn check_kind_sums(cert: &Certificate, problems: &mut Vec<String>) {
    let kinds = &cert.header.kinds;
    if kinds.is_empty() {
        return;
    }
    // The decoder accepted the game and its convention together.
    let Ok(fns) = cert.header.game.fns_in(cert.header.convention) else {
        return;
    };
    let settled = cert.header.first_moves.iter().zip(&cert.header.settled);
    for ((name, leaves), line) in settled.zip(&cert.header.settled_kinds) {
        if let Some(why) = kinds_misfit(*fns, kinds, leaves, line) {
            problems.push(format!("settled kinds of first move {name}: {why}"));
        }
    }
    let units = cert.units.iter().map(|u| (u.weights.as_slice(), u.count.kinds()));
    let lines = match weighted_kinds(&cert.header.settled_kinds, units) {
        Ok(lines) => lines,
        Err(e) => {
            problems.push(format!("divide kinds: {e}"));
            return;
        }
    };
    for ((name, claimed), summed) in cert.header.first_moves.iter().zip(&cert.divide_kinds).zip(&lines) {
        if let Some((said, found)) = first_difference(kinds, claimed, summed) {
            problems.push(format!(
                "divide line {name}: the certificate says {said}, its units sum to {found}"
            ));
        }
    }
    if cert.header.first_moves.is_empty() {
        return;
    }
    match summed_kinds(&lines, kinds.len()) {
        Err(e) => problems.push(format!("total kinds: {e}")),
        Ok(summed) => {
            if let Some((said, found)) = first_difference(kinds, &cert.total_kinds, &summed) {
                problems.push(format!(
                    "total: the certificate says {said}, its units sum to {found}"
                ));
            }
        }
    }
}

/// Check (3): the Merkle root is the units'.
pub fn check_merkle(cert: &Certificate, problems: &mut Vec<String>) {
    let computed = cert.computed_merkle_root();
    if computed != cert.merkle_root {
        problems.push(format!(
            "Merkle root: the certificate says {}, its units give {}",
            hex(&cert.merkle_root),
            hex(&computed)
        ));
    }
}

/// A hash for people: its bytes in lower-case hex.
pub fn hex(hash: &merkle::Hash) -> String {
    hash.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use crate::{CountedUnit, DeciderName, Provenance, from_plan};
    use perft_core::{Checkers, Game, GameKind, Plain, count_units};

    use super::*;

    /// A true checkers perft(5) certificate whose settled leaves are made
    /// huge, its sums made again to fit: a total between 2^127 and 2^128.
    fn huge_but_summed() -> Certificate {
        let plan = Plan::new(Checkers::start(), 5, 2).unwrap();
        let (counts, _) = count_units::<_, Plain>(plan.units().positions(), plan.remaining_depth(), 1, None);
        let cert = from_plan::<_, Plain>(
            GameKind::Checkers,
            &plan,
            &counts,
            &[DeciderName::parse("w").unwrap()],
            Provenance::local(1, "test"),
        )
        .unwrap();
        let mut header = cert.header.clone();
        header.settled[0] = Leaves::full(1 << 126);
        header.settled[1] = Leaves::full((1 << 126) + 7);
        let units = cert.units.iter().map(|u| CountedUnit {
            position: u.position.clone(),
            weights: u.weights.clone(),
            count: u.count,
            deciders: vec![DeciderName::parse("w").unwrap()],
        });
        Certificate::build(header, Provenance::local(1, "test"), units).unwrap()
    }

    #[test]
    fn a_total_above_2_127_that_sums_is_no_overflow() {
        let cert = huge_but_summed();
        assert!(cert.total.leaves > 1 << 127);
        let mut problems = Vec::new();
        check_sums(&cert, &mut problems);
        assert_eq!(problems, Vec::<String>::new());
        let mut forged = cert.clone();
        forged.total.leaves -= 1;
        check_sums(&forged, &mut problems);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(
            problems[0].starts_with("total: the certificate says"),
            "{problems:?}"
        );
    }
}
