//! `perft.v1.PerftService`: what clients call.

use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use perft_core::GameKind;
use perft_proto as pb;
use tokio_stream::Stream;
use tonic::{Request, Response, Status};

use crate::Coordinator;
use crate::jobs::{JobError, JobSpec, JobState, JobView};
use crate::planning::{PlanRequest, plan};

pub(crate) struct ClientApi(pub Arc<Coordinator>);

fn state(state: JobState) -> pb::JobState {
    match state {
        JobState::Queued => pb::JobState::Queued,
        JobState::Running => pb::JobState::Running,
        JobState::Done => pb::JobState::Done,
        JobState::Failed => pb::JobState::Failed,
        JobState::Cancelled => pb::JobState::Cancelled,
    }
}

pub(crate) fn job_message(view: &JobView) -> pb::Job {
    pb::Job {
        job_id: view.id.clone(),
        game: view.spec.game.name().to_owned(),
        position: view.spec.position.clone(),
        depth: view.spec.depth,
        split_depth: view.split_depth,
        verify: view.spec.verify,
        state: state(view.state).into(),
        error: view.error.clone().unwrap_or_default(),
        units_total: view.units_total,
        units_done: view.units_done,
        units_released: view.units_released,
        leaves_done: Some(view.leaves_done.into()),
        seconds: view.seconds,
        disagreements: view
            .disagreements
            .iter()
            .map(|d| pb::Disagreement {
                unit_id: d.unit_id,
                position: d.position.clone(),
                votes: d
                    .votes
                    .iter()
                    .map(|v| pb::Vote {
                        worker: v.worker.clone(),
                        leaves: Some(v.leaves.into()),
                    })
                    .collect(),
                decided: d.decided.map(Into::into),
            })
            .collect(),
    }
}

/// The journal could not make a change durable: the caller must not take
/// it as done (a worker keeps its counts and reports them again).
pub(crate) fn journal_failed(err: crate::journal::JournalError) -> Status {
    tracing::error!(error = %err, "journal write failed");
    Status::unavailable(err.to_string())
}

fn not_found(err: JobError) -> Status {
    Status::not_found(err.to_string())
}

type JobStream = Pin<Box<dyn Stream<Item = Result<pb::Job, Status>> + Send>>;

#[tonic::async_trait]
impl pb::perft_service_server::PerftService for ClientApi {
    async fn submit_job(
        &self,
        request: Request<pb::SubmitJobRequest>,
    ) -> Result<Response<pb::SubmitJobResponse>, Status> {
        let req = request.into_inner();
        let game: GameKind = req
            .game
            .parse()
            .map_err(|e: perft_core::UnknownGame| Status::invalid_argument(e.to_string()))?;
        let threads: usize = self.0.workers.iter().map(|w| w.threads as usize).sum();
        let plan_request = PlanRequest {
            position: (!req.position.trim().is_empty()).then(|| req.position.clone()),
            depth: req.depth,
            split_depth: (req.split_depth > 0).then_some(req.split_depth),
            min_units: self.0.config.min_units.max(threads * 32),
            max_units: self.0.config.max_units,
        };
        // The expansion can take a while: keep it off the async threads.
        let planned = tokio::task::spawn_blocking(move || plan(game, &plan_request))
            .await
            .map_err(|e| Status::internal(format!("planning stopped: {e}")))?
            .map_err(|e| Status::invalid_argument(e.to_string()))?;
        let id = uuid::Uuid::new_v4().simple().to_string()[..12].to_owned();
        let spec = JobSpec {
            game,
            position: planned.position.clone(),
            depth: req.depth,
            verify: req.verify,
        };
        tracing::info!(job = %id, %game, depth = req.depth, units = planned.units.len(), split = planned.split_depth, "job queued");
        let ((), commit) = self
            .0
            .change(|jobs| jobs.submit(id.clone(), spec, planned, Instant::now()));
        commit.wait().await.map_err(journal_failed)?;
        self.0.notify();
        Ok(Response::new(pb::SubmitJobResponse { job_id: id }))
    }

    async fn get_job(&self, request: Request<pb::GetJobRequest>) -> Result<Response<pb::Job>, Status> {
        let view = self
            .0
            .jobs()
            .view(&request.into_inner().job_id)
            .map_err(not_found)?;
        Ok(Response::new(job_message(&view)))
    }

    async fn list_jobs(
        &self,
        _request: Request<pb::ListJobsRequest>,
    ) -> Result<Response<pb::ListJobsResponse>, Status> {
        let jobs = self.0.jobs().list().iter().map(job_message).collect();
        Ok(Response::new(pb::ListJobsResponse { jobs }))
    }

    async fn cancel_job(&self, request: Request<pb::CancelJobRequest>) -> Result<Response<pb::Job>, Status> {
        let view = self
            .0
            .jobs()
            .cancel(&request.into_inner().job_id)
            .map_err(not_found)?;
        self.0.notify();
        Ok(Response::new(job_message(&view)))
    }

    type WatchJobStream = JobStream;

    async fn watch_job(&self, request: Request<pb::WatchJobRequest>) -> Result<Response<JobStream>, Status> {
        let id = request.into_inner().job_id;
        self.0.jobs().view(&id).map_err(not_found)?;
        let coordinator = Arc::clone(&self.0);
        let mut changed = coordinator.changed.subscribe();
        let stream = async_stream(move |tx| async move {
            loop {
                let found = coordinator.jobs().view(&id);
                let view = match found {
                    Ok(view) => view,
                    Err(e) => {
                        let _ = tx.send(Err(not_found(e))).await;
                        return;
                    }
                };
                if tx.send(Ok(job_message(&view))).await.is_err() || view.state.is_final() {
                    return;
                }
                // At most five updates a second; at least one a second.
                tokio::time::sleep(Duration::from_millis(200)).await;
                let _ = tokio::time::timeout(Duration::from_secs(1), changed.changed()).await;
            }
        });
        Ok(Response::new(stream))
    }

    async fn get_divide(
        &self,
        request: Request<pb::GetDivideRequest>,
    ) -> Result<Response<pb::DivideTable>, Status> {
        let divide = self
            .0
            .jobs()
            .divide(&request.into_inner().job_id)
            .map_err(not_found)?;
        Ok(Response::new(pb::DivideTable {
            job: Some(job_message(&divide.job)),
            entries: divide
                .moves
                .into_iter()
                .map(|(mv, leaves)| pb::DivideEntry {
                    r#move: mv,
                    leaves: Some(leaves.into()),
                })
                .collect(),
            total: Some(divide.total.into()),
        }))
    }
}

/// A stream fed by a task through a small channel.
fn async_stream<F, Fut>(body: F) -> JobStream
where
    F: FnOnce(tokio::sync::mpsc::Sender<Result<pb::Job, Status>>) -> Fut,
    Fut: std::future::Future<Output = ()> + Send + 'static,
{
    let (tx, rx) = tokio::sync::mpsc::channel(4);
    tokio::spawn(body(tx));
    Box::pin(tokio_stream::wrappers::ReceiverStream::new(rx))
}
