//! `perft.v2.WorkerService`: what workers call. Every call is checked
//! against the caller's credential: a session belongs to the participant
//! that registered it, and a session id alone authorises nothing. Every
//! call is a sign of life for the session; a session the coordinator does
//! not know (forgotten, another participant's, or the coordinator
//! restarted) gets NOT_FOUND and the worker registers again. Every field
//! is validated here, at the edge; a count is taken only for a lease this
//! coordinator issued to the reporting participant.

use std::sync::Arc;
use std::time::Instant;

use perft_core::echoed;
use perft_proto as pb;
use tonic::{Request, Response, Status};

use crate::admission::Principal;
use crate::jobs::{LeaseHolder, Reported};
use crate::participants::Caller;
use crate::{Coordinator, Worker};
use perft_model::Action;
use perft_model::MAX_KINDS;
use perft_model::{Epoch, JobId, MachineName, SessionId, UnitId};

pub(crate) struct WorkerApi(pub Arc<Coordinator>);

/// Most units one lease call hands out.
const MAX_UNITS_PER_LEASE: usize = 1024;
/// Most threads a worker is taken to have.
pub(crate) const MAX_WORKER_THREADS: u32 = 1024;
fn unknown_worker(id: &str) -> Status {
    Status::not_found(format!("unknown worker '{}': register again", echoed(id)))
}

/// What a call of a session needs of it, read in one lookup.
struct Session {
    /// The session, its participant (the identity verification counts)
    /// and its label for people (`participant/machine (short id)`).
    holder: LeaseHolder,
    only_job: Option<JobId>,
    draining: bool,
}

/// The caller's session `worker_id`, marked seen. NOT_FOUND when there is
/// no such session or it belongs to another participant: a copied
/// session id is worth nothing without its owner's credential.
fn session(caller: &Caller, api: &WorkerApi, worker_id: &str) -> Result<Session, Status> {
    caller.may(Action::Work)?;
    let id = SessionId::parse(worker_id).map_err(|e| Status::invalid_argument(e.to_string()))?;
    let mut worker = api
        .0
        .workers
        .get_mut(&id)
        .filter(|w| w.participant == caller.participant)
        .ok_or_else(|| unknown_worker(worker_id))?;
    worker.last_seen = Instant::now();
    Ok(Session {
        holder: LeaseHolder {
            session: id,
            identity: worker.participant.clone(),
            label: Arc::clone(&worker.label),
        },
        only_job: worker.only_job.clone(),
        draining: worker.draining,
    })
}

/// A reported count as the engine's type, checked for what any true count
/// satisfies.
fn reported_count(job_id: &str, result: &pb::UnitResult) -> Result<pb::Leaves, Status> {
    let count = result
        .leaves
        .as_ref()
        .filter(|l| l.leaves.is_some())
        .ok_or_else(|| {
            Status::invalid_argument(format!(
                "the result for unit {} of job '{}' has no count",
                result.unit_id,
                echoed(job_id)
            ))
        })?;
    let leaves = count.to_core();
    if !leaves.is_consistent() {
        return Err(Status::invalid_argument(format!(
            "the result for unit {} of job '{}' has more game-over leaves ({}) than leaves ({})",
            result.unit_id,
            echoed(job_id),
            leaves.higher,
            leaves.leaves
        )));
    }
    if count.kinds.len() > MAX_KINDS {
        return Err(Status::invalid_argument(format!(
            "the result for unit {} of job '{}' has {} kinds of leaves; no game has more than {MAX_KINDS}",
            result.unit_id,
            echoed(job_id),
            count.kinds.len()
        )));
    }
    Ok(count.clone())
}

/// CPU milliseconds from a reported figure: anything not a finite,
/// non-negative number of seconds is 0 (it is only credit).
fn cpu_ms(seconds: f64) -> u64 {
    if seconds.is_finite() && seconds > 0.0 {
        (seconds * 1000.0).min(crate::jobs::MAX_CPU_MS_PER_COUNT as f64) as u64
    } else {
        0
    }
}

