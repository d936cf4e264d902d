//! The worker service's calls in the vocabulary's types, for programs that
//! stand in for workers (the load generator's simulated ones): register a
//! session, lease units, report counts, heartbeat. The worker crate makes
//! the same calls for real counting.

use std::time::Duration;

use perft_core::{Convention, GameKind};
use perft_model::{Count, Epoch, JobId, SessionId, UnitId};
use perft_proto as pb;
use perft_proto::connect::AuthChannel;
use perft_proto::worker_service_client::WorkerServiceClient;

use crate::Client;
use crate::error::{ClientError, ReplyError};

/// A registered worker session: its leases and reports name it.
#[derive(Clone, Debug)]
pub struct WorkerSession {
    workers: WorkerServiceClient<AuthChannel>,
    id: SessionId,
    /// How often to heartbeat; a lease lives a few intervals without one.
    pub heartbeat_every: Duration,
}

/// Units of one job, leased: count each position to `depth` plies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeasedJob {
    pub job: JobId,
    pub game: GameKind,
    pub convention: Option<Convention>,
    pub depth: u32,
    /// Count the leaves by kind too.
    pub stats: bool,
    pub units: Vec<LeasedUnit>,
}

/// One unit's lease: the result must name its unit, epoch and tag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LeasedUnit {
    pub unit: UnitId,
    pub epoch: Epoch,
    /// The game's packed position.
    pub position: Vec<u8>,
    /// The coordinator's proof that it issued the lease.
    pub tag: Vec<u8>,
}

/// A leased unit's count.
#[derive(Clone, Debug, PartialEq)]
pub struct UnitResult {
    pub unit: UnitId,
    pub epoch: Epoch,
    pub tag: Vec<u8>,
    pub count: Count,
    /// CPU seconds the count took (the participant's credit).
    pub cpu_seconds: f64,
}

/// What a report came to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reported {
    /// Counted now.
    pub accepted: u32,
    /// Late or duplicate results of real leases.
    pub ignored: u32,
    /// Results answering no lease of this participant's: never counted.
    pub refused: u32,
}

impl Client {
    /// Registers a worker session named `name` (for people) with
    /// `threads`; with `only_job`, it leases that job's units only and
    /// counts toward no other job's automatic split.
    pub async fn register_worker(
        &self,
        name: &str,
        threads: u32,
        only_job: Option<&JobId>,
    ) -> Result<WorkerSession, ClientError> {
        let mut workers = self.workers.clone();
        let reply = workers
            .register(pb::RegisterRequest {
                name: name.to_owned(),
                threads,
                only_job: only_job.map_or_else(String::new, |id| id.as_str().to_owned()),
            })
            .await?
            .into_inner();
        Ok(WorkerSession {
            workers,
            id: SessionId::parse(&reply.worker_id).map_err(ReplyError::SessionId)?,
            heartbeat_every: reply.heartbeat_every(),
        })
    }
}

impl WorkerSession {
    /// The session's id.
    pub fn id(&self) -> &SessionId {
        &self.id
    }

    /// Leases up to `max_units` units, grouped by job; none means none is
    /// available now.
    pub async fn lease(&mut self, max_units: u32) -> Result<Vec<LeasedJob>, ClientError> {
        let reply = self
            .workers
            .lease_units(pb::LeaseUnitsRequest {
                worker_id: self.id.as_str().to_owned(),
                max_units,
            })
            .await?
            .into_inner();
        reply.jobs.into_iter().map(leased_job).collect()
    }

    /// Reports counts, job by job.
    pub async fn report(&mut self, jobs: Vec<(JobId, Vec<UnitResult>)>) -> Result<Reported, ClientError> {
        let reply = self
            .workers
            .report_results(pb::ReportResultsRequest {
                worker_id: self.id.as_str().to_owned(),
                jobs: jobs
                    .into_iter()
                    .map(|(job, results)| pb::JobReport {
                        job_id: job.as_str().to_owned(),
                        results: results.into_iter().map(unit_result).collect(),
                        released: Vec::new(),
                    })
                    .collect(),
            })
            .await?
            .into_inner();
        Ok(Reported {
            accepted: reply.accepted,
            ignored: reply.ignored,
            refused: reply.refused,
        })
    }

    /// Renews every lease the session holds; `draining` says it is
    /// shutting down and leases nothing more.
    pub async fn heartbeat(&mut self, draining: bool) -> Result<(), ClientError> {
        self.workers
            .heartbeat(pb::HeartbeatRequest {
                worker_id: self.id.as_str().to_owned(),
                stats: None,
                draining,
            })
            .await?;
        Ok(())
    }
}

fn leased_job(job: pb::LeasedJob) -> Result<LeasedJob, ClientError> {
    Ok(LeasedJob {
        job: JobId::parse(&job.job_id).map_err(ReplyError::from)?,
        game: pb::game_kind(job.game).map_err(ReplyError::from)?,
        convention: pb::convention(job.convention).map_err(ReplyError::from)?,
        depth: job.depth,
        stats: job.stats,
        units: job
            .units
            .into_iter()
            .map(|unit| LeasedUnit {
                unit: UnitId(unit.unit_id),
                epoch: Epoch(unit.epoch),
                position: unit.position,
                tag: unit.lease_tag,
            })
            .collect(),
    })
}

fn unit_result(result: UnitResult) -> pb::UnitResult {
    pb::UnitResult {
        unit_id: result.unit.0,
        epoch: result.epoch.0,
        leaves: Some(result.count.into()),
        lease_tag: result.tag,
        cpu_seconds: result.cpu_seconds,
    }
}
