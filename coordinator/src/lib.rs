//! The coordinator: plans jobs into subtree units, leases them to workers,
//! sums their counts into divide tables and serves progress.
//!
//! It owns the jobs' state (one table, changed by one owner, `jobs/`),
//! the journal that makes it durable (`journal/`), who may call and what
//! each caller may hold (`participants/`, `admission/`, `connections/`),
//! the gRPC services, dashboard and metrics in front of them, and their
//! listeners and open-file limit (`startup.rs`), and, with the `cli`
//! feature, its configuration as `perft serve`'s flags (`options.rs`). It
//! must not count perft itself (the workers do, with `perft-core`), nor
//! accept a count no lease of its own asked for, nor acknowledge a change
//! the journal has not made durable.

pub mod admission;
mod backup;
pub mod certify;
mod client_api;
pub mod clock;
pub mod columns;
mod config;
mod connections;
mod dashboard;
mod disk_space;
pub mod jobs;
pub mod journal;
pub mod lease_tag;
mod legacy;
mod metrics;
pub mod offline;
#[cfg(feature = "cli")]
pub mod options;
mod participant_api;
pub mod participants;
pub mod planning;
mod scheduler;
mod startup;
pub mod tls;
mod worker_api;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use dashmap::DashMap;
use perft_proto::perft_service_server::PerftServiceServer;
use perft_proto::worker_service_server::WorkerServiceServer;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tonic::Status;
use tonic::service::interceptor::InterceptedService;
use tonic_health::ServingStatus;
use tonic_health::server::HealthReporter;

use crate::admission::Authenticate;
pub use crate::config::{Config, MAX_MESSAGE_BYTES, MAX_STREAMS_PER_CONNECTION, MAX_UNITS, MIN_UNIT_LEAVES};
pub use crate::connections::ConnectionLimits;
pub use crate::dashboard::TlsIdentityError;
use crate::jobs::Jobs;
use crate::journal::{Commit, Journal, JournalError};
use crate::lease_tag::LeaseSigner;
use crate::participants::Participants;
use crate::scheduler::Scheduler;
pub use crate::startup::{ListenError, Listeners, raise_open_file_limit, serve_metrics};
use perft_model::{JobId, MachineName, ParticipantId, SessionId};

/// A registered worker session: the registry (`Coordinator.workers`) is
/// the one place that knows whether a session lives. Every call of the
/// session refreshes `last_seen`; its leases live while it lives and
/// makes progress.
#[derive(Clone, Debug)]
pub(crate) struct Worker {
    /// The participant whose credential registered it: every call of the
    /// session must carry that participant's credential.
    pub participant: ParticipantId,
    /// For people and logs: `participant/machine (short session id)`.
    pub label: Arc<str>,
    /// The machine's name, for people.
    pub name: MachineName,
    pub threads: u32,
    pub last_seen: Instant,
    /// It returned a count: its threads count toward an automatic split.
    pub proven: bool,
    /// The only job it leases from (perft loadgen); it does not count
    /// toward other jobs' automatic split.
    pub only_job: Option<JobId>,
    /// Shutting down: it leases nothing more and hands back its units.
    pub draining: bool,
    pub stats: Option<perft_model::WorkerFigures>,
}

/// State shared by the services and the reaper. The jobs belong to the
/// scheduler's event loop; the worker registry is the one map of sessions.
#[derive(Debug)]
pub(crate) struct Coordinator {
    config: Config,
    scheduler: Scheduler,
    journal: Arc<Journal>,
    signer: LeaseSigner,
    participants: Arc<Participants>,
    /// Budgets and what is charged against them: one place for every
    /// bound on what a caller may make the coordinator hold.
    admission: Arc<admission::Admission>,
    /// Live dashboard sessions, each charged to its participant.
    dashboard_sessions: dashboard::Sessions,
    workers: DashMap<SessionId, Worker>,
    /// Bumped on every change a watcher may want to see.
    changed: watch::Sender<u64>,
    /// Turns to make a certificate ([`certify::AT_ONCE`] at a time).
    certificates: tokio::sync::Semaphore,
    /// The one turn to write a copy of the journal (`perft backup`).
    backups: Arc<tokio::sync::Semaphore>,
    /// Set when a journal write failed: writes are refused (Unavailable)
    /// and health says NOT_SERVING until the state is rebuilt from the
    /// journal and a write goes through again.
    degraded: AtomicBool,
    /// Whether the jobs must be rebuilt from the journal: a write was lost
    /// since the last rebuild.
    stale: AtomicBool,
    health: HealthReporter,
}

