//! Counting a list of positions on a cluster, for `perft audit --on` (a
//! certificate's sampled units) and `perft suite --on` (a suite's lines):
//! the positions go to the coordinator as ordinary jobs of explicit units
//! (packed position, remaining depth), as many as fit in a message each;
//! once done, each job's counts are read back in order, with their leaves
//! by kind when the jobs count statistics.

use perft_client::{Client, Submission};
use perft_core::{Convention, GameKind};
use perft_model::{Count, JobState};

use crate::client::follow;
use crate::error::CliError;

/// Units a job carries: a submit of them stays well under the 4 MiB
/// message limit (each unit is its packed bytes and three of framing).
fn units_per_job(packed_bytes: usize) -> usize {
    ((3 << 20) / (packed_bytes + 3)).min(100_000)
}

/// Counts `positions` (packed positions of `game`) each to `depth` plies
/// on the cluster of `coordinator` (by kind too with `stats`), as jobs of
/// explicit units, as many as fit in a message each; returns the counts in
/// order and the jobs' ids.
pub async fn count_units(
    client: &Client,
    game: GameKind,
    convention: Option<Convention>,
    depth: u32,
    positions: &[Vec<u8>],
    stats: bool,
) -> Result<(Vec<Count>, Vec<String>), CliError> {
    let kinds = perft_model::kinds_of(game, stats);
    let mut counts = Vec::with_capacity(positions.len());
    let mut jobs = Vec::new();
    for chunk in positions.chunks(units_per_job(game.packed_bytes())) {
        let submission = Submission {
            convention,
            units: chunk.to_vec(),
            stats,
            ..Submission::new(game, depth)
        };
        let id = client.submit(&submission).await?;
        errln!("job {id}: {} units of depth {depth} submitted", chunk.len());
        let job = follow(client, &id, crate::args::ProgressArgs::DEFAULT).await?;
        if job.state != JobState::Done {
            return Err(CliError::Failed(format!(
                "job {id} ended {}{}",
                job.state.name(),
                job.error.map_or(String::new(), |error| format!(": {error}"))
            )));
        }
        counts.extend(client.unit_counts(&id, game, chunk.len(), kinds).await?);
        jobs.push(id.to_string());
    }
    Ok((counts, jobs))
}