#[tonic::async_trait]
impl pb::worker_service_server::WorkerService for WorkerApi {
    async fn register(
        &self,
        request: Request<pb::RegisterRequest>,
    ) -> Result<Response<pb::RegisterResponse>, Status> {
        let caller = Caller::of(&request)?;
        caller.may(Action::Work)?;
        let req = request.into_inner();
        let name = MachineName::parse(&req.name).map_err(|e| Status::invalid_argument(e.to_string()))?;
        let only_job = if req.only_job.is_empty() {
            None
        } else {
            let job = JobId::parse(&req.only_job).map_err(|e| Status::invalid_argument(e.to_string()))?;
            let asked = job.clone();
            if !self.0.peek(move |jobs| jobs.contains(&asked)).await? {
                return Err(Status::not_found(format!("no job '{}'", echoed(job.as_str()))));
            }
            Some(job)
        };
        let threads = req.threads.clamp(1, MAX_WORKER_THREADS);
        let id = SessionId::new();
        tracing::info!(worker = %id, %name, participant = %caller.participant, threads, only_job = ?only_job, "worker registered");
        let now = Instant::now();
        let label = Arc::from(format!("{}/{name} ({})", caller.participant, id.short()));
        self.0.admission.open_session(&caller.participant)?;
        self.0.workers.insert(
            id.clone(),
            Worker {
                participant: caller.participant,
                label,
                name,
                threads,
                last_seen: now,
                proven: false,
                only_job,
                draining: false,
                stats: None,
            },
        );
        let config = &self.0.config;
        Ok(Response::new(pb::RegisterResponse {
            worker_id: id.as_str().to_owned(),
            heartbeat_interval_ms: config.heartbeat_interval.as_millis().min(u128::from(u32::MAX)) as u32,
        }))
    }

    async fn lease_units(
        &self,
        request: Request<pb::LeaseUnitsRequest>,
    ) -> Result<Response<pb::LeaseUnitsResponse>, Status> {
        let caller = Caller::of(&request)?;
        let req = request.into_inner();
        self.0.writable()?;
        let session = session(&caller, self, &req.worker_id)?;
        if session.draining {
            return Ok(Response::new(pb::LeaseUnitsResponse {
                jobs: Vec::new(),
                retry_after_ms: 1000,
            }));
        }
        let max = (req.max_units as usize).clamp(1, MAX_UNITS_PER_LEASE);
        let holder = session.holder.clone();
        let only_job = session.only_job;
        let (leased, commit) = self
            .0
            .change(move |jobs| jobs.lease(&holder, max, only_job.as_ref()))
            .await?;
        // A job that starts running is journaled before its units go out.
        self.0.durable(commit).await?;
        if !leased.is_empty() {
            self.0.notify();
        }
        let signer = &self.0.signer;
        Ok(Response::new(pb::LeaseUnitsResponse {
            retry_after_ms: if leased.is_empty() { 500 } else { 0 },
            jobs: leased
                .into_iter()
                .map(|job| pb::LeasedJob {
                    game: pb::Game::from_kind(job.game).into(),
                    convention: pb::Convention::from_core(job.convention).into(),
                    depth: job.depth,
                    stats: job.stats,
                    units: job
                        .units
                        .into_iter()
                        .map(|u| pb::UnitLease {
                            lease_tag: signer
                                .sign(&job.job_id, u.unit_id, u.epoch, &session.holder.identity)
                                .to_vec(),
                            unit_id: u.unit_id.0,
                            epoch: u.epoch.0,
                            position: u.position,
                        })
                        .collect(),
                    job_id: job.job_id.to_string(),
                })
                .collect(),
        }))
    }

