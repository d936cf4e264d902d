//! `perft audit FILE`: checks a certificate with no coordinator and no
//! trust in whoever made it. The plan and the sums are checked whole; the
//! counts are checked on a random sample chosen from the auditor's seed,
//! and the audit prints what that sample proves.

use std::path::Path;
use std::time::Instant;

use perft_certificate::{Certificate, merkle};
use perft_core::parallel::count_units;
use perft_core::{Game, GameVisitor, Leaves, Plan, TranspositionTable, Weight, weighted_sum};
use rand::SeedableRng;
use rand::rngs::StdRng;

use crate::args::{AuditArgs, CoordinatorArg};
use crate::client::connect;
use crate::cluster::runtime;
use crate::error::CliError;
use crate::units_on_cluster;

/// Problems printed in full; the rest are counted.
const SHOWN_PROBLEMS: usize = 20;

/// Reads and decodes a certificate file: any failure is a bad file (exit 2).
pub fn read_certificate(path: &Path) -> Result<(Certificate, u64), CliError> {
    let bytes =
        std::fs::read(path).map_err(|e| CliError::Usage(format!("cannot read '{}': {e}", path.display())))?;
    let cert =
        Certificate::decode(&bytes).map_err(|e| CliError::Usage(format!("'{}': {e}", path.display())))?;
    Ok((cert, bytes.len() as u64))
}

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

pub(crate) fn shown_leaves(leaves: Leaves) -> String {
    if leaves.higher == 0 {
        leaves.leaves.to_string()
    } else {
        format!("{} ({} higher)", leaves.leaves, leaves.higher)
    }
}

