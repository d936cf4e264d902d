//! `perft.v1.WorkerService`: what workers call. A heartbeat renews every
//! lease of its worker; a worker the coordinator does not know (it was
//! forgotten, or the coordinator restarted) gets NOT_FOUND and registers
//! again.

use std::sync::Arc;
use std::time::Instant;

use perft_proto as pb;
use tonic::{Request, Response, Status};

use crate::{Coordinator, Worker};

pub(crate) struct WorkerApi(pub Arc<Coordinator>);

/// Most units one lease call hands out.
const MAX_UNITS_PER_LEASE: usize = 1024;

fn unknown_worker(id: &str) -> Status {
    Status::not_found(format!("unknown worker '{id}': register again"))
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
        let id = uuid::Uuid::new_v4().simple().to_string();
        tracing::info!(worker = %id, name = %req.name, threads = req.threads, table_bytes = req.table_bytes, "worker registered");
        self.0.workers.insert(
            id.clone(),
            Worker {
                name: req.name,
                threads: req.threads.max(1),
                last_seen: Instant::now(),
                affinity: None,
            },
        );
        let config = &self.0.config;
        Ok(Response::new(pb::RegisterResponse {
            worker_id: id,
            heartbeat_interval_ms: config.heartbeat_interval.as_millis() as u32,
            lease_ttl_ms: config.lease_ttl.as_millis() as u32,
        }))
    }

    async fn lease_units(
        &self,
        request: Request<pb::LeaseUnitsRequest>,
    ) -> Result<Response<pb::LeaseUnitsResponse>, Status> {
        let req = request.into_inner();
        let now = Instant::now();
        let mut worker = self
            .0
            .workers
            .get_mut(&req.worker_id)
            .ok_or_else(|| unknown_worker(&req.worker_id))?;
        worker.last_seen = now;
        let max = (req.max_units as usize).clamp(1, MAX_UNITS_PER_LEASE);
        let leased = self.0.jobs().lease(
            &req.worker_id,
            max,
            &mut worker.affinity,
            now,
            self.0.config.lease_ttl,
        );
        drop(worker);
        if !leased.is_empty() {
            self.0.notify();
        }
        Ok(Response::new(pb::LeaseUnitsResponse {
            retry_after_ms: if leased.is_empty() { 500 } else { 0 },
            units: leased
                .into_iter()
                .map(|u| pb::UnitLease {
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
        let now = Instant::now();
        // Workers are shown by name and id in disagreements.
        let label = match self.0.workers.get_mut(&req.worker_id) {
            Some(mut worker) => {
                worker.last_seen = now;
                format!(
                    "{} ({})",
                    worker.name,
                    &req.worker_id[..req.worker_id.len().min(8)]
                )
            }
            None => format!("unregistered ({})", &req.worker_id[..req.worker_id.len().min(8)]),
        };
        // Results count whoever sends them: they are keyed by job and unit,
        // so a worker that re-registered loses nothing it computed.
        let ((accepted, ignored), commit) = self.0.change(|jobs| {
            let (mut accepted, mut ignored) = (0, 0);
            for result in &req.results {
                let leaves = result.leaves.unwrap_or_default().to_core();
                match jobs.report(&result.job_id, result.unit_id, leaves, &req.worker_id, &label) {
                    crate::jobs::Reported::Accepted => accepted += 1,
                    crate::jobs::Reported::Ignored => ignored += 1,
                }
            }
            for unit in &req.released {
                jobs.release(&unit.job_id, unit.unit_id, unit.epoch);
            }
            (accepted, ignored)
        });
        // Acknowledged only once durable: on failure the worker keeps the
        // counts and reports them again.
        commit.wait().await.map_err(crate::client_api::journal_failed)?;
        if accepted > 0 || !req.released.is_empty() {
            self.0.notify();
        }
        Ok(Response::new(pb::ReportResultsResponse { accepted, ignored }))
    }

    async fn heartbeat(
        &self,
        request: Request<pb::HeartbeatRequest>,
    ) -> Result<Response<pb::HeartbeatResponse>, Status> {
        let id = request.into_inner().worker_id;
        let now = Instant::now();
        let mut worker = self.0.workers.get_mut(&id).ok_or_else(|| unknown_worker(&id))?;
        worker.last_seen = now;
        drop(worker);
        let leases = self.0.jobs().renew(&id, now, self.0.config.lease_ttl);
        Ok(Response::new(pb::HeartbeatResponse { leases }))
    }
}
