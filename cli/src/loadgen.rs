//! `perft loadgen`: many simulated workers against one coordinator, to
//! measure how many results a second it accepts (with its journal on).
//! Each simulated worker leases small batches of tiny units, counts them
//! for real (they are one or two plies deep) and reports at once. They are
//! pinned to loadgen's own job: they never lease another job's units and do
//! not count toward another job's automatic split.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use hdrhistogram::Histogram;

use perft_core::{Game, GameKind, GameVisitor, Leaves, perft};
use perft_proto as pb;
use perft_proto::connect::ClientConfig;
use perft_proto::worker_service_client::WorkerServiceClient;

use crate::args::{LoadgenArgs, SubmitArgs};
use crate::cluster::runtime;
use crate::error::CliError;

struct Count<'a>(&'a [u8], u32);

impl GameVisitor for Count<'_> {
    type Output = Option<Leaves>;
    fn visit<G: Game>(self) -> Option<Leaves> {
        Some(perft(&G::unpack(self.0).ok()?, self.1))
    }
}

/// What one simulated worker saw: each report's acknowledgement time (µs),
/// and with a latency log, when each was sent (Unix ms).
struct Acks {
    latency: Histogram<u64>,
    log: Option<Vec<(u64, u64)>>,
}

/// Acknowledgements up to a minute are recorded at 3 significant digits.
fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000, 3).expect("static bounds are valid")
}

