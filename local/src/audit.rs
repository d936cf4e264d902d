//! An audit of a certificate made on this machine: the checks over the
//! whole file (every count possible, the plan made again from the root,
//! the sums, the Merkle root, `perft_certificate::audit`'s) and, when
//! asked, a recount here of the sampled units, each compared with what the
//! certificate says. Which units to sample, and what a clean sample
//! proves, are the certificate crate's; a recount elsewhere (a cluster) is
//! the caller's, of the units this returns as sampled.

use std::time::Instant;

use perft_certificate::Certificate;
use perft_certificate::audit::{
    check_merkle, check_plan, check_root_without_moves, check_sums, check_units_possible, unit_differs,
};
use perft_core::{ByKind, GameStats, Plain, StatsVisitor};

use crate::error::LocalError;
use crate::recount::recount;
use crate::table::TableChoice;

/// Where the sample is recounted.
#[derive(Clone, Copy, Debug)]
pub enum Recount {
    /// On this machine, on `threads` threads with the table `table` asks for.
    Here { threads: usize, table: TableChoice },
    /// Elsewhere, by the caller: the audit only unpacks the sample.
    Elsewhere,
}

/// What an audit found.
#[derive(Clone, Debug, Default)]
pub struct AuditFindings {
    /// Every problem found, for people, the first the first found.
    pub problems: Vec<String>,
    /// What the check of every unit covered, for people.
    pub units_checked: String,
    /// The sampled units whose positions unpack: recounted here, or left
    /// to be recounted elsewhere.
    pub sampled: Vec<usize>,
    /// Units recounted here.
    pub recounted: usize,
    /// Seconds the recount here took.
    pub seconds: f64,
}

/// Audits `cert`: every check over the whole file, and units `sample`
/// recounted where `at` says (an index past the last unit is a finding). A root that does not unpack is refused
/// (nothing can be checked against it); every other problem is a finding.
pub fn audit(cert: &Certificate, sample: &[usize], at: Recount) -> Result<AuditFindings, LocalError> {
    let header = &cert.header;
    header
        .game
        .dispatch_stats_in(header.convention, Audit { cert, sample, at })
        .map_err(LocalError::AuditConvention)?
}

/// The audit generic over the game.
struct Audit<'a> {
    cert: &'a Certificate,
    sample: &'a [usize],
    at: Recount,
}

impl StatsVisitor for Audit<'_> {
    type Output = Result<AuditFindings, LocalError>;

    fn visit<G: GameStats>(self) -> Self::Output {
        let Audit { cert, sample, at } = self;
        let mut problems = Vec::new();
        let root = G::unpack(&cert.header.root).map_err(LocalError::AuditRoot)?;
        let units_checked = check_units_possible::<G>(cert, &mut problems);
        check_plan(cert, root, &mut problems);
        check_sums(cert, &mut problems);
        check_merkle(cert, &mut problems);
        check_root_without_moves(cert, &root, &mut problems);
        let mut positions = Vec::with_capacity(sample.len());
        let mut sampled = Vec::with_capacity(sample.len());
        for &i in sample {
            let Some(unit) = cert.units.get(i) else {
                problems.push(format!(
                    "unit {i}: the certificate has only {} units",
                    cert.units.len()
                ));
                continue;
            };
            match G::unpack(&unit.position) {
                Ok(pos) => {
                    positions.push(pos);
                    sampled.push(i);
                }
                Err(e) => problems.push(format!("unit {i}: {e}")),
            }
        }
        let Recount::Here { threads, table } = at else {
            return Ok(AuditFindings {
                problems,
                units_checked,
                sampled,
                ..AuditFindings::default()
            });
        };
        let depth = cert.header.depth - cert.header.split_depth;
        let started = Instant::now();
        let counts = if cert.header.kinds.is_empty() {
            recount::<G, Plain>(&positions, depth, threads, table)?
        } else {
            recount::<G, ByKind>(&positions, depth, threads, table)?
        };
        let seconds = started.elapsed().as_secs_f64();
        for ((&i, pos), recounted) in sampled.iter().zip(&positions).zip(&counts) {
            if let Some(problem) = unit_differs(cert, i, recounted) {
                problems.push(format!("unit {i} ({pos}): {problem}"));
            }
        }
        Ok(AuditFindings {
            problems,
            units_checked,
            recounted: sampled.len(),
            sampled,
            seconds,
        })
    }
}

#[cfg(test)]
mod tests {
    use perft_core::{Game, GameKind, Plain, Reversi};

    use super::*;
    use crate::count::{LocalJob, count_planned};

    /// Reversi perft(4) split at ply 2 (12 units, 244 leaves), certified.
    fn certificate() -> Certificate {
        let job = LocalJob {
            certify: Some("perft test".to_owned()),
            split_depth: Some(2),
            ..LocalJob::new(GameKind::Reversi, 4, 1, TableChoice::Off)
        };
        let counted = count_planned::<Reversi, Plain>(&Reversi::start(), &job).expect("counted");
        counted.certificate.expect("asked for")
    }

    #[test]
    fn a_clean_certificate_audits_clean_here_and_leaves_its_sample_elsewhere() {
        let cert = certificate();
        let units = cert.units.len();
        let all: Vec<usize> = (0..units).collect();
        let here = Recount::Here {
            threads: 1,
            table: TableChoice::Off,
        };
        let findings = audit(&cert, &all, here).expect("audited");
        assert_eq!(findings.problems, Vec::<String>::new());
        assert_eq!((findings.recounted, findings.sampled.len()), (units, units));
        let elsewhere = audit(&cert, &all, Recount::Elsewhere).expect("audited");
        assert_eq!((elsewhere.recounted, elsewhere.sampled), (0, all));
    }

    #[test]
    fn a_sample_past_the_last_unit_is_a_finding_not_a_panic() {
        let cert = certificate();
        let units = cert.units.len();
        let findings = audit(&cert, &[0, units + 7], Recount::Elsewhere).expect("audited");
        assert_eq!(findings.sampled, [0]);
        assert_eq!(
            findings.problems,
            [format!(
                "unit {}: the certificate has only {units} units",
                units + 7
            )]
        );
    }
}
