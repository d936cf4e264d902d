//! The worker: registers with a coordinator, leases units with a prefetch so
//! its counting threads never wait on the network, reports counts (kept
//! until acknowledged) and heartbeats to renew its leases.
//!
//! It survives the coordinator going away: every call is retried with
//! backoff, and a coordinator that no longer knows it (NOT_FOUND) gets a
//! fresh registration. On shutdown it stops leasing, hands back the units
//! it has not started, finishes and reports the others, and exits.
//!
//! It owns the counting threads (OS threads, never tokio's) and their one
//! shared table; it must not decide anything about a job: what to count,
//! whether a count stands and what is done are the coordinator's.

mod compute;
mod machine;
mod pacing;

use std::future::Future;
use std::time::Duration;

use perft_model::{Count, Epoch, JobId, UnitId};
use perft_proto as pb;
use perft_proto::connect::{AuthChannel, ClientConfig};
use perft_proto::worker_service_client::WorkerServiceClient;
use tokio::sync::mpsc;
use tonic::{Code, Status};

pub use compute::{Outcome, Pool, Totals, UnitLease};
pub use machine::{
    BadWorkerName, MetricsError, WorkerName, available_memory_bytes, default_table_bytes, serve_metrics,
};
use pacing::Pacing;

/// How a worker runs.
#[derive(Clone, Debug)]
pub struct Config {
    /// How to reach the coordinator, e.g. `http://10.0.0.1:50051`.
    pub coordinator: ClientConfig,
    pub threads: usize,
    /// Table size in bytes; `None` for no table.
    pub table_bytes: Option<u64>,
    /// The name it registers under: a [`WorkerName`]'s.
    pub name: String,
}

/// Why a worker stopped on its own.
#[derive(Debug, thiserror::Error)]
pub enum WorkerError {
    #[error("invalid coordinator address '{0}': {1}")]
    BadAddress(String, String),
    #[error("the coordinator refused this worker: {0}")]
    Refused(String),
}

/// Waits that grow from 100 ms to 5 s.
#[derive(Debug)]
struct Backoff(Duration);

impl Backoff {
    fn new() -> Backoff {
        Backoff(Duration::from_millis(100))
    }

    async fn wait(&mut self) {
        tokio::time::sleep(self.0).await;
        self.0 = (self.0 * 2).min(Duration::from_secs(5));
    }

    fn reset(&mut self) {
        self.0 = Duration::from_millis(100);
    }
}

/// A registration with the coordinator.
#[derive(Debug, Clone)]
struct Session {
    id: String,
    heartbeat: Duration,
}

async fn register(client: &mut WorkerServiceClient<AuthChannel>, config: &Config) -> Result<Session, Status> {
    let reply = client
        .register(pb::RegisterRequest {
            name: config.name.clone(),
            threads: config.threads as u32,
            only_job: String::new(),
        })
        .await?
        .into_inner();
    Ok(Session {
        heartbeat: reply.heartbeat_every(),
        id: reply.worker_id,
    })
}

/// Registers, retrying while the coordinator cannot be reached. A refusal
/// (an incompatible protocol) is final.
async fn register_until_done(
    client: &mut WorkerServiceClient<AuthChannel>,
    config: &Config,
) -> Result<Session, WorkerError> {
    let mut backoff = Backoff::new();
    loop {
        match register(client, config).await {
            Ok(session) => {
                tracing::info!(worker = %session.id, "registered");
                return Ok(session);
            }
            Err(status)
                if matches!(
                    status.code(),
                    Code::FailedPrecondition
                        | Code::Unauthenticated
                        | Code::PermissionDenied
                        | Code::InvalidArgument
                        | Code::ResourceExhausted
                ) =>
            {
                return Err(WorkerError::Refused(status.message().to_owned()));
            }
            Err(status) => {
                tracing::warn!(error = %status.message(), "coordinator unreachable; retrying");
                backoff.wait().await;
            }
        }
    }
}

/// A count kept until the coordinator acknowledges it.
#[derive(Debug, Clone)]
struct Kept {
    job_id: JobId,
    unit_id: UnitId,
    epoch: Epoch,
    lease_tag: Vec<u8>,
    /// `None`: the unit is handed back uncounted.
    count: Option<Count>,
    /// CPU seconds the counting thread spent on it (credit for the participant).
    cpu_seconds: f64,
}

