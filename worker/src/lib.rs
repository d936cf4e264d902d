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

mod activity;
mod compute;
mod machine;
mod pacing;

use std::future::Future;
use std::time::Duration;

use perft_client::{
    Client, ClientConfig, ClientError, JobReport, Leased, UnitRef, UnitResult, WorkerFigures, WorkerSession,
};
use perft_core::Game;
use perft_model::{Count, Epoch, JobId, UnitId};
use tonic::Code;

use activity::Activity;
pub use compute::{Outcome, Pool, Totals, UnitLease};
pub use machine::{
    BadWorkerName, MetricsError, WorkerName, default_table_bytes, prepare_table, serve_metrics,
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
    /// TLS refused the coordinator's certificate: the CA file or the URL is
    /// wrong, and retrying cannot help.
    #[error(
        "the coordinator at {url} showed a certificate the --tls-ca file does not vouch for ({why}): check that --tls-ca is that coordinator's CA certificate and that the URL's host is the name its certificate was issued for"
    )]
    UntrustedCoordinator { url: String, why: String },
}

/// What to check when nothing answers at `url`.
fn unreachable_hint(url: &str) -> &'static str {
    if url.starts_with("http://") {
        "check the host and port and that the coordinator runs; a coordinator serving TLS needs https:// and --tls-ca"
    } else {
        "check the host and port and that the coordinator runs"
    }
}

