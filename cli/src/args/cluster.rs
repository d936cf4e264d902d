//! Arguments of the cluster's subcommands: reaching a coordinator with a
//! credential, serving one, working for one, and submitting and following
//! jobs.

use clap::Args;
use perft_client::credentials::{self, CredentialError};
use perft_core::GameKind;

use super::engine::EngineArgs;
use super::tree::TreeArgs;
use super::values::{Format, GameParser};

/// The coordinator a client or worker talks to.
#[derive(Debug, Clone, Args)]
pub struct CoordinatorArg {
    /// Coordinator URL (https:// with --tls-ca).
    #[arg(long, env = "PERFT_COORDINATOR", default_value = "http://127.0.0.1:50051")]
    pub coordinator: String,
    #[command(flatten)]
    pub token: TokenArg,
    /// PEM file of the CA that signed the coordinator's TLS certificate.
    #[arg(long, value_name = "PEM")]
    pub tls_ca: Option<std::path::PathBuf>,
}

/// The caller's credential: from a file, or else from `PERFT_TOKEN`.
#[derive(Clone, Args)]
pub struct TokenArg {
    /// File holding your credential: a participant's secret (from `perft
    /// participant add`) or, on `serve`, the shared admin token.
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<std::path::PathBuf>,
    /// The shared token itself (prefer --token-file: the environment is
    /// visible to other processes of the same user).
    #[arg(long = "token", env = "PERFT_TOKEN", hide_env_values = true, hide = true)]
    pub token: Option<String>,
}

impl std::fmt::Debug for TokenArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenArg")
            .field("token_file", &self.token_file)
            .finish_non_exhaustive()
    }
}

impl TokenArg {
    /// The token, if one is configured; an unreadable file or a malformed
    /// token is an error naming where it came from.
    pub fn token(&self) -> Result<Option<perft_proto::connect::Token>, CredentialError> {
        match (&self.token_file, &self.token) {
            (Some(path), _) => credentials::token_from_file(path).map(Some),
            // The hidden --token is PERFT_TOKEN's flag: users set the variable.
            (None, Some(token)) => credentials::token_from_variable(token).map(Some),
            (None, None) => Ok(None),
        }
    }

    /// Where the credential comes from, as a refusal names it.
    pub fn described(&self) -> String {
        match (&self.token_file, &self.token) {
            (Some(path), _) => format!(
                "the credential in '{}' (--token-file)",
                perft_core::echoed(&path.display().to_string())
            ),
            (None, Some(_)) => format!("the credential in {}", credentials::TOKEN_VARIABLE),
            (None, None) => "a worker without a credential (give --token-file FILE)".to_owned(),
        }
    }
}

impl CoordinatorArg {
    /// How to reach and authenticate to the coordinator.
    pub fn client_config(&self) -> Result<perft_proto::connect::ClientConfig, CredentialError> {
        Ok(perft_proto::connect::ClientConfig {
            url: self.coordinator.clone(),
            token: self.token.token()?,
            tls_ca: self.tls_ca.as_deref().map(credentials::read_ca).transpose()?,
        })
    }
}
/// `perft serve`: the coordinator's own options, and its admin credential.
#[derive(Debug, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub token: TokenArg,
    #[command(flatten)]
    pub options: perft_coordinator::options::ServeOptions,
}

#[derive(Debug, Args)]
pub struct WorkerArgs {
    #[command(flatten)]
    pub coordinator: CoordinatorArg,
    /// Serve Prometheus metrics over HTTP on this address.
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// The machine's name (default: the host name): its identity for
    /// `--verify`. Give every machine its own; workers sharing a name are
    /// one machine, whose counts never confirm each other.
    #[arg(long)]
    pub name: Option<String>,
    #[command(flatten)]
    pub engine: EngineArgs,
}

#[derive(Debug, Args)]
pub struct SubmitArgs {
    #[command(flatten)]
    pub coordinator: CoordinatorArg,
    #[command(flatten)]
    pub tree: TreeArgs,
    /// Plies expanded into units (default: chosen by the coordinator).
    #[arg(long)]
    pub split_depth: Option<u32>,
    /// Compute every unit on two different workers.
    #[arg(long)]
    pub verify: bool,
    /// Count the leaves by kind too (captures, checks, passes...), as
    /// `perft run --stats` does; `perft divide` then prints them. Depth 2
    /// or more.
    #[arg(long)]
    pub stats: bool,
}