/// Counts and hand-backs kept until the coordinator acknowledges them.
#[derive(Debug, Default)]
struct Unreported(Vec<Kept>);

impl Unreported {
    fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn len(&self) -> usize {
        self.0.len()
    }

    fn add(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Counted {
                lease,
                count,
                cpu_seconds,
            } => self.0.push(Kept {
                job_id: lease.job_id,
                unit_id: lease.unit_id,
                epoch: lease.epoch,
                lease_tag: lease.lease_tag,
                count: Some(count),
                cpu_seconds,
            }),
            Outcome::Refused { lease, reason } => {
                tracing::error!(job = %lease.job_id, unit = %lease.unit_id, %reason, "unit refused; handing it back");
                self.release(&lease);
            }
        }
    }

    fn release(&mut self, lease: &UnitLease) {
        self.hand_back(
            lease.job_id.clone(),
            lease.unit_id,
            lease.epoch,
            lease.lease_tag.clone(),
        );
    }

    /// Keeps a leased unit to hand back uncounted.
    fn hand_back(&mut self, job_id: JobId, unit_id: UnitId, epoch: Epoch, lease_tag: Vec<u8>) {
        self.0.push(Kept {
            job_id,
            unit_id,
            epoch,
            lease_tag,
            count: None,
            cpu_seconds: 0.0,
        });
    }

    /// The report: what is kept, grouped per job.
    fn request(&self, worker: &str) -> pb::ReportResultsRequest {
        let mut jobs: Vec<pb::JobReport> = Vec::new();
        for kept in &self.0 {
            let at = match jobs.iter().position(|j| j.job_id == kept.job_id.as_str()) {
                Some(at) => at,
                None => {
                    jobs.push(pb::JobReport {
                        job_id: kept.job_id.as_str().to_owned(),
                        ..pb::JobReport::default()
                    });
                    jobs.len() - 1
                }
            };
            match &kept.count {
                Some(count) => jobs[at].results.push(pb::UnitResult {
                    unit_id: kept.unit_id.0,
                    epoch: kept.epoch.0,
                    leaves: Some(pb::Leaves::from(count)),
                    lease_tag: kept.lease_tag.clone(),
                    cpu_seconds: kept.cpu_seconds,
                }),
                None => jobs[at].released.push(pb::UnitRef {
                    unit_id: kept.unit_id.0,
                    epoch: kept.epoch.0,
                    lease_tag: kept.lease_tag.clone(),
                }),
            }
        }
        pb::ReportResultsRequest {
            worker_id: worker.to_owned(),
            jobs,
        }
    }

    /// Sends everything; kept for the next try if the call fails.
    async fn flush(
        &mut self,
        client: &mut WorkerServiceClient<AuthChannel>,
        worker: &str,
    ) -> Result<(), Status> {
        if self.is_empty() {
            return Ok(());
        }
        match client.report_results(self.request(worker)).await {
            Ok(reply) => {
                let reply = reply.into_inner();
                if reply.refused > 0 {
                    tracing::error!(
                        refused = reply.refused,
                        "the coordinator refused results: they answer no lease it issued to this worker's name"
                    );
                }
                tracing::debug!(accepted = reply.accepted, ignored = reply.ignored, "reported");
            }
            // The coordinator will never take these counts (a fault of this
            // worker): they are handed back, so the units are counted
            // again (elsewhere, or here once the fault is gone).
            Err(status)
                if status.code() == Code::InvalidArgument && self.0.iter().any(|k| k.count.is_some()) =>
            {
                tracing::error!(error = %status.message(), results = self.0.len(), "the coordinator refused these counts; handing the units back");
                for kept in &mut self.0 {
                    kept.count = None;
                }
                return Box::pin(self.flush(client, worker)).await;
            }
            Err(status) => return Err(status),
        }
        self.0.clear();
        Ok(())
    }
}

