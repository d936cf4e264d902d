//! The client verbs: submit, watch, divide, list, status, cancel. Each
//! reads its arguments, makes its calls through `perft-client` and
//! renders what comes back.

use perft_client::{Client, Disagreement, Divide, Job, Progress, Submission};
use perft_model::{JobId, JobState};

use crate::args::{
    CoordinatorArg, DivideArgs, HealthArgs, JobArgs, ListArgs, ProgressArgs, SubmitArgs, WatchArgs,
};
use crate::cluster::runtime;
use crate::error::CliError;
use crate::progress;
use crate::progress_display::Display;
use crate::report::{Report, ReportStats, Source};

/// A connection to the coordinator the arguments name.
pub async fn connect(coordinator: &CoordinatorArg) -> Result<Client, CliError> {
    Ok(Client::connect(&coordinator.client_config()?).await?)
}

/// A job id as the user typed it, or why it is none.
pub fn job_id(text: &str) -> Result<JobId, CliError> {
    JobId::parse(text).map_err(CliError::usage_from)
}

/// What `perft submit` asks for; refused here too, before anything is
/// sent, in the coordinator's words.
pub fn submission(args: &SubmitArgs) -> Result<Submission, CliError> {
    let tree = &args.tree;
    tree.game
        .resolve_convention(tree.convention)
        .map_err(CliError::usage_from)?;
    Ok(Submission {
        convention: tree.convention,
        position: tree.position.clone(),
        split_depth: args.split_depth,
        verify: args.verify,
        stats: args.stats,
        ..Submission::new(tree.game, tree.depth)
    })
}

pub fn submit(args: &SubmitArgs) -> Result<(), CliError> {
    let submission = submission(args)?;
    runtime()?.block_on(async {
        let client = connect(&args.coordinator).await?;
        let id = client.submit(&submission).await?;
        // The job exists now: its id must reach the user one way or another.
        outln!("{id}").map_err(|e| {
            CliError::failed_by(
                format!("job {id} was created, but its id could not be written: {e}"),
                e,
            )
        })
    })
}

/// Steps of the progress bar, which shows the part of the expected work done.
const PROGRESS_STEPS: u64 = 1000;

/// A followed job shown as the user asked: its status line on a bar, or
/// as a plain line every `--progress-every` seconds, or nothing.
#[derive(Debug)]
pub struct ProgressView(Display);

impl ProgressView {
    pub fn new(shown: ProgressArgs) -> ProgressView {
        ProgressView(Display::new(
            shown,
            "{spinner} [{elapsed_precise}] {bar:10} {wide_msg}",
        ))
    }

    /// Shows one step of following job `id`.
    pub fn show(&mut self, id: &JobId, step: &Progress) {
        match step {
            Progress::Update {
                job,
                pace,
                first_moves,
            } => {
                let status = progress::status_line(
                    job.work_done,
                    (job.units_done, job.units_total),
                    pace,
                    *first_moves,
                );
                let done = (job.work_done.clamp(0.0, 1.0) * PROGRESS_STEPS as f64) as u64;
                let line = format!("job {id}: {status}");
                self.0.show(done, PROGRESS_STEPS, Some(status), || line);
            }
            Progress::Reconnecting => self.0.say("the coordinator is unavailable; reconnecting"),
            Progress::Finished(_) => self.0.clear(),
        }
    }
}

/// Follows a job to its end across coordinator restarts, showing its
/// progress as `shown` asks; returns its last state.
pub async fn follow(client: &Client, id: &JobId, shown: ProgressArgs) -> Result<Job, CliError> {
    let mut view = ProgressView::new(shown);
    let mut following = client.follow(id, !shown.quiet);
    loop {
        match following.next().await {
            None => {
                return Err(CliError::failed(format!(
                    "the coordinator sent nothing about job {id}"
                )));
            }
            Some(Err(e)) => return Err(e.into()),
            Some(Ok(Progress::Finished(job))) => return Ok(job),
            Some(Ok(step)) => view.show(id, &step),
        }
    }
}

pub fn watch(args: &WatchArgs) -> Result<(), CliError> {
    let id = job_id(&args.job.job)?;
    runtime()?.block_on(async {
        let client = connect(&args.job.coordinator).await?;
        let job = follow(&client, &id, args.progress).await?;
        let state = job.state.name();
        match (job.state, &job.error) {
            (JobState::Done, _) => {
                outln!(
                    "job {} done: {} leaves in {:.3} s ({:.0} leaves/s)",
                    job.id,
                    job.leaves_done,
                    job.seconds,
                    job.leaves_per_second()
                )?;
                Ok(())
            }
            (_, None) => Err(CliError::failed(format!("job {} {state}", job.id))),
            (_, Some(error)) => Err(CliError::failed(format!("job {} {state}: {error}", job.id))),
        }
    })
}

