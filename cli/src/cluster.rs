//! `perft serve` and `perft worker`: the two long-running roles.

use std::time::Duration;

use perft_local::available_memory_bytes;

use crate::args::{ServeArgs, WorkerArgs, read_pem};
use crate::error::CliError;

/// Serves Prometheus metrics on `address` (inside the runtime). With
/// `idle_gauges`, a gauge not set for that long is dropped: the
/// coordinator's per-worker gauges of a worker that left.
fn install_metrics(
    address: Option<std::net::SocketAddr>,
    idle_gauges: Option<std::time::Duration>,
) -> Result<(), CliError> {
    let Some(address) = address else { return Ok(()) };
    metrics_exporter_prometheus::PrometheusBuilder::new()
        .with_http_listener(address)
        .idle_timeout(metrics_util::MetricKindMask::GAUGE, idle_gauges)
        .install()
        .map_err(|e| CliError::Usage(format!("cannot serve metrics on {address}: {e}")))
}

pub fn runtime() -> Result<tokio::runtime::Runtime, CliError> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| CliError::Failed(format!("cannot start the async runtime: {e}")))
}

/// Resolves on SIGTERM or Ctrl-C.
pub(crate) async fn terminated() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = term.recv() => {}
                    _ = tokio::signal::ctrl_c() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

pub fn serve(args: &ServeArgs) -> Result<(), CliError> {
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some((read_pem(cert)?, read_pem(key)?)),
        _ => None,
    };
    if let Some((cert, key)) = &tls {
        perft_coordinator::tls::check_identity(cert, key)
            .map_err(|e| CliError::Usage(format!("TLS: {e}")))?;
    }
    let config = perft_coordinator::Config {
        lease_ttl: Duration::from_secs(args.lease_seconds),
        progress_timeout: Duration::from_secs(args.progress_seconds),
        quarantine_after: args.quarantine_after,
        lapse_limit: args.lapse_limit,
        heartbeat_interval: Duration::from_millis(args.lease_seconds * 1000 / 3),
        max_units: args.max_units,
        token: args.token.token()?,
        tls,
        connections: perft_coordinator::ConnectionLimits {
            idle_timeout: Duration::from_secs(args.idle_timeout),
            max_total: args.max_connections as usize,
            max_per_peer: args.max_connections_per_peer as usize,
            first_request_timeout: Duration::from_secs(args.first_request_seconds),
            ..perft_coordinator::ConnectionLimits::default()
        },
        budgets: perft_coordinator::admission::Budgets {
            participant: perft_coordinator::admission::Budget {
                open_jobs: args.budgets.budget_open_jobs,
                open_units: args.budgets.budget_open_units,
                sessions: args.budgets.budget_sessions,
                streams: args.budgets.budget_streams,
                dashboard_sessions: args.budgets.budget_dashboard_sessions,
            },
            anonymous_streams: args.budgets.anonymous_streams,
            log_every: Duration::from_secs(args.budgets.log_refusals_seconds),
        },
        accept_journal_loss: args.accept_journal_loss,
        ..perft_coordinator::Config::default()
    };
    raise_open_file_limit(args.max_connections);
    // A damaged journal, or one that lost work, is a failure (exit 1), not
    // a mistake in the command line.
    let opened = perft_coordinator::open(config, &args.data_dir).map_err(|e| {
        if e.is_damage() {
            CliError::Failed(e.to_string())
        } else {
            CliError::Usage(e.to_string())
        }
    })?;
    runtime()?.block_on(async {
        install_metrics(
            args.metrics_listen,
            Some(std::time::Duration::from_secs(
                perft_coordinator::IDLE_GAUGE_SECONDS,
            )),
        )?;
        let listener = tokio::net::TcpListener::bind(&args.listen)
            .await
            .map_err(|e| CliError::Usage(format!("cannot listen on '{}': {e}", args.listen)))?;
        let address = listener.local_addr()?;
        // Both listeners are bound before anything is printed: a bad
        // --http-listen is refused before any address is announced.
        let dashboard = match &args.http_listen {
            Some(http) => Some(tokio::net::TcpListener::bind(http).await.map_err(|e| {
                CliError::Usage(format!(
                    "cannot serve the dashboard on '{}': {e}",
                    perft_core::echoed(http)
                ))
            })?),
            None => None,
        };
        // The first line on stdout: scripts and tests read the port from it.
        outln!("listening on {address}")?;
        if let Some(dashboard) = &dashboard {
            let scheme = if args.tls_cert.is_some() { "https" } else { "http" };
            // The second line, only with --http-listen.
            outln!("dashboard on {scheme}://{}", dashboard.local_addr()?)?;
        }
        tracing::info!(%address, data_dir = %args.data_dir.display(), "coordinator started");
        perft_coordinator::serve(opened, listener, dashboard, terminated())
            .await
            .map_err(|e| CliError::Failed(e.to_string()))
    })
}

/// File descriptors kept beside the connections: the journal, the
/// listeners, the metrics endpoint, the runtime.
const SPARE_FILES: u64 = 64;

/// Raises the soft open-file limit to the hard one (a connection is a file
/// descriptor), and warns when even that leaves the connection cap
/// unreachable: past the limit, accepts fail and connections wait.
fn raise_open_file_limit(max_connections: u64) {
    let limit = match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => limit,
        Err(e) => {
            tracing::warn!(error = %e, "cannot read or raise the open-file limit");
            return;
        }
    };
    if limit < max_connections.saturating_add(SPARE_FILES) {
        tracing::warn!(
            open_files = limit,
            max_connections,
            "the open-file limit is below --max-connections + {SPARE_FILES}: raise it (ulimit -n) or lower --max-connections"
        );
    }
}

pub fn worker(args: &WorkerArgs) -> Result<(), CliError> {
    // The name is the machine's identity for verification: by default the
    // host's, so a restarted worker is the same machine, and so are several
    // workers on one host.
    let name = match &args.name {
        Some(name) => name.clone(),
        None => gethostname::gethostname().to_string_lossy().into_owned(),
    };
    if name.is_empty() || name.len() > 64 || name.chars().any(char::is_control) {
        return Err(CliError::Usage(format!(
            "the worker name '{}' must be 1 to 64 bytes of printable characters",
            perft_core::echoed(&name)
        )));
    }
    let config = perft_worker::Config {
        coordinator: args.coordinator.client_config()?,
        threads: args.engine.threads(),
        table_bytes: args
            .engine
            .table()
            .bytes_or(|| perft_core::table_size::worker_table_bytes(available_memory_bytes())),
        name,
    };
    runtime()?
        .block_on(async {
            install_metrics(args.metrics_listen, None)?;
            Ok::<_, CliError>(perft_worker::run(config, terminated()).await)
        })?
        .map_err(|e| match e {
            perft_worker::WorkerError::BadAddress(..) => CliError::Usage(e.to_string()),
            perft_worker::WorkerError::Refused(_) => CliError::Failed(e.to_string()),
        })
}
