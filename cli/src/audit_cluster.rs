//! `perft audit FILE --on COORDINATOR`: the sampled recount spread over a
//! cluster. The sampled units go to the coordinator as ordinary jobs of
//! explicit units (packed position, remaining depth), as many as fit in a
//! message each; once done, each job's counts are read back in order and
//! compared with the certificate's.

use std::time::Instant;

use perft_certificate::Certificate;
use perft_core::Leaves;
use perft_proto as pb;
use perft_proto::connect::AuthChannel;
use perft_proto::perft_service_client::PerftServiceClient;

use crate::args::CoordinatorArg;
use crate::client::{connect, follow, state_name, status_error};
use crate::cluster::runtime;
use crate::error::CliError;

/// What the cluster's recount found.
#[derive(Debug)]
pub struct ClusterRecount {
    /// Units whose recount differs from the certificate, for people.
    pub problems: Vec<String>,
    /// The jobs that counted the sample.
    pub jobs: Vec<String>,
    pub seconds: f64,
}

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

/// Recounts units `sample` of `cert` on the cluster of `coordinator`.
pub fn recount(
    coordinator: &CoordinatorArg,
    cert: &Certificate,
    sample: &[usize],
) -> Result<ClusterRecount, CliError> {
    runtime()?.block_on(async {
        let mut client = connect(coordinator).await?;
        let started = Instant::now();
        let mut found = ClusterRecount {
            problems: Vec::new(),
            jobs: Vec::new(),
            seconds: 0.0,
        };
        for chunk in sample.chunks(units_per_job(cert.game.packed_bytes())) {
            let request = pb::SubmitJobRequest {
                game: pb::Game::from_kind(cert.game).into(),
                depth: cert.depth - cert.split_depth,
                convention: pb::Convention::from_core(cert.convention).into(),
                units: chunk.iter().map(|&i| cert.units[i].position.clone()).collect(),
                ..Default::default()
            };
            let id = client
                .submit_job(request)
                .await
                .map_err(status_error)?
                .into_inner()
                .job_id;
            errln!(
                "recount job {id}: {} units submitted to {}",
                chunk.len(),
                coordinator.coordinator
            );
            let job = follow(&mut client, &id, true).await?;
            if job.state() != pb::JobState::Done {
                return Err(CliError::Failed(format!(
                    "recount job {id} ended {}{}",
                    state_name(&job),
                    if job.error.is_empty() {
                        String::new()
                    } else {
                        format!(": {}", job.error)
                    }
                )));
            }
            let counts = unit_counts(&mut client, &id, chunk.len()).await?;
            for (&i, &recounted) in chunk.iter().zip(&counts) {
                let unit = &cert.units[i];
                if unit.count != recounted {
                    let position = cert
                        .game
                        .show_packed(&unit.position)
                        .unwrap_or_else(|e| e.to_string());
                    found.problems.push(format!(
                        "unit {i} ({position}): the certificate says {}, recounted {}",
                        crate::audit::shown_leaves(unit.count),
                        crate::audit::shown_leaves(recounted)
                    ));
                }
            }
            found.jobs.push(id);
        }
        found.seconds = started.elapsed().as_secs_f64();
        Ok(found)
    })
}