    async fn report_results(
        &self,
        request: Request<pb::ReportResultsRequest>,
    ) -> Result<Response<pb::ReportResultsResponse>, Status> {
        let caller = Caller::of(&request)?;
        let req = request.into_inner();
        self.0.writable()?;
        let session = session(&caller, self, &req.worker_id)?;
        // Shape first: a count no true count can be refuses the whole call.
        let mut counted = Vec::new();
        for job in &req.jobs {
            for result in &job.results {
                counted.push((job.job_id.as_str(), result, reported_count(&job.job_id, result)?));
            }
        }
        // Then provenance: only leases issued to this participant count,
        // and the job they name becomes an id only then.
        let signer = &self.0.signer;
        let mut refused = 0u32;
        let mut genuine = |job_id: &str, unit_id: UnitId, epoch: Epoch, tag: &[u8]| {
            let job = JobId::parse(job_id)
                .ok()
                .filter(|job| signer.verify(job, unit_id, epoch, &session.holder.identity, tag));
            refused += u32::from(job.is_none());
            job
        };
        let results: Vec<(JobId, UnitId, Epoch, pb::Leaves, u64)> = counted
            .into_iter()
            .filter_map(|(job_id, r, leaves)| {
                let (unit_id, epoch) = (UnitId(r.unit_id), Epoch(r.epoch));
                let job = genuine(job_id, unit_id, epoch, &r.lease_tag)?;
                Some((job, unit_id, epoch, leaves, cpu_ms(r.cpu_seconds)))
            })
            .collect();
        let released: Vec<(JobId, UnitId, Epoch)> = req
            .jobs
            .iter()
            .flat_map(|job| job.released.iter().map(move |u| (job.job_id.as_str(), u)))
            .filter_map(|(job_id, u)| {
                let (unit_id, epoch) = (UnitId(u.unit_id), Epoch(u.epoch));
                let job = genuine(job_id, unit_id, epoch, &u.lease_tag)?;
                Some((job, unit_id, epoch))
            })
            .collect();
        if refused > 0 {
            metrics::counter!("perft_results_refused_total").increment(u64::from(refused));
            let principal = Principal::Participant(session.holder.identity.clone());
            if let Some(times) = self.0.admission.log_due(&principal) {
                let every = self.0.admission.log_interval();
                tracing::warn!(worker = %echoed(&session.holder.label), refused, reports = times, "results refused: they answer no lease issued to this participant (logged at most {every} per participant; every one counted in perft_results_refused_total)");
            }
        }
        let forged = refused;
        let reporter = session.holder.clone();
        let (outcome, commit) = self
            .0
            .change(move |jobs| {
                // Every count checked before any is taken: one that no
                // unit of its job can have refuses the whole call.
                let mut checked = Vec::with_capacity(results.len());
                for (job_id, unit_id, epoch, count, cpu_ms) in &results {
                    let count = jobs.checked_count(job_id, count).map_err(|reason| {
                        Status::invalid_argument(format!(
                            "the count for unit {unit_id} of job {} is refused: {reason}",
                            echoed(job_id.as_str())
                        ))
                    })?;
                    checked.push((job_id, *unit_id, *epoch, count, *cpu_ms));
                }
                let (mut accepted, mut ignored, mut stale) = (0u32, 0u32, 0u32);
                for (job_id, unit_id, epoch, count, cpu_ms) in checked {
                    match jobs.report(job_id, unit_id, epoch, count, cpu_ms, &reporter) {
                        Reported::Accepted => accepted += 1,
                        Reported::Ignored => ignored += 1,
                        Reported::Stale | Reported::Refused => stale += 1,
                    }
                }
                let mut handed_back = 0u32;
                for (job_id, unit_id, epoch) in &released {
                    handed_back += u32::from(jobs.release(job_id, *unit_id, *epoch, &reporter));
                }
                Ok::<_, Status>((accepted, ignored, stale, handed_back))
            })
            .await?;
        // Acknowledged only once durable: on failure the worker keeps the
        // counts and reports them again.
        self.0.durable(commit).await?;
        let (accepted, ignored, stale, handed_back) = outcome?;
        if stale > 0 {
            // Counts for leases that no longer stand (lapsed, handed back,
            // reopened) or from a quarantined participant: not taken.
            metrics::counter!("perft_results_refused_total").increment(u64::from(stale));
            tracing::debug!(worker = %echoed(&session.holder.label), stale, "counts refused: their leases no longer stand");
        }
        if accepted > 0
            && let Some(mut worker) = self.0.workers.get_mut(&session.holder.session)
        {
            // A count makes its threads real.
            worker.proven = true;
        }
        if accepted > 0 || handed_back > 0 {
            self.0.notify();
        }
        Ok(Response::new(pb::ReportResultsResponse {
            accepted,
            ignored,
            refused: forged + stale,
        }))
    }

    async fn heartbeat(
        &self,
        request: Request<pb::HeartbeatRequest>,
    ) -> Result<Response<pb::HeartbeatResponse>, Status> {
        let caller = Caller::of(&request)?;
        let req = request.into_inner();
        let session_id = session(&caller, self, &req.worker_id)?.holder.session;
        if let Some(mut worker) = self.0.workers.get_mut(&session_id) {
            if req.draining && !worker.draining {
                tracing::info!(worker = %session_id, name = %worker.name, "worker draining: it hands back its units and leaves");
            }
            worker.draining |= req.draining;
            if let Some(stats) = req.stats {
                worker.stats = Some(perft_model::WorkerFigures::from(stats).sanitized());
            }
        }
        Ok(Response::new(pb::HeartbeatResponse {}))
    }
}
