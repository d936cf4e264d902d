//! Deep Perft's client: reach a coordinator, submit a perft job, follow it
//! to its end, read its divide table, its units' counts and its
//! certificate.
//!
//! It owns the calls a user's program makes to a coordinator: the
//! connection (address, TLS, credential, protocol header), the health
//! check, each call, the
//! paging of long answers and the checks on what comes back. It returns
//! the vocabulary's types (`perft-model`) and its own job views, and
//! prints nothing: progress is a typed stream ([`Following`]) for the
//! caller to render. It must not render, read arguments, or reach into
//! the coordinator's internals; the only files it reads are those a
//! caller names as a credential or a CA certificate ([`credentials`]).
//!
//! **Stability.** [`Client`]'s methods, [`Submission`], [`Job`],
//! [`Divide`], [`Progress`] and [`ClientError::is_request`] are what this
//! crate promises to keep: fields may be added, none removed or changed in
//! meaning, within a protocol version (`perft_proto::PROTOCOL_VERSION`).
//!
//! ```
//! # use perft_client::{Client, Progress, Submission};
//! # use perft_core::GameKind;
//! # use perft_model::JobState;
//! # #[tokio::main(flavor = "multi_thread", worker_threads = 2)]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! # let opened = perft_coordinator::open(Default::default(), dir.path())?;
//! # let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
//! # let url = format!("http://{}", listener.local_addr()?);
//! # tokio::spawn(perft_coordinator::serve(opened, listener, None, std::future::pending()));
//! # let config = perft_proto::connect::ClientConfig { url: url.clone(), token: None, tls_ca: None };
//! # // A worker in a few lines: lease, count with perft-core, report.
//! # let counter = Client::connect(&config).await?;
//! # tokio::spawn(async move {
//! #     use perft_core::{Checkers, Game, perft};
//! #     use perft_client::{JobReport, UnitResult};
//! #     let mut session = counter.register_worker("doc", 1, None).await?;
//! #     loop {
//! #         let leased = session.lease(64).await?;
//! #         let mut reports = Vec::new();
//! #         for job in leased.jobs {
//! #             let results = job.units.into_iter().map(|unit| UnitResult {
//! #                 count: perft_model::Count::plain(perft(&Checkers::unpack(&unit.position).unwrap(), job.depth)),
//! #                 unit: unit.unit, epoch: unit.epoch, tag: unit.tag, cpu_seconds: 0.0,
//! #             }).collect();
//! #             reports.push(JobReport::counted(job.job, results));
//! #         }
//! #         if reports.is_empty() { tokio::time::sleep(leased.retry_after.max(std::time::Duration::from_millis(20))).await; }
//! #         else { session.report(reports).await?; }
//! #     }
//! #     #[allow(unreachable_code)] Ok::<(), perft_client::ClientError>(())
//! # });
//! // A coordinator runs at `url`, and a worker with it.
//! let client = Client::connect(&config).await?;
//! let id = client.submit(&Submission::new(GameKind::Checkers, 6)).await?;
//! let mut progress = client.follow(&id, false);
//! let job = loop {
//!     match progress.next().await.expect("a follow ends with its job")? {
//!         Progress::Update { job, .. } => eprintln!("{}/{} units", job.units_done, job.units_total),
//!         Progress::Reconnecting => eprintln!("reconnecting"),
//!         Progress::Finished(job) => break job,
//!     }
//! };
//! assert_eq!(job.state, JobState::Done);
//! // Published: English draughts perft(6) is 36,768.
//! let divide = client.divide(&id).await?;
//! assert_eq!(divide.total.leaves.leaves, 36_768);
//! assert_eq!(divide.lines.len(), 7);
//! # Ok(())
//! # }
//! ```

mod certificate;
pub mod credentials;
mod error;
mod follow;
mod job;
mod participants;
mod positions;
pub mod rate;
mod worker_calls;

pub use certificate::MAX_CERTIFICATE_BYTES;
pub use credentials::CredentialError;
pub use error::{ClientError, ReplyError};
pub use follow::{Following, Progress, Watch};
pub use job::{Backup, Disagreement, Divide, Job, Submission, Vote};
pub use participants::{AddedParticipant, ParticipantSecret};
pub use perft_model::{BudgetLine, DivideLine, Participant, WorkerFigures};
pub use perft_proto::connect::{ClientConfig, Token};
pub use positions::{PositionCounts, Positions, PositionsStep};
pub use rate::Pace;
pub use worker_calls::{
    JobReport, Leased, LeasedJob, LeasedUnit, Reported, UnitRef, UnitResult, UnreadableJob, WorkerSession,
};

