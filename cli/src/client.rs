//! The client verbs: submit, watch, divide, list, status, cancel.

use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use indicatif::{ProgressBar, ProgressStyle};
use perft_core::GameKind;
use perft_proto as pb;
use perft_proto::connect::AuthChannel;
use perft_proto::perft_service_client::PerftServiceClient;
use tonic::{Code, Status};

use crate::args::{CoordinatorArg, DivideArgs, HealthArgs, JobArgs, ListArgs, SubmitArgs};
use crate::cluster::runtime;
use crate::error::CliError;
use crate::progress::{self, RateWindow, Sample};
use crate::report::{Report, ReportStats, Source};

/// A refused request is the user's to fix (exit 2); anything else is not.
pub fn status_error(status: Status) -> CliError {
    // A transport failure (TLS above all) names its cause in its sources.
    let message = if status.code() == Code::Unavailable || status.code() == Code::Unknown {
        crate::output::chain(&status)
    } else {
        status.message().replace('\n', " ")
    };
    match status.code() {
        Code::InvalidArgument
        | Code::NotFound
        | Code::FailedPrecondition
        | Code::Unimplemented
        | Code::Unauthenticated
        | Code::PermissionDenied
        | Code::AlreadyExists
        | Code::OutOfRange
        | Code::ResourceExhausted => CliError::Usage(message),
        Code::Unavailable => CliError::Failed(format!("coordinator unavailable: {message}")),
        code => CliError::Failed(format!("{code:?}: {message}")),
    }
}

/// A connection to the coordinator and its client config; a failure names
/// its cause (TLS above all).
pub(crate) async fn channel(
    coordinator: &CoordinatorArg,
) -> Result<(tonic::transport::Channel, perft_proto::connect::ClientConfig), CliError> {
    let config = coordinator.client_config()?;
    let endpoint = config.endpoint().map_err(|e| CliError::Usage(e.to_string()))?;
    let channel = endpoint.connect().await.map_err(|e| {
        CliError::Failed(format!(
            "cannot reach the coordinator at {}: {}",
            config.url,
            crate::output::chain(&e)
        ))
    })?;
    Ok((channel, config))
}

pub async fn connect(coordinator: &CoordinatorArg) -> Result<PerftServiceClient<AuthChannel>, CliError> {
    let (channel, config) = channel(coordinator).await?;
    Ok(PerftServiceClient::with_interceptor(
        channel,
        config.interceptor(),
    ))
}

/// A job state as users read it.
pub fn state_name(job: &pb::Job) -> &'static str {
    match job.state() {
        pb::JobState::Queued => "queued",
        pb::JobState::Running => "running",
        pb::JobState::Done => "done",
        pb::JobState::Failed => "failed",
        pb::JobState::Cancelled => "cancelled",
        pb::JobState::Unspecified => "unknown",
    }
}

fn leaves_per_second(job: &pb::Job) -> f64 {
    let leaves = pb::count(job.leaves_done) as f64;
    if job.seconds > 0.0 {
        leaves / job.seconds
    } else {
        0.0
    }
}

/// Submits and returns the job id.
pub async fn submit_job(
    client: &mut PerftServiceClient<AuthChannel>,
    args: &SubmitArgs,
) -> Result<String, CliError> {
    // Refused here too, before anything is sent, in the same words.
    args.game
        .resolve_convention(args.convention)
        .map_err(|e| CliError::Usage(e.to_string()))?;
    let request = pb::SubmitJobRequest {
        game: pb::Game::from_kind(args.game).into(),
        position: args.position.clone().unwrap_or_default(),
        depth: args.depth,
        split_depth: args.split_depth.unwrap_or(0),
        verify: args.verify,
        convention: pb::Convention::from_core(args.convention).into(),
        units: Vec::new(),
        stats: args.stats,
    };
    Ok(client
        .submit_job(request)
        .await
        .map_err(status_error)?
        .into_inner()
        .job_id)
}

pub fn submit(args: &SubmitArgs) -> Result<(), CliError> {
    runtime()?.block_on(async {
        let mut client = connect(&args.coordinator).await?;
        let id = submit_job(&mut client, args).await?;
        // The job exists now: its id must reach the user one way or another.
        outln!("{id}").map_err(|e| {
            CliError::Failed(format!(
                "job {id} was created, but its id could not be written: {e}"
            ))
        })
    })
}

/// Whether a failed call may succeed later: the coordinator is away
/// (restarting, or refusing writes while its disk is full).
fn transient(status: &Status) -> bool {
    matches!(status.code(), Code::Unavailable | Code::Unknown | Code::Cancelled)
}

/// Steps of the progress bar, which shows the part of the expected work done.
const PROGRESS_STEPS: u64 = 1000;

