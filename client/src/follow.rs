//! Following a job to its end as a stream of typed progress, across
//! coordinator restarts: the stream reconnects with backoff and says so,
//! and ends with the job's last state or the error that stopped it.

use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use perft_model::JobId;
use perft_proto as pb;
use tokio::sync::mpsc;
use tokio_stream::Stream;

use crate::Client;
use crate::error::{ClientError, ReplyError};
use crate::job::Job;
use crate::rate::{Pace, RateWindow, Sample, WINDOW_SECONDS};

/// How often a follow that wants first moves asks for the divide table:
/// often enough to follow, rarely enough to cost nothing.
const DIVIDE_EVERY: Duration = Duration::from_secs(5);

/// The longest wait between reconnections.
const MOST_WAIT: Duration = Duration::from_secs(5);

/// One step of a followed job.
#[derive(Clone, Debug, PartialEq)]
pub enum Progress {
    /// The job as it stands, its pace over the last steps, and its first
    /// moves finished (of all) when they were asked for and known.
    Update {
        job: Job,
        pace: Pace,
        first_moves: Option<(usize, usize)>,
    },
    /// The coordinator went away or ended the stream early; the follow
    /// waits and connects again (it restarts on the same address).
    Reconnecting,
    /// The job reached a final state: the stream's last item.
    Finished(Job),
}

/// The stream [`Client::follow`] returns: [`Progress`] items, the last a
/// [`Progress::Finished`] or an error. Dropping it stops the follow.
#[derive(Debug)]
pub struct Following(mpsc::Receiver<Result<Progress, ClientError>>);

impl Stream for Following {
    type Item = Result<Progress, ClientError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.0.poll_recv(cx)
    }
}

impl Following {
    /// The next step, or `None` once the stream has ended.
    pub async fn next(&mut self) -> Option<Result<Progress, ClientError>> {
        self.0.recv().await
    }

    /// Waits for the end, ignoring the steps: the job's final state.
    pub async fn finished(mut self) -> Result<Job, ClientError> {
        while let Some(step) = self.next().await {
            if let Progress::Finished(job) = step? {
                return Ok(job);
            }
        }
        Err(ClientError::Status(tonic::Status::cancelled(
            "the follow stopped",
        )))
    }
}

pub(crate) fn start(client: Client, id: JobId, first_moves: bool) -> Following {
    let (sender, receiver) = mpsc::channel(16);
    tokio::spawn(async move {
        let outcome = run(client, &id, first_moves, &sender).await;
        let _ = sender.send(outcome.map(Progress::Finished)).await;
    });
    Following(receiver)
}

/// Follows until the job is final; each step goes to `sender`. Stops
/// early (with an error nobody reads) once the receiver is dropped.
async fn run(
    mut client: Client,
    id: &JobId,
    first_moves: bool,
    sender: &mpsc::Sender<Result<Progress, ClientError>>,
) -> Result<Job, ClientError> {
    let mut last: Option<Job> = None;
    let mut moves: Option<(usize, usize)> = None;
    let mut divide_asked: Option<tokio::time::Instant> = None;
    let mut window = RateWindow::new(WINDOW_SECONDS);
    let mut wait = Duration::from_millis(200);
    let gone = || ClientError::Status(tonic::Status::cancelled("nobody follows the job any more"));
    loop {
        let request = pb::WatchJobRequest {
            job_id: id.as_str().to_owned(),
        };
        let outcome: Result<(), ClientError> = match client.jobs.watch_job(request).await {
            Ok(stream) => {
                let mut stream = stream.into_inner();
                loop {
                    // A follow nobody reads any more stops now, not at the
                    // job's next change (which may be hours away).
                    let message = tokio::select! {
                        message = stream.message() => message,
                        () = sender.closed() => return Err(gone()),
                    };
                    match message {
                        Ok(Some(job)) => {
                            wait = Duration::from_millis(200);
                            let job = Job::try_from(job)?;
                            if first_moves && divide_asked.is_none_or(|at| at.elapsed() >= DIVIDE_EVERY) {
                                divide_asked = Some(tokio::time::Instant::now());
                                // Unanswered, the line keeps the last value.
                                if let Ok(divide) = client.divide(id).await {
                                    moves = Some(divide.first_moves_finished());
                                }
                            }
                            window.record(Sample {
                                seconds: job.seconds,
                                work_done: job.work_done,
                                leaves: job.leaves_done as f64,
                            });
                            let update = Progress::Update {
                                job: job.clone(),
                                pace: window.pace(),
                                first_moves: moves,
                            };
                            sender.send(Ok(update)).await.map_err(|_| gone())?;
                            last = Some(job);
                        }
                        Ok(None) => break Ok(()),
                        Err(status) => break Err(status.into()),
                    }
                }
            }
            Err(status) => Err(status.into()),
        };
        let finished = last.as_ref().is_some_and(|job| job.state.is_final());
        match outcome {
            Ok(()) if finished => break,
            Err(e) if !e.is_transient() => return Err(e),
            _ => {
                sender
                    .send(Ok(Progress::Reconnecting))
                    .await
                    .map_err(|_| gone())?;
                tokio::time::sleep(wait).await;
                wait = (wait * 2).min(MOST_WAIT);
            }
        }
    }
    last.ok_or_else(|| ReplyError::Nothing(id.clone()).into())
}

/// One `WatchJob` stream as it comes, with no reconnection: for callers
/// that hold a watch open rather than follow a job (a budget's
/// measurement). [`Client::follow`] is the one that survives restarts.
#[derive(Debug)]
pub struct Watch(tonic::Streaming<pb::Job>);

impl Watch {
    pub(crate) async fn open(client: &Client, id: &JobId) -> Result<Watch, ClientError> {
        let request = pb::WatchJobRequest {
            job_id: id.as_str().to_owned(),
        };
        Ok(Watch(client.jobs.clone().watch_job(request).await?.into_inner()))
    }

    /// The job's next state; `None` once the coordinator ends the stream.
    pub async fn next(&mut self) -> Result<Option<Job>, ClientError> {
        match self.0.message().await? {
            Some(job) => Ok(Some(Job::try_from(job)?)),
            None => Ok(None),
        }
    }
}