impl Coordinator {
    /// Opens the journal in `data_dir` and resumes every job in it.
    fn open(config: Config, data_dir: &std::path::Path) -> Result<Coordinator, JournalError> {
        let opened = Journal::open_accepting_loss(data_dir, config.accept_journal_loss)?;
        let journal = Arc::new(opened.journal);
        let jobs = rebuild(opened.restored, config.policy());
        let scheduler = Scheduler::start(jobs, Arc::clone(&journal)).map_err(|e| JournalError::Open {
            path: data_dir.to_owned(),
            reason: format!("cannot start the scheduler thread: {e}"),
        })?;
        let participants = Participants::new(opened.participants, &opened.key, config.token.clone());
        let admission = admission::Admission::new(config.budgets, opened.budgets);
        Ok(Coordinator {
            participants: Arc::new(participants),
            admission: Arc::new(admission),
            dashboard_sessions: dashboard::Sessions::default(),
            config,
            scheduler,
            journal,
            signer: LeaseSigner::new(opened.key),
            workers: DashMap::new(),
            changed: watch::Sender::new(0),
            certificates: tokio::sync::Semaphore::new(certify::AT_ONCE),
            backups: Arc::new(tokio::sync::Semaphore::new(1)),
            degraded: AtomicBool::new(false),
            stale: AtomicBool::new(false),
            health: HealthReporter::new(),
        })
    }

    /// Refuses a write while the journal cannot take it.
    pub(crate) fn writable(&self) -> Result<(), Status> {
        if self.degraded.load(Ordering::Acquire) {
            return Err(Status::unavailable(
                "the journal cannot write (disk full or failing): no report or submit is taken until it can; workers keep their counts",
            ));
        }
        Ok(())
    }

    /// Waits until `commit` is durable. A failure marks the coordinator
    /// degraded (the reaper rebuilds its state from the journal) and tells
    /// the caller its change is not taken.
    pub(crate) async fn durable(&self, commit: Commit) -> Result<(), Status> {
        match commit.wait().await {
            Ok(()) => Ok(()),
            Err(e) => {
                self.stale.store(true, Ordering::Release);
                if !self.degraded.swap(true, Ordering::AcqRel) {
                    tracing::error!(error = %e, "journal write failed: refusing writes until the journal takes them again");
                    self.health
                        .set_service_status("", ServingStatus::NotServing)
                        .await;
                }
                Err(Status::unavailable(format!(
                    "{e}: the change is not taken; retry once the coordinator serves again"
                )))
            }
        }
    }

    /// After a failed write: rebuilds the jobs from what the journal holds
    /// (so nothing unjournaled stays visible), then serves again once a
    /// write goes through.
    async fn recover(&self) -> bool {
        let policy = self.config.policy();
        if self.stale.swap(false, Ordering::AcqRel) {
            let rebuilt = self
                .scheduler
                .exclusive(move |jobs, journal| {
                    let restored = journal.restore()?;
                    *jobs = rebuild(restored, policy);
                    Ok::<(), JournalError>(())
                })
                .await;
            match rebuilt {
                Ok(Ok(())) => self.notify(),
                Ok(Err(e)) => {
                    tracing::error!(error = %e, "cannot read the journal back");
                    self.stale.store(true, Ordering::Release);
                    return false;
                }
                Err(e) => {
                    tracing::error!(error = %e.message(), "cannot rebuild the jobs");
                    self.stale.store(true, Ordering::Release);
                    return false;
                }
            }
        }
        let journal = Arc::clone(&self.journal);
        match tokio::task::spawn_blocking(move || journal.probe()).await {
            Ok(Ok(())) => {
                tracing::warn!("the journal takes writes again: serving");
                self.degraded.store(false, Ordering::Release);
                true
            }
            Ok(Err(e)) => {
                tracing::warn!(error = %e, "the journal still cannot write");
                false
            }
            Err(e) => {
                tracing::warn!(error = %e, "the journal still cannot write");
                false
            }
        }
    }

    /// Applies `change` to the jobs on the scheduler; the commit resolves
    /// once the change is durable.
    pub(crate) async fn change<R, F>(&self, change: F) -> Result<(R, Commit), Status>
    where
        R: Send + 'static,
        F: FnOnce(&mut Jobs) -> R + Send + 'static,
    {
        self.scheduler.change(change).await
    }

    /// Reads the jobs on the scheduler, answering once what was read is
    /// durable: no caller sees a change the journal could still lose.
    pub(crate) async fn read<R, F>(&self, read: F) -> Result<R, Status>
    where
        R: Send + 'static,
        F: FnOnce(&Jobs) -> R + Send + 'static,
    {
        let (value, barrier) = self.scheduler.read(read).await?;
        self.durable(barrier).await?;
        Ok(value)
    }

    /// Reads the jobs without waiting for durability: for figures that are
    /// only sampled (metrics, rates).
    pub(crate) async fn peek<R, F>(&self, read: F) -> Result<R, Status>
    where
        R: Send + 'static,
        F: FnOnce(&Jobs) -> R + Send + 'static,
    {
        Ok(self.scheduler.read(read).await?.0)
    }

