//! Check (4) of an audit: a sample of units recounted, on this machine
//! (`perft_local::recount`) or on a cluster, and compared with the
//! certificate: leaves and, in a statistics certificate, every kind.

use std::time::Instant;

use perft_certificate::Certificate;
use perft_certificate::audit::{
    check_merkle, check_plan, check_root_without_moves, check_sums, check_units_possible, unit_differs,
};
use perft_core::{ByKind, GameStats, Plain, StatsVisitor};
use perft_local::recount;

use crate::args::{AuditArgs, CoordinatorArg};
use crate::client::connect;
use crate::cluster::runtime;
use crate::error::CliError;
use crate::units_on_cluster;

/// What the audit generic over the game found.
pub(super) struct Findings {
    pub problems: Vec<String>,
    /// What check (0) checked on every unit, for people.
    pub units_checked: String,
    /// The sampled units whose positions unpack: recounted here, or left
    /// for the cluster.
    pub sampled: Vec<usize>,
    pub recounted: usize,
    pub seconds: f64,
}

/// Checks (0) to (3), and (4) on this machine when `local`.
pub(super) struct Audit<'a> {
    pub cert: &'a Certificate,
    pub args: &'a AuditArgs,
    pub sample: Vec<usize>,
    /// Recount the sample on this machine (else a cluster does).
    pub local: bool,
}

impl StatsVisitor for Audit<'_> {
    type Output = Result<Findings, CliError>;

    fn visit<G: GameStats>(self) -> Self::Output {
        let Audit {
            cert,
            args,
            sample,
            local,
        } = self;
        let mut problems = Vec::new();
        let root = G::unpack(&cert.header.root).map_err(|e| CliError::Usage(format!("root: {e}")))?;
        let units_checked = check_units_possible::<G>(cert, &mut problems);
        check_plan(cert, root, &mut problems);
        check_sums(cert, &mut problems);
        check_merkle(cert, &mut problems);
        check_root_without_moves(cert, &root, &mut problems);
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
                units_checked,
                sampled: counted,
                recounted: 0,
                seconds: 0.0,
            });
        }
        let depth = cert.header.depth - cert.header.split_depth;
        let started = Instant::now();
        let (threads, table) = (args.engine.threads(), args.engine.table());
        let counts = if cert.header.kinds.is_empty() {
            recount::<G, Plain>(&positions, depth, threads, table)?
        } else {
            recount::<G, ByKind>(&positions, depth, threads, table)?
        };
        let seconds = started.elapsed().as_secs_f64();
        for ((&i, pos), recounted) in counted.iter().zip(&positions).zip(&counts) {
            if let Some(problem) = unit_differs(cert, i, recounted) {
                problems.push(format!("unit {i} ({pos}): {problem}"));
            }
        }
        Ok(Findings {
            problems,
            units_checked,
            recounted: counted.len(),
            sampled: counted,
            seconds,
        })
    }
}

/// What the cluster's recount of a certificate's sample found.
#[derive(Debug)]
pub(super) struct ClusterRecount {
    /// Units whose recount differs from the certificate, for people.
    pub problems: Vec<String>,
    /// The jobs that counted the sample.
    pub jobs: Vec<String>,
    pub seconds: f64,
}

/// Recounts units `sample` of `cert` on the cluster of `coordinator`, by
/// kind too when the certificate counts kinds.
pub(super) fn recount_on_cluster(
    coordinator: &CoordinatorArg,
    cert: &Certificate,
    sample: &[usize],
) -> Result<ClusterRecount, CliError> {
    runtime()?.block_on(async {
        let client = connect(coordinator).await?;
        let started = Instant::now();
        let positions: Vec<Vec<u8>> = sample.iter().map(|&i| cert.units[i].position.clone()).collect();
        let (counts, jobs) = units_on_cluster::count_units(
            &client,
            cert.header.game,
            cert.header.convention,
            cert.header.depth - cert.header.split_depth,
            &positions,
            !cert.header.kinds.is_empty(),
        )
        .await?;
        let mut problems = Vec::new();
        for (&i, recounted) in sample.iter().zip(&counts) {
            if let Some(problem) = unit_differs(cert, i, recounted) {
                let position = cert
                    .header
                    .game
                    .fns()
                    .show_packed(&cert.units[i].position)
                    .unwrap_or_else(|e| e.to_string());
                problems.push(format!("unit {i} ({position}): {problem}"));
            }
        }
        Ok(ClusterRecount {
            problems,
            jobs,
            seconds: started.elapsed().as_secs_f64(),
        })
    })
}
