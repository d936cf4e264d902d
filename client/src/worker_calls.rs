//! The worker service's calls in the vocabulary's types: register a
//! session, lease units, report counts and hand-backs, heartbeat. The
//! worker crate makes them for real counting, the load generator for its
//! simulated workers.

use std::time::Duration;

use perft_core::{Convention, GameKind};
use perft_model::{Count, Epoch, JobId, SessionId, UnitId, WorkerFigures};
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

/// What one lease call brought.
#[derive(Debug, Default)]
pub struct Leased {
    /// The units, grouped by job.
    pub jobs: Vec<LeasedJob>,
    /// Groups this client cannot read (a game or convention of another
    /// build): their units are to be handed back.
    pub unreadable: Vec<UnreadableJob>,
    /// With no units: when to ask again.
    pub retry_after: Duration,
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

/// Leased units of a job this client cannot count, and why.
#[derive(Debug)]
pub struct UnreadableJob {
    /// `None` when the job's id itself is malformed: its units cannot be
    /// named in a hand-back, so their leases lapse.
    pub job: Option<JobId>,
    pub reason: ReplyError,
    pub units: Vec<UnitRef>,
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

impl LeasedUnit {
    /// The lease alone, to hand the unit back uncounted.
    pub fn reference(&self) -> UnitRef {
        UnitRef {
            unit: self.unit,
            epoch: self.epoch,
            tag: self.tag.clone(),
        }
    }
}

/// A lease named in a hand-back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnitRef {
    pub unit: UnitId,
    pub epoch: Epoch,
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

/// What a session has for one job: counts, and units handed back
/// uncounted.
#[derive(Clone, Debug, PartialEq)]
pub struct JobReport {
    pub job: JobId,
    pub results: Vec<UnitResult>,
    pub released: Vec<UnitRef>,
}

impl JobReport {
    /// Counts alone.
    pub fn counted(job: JobId, results: Vec<UnitResult>) -> JobReport {
        JobReport {
            job,
            results,
            released: Vec::new(),
        }
    }
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
    pub async fn lease(&mut self, max_units: u32) -> Result<Leased, ClientError> {
        let reply = self
            .workers
            .lease_units(pb::LeaseUnitsRequest {
                worker_id: self.id.as_str().to_owned(),
                max_units,
            })
            .await?
            .into_inner();
        let mut leased = Leased {
            retry_after: Duration::from_millis(u64::from(reply.retry_after_ms)),
            ..Leased::default()
        };
        for job in reply.jobs {
            match leased_job(job) {
                Ok(job) => leased.jobs.push(job),
                Err(unreadable) => leased.unreadable.push(unreadable),
            }
        }
        Ok(leased)
    }

    /// Reports counts and hand-backs, job by job.
    pub async fn report(&mut self, jobs: Vec<JobReport>) -> Result<Reported, ClientError> {
        let reply = self
            .workers
            .report_results(pb::ReportResultsRequest {
                worker_id: self.id.as_str().to_owned(),
                jobs: jobs.into_iter().map(job_report).collect(),
            })
            .await?
            .into_inner();
        Ok(Reported {
            accepted: reply.accepted,
            ignored: reply.ignored,
            refused: reply.refused,
        })
    }

    /// Renews every lease the session holds, with the worker's figures;
    /// `draining` says it is shutting down and leases nothing more.
    pub async fn heartbeat(
        &mut self,
        figures: Option<&WorkerFigures>,
        draining: bool,
    ) -> Result<(), ClientError> {
        self.workers
            .heartbeat(pb::HeartbeatRequest {
                worker_id: self.id.as_str().to_owned(),
                stats: figures.copied().map(pb::WorkerStats::from),
                draining,
            })
            .await?;
        Ok(())
    }
}

/// A wire group as the vocabulary's types, or why it cannot be counted
/// here, with its units to hand back.
fn leased_job(job: pb::LeasedJob) -> Result<LeasedJob, UnreadableJob> {
    let units: Vec<LeasedUnit> = job
        .units
        .into_iter()
        .map(|unit| LeasedUnit {
            unit: UnitId(unit.unit_id),
            epoch: Epoch(unit.epoch),
            position: unit.position,
            tag: unit.lease_tag,
        })
        .collect();
    let id = match JobId::parse(&job.job_id) {
        Ok(id) => id,
        Err(reason) => {
            return Err(UnreadableJob {
                job: None,
                reason: reason.into(),
                units: units.iter().map(LeasedUnit::reference).collect(),
            });
        }
    };
    let kind = pb::game_kind(job.game).and_then(|game| Ok((game, pb::convention(job.convention)?)));
    match kind {
        Ok((game, convention)) => Ok(LeasedJob {
            job: id,
            game,
            convention,
            depth: job.depth,
            stats: job.stats,
            units,
        }),
        Err(reason) => Err(UnreadableJob {
            job: Some(id),
            reason: reason.into(),
            units: units.iter().map(LeasedUnit::reference).collect(),
        }),
    }
}

fn job_report(report: JobReport) -> pb::JobReport {
    pb::JobReport {
        job_id: report.job.as_str().to_owned(),
        results: report
            .results
            .into_iter()
            .map(|result| pb::UnitResult {
                unit_id: result.unit.0,
                epoch: result.epoch.0,
                leaves: Some(result.count.into()),
                lease_tag: result.tag,
                cpu_seconds: result.cpu_seconds,
            })
            .collect(),
        released: report
            .released
            .into_iter()
            .map(|unit| pb::UnitRef {
                unit_id: unit.unit.0,
                epoch: unit.epoch.0,
                lease_tag: unit.tag,
            })
            .collect(),
    }
}
