//! Check (4) of an audit on a cluster: the sampled units recounted there
//! and compared with the certificate: leaves and, in a statistics
//! certificate, every kind.

use std::time::Instant;

use perft_certificate::Certificate;
use perft_certificate::audit::unit_differs;
use perft_client::{PositionCounts, Positions};

use crate::args::CoordinatorArg;
use crate::client::connect;
use crate::cluster::runtime;
use crate::error::CliError;
use crate::units_on_cluster;

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
        let positions = Positions {
            game: cert.header.game,
            convention: cert.header.convention,
            depth: cert.header.depth - cert.header.split_depth,
            packed: &positions,
            stats: !cert.header.kinds.is_empty(),
        };
        let PositionCounts { counts, jobs } = units_on_cluster::count_units(&client, positions).await?;
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
            jobs: jobs.iter().map(ToString::to_string).collect(),
            seconds: started.elapsed().as_secs_f64(),
        })
    })
}