    pub(crate) fn notify(&self) {
        self.changed.send_modify(|version| *version += 1);
    }

    /// The total threads of the workers that count toward an automatic
    /// split: only sessions that returned a count (a registration alone
    /// claims nothing), at most `split_threads_per_participant` a
    /// participant, and not loadgen's pinned workers.
    pub(crate) fn split_threads(&self) -> usize {
        let mut per_participant: std::collections::HashMap<ParticipantId, usize> =
            std::collections::HashMap::new();
        for w in self.workers.iter().filter(|w| w.only_job.is_none() && w.proven) {
            let sum = per_participant.entry(w.participant.clone()).or_default();
            *sum = sum.saturating_add(w.threads as usize);
        }
        let cap = self.config.split_threads_per_participant;
        per_participant
            .values()
            .fold(0usize, |sum, &threads| sum.saturating_add(threads.min(cap)))
    }

    /// Counts again what each newly quarantined participant decided alone:
    /// the reaper's first task, and an admin's lift waits for it too (a
    /// quarantine lifted before its recount ran would leave the forged
    /// counts in place once a restart forgets the recount was owed).
    pub(crate) async fn recount_owed(&self) -> Result<(), Status> {
        let quarantined = self.change(|jobs| jobs.take_newly_quarantined()).await?.0;
        for participant in quarantined {
            // What it decided alone is counted again (logged there).
            let _ = self.recount(&participant, true).await;
        }
        Ok(())
    }

    /// Silent workers are forgotten and their leases go back to the
    /// queue: the single path for a worker that was lost (or left). Leases
    /// past their own progress deadline lapse, whatever their session
    /// sends. Either is charged to the lease's participant.
    async fn reap(&self, now: Instant) -> Result<(), Status> {
        let ttl = self.config.lease_ttl;
        let mut lost = Vec::new();
        let mut lost_of: std::collections::HashMap<ParticipantId, u64> = std::collections::HashMap::new();
        self.workers.retain(|id, worker| {
            let alive = now.duration_since(worker.last_seen) < ttl;
            if !alive {
                self.admission.session_ended(&worker.participant);
                let seen = lost_of.entry(worker.participant.clone()).or_default();
                *seen += 1;
                // A line a worker, up to a few of one participant a sweep:
                // abandoned sessions by the thousand make one summary line.
                if *seen <= LOST_LOGGED_PER_SWEEP {
                    if worker.draining {
                        tracing::info!(worker = %id, name = %worker.name, participant = %worker.participant, "worker left after draining");
                    } else {
                        tracing::warn!(worker = %id, name = %worker.name, participant = %worker.participant, "worker lost: no heartbeat within the lease time");
                    }
                }
                lost.push(id.clone());
            }
            alive
        });
        for (participant, sessions) in lost_of {
            if sessions > LOST_LOGGED_PER_SWEEP {
                tracing::warn!(%participant, sessions, "worker sessions of one participant ended at once (the first few logged one by one)");
            }
        }
        self.recount_owed().await?;
        let ((expired, overdue), commit) = self
            .change(move |jobs| (jobs.expire(&lost), jobs.lapse_overdue()))
            .await?;
        if expired > 0 {
            tracing::warn!(
                units = expired,
                "leases of lost workers ended; units queued again"
            );
        }
        if overdue > 0 {
            tracing::warn!(
                units = overdue,
                "leases passed their progress deadline; units queued again"
            );
        }
        if expired + overdue > 0 {
            self.notify();
        }
        self.durable(commit).await
    }
}

/// Lost workers of one participant logged one by one in a sweep; more
/// make one line.
const LOST_LOGGED_PER_SWEEP: u64 = 4;

/// The job table as the journal holds it.
fn rebuild(restored: jobs::Restored, policy: jobs::Policy) -> Jobs {
    let mut jobs = Jobs::new(policy, Arc::new(clock::SystemClock), restored.credit);
    for job in restored.jobs {
        if job.summary.is_none() {
            tracing::info!(job = %job.id, results = job.results.len(), units = job.plan.units.len(), "job resumed from the journal");
        }
        jobs.restore(job);
    }
    jobs
}

