//! `perft.v1.WorkerService`: what workers call. A heartbeat renews every
//! lease of its session; a session the coordinator does not know (it was
//! forgotten, or the coordinator restarted) gets NOT_FOUND and registers
//! again. Every field is validated here, at the edge; a count is taken only
//! for a lease this coordinator issued to the reporting machine.

use std::sync::Arc;
use std::time::Instant;

use perft_core::{Leaves, shown};
use perft_proto as pb;
use tonic::{Request, Response, Status};

use crate::jobs::{Reported, WorkerRef};
use crate::{Coordinator, Worker};

pub(crate) struct WorkerApi(pub Arc<Coordinator>);

/// Most units one lease call hands out.
const MAX_UNITS_PER_LEASE: usize = 1024;
/// Most threads a worker is taken to have.
pub(crate) const MAX_WORKER_THREADS: u32 = 1024;
/// Longest worker name, job id or worker id accepted, in bytes.
const MAX_NAME_BYTES: usize = 64;

/// `value` if it is a non-empty, printable string of at most
/// [`MAX_NAME_BYTES`]; InvalidArgument naming `field` otherwise.
pub(crate) fn checked_name<'v>(field: &str, value: &'v str) -> Result<&'v str, Status> {
    if value.is_empty() || value.len() > MAX_NAME_BYTES || value.chars().any(char::is_control) {
        return Err(Status::invalid_argument(format!(
            "{field} '{}' must be 1 to {MAX_NAME_BYTES} bytes of printable characters",
            shown(value)
        )));
    }
    Ok(value)
}

fn unknown_worker(id: &str) -> Status {
    Status::not_found(format!("unknown worker '{}': register again", shown(id)))
}

/// A registered session's identity, or NOT_FOUND.
fn session(api: &WorkerApi, worker_id: &str) -> Result<(String, String), Status> {
    checked_name("worker id", worker_id)?;
    let mut worker = api
        .0
        .workers
        .get_mut(worker_id)
        .ok_or_else(|| unknown_worker(worker_id))?;
    worker.last_seen = Instant::now();
    let label = format!("{} ({})", worker.name, worker_id.get(..8).unwrap_or(worker_id));
    Ok((worker.name.clone(), label))
}

/// A reported count as the engine's type, checked for what any true count
/// satisfies.
fn reported_count(result: &pb::UnitResult) -> Result<Leaves, Status> {
    let leaves = result
        .leaves
        .as_ref()
        .and_then(|l| l.leaves.map(|n| (l, u128::from(n))))
        .map(|(l, leaves)| Leaves {
            leaves,
            higher: pb::count(l.higher),
        })
        .ok_or_else(|| {
            Status::invalid_argument(format!(
                "the result for unit {} of job '{}' has no count",
                result.unit_id,
                shown(&result.job_id)
            ))
        })?;
    if !leaves.is_consistent() {
        return Err(Status::invalid_argument(format!(
            "the result for unit {} of job '{}' has more game-over leaves ({}) than leaves ({})",
            result.unit_id,
            shown(&result.job_id),
            leaves.higher,
            leaves.leaves
        )));
    }
    Ok(leaves)
}

#[tonic::async_trait]
impl pb::worker_service_server::WorkerService for WorkerApi {
    async fn register(
        &self,
        request: Request<pb::RegisterRequest>,
    ) -> Result<Response<pb::RegisterResponse>, Status> {
        let req = request.into_inner();
        if req.protocol_version != pb::PROTOCOL_VERSION {
            return Err(Status::failed_precondition(format!(
                "worker speaks protocol version {}, this coordinator speaks {}: run the same release on both",
                req.protocol_version,
                pb::PROTOCOL_VERSION
            )));
        }
        let name = checked_name("worker name", &req.name)?.to_owned();
        let only_job = if req.only_job.is_empty() {
            None
        } else {
            let job = checked_name("job id", &req.only_job)?;
            if !self.0.jobs().contains(job) {
                return Err(Status::not_found(format!("no job '{}'", shown(job))));
            }
            Some(job.to_owned())
        };
        let threads = req.threads.clamp(1, MAX_WORKER_THREADS);
        let id = uuid::Uuid::new_v4().simple().to_string();
        tracing::info!(worker = %id, %name, threads, only_job = ?only_job, "worker registered");
        self.0.workers.insert(
            id.clone(),
            Worker {
                name,
                threads,
                last_seen: Instant::now(),
                affinity: None,
                only_job,
            },
        );
        let config = &self.0.config;
        Ok(Response::new(pb::RegisterResponse {
            worker_id: id,
            heartbeat_interval_ms: config.heartbeat_interval.as_millis().min(u128::from(u32::MAX)) as u32,
            lease_ttl_ms: config.lease_ttl.as_millis().min(u128::from(u32::MAX)) as u32,
        }))
    }