/// The error that ends the worker when TLS refused the coordinator's
/// certificate.
fn untrusted(err: &ClientError, url: &str) -> Option<WorkerError> {
    err.untrusted_certificate()
        .map(|why| WorkerError::UntrustedCoordinator {
            url: url.to_owned(),
            why,
        })
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

/// Whether a refused call is final: retrying cannot help (an
/// incompatible protocol, a refused credential or role, a budget).
fn is_refusal(err: &ClientError) -> bool {
    matches!(
        err.code(),
        Some(
            Code::FailedPrecondition
                | Code::Unauthenticated
                | Code::PermissionDenied
                | Code::InvalidArgument
                | Code::ResourceExhausted
        )
    )
}

/// Registers, retrying while the coordinator cannot be reached. A refusal
/// is final.
async fn register_until_done(client: &Client, config: &Config) -> Result<WorkerSession, WorkerError> {
    tracing::info!(url = %config.coordinator.url, name = %config.name, "registering with the coordinator");
    let mut backoff = Backoff::new();
    let threads = u32::try_from(config.threads).unwrap_or(u32::MAX);
    loop {
        match client.register_worker(&config.name, threads, None).await {
            Ok(session) => {
                tracing::info!(
                    worker = %session.id(),
                    name = %config.name,
                    url = %config.coordinator.url,
                    threads = config.threads,
                    table_bytes = config.table_bytes.unwrap_or(0),
                    reversi_kernel = %perft_core::Reversi::best_kernel(),
                    checkers_kernel = %perft_core::Checkers::best_kernel(),
                    chess_kernel = %perft_core::Chess::best_kernel(),
                    "registered"
                );
                return Ok(session);
            }
            Err(err) => {
                if let Some(fatal) = untrusted(&err, &config.coordinator.url) {
                    return Err(fatal);
                }
                if is_refusal(&err) {
                    return Err(WorkerError::Refused(err.to_string()));
                }
                let url = &config.coordinator.url;
                let hint = unreachable_hint(url);
                tracing::warn!(%url, error = %err, hint, "coordinator unreachable; retrying");
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
    fn reports(&self) -> Vec<JobReport> {
        let mut jobs: Vec<JobReport> = Vec::new();
        for kept in &self.0 {
            let at = match jobs.iter().position(|j| j.job == kept.job_id) {
                Some(at) => at,
                None => {
                    jobs.push(JobReport::counted(kept.job_id.clone(), Vec::new()));
                    jobs.len() - 1
                }
            };
            match &kept.count {
                Some(count) => jobs[at].results.push(UnitResult {
                    unit: kept.unit_id,
                    epoch: kept.epoch,
                    tag: kept.lease_tag.clone(),
                    count: *count,
                    cpu_seconds: kept.cpu_seconds,
                }),
                None => jobs[at].released.push(UnitRef {
                    unit: kept.unit_id,
                    epoch: kept.epoch,
                    tag: kept.lease_tag.clone(),
                }),
            }
        }
        jobs
    }

    /// Sends everything; kept for the next try if the call fails.
    async fn flush(&mut self, session: &mut WorkerSession) -> Result<(), ClientError> {
        if self.is_empty() {
            return Ok(());
        }
        match session.report(self.reports()).await {
            Ok(reply) => {
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
            Err(err)
                if err.code() == Some(Code::InvalidArgument) && self.0.iter().any(|k| k.count.is_some()) =>
            {
                tracing::error!(error = %err, results = self.0.len(), "the coordinator refused these counts; handing the units back");
                for kept in &mut self.0 {
                    kept.count = None;
                }
                return Box::pin(self.flush(session)).await;
            }
            Err(err) => return Err(err),
        }
        self.0.clear();
        Ok(())
    }
}

/// This worker's figures, for its heartbeats.
fn figures(pool: &Pool) -> WorkerFigures {
    let totals = pool.totals();
    let load = |n: &std::sync::atomic::AtomicU64| n.load(std::sync::atomic::Ordering::Relaxed);
    WorkerFigures {
        table_probes: load(&totals.table_probes),
        table_hits: load(&totals.table_hits),
        table_fill: load(&totals.table_fill_ppm) as f64 / 1e6,
        table_bytes: pool.table_bytes(),
        units_done: load(&totals.units_done),
        leaves_done: u128::from(load(&totals.leaves_done)),
    }
}

/// Flattens a lease answer into the units the threads count; a group this
/// worker cannot read is handed back (or, with no job id to name it in,
/// left to lapse).
fn leased_units(leased: Leased, unreported: &mut Unreported) -> Vec<UnitLease> {
    for group in leased.unreadable {
        let reason = &group.reason;
        match group.job {
            Some(job_id) => {
                tracing::error!(job = %job_id, %reason, "units of an unknown game or convention; handing them back");
                for unit in group.units {
                    unreported.hand_back(job_id.clone(), unit.unit, unit.epoch, unit.tag);
                }
            }
            None => tracing::error!(%reason, "units of a job with a malformed id; leaving them to lapse"),
        }
    }
    let mut units = Vec::new();
    for group in leased.jobs {
        units.extend(group.units.into_iter().map(|unit| UnitLease {
            job_id: group.job.clone(),
            game: group.game,
            convention: group.convention,
            depth: group.depth,
            stats: group.stats,
            unit_id: unit.unit,
            epoch: unit.epoch,
            position: unit.position,
            lease_tag: unit.tag,
        }));
    }
    units
}

/// Runs the worker until `shutdown` resolves (then drains) or the
/// coordinator refuses it.
pub async fn run(config: Config, shutdown: impl Future<Output = ()>) -> Result<(), WorkerError> {
    // Lazy: the worker starts even while the coordinator is away.
    let client = Client::lazy(&config.coordinator)
        .map_err(|e| WorkerError::BadAddress(config.coordinator.url.clone(), e.to_string()))?;
    let table = match config.table_bytes {
        Some(bytes) if bytes > 0 => Some(machine::prepare_table(bytes, config.threads).await),
        _ => None,
    };
    let pool = Pool::start(config.threads, table);
    let mut pacing = Pacing::new(config.threads);
    // When the oldest count not yet reported must go.
    let mut report_by: Option<tokio::time::Instant> = None;
    let mut unreported = Unreported::default();
    let mut session = register_until_done(&client, &config).await?;
    let mut heartbeat = tokio::time::interval(session.heartbeat_every);
    let mut backoff = Backoff::new();
    let mut idle_until = tokio::time::Instant::now();
    let mut activity = Activity::new();
    let mut summary = tokio::time::interval_at(
        tokio::time::Instant::now() + activity::SUMMARY_EVERY,
        activity::SUMMARY_EVERY,
    );
    // Counts are collected on this tick while units are in flight, not as
    // each finishes: a wake-up per unit of a fraction of a millisecond cost
    // about a tenth of the worker's CPU (`BENCHMARKS.md`).
    let mut collect = tokio::time::interval(Pacing::COLLECT_EVERY);
    collect.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    tokio::pin!(shutdown);

    loop {
        // Top up the local queue so the threads never wait on the network.
        let wanted = pacing.lease_due(pool.in_flight());
        if let Some(wanted) = wanted.filter(|_| tokio::time::Instant::now() >= idle_until) {
            match session.lease(u32::try_from(wanted).unwrap_or(u32::MAX)).await {
                Ok(leased) => {
                    backoff.reset();
                    let retry_after = leased.retry_after;
                    let units = leased_units(leased, &mut unreported);
                    activity.leased(&units);
                    if units.is_empty() {
                        activity.idle();
                        idle_until = tokio::time::Instant::now() + retry_after.max(Duration::from_millis(50));
                    }
                    for unit in units {
                        pool.push(unit);
                    }
                }
                Err(err) => {
                    handle_error(&err, &client, &config, &mut session, &mut backoff).await?;
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
            _ = collect.tick(), if pool.is_busy() => {
                for outcome in pool.take_finished() {
                    pacing.saw(&outcome);
                    activity.finished(&outcome);
                    unreported.add(outcome);
                }
                // Report once enough waits.
                if unreported.len() >= pacing.batch() {
                    report_by = None;
                    if let Err(err) = unreported.flush(&mut session).await {
                        handle_error(&err, &client, &config, &mut session, &mut backoff).await?;
                    }
                }
            }
            () = tokio::time::sleep_until(report_wake), if report_by.is_some() => {
                report_by = None;
                if let Err(err) = unreported.flush(&mut session).await {
                    handle_error(&err, &client, &config, &mut session, &mut backoff).await?;
                }
            }
            _ = heartbeat.tick() => {
                if let Err(err) = session.heartbeat(Some(&figures(&pool)), false).await {
                    handle_error(&err, &client, &config, &mut session, &mut backoff).await?;
                }
                if let Err(err) = unreported.flush(&mut session).await {
                    handle_error(&err, &client, &config, &mut session, &mut backoff).await?;
                }
            }
            _ = summary.tick() => activity.summary(),
            () = tokio::time::sleep_until(wake) => {}
        }
    }

    // Shutdown: hand back what has not started, finish the rest, report.
    tracing::info!("stopping: handing back queued units and finishing the others");
    // Told first, so the coordinator knows it left rather than died.
    let _ = session.heartbeat(Some(&figures(&pool)), true).await;
    for lease in pool.take_queued() {
        activity.handed_back(&lease);
        unreported.release(&lease);
    }
    // What is counted or handed back goes now, not after the running units.
    if let Err(err) = unreported.flush(&mut session).await {
        tracing::warn!(error = %err, "could not report yet; trying again once the running units finish");
    }
    // The running units end while the runtime stays free; joining then
    // returns every count not taken yet.
    while pool.in_flight() > 0 {
        collect.tick().await;
    }
    for outcome in pool.join() {
        activity.finished(&outcome);
        unreported.add(outcome);
    }
    activity.stopped();
    let mut tries = 0;
    while let Err(err) = unreported.flush(&mut session).await {
        tries += 1;
        if tries >= 5 {
            tracing::error!(error = %err, "could not report before exiting; the leases will expire");
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
    err: &ClientError,
    client: &Client,
    config: &Config,
    session: &mut WorkerSession,
    backoff: &mut Backoff,
) -> Result<(), WorkerError> {
    if let Some(fatal) = untrusted(err, &config.coordinator.url) {
        return Err(fatal);
    }
    if matches!(err.code(), Some(Code::Unauthenticated | Code::PermissionDenied)) {
        return Err(WorkerError::Refused(err.to_string()));
    }
    if err.code() == Some(Code::NotFound) {
        tracing::warn!("the coordinator does not know this worker; registering again");
        *session = register_until_done(client, config).await?;
    } else {
        tracing::warn!(url = %config.coordinator.url, error = %err, "coordinator call failed; retrying");
        backoff.wait().await;
    }
    Ok(())
}