/// How often `perft watch` asks for the divide table, for the first moves
/// finished: often enough to follow, rarely enough to cost nothing.
const DIVIDE_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

/// The first moves finished of job `id`, or `None` when the coordinator
/// did not answer (the line keeps the last value then).
async fn first_moves_of(client: &mut PerftServiceClient<AuthChannel>, id: &str) -> Option<(usize, usize)> {
    let request = pb::GetDivideRequest {
        job_id: id.to_owned(),
    };
    let table = client.get_divide(request).await.ok()?.into_inner();
    Some(progress::first_moves_finished(
        table.entries.iter().map(|e| (e.units_done, e.units_total)),
    ))
}

/// Follows a job to its end across coordinator restarts (reconnecting with
/// backoff); returns its last state.
pub async fn follow(
    client: &mut PerftServiceClient<AuthChannel>,
    id: &str,
    show: bool,
) -> Result<pb::Job, CliError> {
    let bar = if show {
        ProgressBar::new(PROGRESS_STEPS)
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:10} {wide_msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let mut last: Option<pb::Job> = None;
    let mut window = RateWindow::new(progress::WINDOW_SECONDS);
    let mut first_moves: Option<(usize, usize)> = None;
    let mut divide_asked: Option<tokio::time::Instant> = None;
    let mut wait = std::time::Duration::from_millis(200);
    loop {
        let request = pb::WatchJobRequest {
            job_id: id.to_owned(),
        };
        let outcome = match client.watch_job(request).await {
            Ok(stream) => {
                let mut stream = stream.into_inner();
                loop {
                    match stream.message().await {
                        Ok(Some(job)) => {
                            wait = std::time::Duration::from_millis(200);
                            window.record(Sample {
                                seconds: job.seconds,
                                work_done: job.work_done,
                                leaves: pb::count(job.leaves_done) as f64,
                            });
                            if show && divide_asked.is_none_or(|at| at.elapsed() >= DIVIDE_EVERY) {
                                divide_asked = Some(tokio::time::Instant::now());
                                first_moves = first_moves_of(client, id).await.or(first_moves);
                            }
                            bar.set_position((job.work_done.clamp(0.0, 1.0) * PROGRESS_STEPS as f64) as u64);
                            bar.set_message(progress::status_line(
                                &window,
                                (job.units_done, job.units_total),
                                first_moves,
                            ));
                            last = Some(job);
                        }
                        Ok(None) => break Ok(()),
                        Err(status) => break Err(status),
                    }
                }
            }
            Err(status) => Err(status),
        };
        let finished = last
            .as_ref()
            .is_some_and(|job| job.state() != pb::JobState::Queued && job.state() != pb::JobState::Running);
        match outcome {
            Ok(()) if finished => break,
            Err(status) if !transient(&status) => {
                bar.finish_and_clear();
                return Err(status_error(status));
            }
            // The stream ended early or the coordinator went away: it
            // restarts on the same address, and the job with it.
            _ => {
                bar.suspend(|| {
                    errln!("the coordinator is unavailable; reconnecting");
                });
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(std::time::Duration::from_secs(5));
            }
        }
    }
    bar.finish_and_clear();
    last.ok_or_else(|| CliError::Failed(format!("the coordinator sent nothing about job {id}")))
}

pub fn watch(args: &JobArgs) -> Result<(), CliError> {
    runtime()?.block_on(async {
        let mut client = connect(&args.coordinator).await?;
        let job = follow(&mut client, &args.job, true).await?;
        let state = state_name(&job);
        match job.state() {
            pb::JobState::Done => {
                outln!(
                    "job {} done: {} leaves in {:.3} s ({:.0} leaves/s)",
                    job.job_id,
                    pb::count(job.leaves_done),
                    job.seconds,
                    leaves_per_second(&job)
                )?;
                Ok(())
            }
            _ if job.error.is_empty() => Err(CliError::Failed(format!("job {} {state}", job.job_id))),
            _ => Err(CliError::Failed(format!(
                "job {} {state}: {}",
                job.job_id, job.error
            ))),
        }
    })
}

/// The divide table of a job as a report `perft run` would print.
pub async fn fetch_report(
    client: &mut PerftServiceClient<AuthChannel>,
    id: &str,
) -> Result<Report, CliError> {
    let table = client
        .get_divide(pb::GetDivideRequest {
            job_id: id.to_owned(),
        })
        .await
        .map_err(status_error)?
        .into_inner();
    let job = table.job.unwrap_or_default();
    let game: GameKind =
        pb::game_kind(job.game).map_err(|e| CliError::Failed(format!("coordinator sent {e}")))?;
    let total = table.total.unwrap_or_default();
    let mut divide: Vec<_> = table
        .entries
        .into_iter()
        .map(|e| (e.r#move, e.leaves.unwrap_or_default()))
        .collect();
    if game.facts().sort_divide {
        divide.sort_by(|a, b| a.0.cmp(&b.0));
    }
    let stats = job_stats(game, &job, &total, &divide)?;
    Ok(Report {
        game: game.name(),
        convention: job_convention(&job)?,
        reports_higher: game.reports_higher(),
        position: job.position.clone(),
        depth: job.depth,
        total: total.to_core(),
        divide: divide
            .into_iter()
            .map(|(mv, count)| (mv, count.to_core()))
            .collect(),
        stats,
        seconds: job.seconds,
        source: Source::Job {
            id: job.job_id.clone(),
            state: state_name(&job).to_owned(),
        },
    })
}

/// A statistics job's leaves by kind as a report holds them; `None` for a
/// plain job. Counts with other kinds than the game's are refused: a
/// coordinator of another build.
fn job_stats(
    game: GameKind,
    job: &pb::Job,
    total: &pb::Leaves,
    divide: &[(String, pb::Leaves)],
) -> Result<Option<ReportStats>, CliError> {
    if !job.stats {
        return Ok(None);
    }
    let kinds = game.fns().stats_kinds();
    let counts = |count: &pb::Leaves| {
        let counts = count.kind_counts();
        if counts.len() == kinds.len() {
            Ok(counts)
        } else {
            Err(CliError::Failed(format!(
                "coordinator sent {} kinds of leaves for a {game} job, which has {}",
                counts.len(),
                kinds.len()
            )))
        }
    };
    Ok(Some(ReportStats {
        kinds,
        total: counts(total)?,
        per_move: divide
            .iter()
            .map(|(_, count)| counts(count))
            .collect::<Result<_, _>>()?,
    }))
}

pub fn divide(args: &DivideArgs) -> Result<(), CliError> {
    runtime()?.block_on(async {
        let mut client = connect(&args.coordinator).await?;
        let report = fetch_report(&mut client, &args.job).await?;
        report.write(args.format, &mut std::io::stdout().lock())
    })
}

fn job_row(job: &pb::Job) -> Vec<String> {
    vec![
        job.job_id.clone(),
        game_with_convention(job),
        job.depth.to_string(),
        state_name(job).to_owned(),
        format!("{}/{}", job.units_done, job.units_total),
        pb::count(job.leaves_done).to_string(),
        format!("{:.1}", job.seconds),
    ]
}

pub fn list(args: &ListArgs) -> Result<(), CliError> {
    runtime()?.block_on(async {
        let mut client = connect(&args.coordinator).await?;
        let mut jobs = Vec::new();
        let mut page_token = String::new();
        loop {
            let page = client
                .list_jobs(pb::ListJobsRequest {
                    page_size: 1000,
                    page_token,
                })
                .await
                .map_err(status_error)?
                .into_inner();
            jobs.extend(page.jobs);
            if page.next_page_token.is_empty() {
                break;
            }
            page_token = page.next_page_token;
        }
        let mut table = Table::new();
        table
            .load_preset(UTF8_FULL_CONDENSED)
            .set_header(["job", "game", "depth", "state", "units", "leaves", "seconds"]);
        for job in &jobs {
            table.add_row(job_row(job));
        }
        outln!("{table}")?;
        Ok(())
    })
}

/// The job's game as people name it.
fn game_name(job: &pb::Job) -> String {
    pb::game_kind(job.game).map_or_else(|e| e.to_string(), |g| g.name().to_owned())
}

/// The job's counting convention as the coordinator sent it (unspecified:
/// the game's default, `None` for games without a choice).
fn job_convention(job: &pb::Job) -> Result<Option<perft_core::Convention>, CliError> {
    let game = pb::game_kind(job.game).map_err(|e| CliError::Failed(format!("coordinator sent {e}")))?;
    pb::convention(job.convention)
        .map_err(|e| e.to_string())
        .and_then(|c| game.resolve_convention(c).map_err(|e| e.to_string()))
        .map_err(|e| CliError::Failed(format!("coordinator sent {e}")))
}

/// The game with its convention, for lists: `reversi (oeis)`.
fn game_with_convention(job: &pb::Job) -> String {
    match job_convention(job) {
        Ok(Some(convention)) => format!("{} ({convention})", game_name(job)),
        _ => game_name(job),
    }
}

/// Every disagreement of a job, page by page.
async fn all_disagreements(
    client: &mut PerftServiceClient<AuthChannel>,
    job_id: &str,
) -> Result<Vec<pb::Disagreement>, CliError> {
    let mut found = Vec::new();
    let mut page_token = String::new();
    loop {
        let page = client
            .get_disagreements(pb::GetDisagreementsRequest {
                job_id: job_id.to_owned(),
                page_size: 1000,
                page_token,
            })
            .await
            .map_err(status_error)?
            .into_inner();
        found.extend(page.disagreements);
        if page.next_page_token.is_empty() {
            return Ok(found);
        }
        page_token = page.next_page_token;
    }
}

fn print_job(job: &pb::Job, disagreements: &[pb::Disagreement]) -> Result<(), CliError> {
    outln!("job: {}", job.job_id)?;
    outln!("game: {}", game_name(job))?;
    if let Some(convention) = job_convention(job)? {
        outln!("convention: {convention}")?;
    }
    outln!("position: {}", job.position)?;
    outln!("depth: {}", job.depth)?;
    outln!("split depth: {}", job.split_depth)?;
    outln!("state: {}", state_name(job))?;
    if !job.error.is_empty() {
        outln!("error: {}", job.error)?;
    }
    outln!(
        "units: {}/{} ({} handed out again)",
        job.units_done,
        job.units_total,
        job.units_released
    )?;
    outln!("leaves so far: {}", pb::count(job.leaves_done))?;
    outln!("time: {:.3} s", job.seconds)?;
    if job.verify {
        outln!(
            "verified: every unit counted for two participants; {} disagreement(s)",
            job.disagreements
        )?;
    }
    for d in disagreements {
        let votes: Vec<String> = d
            .votes
            .iter()
            .map(|v| {
                format!(
                    "{} counted {}",
                    v.worker,
                    pb::count(v.leaves.as_ref().and_then(|l| l.leaves))
                )
            })
            .collect();
        let decided = d.decided.as_ref().map_or("no majority".to_owned(), |l| {
            format!("took {}", l.to_core().leaves)
        });
        outln!(
            "disagreement: unit {} ({}): {}; {decided}",
            d.unit_id,
            d.position,
            votes.join(", ")
        )?;
    }
    Ok(())
}

/// Runs one call about `args.job` and prints the job it answers with.
fn job_verb(
    args: &JobArgs,
    call: impl AsyncFnOnce(
        &mut PerftServiceClient<AuthChannel>,
        String,
    ) -> Result<tonic::Response<pb::Job>, Status>,
    print: impl FnOnce(&pb::Job) -> Result<(), CliError>,
) -> Result<(), CliError> {
    runtime()?.block_on(async {
        let mut client = connect(&args.coordinator).await?;
        let job = call(&mut client, args.job.clone())
            .await
            .map_err(status_error)?
            .into_inner();
        print(&job)
    })
}

pub fn status(args: &JobArgs) -> Result<(), CliError> {
    runtime()?.block_on(async {
        let mut client = connect(&args.coordinator).await?;
        let job = client
            .get_job(pb::GetJobRequest {
                job_id: args.job.clone(),
            })
            .await
            .map_err(status_error)?
            .into_inner();
        let disagreements = if job.disagreements > 0 {
            all_disagreements(&mut client, &job.job_id).await?
        } else {
            Vec::new()
        };
        print_job(&job, &disagreements)
    })
}

pub fn cancel(args: &JobArgs) -> Result<(), CliError> {
    job_verb(
        args,
        async |client, job_id| client.cancel_job(pb::CancelJobRequest { job_id }).await,
        |job| outln!("job {} {}", job.job_id, state_name(job)),
    )
}

/// `perft resume`: queues a failed job's open units again.
pub fn resume(args: &JobArgs) -> Result<(), CliError> {
    job_verb(
        args,
        async |client, job_id| client.resume_job(pb::ResumeJobRequest { job_id }).await,
        |job| {
            outln!(
                "job {} {}: {}/{} units counted",
                job.job_id,
                state_name(job),
                job.units_done,
                job.units_total
            )
        },
    )
}

/// `perft delete`: removes a finished job entirely.
pub fn delete(args: &JobArgs) -> Result<(), CliError> {
    job_verb(
        args,
        async |client, job_id| client.delete_job(pb::DeleteJobRequest { job_id }).await,
        |job| outln!("job {} ({}) deleted", job.job_id, state_name(job)),
    )
}

/// `perft health`: the standard gRPC health check, as probes use it.
pub fn health(args: &HealthArgs) -> Result<(), CliError> {
    use tonic_health::pb::health_check_response::ServingStatus;
    use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};
    runtime()?.block_on(async {
        let (channel, _) = channel(&args.coordinator).await?;
        let reply = HealthClient::new(channel)
            .check(HealthCheckRequest {
                service: String::new(),
            })
            .await
            .map_err(status_error)?
            .into_inner();
        match reply.status() {
            ServingStatus::Serving => {
                outln!("serving")?;
                Ok(())
            }
            status => Err(CliError::Failed(format!(
                "coordinator not serving: {}",
                status.as_str_name()
            ))),
        }
    })
}