use perft_core::GameKind;
use perft_model::{Count, JobId};
use perft_proto as pb;
use perft_proto::connect::{AddToken, AuthChannel};
use perft_proto::participant_service_client::ParticipantServiceClient;
use perft_proto::perft_service_client::PerftServiceClient;
use perft_proto::worker_service_client::WorkerServiceClient;

/// Answers asked for at once when a list is read page by page.
const PAGE: u32 = 1000;

/// A connection to one coordinator, with the caller's credential. Cheap to
/// clone: clones share the connection.
#[derive(Clone, Debug)]
pub struct Client {
    config: ClientConfig,
    channel: tonic::transport::Channel,
    pub(crate) jobs: PerftServiceClient<AuthChannel>,
    pub(crate) participants: ParticipantServiceClient<AuthChannel>,
    pub(crate) workers: WorkerServiceClient<AuthChannel>,
}

impl Client {
    /// Connects to the coordinator `config` names; a failure says why
    /// (TLS above all, in its sources).
    pub async fn connect(config: &ClientConfig) -> Result<Client, ClientError> {
        let (endpoint, token) = config.connection()?;
        let channel = endpoint
            .connect()
            .await
            .map_err(|source| ClientError::Unreachable {
                url: config.url.clone(),
                source,
            })?;
        Ok(Client::on(config, channel, token))
    }

    /// A client whose connection is made at its first call and again
    /// whenever it is lost: for long-lived callers such as workers.
    pub fn lazy(config: &ClientConfig) -> Result<Client, ClientError> {
        let (endpoint, token) = config.connection()?;
        Ok(Client::on(config, endpoint.connect_lazy(), token))
    }

    fn on(config: &ClientConfig, channel: tonic::transport::Channel, token: AddToken) -> Client {
        Client {
            jobs: PerftServiceClient::with_interceptor(channel.clone(), token.clone()),
            participants: ParticipantServiceClient::with_interceptor(channel.clone(), token.clone()),
            workers: WorkerServiceClient::with_interceptor(channel.clone(), token),
            config: config.clone(),
            channel,
        }
    }

    /// The configuration this client connected with.
    pub fn config(&self) -> &ClientConfig {
        &self.config
    }

