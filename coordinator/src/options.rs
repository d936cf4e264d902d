//! `perft serve`'s options: the coordinator's [`Config`] as a command line
//! gives it (with the `cli` feature). The flags and their help live here,
//! beside the behaviour they describe, as a role's configuration does in
//! Ballista's scheduler; the binary flattens them into its command tree and
//! adds the credential, which is the caller's edge.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Args;
use perft_proto::connect::{MAX_PEM_BYTES, read_bounded};

use crate::admission::{Budget, Budgets, budget};
use crate::{Config, ConnectionLimits, MAX_UNITS};

/// How `perft serve` listens, keeps its journal and judges its callers.
#[derive(Debug, Args)]
pub struct ServeOptions {
    /// PEM certificate chain: serve over TLS (with --tls-key).
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    pub tls_cert: Option<PathBuf>,
    /// PEM private key of --tls-cert.
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Most units one job may be planned into (planning costs up to about
    /// 180 bytes a unit of memory, an open job about 90).
    #[arg(long, default_value_t = MAX_UNITS)]
    pub max_units: usize,
    /// Serve Prometheus metrics over HTTP on this address (e.g. 0.0.0.0:9090).
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// Address to listen on (port 0: any free port, printed at start).
    #[arg(long, default_value = "0.0.0.0:50051")]
    pub listen: String,
    /// Serve the read-only web dashboard on this address (e.g.
    /// 127.0.0.1:8080; port 0: any free port, printed at start). Off by
    /// default; behind the token and over TLS when the coordinator is.
    #[arg(long, value_name = "ADDR")]
    pub http_listen: Option<String>,
    /// Directory for the coordinator's state.
    #[arg(long, default_value = "perft-data")]
    pub data_dir: PathBuf,
    /// Start even though the journal lost committed work (its write-ahead
    /// log was damaged or deleted) or its mark is missing or unreadable:
    /// what was lost is logged at error level and the mark rewritten.
    /// Without it, such a journal is refused (exit 1).
    #[arg(long)]
    pub accept_journal_loss: bool,
    /// Seconds a worker session lives without a call (it heartbeats three
    /// times in this time).
    #[arg(long, default_value_t = 15, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub lease_seconds: u64,
    /// Seconds a lease of a unit of average size may go without its count
    /// before it lapses and the unit goes back to the queue (a larger unit
    /// gets proportionally longer, up to 100x; a heartbeat keeps the
    /// session, not its units, and nothing but the unit's count or its
    /// hand-back ends the lease).
    #[arg(long, default_value_t = 1800, value_parser = clap::value_parser!(u64).range(1..=7 * 86_400))]
    pub progress_seconds: u64,
    /// Quarantine a participant once this many of its counts lost a
    /// majority vote: it leases nothing more, its counts are refused, and
    /// every unit it decided alone is counted again (never to be leased to
    /// it again). `perft participant lift` undoes a false alarm.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub quarantine_after: Option<u64>,
    /// Suspend a participant whose leases lapsed in this many separate
    /// events not repaid by counts (each count taken repays one lapsed
    /// lease; each event fades an hour, or two progress deadlines, after
    /// the last): it leases nothing until they fade or `perft participant
    /// lift`.
    /// One participant's lapses never fail a job; a unit fails its job only
    /// when its leases lapsed eight times, with three different participants.
    #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..))]
    pub lapse_limit: u64,
    /// Seconds a connection may send and receive nothing before it is
    /// closed (live clients answer the server's pings well within it).
    #[arg(long, value_name = "SECONDS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub idle_timeout: u64,
    /// Connections served at once, from everyone (gRPC; the dashboard
    /// serves at most 256); more are closed at once.
    #[arg(long, value_name = "N", default_value_t = 4096, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_connections: u64,
    /// Connections served at once from one address (an IPv6 /64); more
    /// are closed at once.
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_connections_per_peer: u64,
    /// Seconds a new connection may go without a request (a health check
    /// counts) before it is closed. Connections that proved no credential
    /// hold at most half of each connection cap; past it, the oldest of
    /// them makes room for a new one.
    #[arg(long, value_name = "SECONDS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    pub first_request_seconds: u64,
    #[command(flatten)]
    pub budgets: BudgetOptions,
}

/// What every participant may hold at once, unless an admin sets its own
/// figures (`perft participant budget`). Past a budget a call is refused
/// with RESOURCE_EXHAUSTED naming the figures.
#[derive(Debug, Args)]
#[command(next_help_heading = "Budgets (per participant)")]
pub struct BudgetOptions {
    /// Unfinished jobs a participant may have submitted (the operator's
    /// token, and every caller of a coordinator with no credentials, are
    /// not bounded in jobs or units).
    #[arg(long, value_name = "N", default_value_t = budget::OPEN_JOBS)]
    pub budget_open_jobs: u64,
    /// Units a participant's unfinished jobs may hold in all (about 90
    /// bytes of memory a unit while open, 160 of journal once counted);
    /// an automatic split stays within what is left.
    #[arg(long, value_name = "N", default_value_t = budget::OPEN_UNITS)]
    pub budget_open_units: u64,
    /// Live worker sessions of a participant.
    #[arg(long, value_name = "N", default_value_t = budget::SESSIONS)]
    pub budget_sessions: u64,
    /// Streams a participant may have open at once (job watches,
    /// certificate downloads, health watches).
    #[arg(long, value_name = "N", default_value_t = budget::STREAMS)]
    pub budget_streams: u64,
    /// Dashboard sessions of a participant (`?token=` logins); past it,
    /// its own oldest ends.
    #[arg(long, value_name = "N", default_value_t = budget::DASHBOARD_SESSIONS)]
    pub budget_dashboard_sessions: u64,
    /// Streams open at once from one address without a credential
    /// (health watches of probes).
    #[arg(long, value_name = "N", default_value_t = budget::ANONYMOUS_STREAMS)]
    pub anonymous_streams: u64,
    /// Refusals of one caller are logged at most once in this many
    /// seconds (every one is counted in perft_budget_refusals_total and
    /// perft_results_refused_total).
    #[arg(long, value_name = "SECONDS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub log_refusals_seconds: u64,
}

/// Options that name files a coordinator cannot serve with; the user's to
/// fix.
#[derive(Debug, thiserror::Error)]
pub enum OptionsError {
    #[error("cannot read '{}': {source}", .path.display())]
    UnreadablePem {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("TLS: {0}")]
    Tls(#[from] crate::tls::TlsError),
}

impl ServeOptions {
    /// The configuration these options ask for, with the admin `token` and
    /// the certificates' maker `program`; the TLS files are read and their
    /// key checked against their certificate here, before any journal is
    /// opened.
    pub fn config(
        &self,
        token: Option<perft_proto::connect::Token>,
        program: String,
    ) -> Result<Config, OptionsError> {
        let tls = match (&self.tls_cert, &self.tls_key) {
            (Some(cert), Some(key)) => Some((read_pem(cert)?, read_pem(key)?)),
            _ => None,
        };
        if let Some((cert, key)) = &tls {
            crate::tls::check_identity(cert, key)?;
        }
        Ok(Config {
            lease_ttl: Duration::from_secs(self.lease_seconds),
            progress_timeout: Duration::from_secs(self.progress_seconds),
            quarantine_after: self.quarantine_after,
            lapse_limit: self.lapse_limit,
            heartbeat_interval: Duration::from_millis(self.lease_seconds * 1000 / 3),
            max_units: self.max_units,
            token,
            tls,
            connections: ConnectionLimits {
                idle_timeout: Duration::from_secs(self.idle_timeout),
                max_total: self.max_connections as usize,
                max_per_peer: self.max_connections_per_peer as usize,
                first_request_timeout: Duration::from_secs(self.first_request_seconds),
                ..ConnectionLimits::default()
            },
            budgets: self.budgets.budgets(),
            accept_journal_loss: self.accept_journal_loss,
            program,
            ..Config::default()
        })
    }
}

impl BudgetOptions {
    /// The coordinator-wide budgets these options give.
    fn budgets(&self) -> Budgets {
        Budgets {
            participant: Budget {
                open_jobs: self.budget_open_jobs,
                open_units: self.budget_open_units,
                sessions: self.budget_sessions,
                streams: self.budget_streams,
                dashboard_sessions: self.budget_dashboard_sessions,
            },
            anonymous_streams: self.anonymous_streams,
            log_every: Duration::from_secs(self.log_refusals_seconds),
        }
    }
}

/// The bytes of a PEM file (a certificate chain or a key), at most
/// [`MAX_PEM_BYTES`].
fn read_pem(path: &Path) -> Result<Vec<u8>, OptionsError> {
    read_bounded(path, MAX_PEM_BYTES).map_err(|source| OptionsError::UnreadablePem {
        path: path.to_owned(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Serve {
        #[command(flatten)]
        options: ServeOptions,
    }

    #[test]
    fn the_defaults_are_the_configs_and_a_missing_key_file_names_itself() {
        let serve = Serve::try_parse_from(["serve"]).expect("no option is required");
        let config = serve
            .options
            .config(None, "perft test".to_owned())
            .expect("no file to read");
        let default = Config::default();
        assert_eq!(config.lease_ttl, default.lease_ttl);
        assert_eq!(config.heartbeat_interval, default.heartbeat_interval);
        assert_eq!(config.progress_timeout, default.progress_timeout);
        assert_eq!(config.lapse_limit, default.lapse_limit);
        assert_eq!(config.connections, default.connections);
        assert_eq!(config.budgets.participant, default.budgets.participant);
        assert_eq!(config.budgets.log_every, default.budgets.log_every);
        assert_eq!(config.max_units, MAX_UNITS);
        let serve = Serve::try_parse_from([
            "serve",
            "--tls-cert",
            "/nonexistent/c.pem",
            "--tls-key",
            "/nonexistent/k.pem",
        ])
        .expect("both TLS files given");
        let err = serve.options.config(None, String::new()).unwrap_err().to_string();
        assert!(err.starts_with("cannot read '/nonexistent/c.pem': "), "{err}");
        // A device that never ends is refused before it fills memory.
        let serve = Serve::try_parse_from(["serve", "--tls-cert", "/dev/zero", "--tls-key", "/dev/zero"])
            .expect("both TLS files given");
        let err = serve.options.config(None, String::new()).unwrap_err().to_string();
        assert!(
            err.starts_with("cannot read '/dev/zero': it holds more than 1024 KiB"),
            "{err}"
        );
    }
}