#[derive(Debug, Args)]
pub struct JobArgs {
    #[command(flatten)]
    pub coordinator: CoordinatorArg,
    /// The job id printed by `perft submit`.
    pub job: String,
}

#[derive(Debug, Args)]
pub struct WatchArgs {
    #[command(flatten)]
    pub job: JobArgs,
    #[command(flatten)]
    pub progress: ProgressArgs,
}

/// How long work shows its progress: a live bar on a terminal, else a
/// plain line at an interval, which a log keeps.
#[derive(Debug, Clone, Copy, Args)]
pub struct ProgressArgs {
    /// Seconds between progress lines when stderr is not a terminal.
    #[arg(long, value_name = "SECONDS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub progress_every: u64,
    /// No progress at all: the result alone.
    #[arg(long)]
    pub quiet: bool,
}

impl ProgressArgs {
    /// What a verb without these options shows: a bar, or a line every
    /// 30 s.
    pub const DEFAULT: ProgressArgs = ProgressArgs {
        progress_every: 30,
        quiet: false,
    };
}

#[derive(Debug, Args)]
pub struct CertificateArgs {
    #[command(flatten)]
    pub coordinator: CoordinatorArg,
    /// The job id printed by `perft submit`; the job must be done.
    pub job: String,
    /// Write the certificate here (default: JOB.cert in this directory).
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
    /// Make it from this data dir's journal instead (its coordinator
    /// stopped), with no coordinator to ask.
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<std::path::PathBuf>,
}

#[derive(Debug, Args)]
pub struct DivideArgs {
    #[command(flatten)]
    pub coordinator: CoordinatorArg,
    /// The job id printed by `perft submit`.
    pub job: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub coordinator: CoordinatorArg,
}

#[derive(Debug, Args)]
pub struct LoadgenArgs {
    #[command(flatten)]
    pub coordinator: CoordinatorArg,
    /// Simulated workers, each with its own connection.
    #[arg(long, default_value_t = 300)]
    pub workers: u32,
    /// Units leased (and reported) per call.
    #[arg(long, default_value_t = 8)]
    pub batch: u32,
    /// The game of the job.
    #[arg(long, default_value = "reversi", value_parser = GameParser)]
    pub game: GameKind,
    /// The job's depth; it is split one ply above, so units are one ply deep.
    #[arg(long, default_value_t = 10)]
    pub depth: u32,
    /// Give each simulated worker a participant of its own (added with
    /// this admin credential, named loadgen-JOB-N), as a shared cluster
    /// of many owners has.
    #[arg(long)]
    pub own_participants: bool,
    /// Write one line per report call: when it was sent (Unix ms) and how
    /// long its acknowledgement took (µs), to see latency during an event.
    #[arg(long, value_name = "FILE")]
    pub latency_log: Option<std::path::PathBuf>,
}

/// `perft loadgen-hold` (internal): worker sessions and job watches held
/// open, each charged to the participant whose credential opened it.
#[derive(Debug, Args)]
pub struct LoadgenHoldArgs {
    /// Coordinator URL (plain http: a benchmark on loopback).
    #[arg(long, default_value = "http://127.0.0.1:50051")]
    pub coordinator: String,
    /// Worker participants' secrets, one a line: each registers --sessions
    /// sessions.
    #[arg(long, value_name = "FILE")]
    pub session_secrets: Option<std::path::PathBuf>,
    /// Sessions registered with each of --session-secrets (then one more,
    /// which its budget should refuse).
    #[arg(long, default_value_t = 0)]
    pub sessions: u32,
    /// Lines `SECRET JOB`: each credential opens --streams watches of JOB.
    #[arg(long, value_name = "FILE")]
    pub stream_secrets: Option<std::path::PathBuf>,
    /// Watches opened with each of --stream-secrets (then one more, which
    /// its budget should refuse).
    #[arg(long, default_value_t = 0)]
    pub streams: u32,
    /// Registrations in flight at once per credential.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..=128))]
    pub in_flight: u32,
}

#[derive(Debug, Args)]
pub struct HealthArgs {
    #[command(flatten)]
    pub coordinator: CoordinatorArg,
}
