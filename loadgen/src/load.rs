//! A load's job and its workers' credentials: the job is submitted split
//! one ply above its depth, so that every unit is one ply deep and the
//! coordinator, not the counting, is what the load measures.

use std::time::{Duration, Instant};

use perft_client::{Client, ClientConfig, Submission};
use perft_core::GameKind;
use perft_model::JobId;

use crate::error::LoadgenError;

/// A load's job, planned and journaled by the coordinator.
#[derive(Debug)]
pub struct LoadJob {
    pub id: JobId,
    /// Units in its plan.
    pub units: u64,
    /// From the submission to the coordinator's answer: planning and
    /// journaling the plan.
    pub planned: Duration,
}

/// Submits `depth` plies of `game` from its start, split one ply above.
pub async fn submit_job(client: &Client, game: GameKind, depth: u32) -> Result<LoadJob, LoadgenError> {
    let submission = Submission {
        split_depth: Some(depth.saturating_sub(1)),
        ..Submission::new(game, depth)
    };
    let planning = Instant::now();
    let id = client.submit(&submission).await?;
    let planned = planning.elapsed();
    let units = client.job(&id).await?.units_total;
    Ok(LoadJob { id, units, planned })
}

/// The credentials of `workers` simulated workers on `job`: `client`'s own
/// for all, or with `own_participants` a participant of its own each.
pub async fn worker_credentials(
    client: &Client,
    job: &JobId,
    workers: u32,
    own_participants: bool,
) -> Result<Vec<ClientConfig>, LoadgenError> {
    if own_participants {
        return crate::simulate::own_participants(client, job, workers).await;
    }
    Ok(vec![client.config().clone(); workers as usize])
}
