//! `perft.v2.PerftService`: what clients call. Every answer is small
//! whatever a job's size: lists and disagreements come in pages, and a job
//! is a summary whose cost does not grow with its units.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use perft_core::GameKind;
use perft_core::plan::PlanError;
use perft_proto as pb;
use tokio_stream::{Stream, StreamExt};
use tonic::{Request, Response, Status};

use crate::Coordinator;
use crate::jobs::{Disagreement, JobError, JobSpec, JobView, NewJob};
use crate::participants::{Caller, Participants};
use crate::planning::{PlanRequest, PlannedJob, PlanningError, plan, plan_units};
use perft_model::Action;
use perft_model::JobId;

pub(crate) struct ClientApi(pub Arc<Coordinator>);

pub(crate) fn job_message(view: &JobView) -> pb::Job {
    pb::Job {
        job_id: view.id.to_string(),
        game: pb::Game::from_kind(view.spec.game).into(),
        position: view.spec.position.clone(),
        depth: view.spec.depth,
        split_depth: view.split_depth,
        verify: view.spec.verify,
        state: pb::JobState::from_model(view.state).into(),
        error: view.error.clone().unwrap_or_default(),
        units_total: view.units_total,
        units_done: view.units_done,
        units_released: view.units_released,
        leaves_done: Some(view.leaves_done.into()),
        seconds: view.seconds,
        disagreements: view.disagreements,
        work_done: view.work_done,
        owner: view.spec.owner.to_string(),
        convention: pb::Convention::from_core(view.spec.convention).into(),
        stats: view.spec.stats,
    }
}

fn disagreement_message(d: &Disagreement) -> pb::Disagreement {
    pb::Disagreement {
        unit_id: d.unit_id.0,
        position: d.position.clone(),
        votes: d
            .votes
            .iter()
            .map(|v| pb::Vote {
                worker: v.worker.clone(),
                leaves: Some(v.count.into()),
            })
            .collect(),
        decided: d.decided.as_ref().map(Into::into),
    }
}

fn not_found(err: JobError) -> Status {
    match err {
        JobError::NotFound(_) => Status::not_found(err.to_string()),
        JobError::NotFailed { .. } | JobError::CannotResume { .. } | JobError::NotFinished { .. } => {
            Status::failed_precondition(err.to_string())
        }
    }
}

/// The job a request names. An id no job can have is answered as any
/// unknown job is: NOT_FOUND, naming it.
fn job_id(asked: &str) -> Result<JobId, Status> {
    JobId::parse(asked).map_err(|_| not_found(JobError::NotFound(asked.to_owned())))
}

/// Largest page of jobs or disagreements, and the default one.
const MAX_PAGE: usize = 1000;
const DEFAULT_PAGE: usize = 100;

/// Largest page of unit counts (about 2 MiB), and the default one.
const MAX_COUNT_PAGE: u64 = 50_000;
const DEFAULT_COUNT_PAGE: u64 = 10_000;

/// A page request's size and start; the token is the place to start at.
fn page(size: u32, token: &str) -> Result<(usize, usize), Status> {
    let size = match size as usize {
        0 => DEFAULT_PAGE,
        n => n.min(MAX_PAGE),
    };
    let start = if token.is_empty() {
        0
    } else {
        token.parse::<usize>().map_err(|_| {
            Status::invalid_argument(format!(
                "page token '{}' is not one this coordinator gave",
                perft_core::echoed(token)
            ))
        })?
    };
    Ok((size, start))
}

/// Longest position text accepted, in bytes: every game's is far shorter.
const MAX_POSITION_BYTES: usize = 1024;

impl ClientApi {
    /// The job `asked` names, once the caller may act on it (its owner
    /// with the submit role, or an admin): PERMISSION_DENIED otherwise,
    /// NOT_FOUND for no such job.
    async fn may_change(&self, caller: &Caller, asked: &str) -> Result<JobId, Status> {
        caller.may(Action::Submit)?;
        let id = job_id(asked)?;
        let asked = id.clone();
        let view = self
            .0
            .peek(move |jobs| jobs.view(&asked))
            .await?
            .map_err(not_found)?;
        if view.spec.owner != caller.participant && !caller.role.allows(Action::Manage) {
            return Err(Status::permission_denied(format!(
                "job {} belongs to participant '{}': only it or an admin may change it",
                view.id, view.spec.owner
            )));
        }
        Ok(id)
    }

