//! Counting a list of positions on a cluster, for `perft audit --on` (a
//! certificate's sampled units) and `perft suite --on` (a suite's lines):
//! the positions go to the coordinator as ordinary jobs of explicit units
//! (packed position, remaining depth), as many as fit in a message each;
//! once done, each job's counts are read back in order.

use std::time::Instant;

use perft_certificate::Certificate;
use perft_core::{Convention, GameKind, Leaves};
use perft_proto as pb;
use perft_proto::connect::AuthChannel;
use perft_proto::perft_service_client::PerftServiceClient;

use crate::args::CoordinatorArg;
use crate::client::{connect, follow, state_name, status_error};
use crate::cluster::runtime;
use crate::error::CliError;

/// Units a job carries: a submit of them stays well under the 4 MiB
/// message limit (each unit is its packed bytes and three of framing).
fn units_per_job(packed_bytes: usize) -> usize {
    ((3 << 20) / (packed_bytes + 3)).min(100_000)
}

/// The `expected` counts of done job `id`, page by page.
async fn unit_counts(
    client: &mut PerftServiceClient<AuthChannel>,
    id: &str,
    expected: usize,
) -> Result<Vec<Leaves>, CliError> {
    let mut counts = Vec::with_capacity(expected);
    while counts.len() < expected {
        let page = client
            .get_unit_counts(pb::GetUnitCountsRequest {
                job_id: id.to_owned(),
                start: counts.len() as u64,
                page_size: 0,
            })
            .await
            .map_err(status_error)?
            .into_inner();
        if page.units_total != expected as u64 || page.counts.is_empty() {
            return Err(CliError::Failed(format!(
                "the coordinator answers job {id} has {} units and sends {} counts from unit {}; {expected} were submitted",
                page.units_total,
                page.counts.len(),
                counts.len()
            )));
        }
        counts.extend(page.counts.iter().map(pb::Leaves::to_core));
    }
    counts.truncate(expected);
    Ok(counts)
}

/// Counts `positions` (packed positions of `game`) each to `depth` plies
/// on the cluster of `coordinator`, as jobs of explicit units, as many as
/// fit in a message each; returns the counts in order and the jobs' ids.
pub async fn count_units(
    client: &mut PerftServiceClient<AuthChannel>,
    game: GameKind,
    convention: Option<Convention>,
    depth: u32,
    positions: &[Vec<u8>],
) -> Result<(Vec<Leaves>, Vec<String>), CliError> {
    let mut counts = Vec::with_capacity(positions.len());
    let mut jobs = Vec::new();
    for chunk in positions.chunks(units_per_job(game.packed_bytes())) {
        let request = pb::SubmitJobRequest {
            game: pb::Game::from_kind(game).into(),
            depth,
            convention: pb::Convention::from_core(convention).into(),
            units: chunk.to_vec(),
            ..Default::default()
        };
        let id = client
            .submit_job(request)
            .await
            .map_err(status_error)?
            .into_inner()
            .job_id;
        errln!("job {id}: {} units of depth {depth} submitted", chunk.len());
        let job = follow(client, &id, true).await?;
        if job.state() != pb::JobState::Done {
            return Err(CliError::Failed(format!(
                "job {id} ended {}{}",
                state_name(&job),
                if job.error.is_empty() {
                    String::new()
                } else {
                    format!(": {}", job.error)
                }
            )));
        }
        counts.extend(unit_counts(client, &id, chunk.len()).await?);
        jobs.push(id);
    }
    Ok((counts, jobs))
}

/// What the cluster's recount of a certificate's sample found.
#[derive(Debug)]
pub struct ClusterRecount {
    /// Units whose recount differs from the certificate, for people.
    pub problems: Vec<String>,
    /// The jobs that counted the sample.
    pub jobs: Vec<String>,
    pub seconds: f64,
}

/// Recounts units `sample` of `cert` on the cluster of `coordinator`.
pub fn recount(
    coordinator: &CoordinatorArg,
    cert: &Certificate,
    sample: &[usize],
) -> Result<ClusterRecount, CliError> {
    runtime()?.block_on(async {
        let mut client = connect(coordinator).await?;
        let started = Instant::now();
        let positions: Vec<Vec<u8>> = sample.iter().map(|&i| cert.units[i].position.clone()).collect();
        let (counts, jobs) = count_units(
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
                    crate::audit::shown_leaves(unit.count),
                    crate::audit::shown_leaves(recounted)
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
