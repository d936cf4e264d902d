//! `perft serve`: the coordinator, configured from the command line (its
//! options are the coordinator crate's, which binds, serves and keeps the
//! journal); this adds the credential and announces the addresses.

use perft_coordinator::Listeners;

use crate::args::ServeArgs;
use crate::cluster::{runtime, terminated};
use crate::error::CliError;

/// `perft serve`. Everything the command line can get wrong (the TLS files,
/// the addresses, the metrics port) is refused before the journal is
/// opened, so a refusal is the one line on stderr; the addresses are
/// announced once the journal is open.
pub fn serve(args: &ServeArgs) -> Result<(), CliError> {
    let options = &args.options;
    let config = options.config(args.token.token()?, crate::args::program())?;
    perft_coordinator::raise_open_file_limit(&config.connections);
    let runtime = runtime()?;
    let listeners = runtime.block_on(async {
        if let Some(address) = options.metrics_listen {
            perft_coordinator::serve_metrics(address)?;
        }
        Ok::<_, CliError>(Listeners::bind(&options.listen, options.http_listen.as_deref()).await?)
    })?;
    let opened = perft_coordinator::open(config, &options.data_dir)?;
    runtime.block_on(async {
        // The first line on stdout: scripts and tests read the port from it.
        outln!("listening on {}", listeners.address())?;
        if let Some(dashboard) = listeners.dashboard_address() {
            let scheme = if options.tls_cert.is_some() {
                "https"
            } else {
                "http"
            };
            // The second line, only with --http-listen.
            outln!("dashboard on {scheme}://{dashboard}")?;
        }
        let address = listeners.address();
        tracing::info!(%address, data_dir = %options.data_dir.display(), "coordinator started");
        let (listener, dashboard) = listeners.into_parts();
        perft_coordinator::serve(opened, listener, dashboard, terminated())
            .await
            .map_err(CliError::failed_from)
    })
}