    async fn lease_units(
        &self,
        request: Request<pb::LeaseUnitsRequest>,
    ) -> Result<Response<pb::LeaseUnitsResponse>, Status> {
        let req = request.into_inner();
        self.0.writable()?;
        let (identity, label) = session(self, &req.worker_id)?;
        let now = Instant::now();
        let (mut affinity, only_job) = match self.0.workers.get(&req.worker_id) {
            Some(w) => (w.affinity.clone(), w.only_job.clone()),
            None => return Err(unknown_worker(&req.worker_id)),
        };
        let max = (req.max_units as usize).clamp(1, MAX_UNITS_PER_LEASE);
        let worker = WorkerRef {
            session: &req.worker_id,
            identity: &identity,
            label: &label,
        };
        let (leased, commit) = self.0.change(|jobs| {
            jobs.lease(
                worker,
                max,
                &mut affinity,
                only_job.as_deref(),
                now,
                self.0.config.lease_ttl,
            )
        });
        if let Some(mut w) = self.0.workers.get_mut(&req.worker_id) {
            w.affinity = affinity;
        }
        // A job that starts running is journaled before its units go out.
        self.0.durable(commit).await?;
        if !leased.is_empty() {
            self.0.notify();
        }
        Ok(Response::new(pb::LeaseUnitsResponse {
            retry_after_ms: if leased.is_empty() { 500 } else { 0 },
            units: leased
                .into_iter()
                .map(|u| pb::UnitLease {
                    lease_tag: self
                        .0
                        .signer
                        .sign(&u.job_id, u.unit_id, u.epoch, &identity)
                        .to_vec(),
                    job_id: u.job_id,
                    unit_id: u.unit_id,
                    epoch: u.epoch,
                    game: u.game.name().to_owned(),
                    position: u.position,
                    depth: u.depth,
                })
                .collect(),
        }))
    }

    async fn report_results(
        &self,
        request: Request<pb::ReportResultsRequest>,
    ) -> Result<Response<pb::ReportResultsResponse>, Status> {
        let req = request.into_inner();
        self.0.writable()?;
        let (identity, label) = session(self, &req.worker_id)?;
        // Shape first: a count no true count can be refuses the whole call.
        let mut counts = Vec::with_capacity(req.results.len());
        for result in &req.results {
            counts.push(reported_count(result)?);
        }
        // Then provenance: only leases issued to this machine count.
        let signer = &self.0.signer;
        let genuine = |job_id: &str, unit_id, epoch, tag: &[u8]| {
            checked_name("job id", job_id).is_ok() && signer.verify(job_id, unit_id, epoch, &identity, tag)
        };
        let mut refused = 0u32;
        let results: Vec<(&pb::UnitResult, Leaves)> = req
            .results
            .iter()
            .zip(counts)
            .filter(|(r, _)| {
                let ok = genuine(&r.job_id, r.unit_id, r.epoch, &r.lease_tag);
                refused += u32::from(!ok);
                ok
            })
            .collect();
        let released: Vec<&pb::UnitRef> = req
            .released
            .iter()
            .filter(|u| {
                let ok = genuine(&u.job_id, u.unit_id, u.epoch, &u.lease_tag);
                refused += u32::from(!ok);
                ok
            })
            .collect();
        if refused > 0 {
            metrics::counter!("perft_results_refused_total").increment(u64::from(refused));
            tracing::warn!(worker = %shown(&label), refused, "results refused: they answer no lease issued to this machine");
        }
        let worker = WorkerRef {
            session: &req.worker_id,
            identity: &identity,
            label: &label,
        };
        let (outcome, commit) = self.0.change(|jobs| {
            for (result, leaves) in &results {
                if let Some(limit) = jobs.count_limit(&result.job_id)
                    && leaves.leaves > limit
                {
                    return Err(Status::invalid_argument(format!(
                        "the count {} for unit {} of job {} is above the {limit} leaves any tree of that depth has",
                        leaves.leaves,
                        result.unit_id,
                        shown(&result.job_id)
                    )));
                }
            }
            let (mut accepted, mut ignored) = (0, 0);
            for (result, leaves) in &results {
                match jobs.report(&result.job_id, result.unit_id, *leaves, worker) {
                    Reported::Accepted => accepted += 1,
                    Reported::Ignored => ignored += 1,
                }
            }
            for unit in &released {
                jobs.release(&unit.job_id, unit.unit_id, unit.epoch, worker);
            }
            Ok((accepted, ignored))
        });
        // Acknowledged only once durable: on failure the worker keeps the
        // counts and reports them again.
        self.0.durable(commit).await?;
        let (accepted, ignored) = outcome?;
        if accepted > 0 || !released.is_empty() {
            self.0.notify();
        }
        Ok(Response::new(pb::ReportResultsResponse {
            accepted,
            ignored,
            refused,
        }))
    }

    async fn heartbeat(
        &self,
        request: Request<pb::HeartbeatRequest>,
    ) -> Result<Response<pb::HeartbeatResponse>, Status> {
        let id = request.into_inner().worker_id;
        session(self, &id)?;
        let leases = self.0.jobs().renew(&id, Instant::now(), self.0.config.lease_ttl);
        Ok(Response::new(pb::HeartbeatResponse { leases }))
    }
}
