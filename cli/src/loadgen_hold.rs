//! `perft loadgen-hold` (internal, for `bench/budgets.sh`): holds worker
//! sessions and job watches open on a coordinator until killed, each
//! charged to the participant whose credential opened it, to measure what
//! a coordinator costs with every participant at its budgets. Each
//! credential gets one connection; its sessions are registered over it a
//! few at a time, its watches are streams on it. Sessions never heartbeat:
//! serve with a `--lease-seconds` longer than the measurement.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use perft_proto as pb;
use perft_proto::connect::{ClientConfig, Token};
use perft_proto::perft_service_client::PerftServiceClient;
use perft_proto::worker_service_client::WorkerServiceClient;
use tonic::Code;

use crate::args::LoadgenHoldArgs;
use crate::cluster::{runtime, terminated};
use crate::error::CliError;

/// What one credential's calls came to.
#[derive(Default)]
struct Held {
    opened: u64,
    /// The one past the count: refused by the budget, as it should be.
    refused_past: u64,
}

/// The non-empty lines of `path`, split on white space.
fn lines(path: &Path) -> Result<Vec<Vec<String>>, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::Usage(format!("cannot read '{}': {e}", path.display())))?;
    Ok(text
        .lines()
        .map(|l| l.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
        .filter(|words| !words.is_empty())
        .collect())
}

async fn connect(url: &str, secret: &str) -> Result<(tonic::transport::Channel, ClientConfig), CliError> {
    let config = ClientConfig {
        url: url.to_owned(),
        token: Some(Token::new(secret).map_err(|e| CliError::Usage(e.to_string()))?),
        tls_ca: None,
    };
    let channel = config
        .endpoint()
        .map_err(|e| CliError::Usage(e.to_string()))?
        .connect()
        .await
        .map_err(|e| CliError::Failed(format!("cannot connect: {e}")))?;
    Ok((channel, config))
}

/// Registers `count` sessions with `secret`, `in_flight` at a time, then
/// one more.
async fn sessions(url: String, secret: String, count: u32, in_flight: u32) -> Result<Held, CliError> {
    let (channel, config) = connect(&url, &secret).await?;
    let client = WorkerServiceClient::with_interceptor(channel, config.interceptor());
    let register = |mut client: WorkerServiceClient<_>, i: u32| async move {
        client
            .register(pb::RegisterRequest {
                name: format!("hold-{i}"),
                threads: 1,
                only_job: String::new(),
            })
            .await
            .map(|_| ())
    };
    let lanes: Vec<_> = (0..in_flight.min(count))
        .map(|lane| {
            let client = client.clone();
            tokio::spawn(async move {
                let mut i = lane;
                while i < count {
                    register(client.clone(), i)
                        .await
                        .map_err(crate::client::status_error)?;
                    i += in_flight;
                }
                Ok::<_, CliError>(())
            })
        })
        .collect();
    for lane in lanes {
        lane.await.map_err(|e| CliError::Failed(e.to_string()))??;
    }
    let mut held = Held {
        opened: u64::from(count),
        refused_past: 0,
    };
    match register(client, count).await {
        Ok(()) => held.opened += 1,
        Err(status) if status.code() == Code::ResourceExhausted => held.refused_past = 1,
        Err(status) => return Err(crate::client::status_error(status)),
    }
    Ok(held)
}

/// Opens `count` watches of `job` with `secret`, then one more; each is
/// read until it ends, and `live` counts those still open.
async fn streams(
    url: String,
    secret: String,
    job: String,
    count: u32,
    live: Arc<AtomicU64>,
) -> Result<Held, CliError> {
    let (channel, config) = connect(&url, &secret).await?;
    let mut client = PerftServiceClient::with_interceptor(channel, config.interceptor());
    let mut held = Held::default();
    for i in 0..=count {
        let answer = client
            .watch_job(pb::WatchJobRequest { job_id: job.clone() })
            .await;
        match answer {
            Ok(stream) => {
                held.opened += 1;
                live.fetch_add(1, Ordering::Relaxed);
                let live = Arc::clone(&live);
                tokio::spawn(async move {
                    let mut stream = stream.into_inner();
                    while let Ok(Some(_)) = stream.message().await {}
                    live.fetch_sub(1, Ordering::Relaxed);
                });
            }
            Err(status) if i == count && status.code() == Code::ResourceExhausted => held.refused_past = 1,
            Err(status) => return Err(crate::client::status_error(status)),
        }
    }
    Ok(held)
}

/// Sums what every task held.
async fn gather(tasks: Vec<tokio::task::JoinHandle<Result<Held, CliError>>>) -> Result<Held, CliError> {
    let mut all = Held::default();
    for task in tasks {
        let held = task.await.map_err(|e| CliError::Failed(e.to_string()))??;
        all.opened += held.opened;
        all.refused_past += held.refused_past;
    }
    Ok(all)
}

pub fn hold(args: &LoadgenHoldArgs) -> Result<(), CliError> {
    let session_lines = args
        .session_secrets
        .as_deref()
        .map(lines)
        .transpose()?
        .unwrap_or_default();
    let stream_lines = args
        .stream_secrets
        .as_deref()
        .map(lines)
        .transpose()?
        .unwrap_or_default();
    if stream_lines.iter().any(|words| words.len() != 2) {
        return Err(CliError::Usage("--stream-secrets lines are `SECRET JOB`".into()));
    }
    runtime()?.block_on(async {
        let started = std::time::Instant::now();
        let tasks = session_lines
            .iter()
            .map(|words| {
                tokio::spawn(sessions(
                    args.coordinator.clone(),
                    words[0].clone(),
                    args.sessions,
                    args.in_flight,
                ))
            })
            .collect();
        let registered = gather(tasks).await?;
        let registering = started.elapsed().as_secs_f64();
        let live = Arc::new(AtomicU64::new(0));
        let tasks = stream_lines
            .iter()
            .map(|words| {
                tokio::spawn(streams(
                    args.coordinator.clone(),
                    words[0].clone(),
                    words[1].clone(),
                    args.streams,
                    Arc::clone(&live),
                ))
            })
            .collect();
        let watching = gather(tasks).await?;
        outln!(
            "held {} sessions of {} credentials ({} refused one past the count; registered in {registering:.1} s) \
             and {} streams of {} ({} refused one past the count)",
            registered.opened,
            session_lines.len(),
            registered.refused_past,
            watching.opened,
            stream_lines.len(),
            watching.refused_past
        )?;
        terminated().await;
        outln!("streams still open when stopped: {}", live.load(Ordering::Relaxed))?;
        Ok(())
    })
}
