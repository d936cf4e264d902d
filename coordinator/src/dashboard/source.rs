//! Every read the dashboard makes of the coordinator's state, in one place.
//! Job reads are tasks on the scheduler that copy out what they need;
//! registry reads drop their guard before anything awaits.

use std::time::{Duration, Instant};

use crate::Coordinator;
use crate::jobs::{Disagreement, DivideView, JobError, JobView, Jobs};
use perft_model::WorkerFigures;
use perft_model::{JobId, MachineName, ParticipantId, SessionId};

/// Why a read has no answer.
#[derive(Debug)]
pub(super) enum ReadError {
    /// No such job.
    NotFound(JobError),
    /// The journal cannot make what was read durable.
    Journal(String),
}

/// A worker session holding units of a job.
#[derive(Clone, Debug)]
pub(super) struct Serving {
    pub session: SessionId,
    /// Its participant and machine name, if the session is still registered.
    pub participant: Option<ParticipantId>,
    pub name: Option<MachineName>,
    pub units: u64,
}

/// A job with its divide table, first disagreements and serving workers.
#[derive(Debug)]
pub(super) struct JobDetail {
    pub divide: DivideView,
    pub disagreements: Vec<Disagreement>,
    /// More disagreements than those shown.
    pub more_disagreements: bool,
    pub serving: Vec<Serving>,
}

/// A registered worker session as the registry holds it now.
#[derive(Clone, Debug)]
pub(super) struct WorkerRead {
    pub session: SessionId,
    pub participant: ParticipantId,
    pub name: MachineName,
    pub threads: u32,
    pub only_job: Option<JobId>,
    pub draining: bool,
    /// Time since its last call.
    pub silent_for: Duration,
    pub stats: Option<WorkerFigures>,
}

/// Disagreements shown on a job page; the API says when there are more.
const DISAGREEMENTS_SHOWN: usize = 100;

/// Reads the jobs on the scheduler and waits until what was read is
/// durable, as client reads do: the dashboard never shows a change the
/// journal could still lose.
async fn durable_read<R, F>(coordinator: &Coordinator, read: F) -> Result<R, ReadError>
where
    R: Send + 'static,
    F: FnOnce(&Jobs) -> R + Send + 'static,
{
    if coordinator.degraded.load(std::sync::atomic::Ordering::Acquire) {
        return Err(ReadError::Journal(
            "the journal cannot write (disk full or failing): nothing is shown until it can".to_owned(),
        ));
    }
    let journal = |e: tonic::Status| ReadError::Journal(e.message().to_owned());
    let (value, barrier) = coordinator.scheduler.read(read).await.map_err(journal)?;
    barrier
        .wait()
        .await
        .map_err(|e| ReadError::Journal(e.to_string()))?;
    Ok(value)
}

/// Up to `limit` jobs from place `start`, and the next page's place.
pub(super) async fn jobs_page(
    coordinator: &Coordinator,
    start: usize,
    limit: usize,
) -> Result<(Vec<JobView>, Option<usize>), ReadError> {
    durable_read(coordinator, move |jobs| jobs.list(start, limit)).await
}

/// Jobs for the rate sampler: no durability wait (only rates come of it);
/// none while the scheduler is stopped.
pub(super) async fn jobs_for_sampling(
    coordinator: &Coordinator,
    start: usize,
    limit: usize,
) -> (Vec<JobView>, Option<usize>) {
    coordinator
        .peek(move |jobs| jobs.list(start, limit))
        .await
        .unwrap_or_default()
}

/// One job's detail; `NotFound` for an unknown id.
pub(super) async fn job_detail(coordinator: &Coordinator, id: &JobId) -> Result<JobDetail, ReadError> {
    let id = id.clone();
    let read = durable_read(coordinator, move |jobs| {
        jobs.divide(&id).and_then(|divide| {
            let (disagreements, next) = jobs.disagreements(&id, 0, DISAGREEMENTS_SHOWN)?;
            Ok((divide, disagreements, next.is_some(), jobs.holders_of(&id)))
        })
    })
    .await?;
    let (divide, disagreements, more_disagreements, holders) = read.map_err(ReadError::NotFound)?;
    let serving = holders
        .into_iter()
        .map(|(session, units)| {
            let name = coordinator
                .workers
                .get(&session)
                .map(|w| (w.participant.clone(), w.name.clone()));
            let (participant, name) = name.unzip();
            Serving {
                session,
                participant,
                name,
                units,
            }
        })
        .collect();
    Ok(JobDetail {
        divide,
        disagreements,
        more_disagreements,
        serving,
    })
}

/// Every registered worker session, by name then session.
pub(super) fn workers(coordinator: &Coordinator) -> Vec<WorkerRead> {
    let now = Instant::now();
    let mut workers: Vec<WorkerRead> = coordinator
        .workers
        .iter()
        .map(|entry| {
            let w = entry.value();
            WorkerRead {
                session: entry.key().clone(),
                participant: w.participant.clone(),
                name: w.name.clone(),
                threads: w.threads,
                only_job: w.only_job.clone(),
                draining: w.draining,
                silent_for: now.saturating_duration_since(w.last_seen),
                stats: w.stats,
            }
        })
        .collect();
    workers.sort_by(|a, b| {
        a.name
            .cmp(&b.name)
            .then_with(|| a.session.as_str().cmp(b.session.as_str()))
    });
    workers
}

/// Every participant with its budget lines, as `perft participant list`
/// gets them; an error while the scheduler is stopped.
pub(super) async fn participants_with_budget(
    coordinator: &Coordinator,
) -> Result<Vec<perft_proto::Participant>, tonic::Status> {
    coordinator
        .participant_messages(coordinator.participants.list())
        .await
}

/// Who the coordinator lets in: the participants and the shared token.
pub(super) fn participants(coordinator: &Coordinator) -> &crate::participants::Participants {
    &coordinator.participants
}

/// The coordinator's PEM certificate chain and key, if it serves TLS.
pub(super) fn tls(coordinator: &Coordinator) -> Option<&(Vec<u8>, Vec<u8>)> {
    coordinator.config.tls.as_ref()
}

/// How often workers heartbeat: a worker silent for two of these is late.
pub(super) fn heartbeat_interval(coordinator: &Coordinator) -> Duration {
    coordinator.config.heartbeat_interval
}

/// Whether a job of that id exists (no, while the scheduler is stopped).
pub(super) async fn job_exists(coordinator: &Coordinator, id: &JobId) -> bool {
    let id = id.clone();
    coordinator
        .peek(move |jobs| jobs.contains(&id))
        .await
        .unwrap_or(false)
}
