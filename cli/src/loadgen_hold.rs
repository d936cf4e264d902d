//! `perft loadgen-hold` (internal, for `bench/budgets.sh`): holds worker
//! sessions and job watches open on a coordinator until killed, each
//! charged to the participant whose credential opened it (the holding is
//! `perft-loadgen`'s). Sessions never heartbeat: serve with a
//! `--lease-seconds` longer than the measurement.

use std::path::Path;

use perft_client::{ClientConfig, Token};

use crate::args::LoadgenHoldArgs;
use crate::cluster::{runtime, terminated};
use crate::error::CliError;

/// The non-empty lines of `path`, split on white space.
fn lines(path: &Path) -> Result<Vec<Vec<String>>, CliError> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::Usage(format!("cannot read '{}': {e}", path.display())))?;
    Ok(text
        .lines()
        .map(|l| l.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
        .filter(|words| !words.is_empty())
        .collect())
}

/// The coordinator at `url`, called with `secret`.
fn credential(url: &str, secret: &str) -> Result<ClientConfig, CliError> {
    Ok(ClientConfig {
        url: url.to_owned(),
        token: Some(Token::new(secret).map_err(|e| CliError::Usage(e.to_string()))?),
        tls_ca: None,
    })
}

pub fn hold(args: &LoadgenHoldArgs) -> Result<(), CliError> {
    let session_lines = args
        .session_secrets
        .as_deref()
        .map(lines)
        .transpose()?
        .unwrap_or_default();
    let stream_lines = args
        .stream_secrets
        .as_deref()
        .map(lines)
        .transpose()?
        .unwrap_or_default();
    if stream_lines.iter().any(|words| words.len() != 2) {
        return Err(CliError::Usage("--stream-secrets lines are `SECRET JOB`".into()));
    }
    let session_credentials = session_lines
        .iter()
        .map(|words| credential(&args.coordinator, &words[0]))
        .collect::<Result<Vec<_>, _>>()?;
    let stream_credentials = stream_lines
        .iter()
        .map(|words| {
            Ok((
                credential(&args.coordinator, &words[0])?,
                crate::client::job_id(&words[1])?,
            ))
        })
        .collect::<Result<Vec<_>, CliError>>()?;
    runtime()?.block_on(async {
        let started = std::time::Instant::now();
        let registered = perft_loadgen::hold_sessions(session_credentials, args.sessions, args.in_flight).await?;
        let registering = started.elapsed().as_secs_f64();
        let watching = perft_loadgen::hold_streams(stream_credentials, args.streams).await?;
        outln!(
            "held {} sessions of {} credentials ({} refused one past the count; registered in {registering:.1} s) \
             and {} streams of {} ({} refused one past the count)",
            registered.opened,
            session_lines.len(),
            registered.refused_past,
            watching.held.opened,
            stream_lines.len(),
            watching.held.refused_past
        )?;
        terminated().await;
        outln!("streams still open when stopped: {}", watching.still_open())?;
        Ok(())
    })
}
