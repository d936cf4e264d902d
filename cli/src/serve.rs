//! `perft serve`: the coordinator, configured from the command line. The
//! coordinator crate binds, serves and keeps the journal; this maps the
//! arguments and announces the addresses.

use std::time::Duration;

use perft_client::credentials::read_pem;
use perft_coordinator::admission::{Budget, Budgets};
use perft_coordinator::{ConnectionLimits, Listeners};

use crate::args::ServeArgs;
use crate::cluster::{runtime, terminated};
use crate::error::CliError;

/// The coordinator's configuration the arguments ask for.
fn config(args: &ServeArgs) -> Result<perft_coordinator::Config, CliError> {
    let tls = match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => Some((read_pem(cert)?, read_pem(key)?)),
        _ => None,
    };
    if let Some((cert, key)) = &tls {
        perft_coordinator::tls::check_identity(cert, key)?;
    }
    let budgets = &args.budgets;
    Ok(perft_coordinator::Config {
        lease_ttl: Duration::from_secs(args.lease_seconds),
        progress_timeout: Duration::from_secs(args.progress_seconds),
        quarantine_after: args.quarantine_after,
        lapse_limit: args.lapse_limit,
        heartbeat_interval: Duration::from_millis(args.lease_seconds * 1000 / 3),
        max_units: args.max_units,
        token: args.token.token()?,
        tls,
        connections: ConnectionLimits {
            idle_timeout: Duration::from_secs(args.idle_timeout),
            max_total: args.max_connections as usize,
            max_per_peer: args.max_connections_per_peer as usize,
            first_request_timeout: Duration::from_secs(args.first_request_seconds),
            ..ConnectionLimits::default()
        },
        budgets: Budgets {
            participant: Budget {
                open_jobs: budgets.budget_open_jobs,
                open_units: budgets.budget_open_units,
                sessions: budgets.budget_sessions,
                streams: budgets.budget_streams,
                dashboard_sessions: budgets.budget_dashboard_sessions,
            },
            anonymous_streams: budgets.anonymous_streams,
            log_every: Duration::from_secs(budgets.log_refusals_seconds),
        },
        accept_journal_loss: args.accept_journal_loss,
        program: crate::program(),
        ..perft_coordinator::Config::default()
    })
}

/// `perft serve`. Everything the command line can get wrong (the TLS files,
/// the addresses, the metrics port) is refused before the journal is
/// opened, so a refusal is the one line on stderr; the addresses are
/// announced once the journal is open.
pub fn serve(args: &ServeArgs) -> Result<(), CliError> {
    let config = config(args)?;
    perft_coordinator::raise_open_file_limit(&config.connections);
    let runtime = runtime()?;
    let listeners = runtime.block_on(async {
        if let Some(address) = args.metrics_listen {
            perft_coordinator::serve_metrics(address)?;
        }
        Ok::<_, CliError>(Listeners::bind(&args.listen, args.http_listen.as_deref()).await?)
    })?;
    let opened = perft_coordinator::open(config, &args.data_dir)?;
    runtime.block_on(async {
        // The first line on stdout: scripts and tests read the port from it.
        outln!("listening on {}", listeners.address())?;
        if let Some(dashboard) = listeners.dashboard_address() {
            let scheme = if args.tls_cert.is_some() { "https" } else { "http" };
            // The second line, only with --http-listen.
            outln!("dashboard on {scheme}://{dashboard}")?;
        }
        let address = listeners.address();
        tracing::info!(%address, data_dir = %args.data_dir.display(), "coordinator started");
        let (listener, dashboard) = listeners.into_parts();
        perft_coordinator::serve(opened, listener, dashboard, terminated())
            .await
            .map_err(|e| CliError::Failed(e.to_string()))
    })
}