    /// Journals a planned job and queues it; answers with its id.
    async fn queue(
        &self,
        caller: &Caller,
        game: GameKind,
        convention: Option<perft_core::Convention>,
        req: &pb::SubmitJobRequest,
        planned: PlannedJob,
    ) -> Result<Response<pb::SubmitJobResponse>, Status> {
        let id = JobId::generate();
        let spec = JobSpec {
            game,
            convention,
            position: planned.position.clone(),
            depth: req.depth,
            verify: req.verify,
            owner: caller.participant.clone(),
            stats: req.stats,
        };
        tracing::info!(job = %id, %game, convention = ?convention, depth = req.depth, units = planned.units.len(), split = planned.split_depth, "job planned");
        crate::disk_space::check_room(self.0.journal.path(), planned.units.len())?;
        let submitted_ms = crate::clock::unix_ms();
        self.journal_plan(&id, &spec, &planned, submitted_ms).await?;
        // Laying out a big plan's summary takes a step per unit: done here,
        // so the scheduler only inserts the job.
        let new_job = {
            let id = id.clone();
            tokio::task::spawn_blocking(move || NewJob::new(id, spec, planned, submitted_ms))
                .await
                .map_err(|e| Status::internal(format!("laying out the job stopped: {e}")))?
        };
        self.0.writable()?;
        let ((), commit) = self.0.change(move |jobs| jobs.add(new_job)).await?;
        self.0.durable(commit).await?;
        tracing::info!(job = %id, "job queued");
        self.0.notify();
        Ok(Response::new(pb::SubmitJobResponse {
            job_id: id.to_string(),
        }))
    }

    /// Writes a new job's plan to the journal, a transaction a chunk, each
    /// awaited: reports are acknowledged in between, and memory holds one
    /// chunk's copy at a time.
    async fn journal_plan(
        &self,
        id: &JobId,
        spec: &JobSpec,
        planned: &PlannedJob,
        submitted_ms: u64,
    ) -> Result<(), Status> {
        for op in crate::journal::plan_ops(id, spec, planned, submitted_ms) {
            self.0.writable()?;
            let commit = self.0.scheduler.write(vec![op]).await?;
            self.0.durable(commit).await?;
        }
        Ok(())
    }
}

type JobStream = Pin<Box<dyn Stream<Item = Result<pb::Job, Status>> + Send>>;
type ChunkStream = Pin<Box<dyn Stream<Item = Result<pb::CertificateChunk, Status>> + Send>>;

/// Bytes of a certificate per streamed message: a quarter of the largest
/// message, whatever the certificate's size.
const CERTIFICATE_CHUNK_BYTES: usize = 1 << 20;

