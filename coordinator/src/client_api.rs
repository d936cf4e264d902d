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

fn not_found(err: JobError) -> Status {
    match err {
        JobError::NotFound(_) => Status::not_found(err.to_string()),
        JobError::NotFailed { .. } => Status::failed_precondition(err.to_string()),
    }
}

/// Longest position text accepted, in bytes: every game's is far shorter.
const MAX_POSITION_BYTES: usize = 1024;

impl ClientApi {
    /// Reads the jobs and answers once what was read is durable: a client
    /// never sees a change the journal could still lose.
    async fn read<R>(&self, read: impl FnOnce(&crate::jobs::Jobs) -> R) -> Result<R, Status> {
        let (value, barrier) = {
            let jobs = self.0.jobs();
            (read(&jobs), self.0.journal.barrier())
        };
        self.0.durable(barrier).await?;
        Ok(value)
    }
}

type JobStream = Pin<Box<dyn Stream<Item = Result<pb::Job, Status>> + Send>>;

#[tonic::async_trait]
impl pb::perft_service_server::PerftService for ClientApi {
    async fn submit_job(
        &self,
        request: Request<pb::SubmitJobRequest>,
    ) -> Result<Response<pb::SubmitJobResponse>, Status> {
        let req = request.into_inner();
        self.0.writable()?;
        let game: GameKind = req
            .game
            .parse()
            .map_err(|e: perft_core::UnknownGame| Status::invalid_argument(e.to_string()))?;
        if req.position.len() > MAX_POSITION_BYTES {
            return Err(Status::invalid_argument(format!(
                "the position text is {} bytes, more than any {game} position's {MAX_POSITION_BYTES}: '{}'",
                req.position.len(),
                perft_core::shown(&req.position)
            )));
        }
        let max_units = self.0.config.max_units;
        let plan_request = PlanRequest {
            position: (!req.position.trim().is_empty()).then(|| req.position.clone()),
            depth: req.depth,
            split_depth: (req.split_depth > 0).then_some(req.split_depth),
            min_units: self
                .0
                .config
                .min_units
                .max(self.0.split_threads().saturating_mul(32))
                .min(max_units),
            max_units,
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
        self.0.writable()?;
        let ((), commit) = self
            .0
            .change(|jobs| jobs.submit(id.clone(), spec, planned, Instant::now()));
        self.0.durable(commit).await?;
        self.0.notify();
        Ok(Response::new(pb::SubmitJobResponse { job_id: id }))
    }

    async fn get_job(&self, request: Request<pb::GetJobRequest>) -> Result<Response<pb::Job>, Status> {
        let id = request.into_inner().job_id;
        let view = self.read(|jobs| jobs.view(&id)).await?.map_err(not_found)?;
        Ok(Response::new(job_message(&view)))
    }

    async fn list_jobs(
        &self,
        _request: Request<pb::ListJobsRequest>,
    ) -> Result<Response<pb::ListJobsResponse>, Status> {
        let jobs = self.read(|jobs| jobs.list()).await?;
        Ok(Response::new(pb::ListJobsResponse {
            jobs: jobs.iter().map(job_message).collect(),
        }))
    }

    async fn cancel_job(&self, request: Request<pb::CancelJobRequest>) -> Result<Response<pb::Job>, Status> {
        self.0.writable()?;
        let id = request.into_inner().job_id;
        let (view, commit) = self.0.change(|jobs| jobs.cancel(&id));
        // Acknowledged only once the cancel is durable.
        self.0.durable(commit).await?;
        let view = view.map_err(not_found)?;
        self.0.notify();
        Ok(Response::new(job_message(&view)))
    }

    async fn resume_job(&self, request: Request<pb::ResumeJobRequest>) -> Result<Response<pb::Job>, Status> {
        self.0.writable()?;
        let id = request.into_inner().job_id;
        let (view, commit) = self.0.change(|jobs| jobs.resume(&id));
        self.0.durable(commit).await?;
        let view = view.map_err(not_found)?;
        tracing::info!(job = %view.id, "job resumed");
        self.0.notify();
        Ok(Response::new(job_message(&view)))
    }

    type WatchJobStream = JobStream;

    async fn watch_job(&self, request: Request<pb::WatchJobRequest>) -> Result<Response<JobStream>, Status> {
        let id = request.into_inner().job_id;
        self.read(|jobs| jobs.view(&id)).await?.map_err(not_found)?;
        let api = ClientApi(Arc::clone(&self.0));
        let mut changed = self.0.changed.subscribe();
        let stream = async_stream(move |tx| async move {
            loop {
                let view = match api.read(|jobs| jobs.view(&id)).await {
                    Ok(Ok(view)) => view,
                    Ok(Err(e)) => {
                        let _ = tx.send(Err(not_found(e))).await;
                        return;
                    }
                    Err(status) => {
                        let _ = tx.send(Err(status)).await;
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
        let id = request.into_inner().job_id;
        let divide = self.read(|jobs| jobs.divide(&id)).await?.map_err(not_found)?;
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
