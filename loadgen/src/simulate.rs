//! Simulated workers on one job: each leases small batches of tiny units,
//! counts them for real (they are one or two plies deep) and reports at
//! once, timing each report's acknowledgement. They are pinned to the job:
//! they never lease another job's units and count toward no other job's
//! automatic split.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use perft_client::{Client, ClientConfig, ClientError, JobReport, UnitResult};
use perft_core::{Game, GameVisitor, Leaves, perft};
use perft_model::{Count, JobId, Role};

use crate::error::LoadgenError;
use crate::latency::Latency;

/// Empty leases in a row after which a simulated worker stops: its job has
/// nothing left to lease.
const IDLE_LEASES: u32 = 5;

/// What the simulated workers came to.
#[derive(Debug)]
pub struct Simulated {
    /// Results the coordinator accepted.
    pub accepted: u64,
    /// From the first worker's start to the last one's end.
    pub seconds: f64,
    pub latency: Latency,
    /// With a latency log asked for: each report's sending time (Unix ms)
    /// and acknowledgement time (µs), sorted by sending time.
    pub log: Vec<(u64, u64)>,
}

impl Simulated {
    /// Writes the latency log to `path` in sending order: `unix_ms micros`
    /// per line, to see latency during an event.
    pub fn write_log(&self, path: &Path) -> Result<(), LoadgenError> {
        let cannot = |source| LoadgenError::LatencyLog {
            path: path.to_owned(),
            source,
        };
        let mut out = BufWriter::new(File::create(path).map_err(cannot)?);
        for (sent, micros) in &self.log {
            writeln!(out, "{sent} {micros}").map_err(cannot)?;
        }
        out.flush().map_err(cannot)
    }
}

/// Runs a simulated worker on `job` for each of `configs` (each its own
/// connection and credential), leasing `batch` units at a time, until the
/// job has nothing left to lease; with `keep_log`, every report's times.
pub async fn simulate(
    configs: Vec<ClientConfig>,
    job: &JobId,
    batch: u32,
    keep_log: bool,
) -> Result<Simulated, LoadgenError> {
    let accepted = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let tasks: Vec<_> = configs
        .into_iter()
        .enumerate()
        .map(|(i, config)| {
            tokio::spawn(simulated_worker(
                config,
                format!("sim-{i}"),
                job.clone(),
                batch,
                Arc::clone(&accepted),
                keep_log,
            ))
        })
        .collect();
    let mut latency = Latency::new();
    let mut log = Vec::new();
    for task in tasks {
        let acks = task.await??;
        latency.add(&acks.latency)?;
        log.extend(acks.log.unwrap_or_default());
    }
    let seconds = started.elapsed().as_secs_f64();
    log.sort_unstable();
    Ok(Simulated {
        accepted: accepted.load(Ordering::Relaxed),
        seconds,
        latency,
        log,
    })
}

/// A participant of its own (role worker) for each of `workers` simulated
/// workers, named `loadgen-JOB-N`, added with `admin`'s credential: the
/// client configuration of each.
pub async fn own_participants(
    admin: &Client,
    job: &JobId,
    workers: u32,
) -> Result<Vec<ClientConfig>, LoadgenError> {
    let mut configs = Vec::with_capacity(workers as usize);
    for i in 0..workers {
        let added = admin
            .add_participant(&format!("loadgen-{job}-{i}"), Role::Worker)
            .await?;
        configs.push(added.client_config(admin.config())?);
    }
    Ok(configs)
}

/// What one simulated worker saw: each report's acknowledgement time (µs),
/// and with a latency log, when each was sent (Unix ms).
struct Acks {
    latency: Latency,
    log: Option<Vec<(u64, u64)>>,
}

async fn simulated_worker(
    config: ClientConfig,
    name: String,
    job: JobId,
    batch: u32,
    accepted: Arc<AtomicU64>,
    keep_log: bool,
) -> Result<Acks, LoadgenError> {
    let mut acks = Acks {
        latency: Latency::new(),
        log: keep_log.then(Vec::new),
    };
    let client = Client::connect(&config).await?;
    let mut session = client.register_worker(&name, 1, Some(&job)).await?;
    let mut idle = 0;
    loop {
        let leased = session.lease(batch).await?;
        if let Some(unreadable) = leased.unreadable.into_iter().next() {
            return Err(ClientError::from(unreadable.reason).into());
        }
        let leased = leased.jobs;
        if leased.is_empty() {
            idle += 1;
            if idle >= IDLE_LEASES {
                return Ok(acks);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        }
        idle = 0;
        let mut reports = Vec::with_capacity(leased.len());
        for group in leased {
            let results = group
                .units
                .into_iter()
                .map(|unit| {
                    let leaves = group
                        .game
                        .dispatch(CountPacked(&unit.position, group.depth))
                        .ok_or(LoadgenError::BadPosition { unit: unit.unit })?;
                    Ok(UnitResult {
                        unit: unit.unit,
                        epoch: unit.epoch,
                        tag: unit.tag,
                        count: Count::plain(leaves),
                        cpu_seconds: 0.0,
                    })
                })
                .collect::<Result<Vec<_>, LoadgenError>>()?;
            reports.push(JobReport::counted(group.job, results));
        }
        let sent_at = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        let sent = Instant::now();
        let reply = session.report(reports).await?;
        let micros = u64::try_from(sent.elapsed().as_micros()).unwrap_or(u64::MAX);
        acks.latency.record(micros);
        if let Some(log) = &mut acks.log {
            log.push((u64::try_from(sent_at.as_millis()).unwrap_or(u64::MAX), micros));
        }
        accepted.fetch_add(u64::from(reply.accepted), Ordering::Relaxed);
    }
}

/// Counts a packed position of the game it is dispatched to.
struct CountPacked<'a>(&'a [u8], u32);

impl GameVisitor for CountPacked<'_> {
    type Output = Option<Leaves>;
    fn visit<G: Game>(self) -> Option<Leaves> {
        Some(perft(&G::unpack(self.0).ok()?, self.1))
    }
}