    /// The standard gRPC health check, as probes use it: `Ok(None)` when
    /// the coordinator serves, else the status it names.
    pub async fn health(&self) -> Result<Option<&'static str>, ClientError> {
        use tonic_health::pb::health_check_response::ServingStatus;
        use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};
        let reply = HealthClient::new(self.channel.clone())
            .check(HealthCheckRequest {
                service: String::new(),
            })
            .await?
            .into_inner();
        Ok(match reply.status() {
            ServingStatus::Serving => None,
            status => Some(status.as_str_name()),
        })
    }

    /// Submits a job; its id.
    pub async fn submit(&self, job: &Submission) -> Result<JobId, ClientError> {
        let reply = self.jobs.clone().submit_job(job.request()).await?.into_inner();
        Ok(JobId::parse(&reply.job_id).map_err(ReplyError::from)?)
    }

    /// The job as it stands.
    pub async fn job(&self, id: &JobId) -> Result<Job, ClientError> {
        let job = self
            .jobs
            .clone()
            .get_job(pb::GetJobRequest { job_id: id_text(id) })
            .await?;
        Ok(Job::try_from(job.into_inner())?)
    }

    /// Every job the caller may read, oldest first.
    pub async fn jobs(&self) -> Result<Vec<Job>, ClientError> {
        let mut jobs = Vec::new();
        let mut page_token = String::new();
        loop {
            let page = self
                .jobs
                .clone()
                .list_jobs(pb::ListJobsRequest {
                    page_size: PAGE,
                    page_token,
                })
                .await?
                .into_inner();
            for job in page.jobs {
                jobs.push(Job::try_from(job)?);
            }
            if page.next_page_token.is_empty() {
                return Ok(jobs);
            }
            page_token = page.next_page_token;
        }
    }

    /// Cancels a job; the job as it ends.
    pub async fn cancel(&self, id: &JobId) -> Result<Job, ClientError> {
        let job = self
            .jobs
            .clone()
            .cancel_job(pb::CancelJobRequest { job_id: id_text(id) })
            .await?;
        Ok(Job::try_from(job.into_inner())?)
    }

    /// Queues a failed job's open units again.
    pub async fn resume(&self, id: &JobId) -> Result<Job, ClientError> {
        let job = self
            .jobs
            .clone()
            .resume_job(pb::ResumeJobRequest { job_id: id_text(id) })
            .await?;
        Ok(Job::try_from(job.into_inner())?)
    }

    /// Removes a finished job entirely; the job as it was.
    pub async fn delete(&self, id: &JobId) -> Result<Job, ClientError> {
        let job = self
            .jobs
            .clone()
            .delete_job(pb::DeleteJobRequest { job_id: id_text(id) })
            .await?;
        Ok(Job::try_from(job.into_inner())?)
    }

    /// Follows a job to its final state, across coordinator restarts; with
    /// `first_moves`, each update also says how many first moves are
    /// finished (read from the divide table every few seconds).
    pub fn follow(&self, id: &JobId, first_moves: bool) -> Following {
        follow::start(self.clone(), id.clone(), first_moves)
    }

    /// Opens one watch of the job: its states as the coordinator sends
    /// them, until it ends the stream or the connection drops.
    pub async fn watch(&self, id: &JobId) -> Result<Watch, ClientError> {
        Watch::open(self, id).await
    }

    /// The job's divide table, as far as it is counted.
    pub async fn divide(&self, id: &JobId) -> Result<Divide, ClientError> {
        let table = self
            .jobs
            .clone()
            .get_divide(pb::GetDivideRequest { job_id: id_text(id) })
            .await?;
        Ok(Divide::try_from(table.into_inner())?)
    }

    /// Every disagreement of verified job `job`, its counts checked
    /// against the job's kinds.
    pub async fn disagreements(&self, job: &Job) -> Result<Vec<Disagreement>, ClientError> {
        let mut found = Vec::new();
        let mut page_token = String::new();
        loop {
            let page = self
                .jobs
                .clone()
                .get_disagreements(pb::GetDisagreementsRequest {
                    job_id: id_text(&job.id),
                    page_size: PAGE,
                    page_token,
                })
                .await?
                .into_inner();
            for disagreement in page.disagreements {
                found.push(Disagreement::read(disagreement, job)?);
            }
            if page.next_page_token.is_empty() {
                return Ok(found);
            }
            page_token = page.next_page_token;
        }
    }

    /// The counts of done job `id`'s `units` units (a job of explicit
    /// units of `game`), in order, each with `kinds` kinds.
    pub async fn unit_counts(
        &self,
        id: &JobId,
        game: GameKind,
        units: usize,
        kinds: usize,
    ) -> Result<Vec<Count>, ClientError> {
        let mut counts = Vec::with_capacity(units);
        while counts.len() < units {
            let page = self
                .jobs
                .clone()
                .get_unit_counts(pb::GetUnitCountsRequest {
                    job_id: id_text(id),
                    start: counts.len() as u64,
                    page_size: 0,
                })
                .await?
                .into_inner();
            if page.units_total != units as u64 || page.counts.is_empty() {
                return Err(ReplyError::UnitCounts(format!(
                    "the coordinator answers job {id} has {} units and sends {} counts from unit {}; {units} were submitted",
                    page.units_total,
                    page.counts.len(),
                    counts.len()
                ))
                .into());
            }
            for count in &page.counts {
                counts.push(job::count_of(count, game, kinds)?);
            }
        }
        counts.truncate(units);
        Ok(counts)
    }

    /// The certificate file of a done job, whole and in order.
    pub async fn certificate(&self, id: &JobId) -> Result<Vec<u8>, ClientError> {
        let stream = self
            .jobs
            .clone()
            .get_certificate(pb::GetCertificateRequest { job_id: id_text(id) })
            .await?
            .into_inner();
        certificate::collect(stream).await
    }

    /// Copies the coordinator's journal into `dir` on its own machine.
    pub async fn backup(&self, dir: &str) -> Result<Backup, ClientError> {
        let request = pb::BackupJournalRequest { dir: dir.to_owned() };
        Ok(self
            .jobs
            .clone()
            .backup_journal(request)
            .await?
            .into_inner()
            .into())
    }
}

fn id_text(id: &JobId) -> String {
    id.as_str().to_owned()
}
