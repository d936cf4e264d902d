//! Counting a list of positions on a cluster, for `perft audit --on` (a
//! certificate's sampled units) and `perft suite --on` (a suite's lines):
//! the positions go to the coordinator as ordinary jobs of explicit units
//! (packed position, remaining depth), as many as fit in a message each;
//! once done, each job's counts are read back in order, with their leaves
//! by kind when the jobs count statistics.

use perft_core::{Convention, GameKind, Leaves};
use perft_proto as pb;
use perft_proto::connect::AuthChannel;
use perft_proto::perft_service_client::PerftServiceClient;

use crate::client::{follow, state_name, status_error};
use crate::error::CliError;

/// Units a job carries: a submit of them stays well under the 4 MiB
/// message limit (each unit is its packed bytes and three of framing).
fn units_per_job(packed_bytes: usize) -> usize {
    ((3 << 20) / (packed_bytes + 3)).min(100_000)
}

/// One unit's count as the cluster made it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitCount {
    /// Its leaves.
    pub leaves: Leaves,
    /// Its leaves by kind, in the game's column order (empty unless the
    /// job counted statistics).
    pub kinds: Vec<u128>,
}

/// The `expected` counts of done job `id`, page by page, each with
/// `kinds` kinds.
async fn unit_counts(
    client: &mut PerftServiceClient<AuthChannel>,
    id: &str,
    expected: usize,
    kinds: usize,
) -> Result<Vec<UnitCount>, CliError> {
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
        for count in &page.counts {
            let unit = UnitCount {
                leaves: count.to_core(),
                kinds: count.kind_counts(),
            };
            if unit.kinds.len() != kinds {
                return Err(CliError::Failed(format!(
                    "the coordinator sends unit {} of job {id} with {} kinds; {kinds} were asked",
                    counts.len(),
                    unit.kinds.len()
                )));
            }
            counts.push(unit);
        }
    }
    counts.truncate(expected);
    Ok(counts)
}

/// Counts `positions` (packed positions of `game`) each to `depth` plies
/// on the cluster of `coordinator` (by kind too with `stats`), as jobs of
/// explicit units, as many as fit in a message each; returns the counts in
/// order and the jobs' ids.
pub async fn count_units(
    client: &mut PerftServiceClient<AuthChannel>,
    game: GameKind,
    convention: Option<Convention>,
    depth: u32,
    positions: &[Vec<u8>],
    stats: bool,
) -> Result<(Vec<UnitCount>, Vec<String>), CliError> {
    let kinds = if stats { game.stats_kinds().len() } else { 0 };
    let mut counts = Vec::with_capacity(positions.len());
    let mut jobs = Vec::new();
    for chunk in positions.chunks(units_per_job(game.packed_bytes())) {
        let request = pb::SubmitJobRequest {
            game: pb::Game::from_kind(game).into(),
            depth,
            convention: pb::Convention::from_core(convention).into(),
            units: chunk.to_vec(),
            stats,
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
        counts.extend(unit_counts(client, &id, chunk.len(), kinds).await?);
        jobs.push(id);
    }
    Ok((counts, jobs))
}