/// Check (1): the units are exactly the plan's frontier with its weights.
fn check_plan<G: Game>(cert: &Certificate, root: G, problems: &mut Vec<String>) {
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
/// total, in checked `u128`.
fn check_sums(cert: &Certificate, problems: &mut Vec<String>) {
    let units = cert.units.iter().map(|u| (u.weights.as_slice(), u.count));
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
        .chain(&cert.divide)
        .try_fold(Leaves::ZERO, |sum, &line| sum.checked_add(line))
    {
        None => problems.push("total: the divide lines overflow u128".to_owned()),
        Some(_) => {
            let summed: Leaves = lines.iter().copied().sum();
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

/// Check (3): the Merkle root is the units'.
fn check_merkle(cert: &Certificate, problems: &mut Vec<String>) {
    let computed = cert.computed_merkle_root();
    if computed != cert.merkle_root {
        problems.push(format!(
            "Merkle root: the certificate says {}, its units give {}",
            hex(&cert.merkle_root),
            hex(&computed)
        ));
    }
}

fn hex(hash: &merkle::Hash) -> String {
    hash.iter().map(|b| format!("{b:02x}")).collect()
}

/// The units to recount: `n` distinct ones drawn from `seed`, in plan order.
pub fn sample_indices(units: usize, n: usize, seed: u64) -> Vec<usize> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut picked = rand::seq::index::sample(&mut rng, units, n.min(units)).into_vec();
    picked.sort_unstable();
    picked
}

/// The chance that a sample of `n` of `units` units, drawn without
/// replacement, misses every one of `wrong` wrong units.
pub fn pass_probability(units: usize, n: usize, wrong: usize) -> f64 {
    if wrong == 0 {
        return 1.0;
    }
    if n + wrong > units {
        return 0.0;
    }
    let log: f64 = (0..n)
        .map(|i| (((units - wrong - i) as f64) / ((units - i) as f64)).ln())
        .sum();
    log.exp()
}

/// What the audit generic over the game found.
struct Findings {
    problems: Vec<String>,
    /// The sampled units whose positions unpack: recounted here, or left
    /// for the cluster.
    sampled: Vec<usize>,
    recounted: usize,
    seconds: f64,
}

struct Audit<'a> {
    cert: &'a Certificate,
    args: &'a AuditArgs,
    sample: Vec<usize>,
    /// Recount the sample on this machine (else a cluster does).
    local: bool,
}

impl GameVisitor for Audit<'_> {
    type Output = Result<Findings, CliError>;

    fn visit<G: Game>(self) -> Self::Output {
        let Audit {
            cert,
            args,
            sample,
            local,
        } = self;
        let mut problems = Vec::new();
        let root = G::unpack(&cert.header.root).map_err(|e| CliError::Usage(format!("root: {e}")))?;
        check_plan(cert, root, &mut problems);
        check_sums(cert, &mut problems);
        check_merkle(cert, &mut problems);
        let mut positions = Vec::with_capacity(sample.len());
        let mut counted = Vec::with_capacity(sample.len());
        for &i in &sample {
            match G::unpack(&cert.units[i].position) {
                Ok(pos) => {
                    positions.push(pos);
                    counted.push(i);
                }
                Err(e) => problems.push(format!("unit {i}: {e}")),
            }
        }
        if !local {
            return Ok(Findings {
                problems,
                sampled: counted,
                recounted: 0,
                seconds: 0.0,
            });
        }
        let table = match args.engine.table_bytes_or(1 << 30) {
            None => None,
            Some(bytes) => Some(
                TranspositionTable::for_game::<G>(bytes)
                    .ok_or_else(|| CliError::Usage(format!("a table of {bytes} bytes holds no entry")))?,
            ),
        };
        let started = Instant::now();
        let (counts, _) = count_units(
            &positions,
            cert.header.depth - cert.header.split_depth,
            args.engine.threads(),
            table.as_ref(),
        );
        let seconds = started.elapsed().as_secs_f64();
        for ((&i, pos), &recounted) in counted.iter().zip(&positions).zip(&counts) {
            let claimed = cert.units[i].count;
            if claimed != recounted {
                problems.push(format!(
                    "unit {i} ({pos}): the certificate says {}, recounted {}",
                    shown_leaves(claimed),
                    shown_leaves(recounted)
                ));
            }
        }
        Ok(Findings {
            problems,
            recounted: counted.len(),
            sampled: counted,
            seconds,
        })
    }
}

/// `perft audit`.
pub fn audit(args: &AuditArgs) -> Result<(), CliError> {
    let (cert, file_bytes) = read_certificate(&args.file)?;
    let units = cert.units.len();
    let convention = cert
        .header
        .convention
        .map_or(String::new(), |c| format!(" ({c} convention)"));
    outln!(
        "certificate: {}{convention}, depth {}, split depth {}, {units} units, total {}, {file_bytes} bytes ({:.1} bytes a unit)",
        cert.header.game,
        cert.header.depth,
        cert.header.split_depth,
        shown_leaves(cert.total),
        file_bytes as f64 / units.max(1) as f64
    )?;
    let n = match (args.sample, args.fraction) {
        (Some(n), _) => n.min(units),
        (None, Some(f)) => ((f * units as f64).ceil() as usize).min(units),
        (None, None) => ((0.01 * units as f64).ceil() as usize).min(units),
    };
    let seed = args.seed.unwrap_or_else(rand::random);
    let sample = sample_indices(units, n, seed);
    // A sample counted to no depth is nothing to spread: counted here.
    let on = args
        .on
        .as_ref()
        .filter(|_| cert.header.depth > cert.header.split_depth);
    let mut findings = cert
        .header
        .game
        .dispatch_in(
            cert.header.convention,
            Audit {
                cert: &cert,
                args,
                sample,
                local: on.is_none(),
            },
        )
        .map_err(|e| CliError::Usage(e.to_string()))??;
    let mut place = String::new();
    if let Some(url) = on {
        let coordinator = CoordinatorArg {
            coordinator: url.clone(),
            token: args.token.clone(),
            tls_ca: args.tls_ca.clone(),
        };
        let cluster = recount_on_cluster(&coordinator, &cert, &findings.sampled)?;
        findings.problems.extend(cluster.problems);
        findings.recounted = findings.sampled.len();
        findings.seconds = cluster.seconds;
        place = format!(" on {url} (job {})", cluster.jobs.join(", job "));
    }
    outln!(
        "plan: re-planned to split depth {} and compared unit by unit",
        cert.header.split_depth
    )?;
    outln!("sums: divide lines and total summed from the units in checked u128")?;
    outln!("merkle: root recomputed over the units")?;
    outln!(
        "recount: {} of {units} units ({:.2}%) drawn with seed {seed}, recounted{place} in {:.3} s",
        findings.recounted,
        100.0 * findings.recounted as f64 / units.max(1) as f64,
        findings.seconds
    )?;
    let mut shown = 0;
    for f in [0.0, 0.001, 0.01, 0.1] {
        let wrong = (f * units as f64).floor() as usize + 1;
        if wrong > units || wrong == shown {
            continue;
        }
        shown = wrong;
        let p = pass_probability(units, findings.recounted, wrong);
        outln!(
            "guarantee: a certificate in which more than {} of the units are wrong ({wrong} or more of {units}) would have passed this audit with probability at most {p:.3e}",
            if f == 0.0 {
                "0%".to_owned()
            } else {
                format!("{}%", f * 100.0)
            },
        )?;
    }
    if findings.problems.is_empty() {
        outln!("audit passed")?;
        return Ok(());
    }
    for problem in findings.problems.iter().take(SHOWN_PROBLEMS) {
        outln!("MISMATCH  {problem}")?;
    }
    if findings.problems.len() > SHOWN_PROBLEMS {
        outln!("... and {} more", findings.problems.len() - SHOWN_PROBLEMS)?;
    }
    Err(CliError::Failed(format!(
        "audit failed: {} problem(s), the first: {}",
        findings.problems.len(),
        findings.problems[0]
    )))
}

/// What the cluster's recount of a certificate's sample found.
#[derive(Debug)]
struct ClusterRecount {
    /// Units whose recount differs from the certificate, for people.
    pub problems: Vec<String>,
    /// The jobs that counted the sample.
    pub jobs: Vec<String>,
    pub seconds: f64,
}

/// Recounts units `sample` of `cert` on the cluster of `coordinator`.
fn recount_on_cluster(
    coordinator: &CoordinatorArg,
    cert: &Certificate,
    sample: &[usize],
) -> Result<ClusterRecount, CliError> {
    runtime()?.block_on(async {
        let mut client = connect(coordinator).await?;
        let started = Instant::now();
        let positions: Vec<Vec<u8>> = sample.iter().map(|&i| cert.units[i].position.clone()).collect();
        let (counts, jobs) = units_on_cluster::count_units(
            &mut client,
            cert.header.game,
            cert.header.convention,
            cert.header.depth - cert.header.split_depth,
            &positions,
        )
        .await?;
        let mut problems = Vec::new();
        for (&i, &recounted) in sample.iter().zip(&counts) {
            let unit = &cert.units[i];
            if unit.count != recounted {
                let position = cert
                    .header
                    .game
                    .fns()
                    .show_packed(&unit.position)
                    .unwrap_or_else(|e| e.to_string());
                problems.push(format!(
                    "unit {i} ({position}): the certificate says {}, recounted {}",
                    shown_leaves(unit.count),
                    shown_leaves(recounted)
                ));
            }
        }
        Ok(ClusterRecount {
            problems,
            jobs,
            seconds: started.elapsed().as_secs_f64(),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pass_probability_is_hypergeometric() {
        assert_eq!(pass_probability(10, 10, 1), 0.0);
        assert!((pass_probability(10, 1, 1) - 0.9).abs() < 1e-12);
        // Two drawn of four, two wrong: only the one good pair of six passes.
        assert!((pass_probability(4, 2, 2) - 1.0 / 6.0).abs() < 1e-12);
        assert_eq!(sample_indices(100, 5, 7), sample_indices(100, 5, 7));
        assert_eq!(sample_indices(3, 10, 1), vec![0, 1, 2]);
    }
}
