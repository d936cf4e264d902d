//! Worker sessions and job watches held open, each charged to the
//! participant whose credential opened it, to measure what a coordinator
//! costs with every participant at its budgets. Each credential gets one
//! connection: its sessions are registered over it a few at a time, its
//! watches are streams on it. Sessions never heartbeat.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use perft_client::{Client, ClientConfig};
use perft_model::JobId;

use crate::error::LoadgenError;
use crate::secrets::HoldCredentials;

/// What the credentials' calls came to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Held {
    /// Sessions registered, or watches opened.
    pub opened: u64,
    /// Credentials whose one past the count was refused by the budget, as
    /// it should be.
    pub refused_past: u64,
}

impl Held {
    fn add(&mut self, other: Held) {
        self.opened += other.opened;
        self.refused_past += other.refused_past;
    }
}

/// Watches held open, and how many are open still.
#[derive(Debug)]
pub struct HeldStreams {
    pub held: Held,
    live: Arc<AtomicU64>,
}

impl HeldStreams {
    /// Watches the coordinator has not ended yet.
    pub fn still_open(&self) -> u64 {
        self.live.load(Ordering::Relaxed)
    }
}

/// What a hold came to: the sessions registered, how long registering
/// them took, and the watches opened.
#[derive(Debug)]
pub struct Holding {
    pub sessions: Held,
    pub registering: Duration,
    pub streams: HeldStreams,
}

/// Holds `sessions` worker sessions with each session credential (`in_flight`
/// registrations at a time), then `streams` watches with each stream
/// credential, each credential one past its count too. The sessions and
/// watches stay open while the runtime runs.
pub async fn hold(
    credentials: HoldCredentials,
    sessions: u32,
    in_flight: u32,
    streams: u32,
) -> Result<Holding, LoadgenError> {
    let started = Instant::now();
    let registered = hold_sessions(credentials.sessions, sessions, in_flight).await?;
    let registering = started.elapsed();
    Ok(Holding {
        sessions: registered,
        registering,
        streams: hold_streams(credentials.streams, streams).await?,
    })
}

/// Registers `count` worker sessions with each of `credentials`,
/// `in_flight` at a time on its one connection, then one more.
pub async fn hold_sessions(
    credentials: Vec<ClientConfig>,
    count: u32,
    in_flight: u32,
) -> Result<Held, LoadgenError> {
    let tasks: Vec<_> = credentials
        .into_iter()
        .map(|config| tokio::spawn(sessions(config, count, in_flight)))
        .collect();
    let mut all = Held::default();
    for task in tasks {
        all.add(task.await??);
    }
    Ok(all)
}

/// Opens `count` watches with each credential of its job, then one more;
/// each is read until the coordinator ends it.
pub async fn hold_streams(
    credentials: Vec<(ClientConfig, JobId)>,
    count: u32,
) -> Result<HeldStreams, LoadgenError> {
    let live = Arc::new(AtomicU64::new(0));
    let tasks: Vec<_> = credentials
        .into_iter()
        .map(|(config, job)| tokio::spawn(streams(config, job, count, Arc::clone(&live))))
        .collect();
    let mut all = Held::default();
    for task in tasks {
        all.add(task.await??);
    }
    Ok(HeldStreams { held: all, live })
}

async fn sessions(config: ClientConfig, count: u32, in_flight: u32) -> Result<Held, LoadgenError> {
    let client = Client::connect(&config).await?;
    let lanes: Vec<_> = (0..in_flight.min(count))
        .map(|lane| {
            let client = client.clone();
            tokio::spawn(async move {
                let mut i = lane;
                while i < count {
                    client.register_worker(&format!("hold-{i}"), 1, None).await?;
                    i += in_flight;
                }
                Ok::<_, LoadgenError>(())
            })
        })
        .collect();
    for lane in lanes {
        lane.await??;
    }
    let mut held = Held {
        opened: u64::from(count),
        refused_past: 0,
    };
    match client.register_worker(&format!("hold-{count}"), 1, None).await {
        Ok(_) => held.opened += 1,
        Err(e) if e.is_over_budget() => held.refused_past = 1,
        Err(e) => return Err(e.into()),
    }
    Ok(held)
}

async fn streams(
    config: ClientConfig,
    job: JobId,
    count: u32,
    live: Arc<AtomicU64>,
) -> Result<Held, LoadgenError> {
    let client = Client::connect(&config).await?;
    let mut held = Held::default();
    for i in 0..=count {
        match client.watch(&job).await {
            Ok(mut watch) => {
                held.opened += 1;
                live.fetch_add(1, Ordering::Relaxed);
                let live = Arc::clone(&live);
                tokio::spawn(async move {
                    while let Ok(Some(_)) = watch.next().await {}
                    live.fetch_sub(1, Ordering::Relaxed);
                });
            }
            Err(e) if i == count && e.is_over_budget() => held.refused_past = 1,
            Err(e) => return Err(e.into()),
        }
    }
    Ok(held)
}