#[tonic::async_trait]
impl pb::perft_service_server::PerftService for ClientApi {
    async fn submit_job(
        &self,
        request: Request<pb::SubmitJobRequest>,
    ) -> Result<Response<pb::SubmitJobResponse>, Status> {
        let caller = Caller::of(&request)?;
        caller.may(Action::Submit)?;
        let mut req = request.into_inner();
        self.0.writable()?;
        if req.verify && self.0.participants.is_open() {
            return Err(Status::failed_precondition(
                "verification needs counts from two participants, and this coordinator has no credentials: add participants (perft participant add) and give each worker its own secret",
            ));
        }
        let game: GameKind = pb::game_kind(req.game).map_err(|e| Status::invalid_argument(e.to_string()))?;
        let convention = pb::convention(req.convention)
            .map_err(|e| e.to_string())
            .and_then(|asked| game.resolve_convention(asked).map_err(|e| e.to_string()))
            .map_err(Status::invalid_argument)?;
        if req.position.len() > MAX_POSITION_BYTES {
            return Err(Status::invalid_argument(format!(
                "the position text is {} bytes, more than any {game} position's {MAX_POSITION_BYTES}: '{}'",
                req.position.len(),
                perft_core::echoed(&req.position)
            )));
        }
        // One submit at a time per participant: its budget is checked and
        // taken in one step.
        let _turn = self.0.admission.turn(&caller.participant).await;
        let owner = caller.participant.clone();
        let used = self.0.peek(move |jobs| jobs.open_use(&owner)).await?;
        let left = self.0.admission.units_left(&caller.participant, used)?;
        let limit = self.0.config.max_units;
        // A plan stops before it passes what the budget leaves: an
        // automatic split stays shallower, an explicit one is refused.
        let max_units = usize::try_from(left).unwrap_or(usize::MAX).min(limit);
        let over_budget = |e: PlanningError| match e {
            PlanningError::TooManyUnits { .. } | PlanningError::Plan(PlanError::TooManyUnits { .. })
                if max_units < limit =>
            {
                self.0.admission.plan_too_big(&caller.participant, used, None)
            }
            e => Status::invalid_argument(e.to_string()),
        };
        let units = std::mem::take(&mut req.units);
        if !units.is_empty() {
            if !req.position.trim().is_empty() || req.split_depth != 0 {
                return Err(Status::invalid_argument(PlanningError::UnitsWithRoot.to_string()));
            }
            if units.len() > max_units && max_units < limit {
                return Err(self.0.admission.plan_too_big(
                    &caller.participant,
                    used,
                    Some(units.len() as u64),
                ));
            }
            let (depth, stats) = (req.depth, req.stats);
            let planned = tokio::task::spawn_blocking(move || {
                plan_units(game, convention, &units, depth, max_units, stats)
            })
            .await
            .map_err(|e| Status::internal(format!("planning stopped: {e}")))?
            .map_err(over_budget)?;
            return self.queue(&caller, game, convention, &req, planned).await;
        }
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
            min_unit_leaves: self.0.config.min_unit_leaves,
            max_units,
            convention,
            stats: req.stats,
        };
        // The expansion can take a while: keep it off the async threads.
        let planned = tokio::task::spawn_blocking(move || plan(game, &plan_request))
            .await
            .map_err(|e| Status::internal(format!("planning stopped: {e}")))?
            .map_err(over_budget)?;
        self.queue(&caller, game, convention, &req, planned).await
    }

    async fn get_job(&self, request: Request<pb::GetJobRequest>) -> Result<Response<pb::Job>, Status> {
        Caller::of(&request)?.may(Action::Read)?;
        let id = job_id(&request.into_inner().job_id)?;
        let view = self
            .0
            .read(move |jobs| jobs.view(&id))
            .await?
            .map_err(not_found)?;
        Ok(Response::new(job_message(&view)))
    }

    async fn list_jobs(
        &self,
        request: Request<pb::ListJobsRequest>,
    ) -> Result<Response<pb::ListJobsResponse>, Status> {
        Caller::of(&request)?.may(Action::Read)?;
        let req = request.into_inner();
        let (size, start) = page(req.page_size, &req.page_token)?;
        let (jobs, next) = self.0.read(move |jobs| jobs.list(start, size)).await?;
        Ok(Response::new(pb::ListJobsResponse {
            jobs: jobs.iter().map(job_message).collect(),
            next_page_token: next.map(|n| n.to_string()).unwrap_or_default(),
        }))
    }

    async fn get_disagreements(
        &self,
        request: Request<pb::GetDisagreementsRequest>,
    ) -> Result<Response<pb::GetDisagreementsResponse>, Status> {
        Caller::of(&request)?.may(Action::Read)?;
        let req = request.into_inner();
        let id = job_id(&req.job_id)?;
        let (size, start) = page(req.page_size, &req.page_token)?;
        let (found, next) = self
            .0
            .read(move |jobs| jobs.disagreements(&id, start, size))
            .await?
            .map_err(not_found)?;
        Ok(Response::new(pb::GetDisagreementsResponse {
            disagreements: found.iter().map(disagreement_message).collect(),
            next_page_token: next.map(|n| n.to_string()).unwrap_or_default(),
        }))
    }

    async fn cancel_job(&self, request: Request<pb::CancelJobRequest>) -> Result<Response<pb::Job>, Status> {
        let caller = Caller::of(&request)?;
        self.0.writable()?;
        let id = self.may_change(&caller, &request.into_inner().job_id).await?;
        let (view, commit) = self.0.change(move |jobs| jobs.cancel(&id)).await?;
        // Acknowledged only once the cancel is durable.
        self.0.durable(commit).await?;
        let view = view.map_err(not_found)?;
        self.0.notify();
        Ok(Response::new(job_message(&view)))
    }

    async fn resume_job(&self, request: Request<pb::ResumeJobRequest>) -> Result<Response<pb::Job>, Status> {
        let caller = Caller::of(&request)?;
        self.0.writable()?;
        let id = self.may_change(&caller, &request.into_inner().job_id).await?;
        let check_id = id.clone();
        let view = self
            .0
            .peek(move |jobs| {
                jobs.check_resumable(&check_id)
                    .and_then(|()| jobs.view(&check_id))
            })
            .await?
            .map_err(not_found)?;
        // A resumed job is open again: charged to its owner's budget.
        let owner = view.spec.owner.clone();
        let _turn = self.0.admission.turn(&owner).await;
        let charged = owner.clone();
        let used = self.0.peek(move |jobs| jobs.open_use(&charged)).await?;
        if self.0.admission.units_left(&owner, used)? < view.units_total {
            return Err(self
                .0
                .admission
                .plan_too_big(&owner, used, Some(view.units_total)));
        }
        // A finished job's units are in the journal only: read them back.
        let coordinator = Arc::clone(&self.0);
        let load_id = id.clone();
        let restored = tokio::task::spawn_blocking(move || coordinator.journal.load_job(&load_id))
            .await
            .map_err(|e| Status::internal(format!("reading the job back stopped: {e}")))?
            .map_err(|e| Status::unavailable(e.to_string()))?;
        let (view, commit) = self.0.change(move |jobs| jobs.resume(&id, restored)).await?;
        self.0.durable(commit).await?;
        let view = view.map_err(not_found)?;
        tracing::info!(job = %view.id, "job resumed");
        self.0.notify();
        Ok(Response::new(job_message(&view)))
    }

    type WatchJobStream = JobStream;

    async fn watch_job(&self, request: Request<pb::WatchJobRequest>) -> Result<Response<JobStream>, Status> {
        let caller = Caller::of(&request)?;
        caller.may(Action::Read)?;
        let id = job_id(&request.into_inner().job_id)?;
        let first_id = id.clone();
        self.0
            .read(move |jobs| jobs.view(&first_id))
            .await?
            .map_err(not_found)?;
        let api = ClientApi(Arc::clone(&self.0));
        let mut changed = self.0.changed.subscribe();
        let watcher = caller.clone();
        let stream = async_stream(move |tx| async move {
            loop {
                let watched = id.clone();
                let view = match api.0.read(move |jobs| jobs.view(&watched)).await {
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
                // The caller is checked again on every update: a revoked
                // reader's stream ends at the next one.
                if let Err(status) = still_reading(&api.0.participants, &watcher) {
                    let _ = tx.send(Err(status)).await;
                    return;
                }
                if tx.send(Ok(job_message(&view))).await.is_err() || view.state.is_final() {
                    return;
                }
                // At most five updates a second; at least one a second.
                tokio::time::sleep(Duration::from_millis(200)).await;
                let _ = tokio::time::timeout(Duration::from_secs(1), changed.changed()).await;
            }
        });
        // And again as each update leaves: none queued before a revocation
        // reaches its caller after it. The first error ends the stream
        // (tonic sends it as the trailers and polls no further).
        let participants = Arc::clone(&self.0.participants);
        let guarded =
            stream.map(move |item| item.and_then(|job| still_reading(&participants, &caller).map(|()| job)));
        Ok(Response::new(Box::pin(guarded)))
    }

    async fn get_divide(
        &self,
        request: Request<pb::GetDivideRequest>,
    ) -> Result<Response<pb::DivideTable>, Status> {
        Caller::of(&request)?.may(Action::Read)?;
        let id = job_id(&request.into_inner().job_id)?;
        let divide = self
            .0
            .read(move |jobs| jobs.divide(&id))
            .await?
            .map_err(not_found)?;
        Ok(Response::new(pb::DivideTable {
            job: Some(job_message(&divide.job)),
            entries: divide
                .moves
                .into_iter()
                .map(|line| pb::DivideEntry {
                    r#move: line.first_move,
                    leaves: Some(line.count.into()),
                    units_total: line.units_total,
                    units_done: line.units_done,
                })
                .collect(),
            total: Some(divide.total.into()),
        }))
    }

    type GetCertificateStream = ChunkStream;

    async fn get_certificate(
        &self,
        request: Request<pb::GetCertificateRequest>,
    ) -> Result<Response<ChunkStream>, Status> {
        Caller::of(&request)?.may(Action::Read)?;
        let id = job_id(&request.into_inner().job_id)?;
        let bytes = crate::certify::served(&self.0, id)
            .await
            .map_err(|e| e.status())?;
        let total_bytes = bytes.len() as u64;
        let chunks = (0..bytes.len())
            .step_by(CERTIFICATE_CHUNK_BYTES)
            .map(move |start| {
                let end = (start + CERTIFICATE_CHUNK_BYTES).min(bytes.len());
                Ok(pb::CertificateChunk {
                    total_bytes,
                    offset: start as u64,
                    data: bytes[start..end].to_vec(),
                })
            });
        Ok(Response::new(Box::pin(tokio_stream::iter(chunks))))
    }

    async fn get_unit_counts(
        &self,
        request: Request<pb::GetUnitCountsRequest>,
    ) -> Result<Response<pb::GetUnitCountsResponse>, Status> {
        Caller::of(&request)?.may(Action::Read)?;
        let req = request.into_inner();
        let id = job_id(&req.job_id)?;
        let size = match req.page_size {
            0 => DEFAULT_COUNT_PAGE,
            n => u64::from(n).min(MAX_COUNT_PAGE),
        };
        let journal = Arc::clone(&self.0.journal);
        let (units_total, counts) =
            tokio::task::spawn_blocking(move || journal.read_count_page(&id, req.start, size))
                .await
                .map_err(|e| Status::internal(format!("reading the counts stopped: {e}")))?
                .map_err(|e| crate::certify::CertifyError::from(e).status())?;
        Ok(Response::new(pb::GetUnitCountsResponse {
            counts: counts.into_iter().map(|c| c.count.into()).collect(),
            units_total,
        }))
    }

    async fn delete_job(&self, request: Request<pb::DeleteJobRequest>) -> Result<Response<pb::Job>, Status> {
        Caller::of(&request)?.may(Action::Manage)?;
        let id = job_id(&request.into_inner().job_id)?;
        self.delete(id).await.map(Response::new)
    }

    async fn backup_journal(
        &self,
        request: Request<pb::BackupJournalRequest>,
    ) -> Result<Response<pb::BackupJournalResponse>, Status> {
        Caller::of(&request)?.may(Action::Manage)?;
        let dir = request.into_inner().dir;
        self.0.backup(dir).await.map(Response::new)
    }
}

impl ClientApi {
    /// `DeleteJob`: removes a finished job from the table and the journal.
    pub(crate) async fn delete(&self, job_id: JobId) -> Result<pb::Job, Status> {
        self.0.writable()?;
        let (view, commit) = self.0.change(move |jobs| jobs.delete(&job_id)).await?;
        self.0.durable(commit).await?;
        let view = view.map_err(not_found)?;
        tracing::info!(job = %view.id, "job deleted");
        self.0.notify();
        Ok(job_message(&view))
    }
}

/// UNAUTHENTICATED once `caller`, which opened a stream, is revoked or may
/// no longer read.
fn still_reading(participants: &Participants, caller: &Caller) -> Result<(), Status> {
    if participants.may(&caller.participant, Action::Read) {
        return Ok(());
    }
    Err(Status::unauthenticated(format!(
        "participant '{}' was revoked or may no longer read jobs: this stream ends",
        caller.participant
    )))
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