/// The heartbeat: this worker's figures, and whether it is leaving.
fn heartbeat_request(worker: &str, pool: &Pool, draining: bool) -> pb::HeartbeatRequest {
    let totals = pool.totals();
    let load = |n: &std::sync::atomic::AtomicU64| n.load(std::sync::atomic::Ordering::Relaxed);
    pb::HeartbeatRequest {
        worker_id: worker.to_owned(),
        stats: Some(pb::WorkerStats {
            table_probes: load(&totals.table_probes),
            table_hits: load(&totals.table_hits),
            table_fill: load(&totals.table_fill_ppm) as f64 / 1e6,
            table_bytes: pool.table_bytes(),
            units_done: load(&totals.units_done),
            leaves_done: Some(u128::from(load(&totals.leaves_done)).into()),
        }),
        draining,
    }
}

/// Flattens a lease answer into the units the threads count; a group of
/// an unknown game or convention is handed back.
fn leased_units(reply: pb::LeaseUnitsResponse, unreported: &mut Unreported) -> Vec<UnitLease> {
    let mut units = Vec::new();
    for group in reply.jobs {
        let job_id = match JobId::parse(&group.job_id) {
            Ok(job_id) => job_id,
            Err(reason) => {
                // It could not be named in a hand-back either: its leases lapse.
                tracing::error!(%reason, "units of a job with a malformed id; leaving them to lapse");
                continue;
            }
        };
        let kind = pb::game_kind(group.game).and_then(|game| {
            let convention = pb::convention(group.convention)?;
            Ok((game, convention))
        });
        let (game, convention) = match kind {
            Ok(kind) => kind,
            Err(reason) => {
                tracing::error!(job = %job_id, %reason, "units of an unknown game or convention; handing them back");
                for unit in group.units {
                    unreported.hand_back(
                        job_id.clone(),
                        UnitId(unit.unit_id),
                        Epoch(unit.epoch),
                        unit.lease_tag,
                    );
                }
                continue;
            }
        };
        units.extend(group.units.into_iter().map(|unit| UnitLease {
            job_id: job_id.clone(),
            game,
            convention,
            depth: group.depth,
            stats: group.stats,
            unit_id: UnitId(unit.unit_id),
            epoch: Epoch(unit.epoch),
            position: unit.position,
            lease_tag: unit.lease_tag,
        }));
    }
    units
}