/// Why the coordinator stopped.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    #[error("server stopped: {0}")]
    Transport(#[from] tonic::transport::Error),
    #[error("reflection service: {0}")]
    Reflection(#[source] tonic_reflection::server::Error),
    #[error("dashboard: {0}")]
    Dashboard(#[source] dashboard::TlsIdentityError),
}

/// A coordinator whose journal is open and whose jobs are resumed, ready
/// to serve.
#[derive(Debug)]
pub struct Opened(Arc<Coordinator>);

/// Opens the journal in `data_dir` and resumes its jobs. Refuses a journal
/// written by a newer build, or a damaged one.
pub fn open(config: Config, data_dir: &std::path::Path) -> Result<Opened, JournalError> {
    Ok(Opened(Arc::new(Coordinator::open(config, data_dir)?)))
}

/// Serves both gRPC services on `listener`, and the web dashboard on
/// `dashboard` when given, until `shutdown` resolves.
pub async fn serve(
    opened: Opened,
    listener: TcpListener,
    dashboard: Option<TcpListener>,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let coordinator = opened.0;
    tracing::info!(journal = %coordinator.journal.path().display(), "journal open");
    let dashboard = dashboard
        .map(|listener| dashboard::start(Arc::clone(&coordinator), listener))
        .transpose()
        .map_err(ServeError::Dashboard)?;
    let metrics = tokio::spawn(metrics::publish_metrics(Arc::clone(&coordinator)));
    let reaper = {
        let coordinator = Arc::clone(&coordinator);
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_millis(250));
            loop {
                tick.tick().await;
                if coordinator.degraded.load(Ordering::Acquire) {
                    if coordinator.recover().await {
                        coordinator
                            .health
                            .set_service_status("", ServingStatus::Serving)
                            .await;
                    } else {
                        tokio::time::sleep(Duration::from_secs(1)).await;
                    }
                    continue;
                }
                // A failure marks the coordinator degraded; logged there.
                let _ = coordinator.reap(Instant::now()).await;
            }
        })
    };
    // Health answers without a token: Kubernetes and compose probes send
    // none, and it reveals nothing.
    let health = tonic_health::pb::health_server::HealthServer::new(
        tonic_health::server::HealthService::from_health_reporter(coordinator.health.clone()),
    );
    coordinator
        .health
        .set_service_status("", ServingStatus::Serving)
        .await;
    let reflection = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(perft_proto::FILE_DESCRIPTOR_SET)
        .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        .build_v1()
        .map_err(ServeError::Reflection)?;
    let check = Authenticate::new(true);
    if coordinator.participants.is_open() {
        tracing::warn!(
            "no credential configured: every caller is an admin, and verification cannot tell owners apart (add participants or a token)"
        );
    }
    let participants = perft_proto::participant_service_server::ParticipantServiceServer::new(
        participant_api::ParticipantApi(Arc::clone(&coordinator)),
    )
    .max_decoding_message_size(MAX_MESSAGE_BYTES)
    .max_encoding_message_size(MAX_MESSAGE_BYTES);
    let clients = PerftServiceServer::new(client_api::ClientApi(Arc::clone(&coordinator)))
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(MAX_MESSAGE_BYTES);
    let workers = WorkerServiceServer::new(worker_api::WorkerApi(Arc::clone(&coordinator)))
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(MAX_MESSAGE_BYTES);
    // Pings keep a live client's connection busy well within the idle
    // timeout; a peer that stopped answering them is dropped.
    let limits = coordinator.config.connections;
    let (ping_every, ping_timeout) = limits.keepalive();
    let mut server = tonic::transport::Server::builder()
        .http2_keepalive_interval(Some(ping_every))
        .http2_keepalive_timeout(Some(ping_timeout))
        .max_concurrent_streams(MAX_STREAMS_PER_CONNECTION);
    if let Some((cert, key)) = &coordinator.config.tls {
        let identity = tonic::transport::Identity::from_pem(cert, key);
        server = server.tls_config(tonic::transport::ServerTlsConfig::new().identity(identity))?;
    }
    let result = server
        .layer(admission::layer::AdmissionLayer::new(
            Arc::clone(&coordinator.admission),
            Arc::clone(&coordinator.participants),
        ))
        .add_service(health)
        .add_service(InterceptedService::new(reflection, Authenticate::new(false)))
        .add_service(InterceptedService::new(participants, check.clone()))
        .add_service(InterceptedService::new(clients, check.clone()))
        .add_service(InterceptedService::new(workers, check))
        .add_service(legacy::RetiredService::<legacy::PerftV1>::default())
        .add_service(legacy::RetiredService::<legacy::WorkerV1>::default())
        .serve_with_incoming_shutdown(
            connections::incoming(connections::Acceptor::new(
                listener,
                connections::Gate::new(limits),
                "gRPC",
            )),
            shutdown,
        )
        .await;
    reaper.abort();
    metrics.abort();
    if let Some(dashboard) = dashboard {
        dashboard.abort();
    }
    // A clean stop leaves everything in the database and an empty log.
    let journal = Arc::clone(&coordinator.journal);
    match tokio::task::spawn_blocking(move || journal.close()).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::warn!(error = %e, "journal: not closed cleanly"),
        Err(e) => tracing::warn!(error = %e, "journal: not closed cleanly"),
    }
    Ok(result?)
}