/// The divide table of a job as a report `perft run` would print.
pub async fn fetch_report(client: &Client, id: &JobId) -> Result<Report, CliError> {
    let Divide { job, lines, total } = client.divide(id).await?;
    let game = job.game;
    let mut divide: Vec<_> = lines
        .into_iter()
        .map(|line| (line.first_move, line.count))
        .collect();
    if game.facts().sort_divide {
        divide.sort_by(|a, b| a.0.cmp(&b.0));
    }
    let stats = job.stats.then(|| ReportStats {
        kinds: game.fns().stats_kinds(),
        total: total.kinds().to_vec(),
        per_move: divide.iter().map(|(_, count)| count.kinds().to_vec()).collect(),
    });
    Ok(Report {
        game: game.name(),
        convention: game
            .resolve_convention(job.convention)
            .map_err(|e| CliError::failed_by(format!("coordinator sent {e}"), e))?,
        reports_higher: game.reports_higher(),
        position: job.position.clone(),
        depth: job.depth,
        total: total.leaves,
        divide: divide.into_iter().map(|(mv, count)| (mv, count.leaves)).collect(),
        stats,
        seconds: job.seconds,
        source: Source::Job {
            id: job.id.to_string(),
            state: job.state.name().to_owned(),
        },
    })
}

pub fn divide(args: &DivideArgs) -> Result<(), CliError> {
    let id = job_id(&args.job)?;
    runtime()?.block_on(async {
        let client = connect(&args.coordinator).await?;
        let report = fetch_report(&client, &id).await?;
        report.write(args.format, &mut std::io::stdout().lock())
    })
}

fn job_row(job: &Job) -> Vec<String> {
    vec![
        job.id.to_string(),
        game_with_convention(job),
        job.depth.to_string(),
        job.state.name().to_owned(),
        format!("{}/{}", job.units_done, job.units_total),
        job.leaves_done.to_string(),
        format!("{:.1}", job.seconds),
    ]
}

pub fn list(args: &ListArgs) -> Result<(), CliError> {
    runtime()?.block_on(async {
        let jobs = connect(&args.coordinator).await?.jobs().await?;
        let mut table = crate::output::table(["job", "game", "depth", "state", "units", "leaves", "seconds"]);
        for job in &jobs {
            table.add_row(job_row(job));
        }
        outln!("{table}")?;
        Ok(())
    })
}

/// The job's counting convention (unspecified: the game's default, `None`
/// for games without a choice).
fn job_convention(job: &Job) -> Option<perft_core::Convention> {
    job.game.resolve_convention(job.convention).ok().flatten()
}

/// The game with its convention, for lists: `reversi (oeis)`.
fn game_with_convention(job: &Job) -> String {
    match job_convention(job) {
        Some(convention) => format!("{} ({convention})", job.game),
        None => job.game.name().to_owned(),
    }
}

fn print_job(job: &Job, disagreements: &[Disagreement]) -> Result<(), CliError> {
    outln!("job: {}", job.id)?;
    outln!("game: {}", job.game)?;
    if let Some(convention) = job_convention(job) {
        outln!("convention: {convention}")?;
    }
    outln!("position: {}", job.position)?;
    outln!("depth: {}", job.depth)?;
    outln!("split depth: {}", job.split_depth)?;
    outln!("state: {}", job.state.name())?;
    if let Some(error) = &job.error {
        outln!("error: {error}")?;
    }
    outln!(
        "units: {}/{} ({} handed out again)",
        job.units_done,
        job.units_total,
        job.units_released
    )?;
    outln!("leaves so far: {}", job.leaves_done)?;
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
            .map(|v| format!("{} counted {}", v.worker, v.count.leaves.leaves))
            .collect();
        let decided = d.decided.as_ref().map_or("no majority".to_owned(), |count| {
            format!("took {}", count.leaves.leaves)
        });
        outln!(
            "disagreement: unit {} ({}): {}; {decided}",
            d.unit,
            d.position,
            votes.join(", ")
        )?;
    }
    Ok(())
}

/// Runs one call about `args.job` and prints the job it answers with.
fn job_verb(
    args: &JobArgs,
    call: impl AsyncFnOnce(&Client, &JobId) -> Result<Job, perft_client::ClientError>,
    print: impl FnOnce(&Job) -> Result<(), CliError>,
) -> Result<(), CliError> {
    let id = job_id(&args.job)?;
    runtime()?.block_on(async {
        let client = connect(&args.coordinator).await?;
        let job = call(&client, &id).await?;
        print(&job)
    })
}

pub fn status(args: &JobArgs) -> Result<(), CliError> {
    let id = job_id(&args.job)?;
    runtime()?.block_on(async {
        let client = connect(&args.coordinator).await?;
        let job = client.job(&id).await?;
        let disagreements = if job.disagreements > 0 {
            client.disagreements(&job).await?
        } else {
            Vec::new()
        };
        print_job(&job, &disagreements)
    })
}

pub fn cancel(args: &JobArgs) -> Result<(), CliError> {
    job_verb(
        args,
        async |client, id| client.cancel(id).await,
        |job| outln!("job {} {}", job.id, job.state.name()),
    )
}

/// `perft resume`: queues a failed job's open units again.
pub fn resume(args: &JobArgs) -> Result<(), CliError> {
    job_verb(
        args,
        async |client, id| client.resume(id).await,
        |job| {
            outln!(
                "job {} {}: {}/{} units counted",
                job.id,
                job.state.name(),
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
        async |client, id| client.delete(id).await,
        |job| outln!("job {} ({}) deleted", job.id, job.state.name()),
    )
}

/// `perft health`: the standard gRPC health check, as probes use it.
pub fn health(args: &HealthArgs) -> Result<(), CliError> {
    runtime()?.block_on(async {
        match connect(&args.coordinator).await?.health().await? {
            None => outln!("serving"),
            Some(status) => Err(CliError::failed(format!("coordinator not serving: {status}"))),
        }
    })
}