/// Runs the worker until `shutdown` resolves (then drains) or the
/// coordinator refuses it.
pub async fn run(config: Config, shutdown: impl Future<Output = ()>) -> Result<(), WorkerError> {
    let endpoint = config
        .coordinator
        .endpoint()
        .map_err(|e| WorkerError::BadAddress(config.coordinator.url.clone(), e.to_string()))?;
    // Lazy: the worker starts even while the coordinator is away.
    let mut client =
        WorkerServiceClient::with_interceptor(endpoint.connect_lazy(), config.coordinator.interceptor());
    let (outcomes_tx, mut outcomes) = mpsc::unbounded_channel();
    let pool = Pool::start(config.threads, config.table_bytes, outcomes_tx);
    let mut pacing = Pacing::new(config.threads);
    // When the oldest count not yet reported must go.
    let mut report_by: Option<tokio::time::Instant> = None;
    let mut unreported = Unreported::default();
    let mut session = register_until_done(&mut client, &config).await?;
    let mut heartbeat = tokio::time::interval(session.heartbeat);
    let mut backoff = Backoff::new();
    let mut idle_until = tokio::time::Instant::now();
    tokio::pin!(shutdown);

    loop {
        // Top up the local queue so the threads never wait on the network.
        let wanted = pacing.lease_due(pool.in_flight());
        if let Some(wanted) = wanted.filter(|_| tokio::time::Instant::now() >= idle_until) {
            let request = pb::LeaseUnitsRequest {
                worker_id: session.id.clone(),
                max_units: wanted as u32,
            };
            match client.lease_units(request).await {
                Ok(reply) => {
                    backoff.reset();
                    let reply = reply.into_inner();
                    let retry_after = reply.retry_after_ms;
                    let units = leased_units(reply, &mut unreported);
                    if units.is_empty() {
                        idle_until = tokio::time::Instant::now()
                            + Duration::from_millis(u64::from(retry_after.max(50)));
                    }
                    for unit in units {
                        pool.push(unit);
                    }
                }
                Err(status) => {
                    handle_error(&status, &mut client, &config, &mut session, &mut backoff).await?;
                    continue;
                }
            }
        }
        let wake = if pacing.lease_due(pool.in_flight()).is_some() {
            idle_until.max(tokio::time::Instant::now())
        } else {
            far()
        };
        // Anything unreported (counts, hand-backs, a failed report) goes
        // within `REPORT_WITHIN`, sooner once a batch of it waits.
        if unreported.is_empty() {
            report_by = None;
        } else {
            report_by.get_or_insert_with(|| tokio::time::Instant::now() + Pacing::REPORT_WITHIN);
        }
        let report_wake = report_by.unwrap_or_else(far);
        tokio::select! {
            () = &mut shutdown => break,
            Some(outcome) = outcomes.recv() => {
                pacing.saw(&outcome);
                unreported.add(outcome);
                // Gather whatever else finished; report once enough waits.
                while let Ok(more) = outcomes.try_recv() {
                    pacing.saw(&more);
                    unreported.add(more);
                }
                if unreported.len() >= pacing.batch() {
                    report_by = None;
                    if let Err(status) = unreported.flush(&mut client, &session.id).await {
                        handle_error(&status, &mut client, &config, &mut session, &mut backoff).await?;
                    }
                }
            }
            () = tokio::time::sleep_until(report_wake), if report_by.is_some() => {
                report_by = None;
                if let Err(status) = unreported.flush(&mut client, &session.id).await {
                    handle_error(&status, &mut client, &config, &mut session, &mut backoff).await?;
                }
            }
            _ = heartbeat.tick() => {
                let beat = client.heartbeat(heartbeat_request(&session.id, &pool, false)).await;
                if let Err(status) = beat {
                    handle_error(&status, &mut client, &config, &mut session, &mut backoff).await?;
                }
                if let Err(status) = unreported.flush(&mut client, &session.id).await {
                    handle_error(&status, &mut client, &config, &mut session, &mut backoff).await?;
                }
            }
            () = tokio::time::sleep_until(wake) => {}
        }
    }

    // Shutdown: hand back what has not started, finish the rest, report.
    tracing::info!("stopping: handing back queued units and finishing the others");
    // Told first, so the coordinator knows it left rather than died.
    let _ = client
        .heartbeat(heartbeat_request(&session.id, &pool, true))
        .await;
    for lease in pool.take_queued() {
        unreported.release(&lease);
    }
    // What is counted or handed back goes now, not after the running units.
    if let Err(status) = unreported.flush(&mut client, &session.id).await {
        tracing::warn!(error = %status.message(), "could not report yet; trying again once the running units finish");
    }
    while pool.in_flight() > 0 {
        if let Some(outcome) = outcomes.recv().await {
            unreported.add(outcome);
        }
    }
    pool.join();
    while let Ok(outcome) = outcomes.try_recv() {
        unreported.add(outcome);
    }
    let mut tries = 0;
    while let Err(status) = unreported.flush(&mut client, &session.id).await {
        tries += 1;
        if tries >= 5 {
            tracing::error!(error = %status.message(), "could not report before exiting; the leases will expire");
            break;
        }
        backoff.wait().await;
    }
    Ok(())
}

fn far() -> tokio::time::Instant {
    tokio::time::Instant::now() + Duration::from_secs(3600)
}

/// NOT_FOUND: the coordinator forgot us, so register again. A refused
/// credential (revoked, or never valid) or role ends the worker: retrying
/// cannot help. Anything else: wait and retry.
async fn handle_error(
    status: &Status,
    client: &mut WorkerServiceClient<AuthChannel>,
    config: &Config,
    session: &mut Session,
    backoff: &mut Backoff,
) -> Result<(), WorkerError> {
    if matches!(status.code(), Code::Unauthenticated | Code::PermissionDenied) {
        return Err(WorkerError::Refused(status.message().to_owned()));
    }
    if status.code() == Code::NotFound {
        tracing::warn!("the coordinator does not know this worker; registering again");
        *session = register_until_done(client, config).await?;
    } else {
        tracing::warn!(error = %status.message(), "coordinator call failed; retrying");
        backoff.wait().await;
    }
    Ok(())
}