async fn simulated_worker(
    config: ClientConfig,
    name: String,
    job: String,
    batch: u32,
    accepted: Arc<AtomicU64>,
    keep_log: bool,
) -> Result<Acks, CliError> {
    let mut acks = Acks {
        latency: histogram(),
        log: keep_log.then(Vec::new),
    };
    let channel = config
        .endpoint()
        .map_err(|e| CliError::Usage(e.to_string()))?
        .connect()
        .await
        .map_err(|e| CliError::Failed(format!("cannot connect: {e}")))?;
    let mut client = WorkerServiceClient::with_interceptor(channel, config.interceptor());
    let registered = client
        .register(pb::RegisterRequest {
            name,
            threads: 1,
            only_job: job,
        })
        .await
        .map_err(crate::client::status_error)?
        .into_inner();
    let mut idle = 0;
    loop {
        let groups = client
            .lease_units(pb::LeaseUnitsRequest {
                worker_id: registered.worker_id.clone(),
                max_units: batch,
            })
            .await
            .map_err(crate::client::status_error)?
            .into_inner()
            .jobs;
        if groups.is_empty() {
            idle += 1;
            if idle > 4 {
                return Ok(acks);
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        }
        idle = 0;
        let mut reports = Vec::with_capacity(groups.len());
        for group in &groups {
            let game: GameKind = pb::game_kind(group.game).map_err(|e| CliError::Failed(e.to_string()))?;
            let results = group
                .units
                .iter()
                .map(|u| {
                    let leaves = game.dispatch(Count(&u.position, group.depth)).ok_or_else(|| {
                        CliError::Failed(format!("bad packed position in unit {}", u.unit_id))
                    })?;
                    Ok(pb::UnitResult {
                        unit_id: u.unit_id,
                        epoch: u.epoch,
                        leaves: Some(leaves.into()),
                        lease_tag: u.lease_tag.clone(),
                        cpu_seconds: 0.0,
                    })
                })
                .collect::<Result<Vec<_>, CliError>>()?;
            reports.push(pb::JobReport {
                job_id: group.job_id.clone(),
                results,
                released: Vec::new(),
            });
        }
        let sent_at = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
        let sent = Instant::now();
        let reply = client
            .report_results(pb::ReportResultsRequest {
                worker_id: registered.worker_id.clone(),
                jobs: reports,
            })
            .await
            .map_err(crate::client::status_error)?
            .into_inner();
        let micros = u64::try_from(sent.elapsed().as_micros()).unwrap_or(u64::MAX);
        acks.latency.saturating_record(micros.max(1));
        if let Some(log) = &mut acks.log {
            log.push((u64::try_from(sent_at.as_millis()).unwrap_or(u64::MAX), micros));
        }
        accepted.fetch_add(u64::from(reply.accepted), Ordering::Relaxed);
    }
}

pub fn loadgen(args: &LoadgenArgs) -> Result<(), CliError> {
    runtime()?.block_on(async {
        let client = crate::client::connect(&args.coordinator).await?;
        let submit = SubmitArgs {
            coordinator: args.coordinator.clone(),
            game: args.game,
            depth: args.depth,
            position: None,
            split_depth: Some(args.depth.saturating_sub(1)),
            verify: false,
            convention: None,
            stats: false,
        };
        let planning = Instant::now();
        let job_id = client.submit(&crate::client::submission(&submit)?).await?;
        let planned = planning.elapsed();
        let job = client.job(&job_id).await?;
        let id = job_id.to_string();
        errln!("job {id}: {} units planned and journaled in {:.2} s", job.units_total, planned.as_secs_f64());
        let config = args.coordinator.client_config()?;
        let configs = if args.own_participants {
            own_participants(&args.coordinator, &config, &id, args.workers).await?
        } else {
            vec![config; args.workers as usize]
        };
        let accepted = Arc::new(AtomicU64::new(0));
        let started = Instant::now();
        let tasks: Vec<_> = configs
            .into_iter()
            .enumerate()
            .map(|(i, config)| {
                tokio::spawn(simulated_worker(
                    config,
                    format!("sim-{i}"),
                    id.clone(),
                    args.batch,
                    Arc::clone(&accepted),
                    args.latency_log.is_some(),
                ))
            })
            .collect();
        let mut latency = histogram();
        let mut log = Vec::new();
        for task in tasks {
            let acks = task.await.map_err(|e| CliError::Failed(e.to_string()))??;
            latency
                .add(&acks.latency)
                .map_err(|e| CliError::Failed(format!("latency histogram: {e}")))?;
            log.extend(acks.log.unwrap_or_default());
        }
        let seconds = started.elapsed().as_secs_f64();
        if let Some(path) = &args.latency_log {
            write_log(path, &mut log)?;
        }
        let report = crate::client::fetch_report(&client, &job_id).await?;
        let results = accepted.load(Ordering::Relaxed);
        outln!(
            "{} simulated workers: {results} results accepted in {seconds:.2} s = {:.0} results/s; job {} with {} leaves",
            args.workers,
            results as f64 / seconds,
            match &report.source {
                crate::report::Source::Job { state, .. } => state.as_str(),
                crate::report::Source::Local { .. } => "local",
            },
            report.total.leaves
        )?;
        let ms = |q: f64| latency.value_at_quantile(q) as f64 / 1000.0;
        outln!(
            "report acknowledgement over {} calls: p50 {:.1} ms, p99 {:.1} ms, p99.9 {:.1} ms, max {:.1} ms",
            latency.len(),
            ms(0.5),
            ms(0.99),
            ms(0.999),
            latency.max() as f64 / 1000.0
        )?;
        Ok(())
    })
}

/// A participant of its own (role worker) for each simulated worker, added
/// with the caller's admin credential: the client config of each.
async fn own_participants(
    coordinator: &crate::args::CoordinatorArg,
    config: &ClientConfig,
    job: &str,
    workers: u32,
) -> Result<Vec<ClientConfig>, CliError> {
    let client = crate::client::connect(coordinator).await?;
    let mut admin = perft_proto::participant_service_client::ParticipantServiceClient::with_interceptor(
        client.channel(),
        config.interceptor(),
    );
    let mut configs = Vec::with_capacity(workers as usize);
    for i in 0..workers {
        let secret = admin
            .add_participant(pb::AddParticipantRequest {
                name: format!("loadgen-{job}-{i}"),
                role: pb::Role::Worker.into(),
            })
            .await
            .map_err(crate::client::status_error)?
            .into_inner()
            .secret;
        let token = perft_proto::connect::Token::new(&secret).map_err(|e| CliError::Failed(e.to_string()))?;
        configs.push(ClientConfig {
            token: Some(token),
            ..config.clone()
        });
    }
    errln!("{workers} participants added, one per simulated worker");
    Ok(configs)
}

/// The latency log, sorted by sending time: `unix_ms micros` per line.
fn write_log(path: &std::path::Path, log: &mut [(u64, u64)]) -> Result<(), CliError> {
    log.sort_unstable();
    let cannot = |e: std::io::Error| {
        CliError::Failed(format!("cannot write the latency log '{}': {e}", path.display()))
    };
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).map_err(cannot)?);
    for (sent, micros) in log.iter() {
        writeln!(out, "{sent} {micros}").map_err(cannot)?;
    }
    out.flush().map_err(cannot)
}
