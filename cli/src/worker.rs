//! `perft worker`: a worker, configured from the command line. The worker
//! crate names it, sizes its table and does the work; this maps the
//! arguments.

use perft_worker::WorkerName;

use crate::args::WorkerArgs;
use crate::cluster::{runtime, terminated};
use crate::error::CliError;

/// `perft worker`.
pub fn worker(args: &WorkerArgs) -> Result<(), CliError> {
    let name = match &args.name {
        Some(name) => WorkerName::parse(name)?,
        None => WorkerName::of_host()?,
    };
    let config = perft_worker::Config {
        coordinator: args.coordinator.client_config()?,
        threads: args.engine.threads(),
        table_bytes: args.engine.table().bytes_or(perft_worker::default_table_bytes),
        name: name.into(),
    };
    runtime()?.block_on(async {
        if let Some(address) = args.metrics_listen {
            perft_worker::serve_metrics(address)?;
        }
        let url = config.coordinator.url.clone();
        perft_worker::run(config, terminated())
            .await
            .map_err(|e| named(e, &url, &args.coordinator.token.described()))
    })
}

/// A worker's final error, naming which of its three settings (the URL,
/// the credential, the CA file) to check.
fn named(err: perft_worker::WorkerError, url: &str, credential: &str) -> CliError {
    match err {
        perft_worker::WorkerError::Refused(why) => {
            CliError::failed(format!("the coordinator at {url} refused {credential}: {why}"))
        }
        e @ perft_worker::WorkerError::UntrustedCoordinator { .. } => CliError::usage_from(e),
        e => e.into(),
    }
}
