//! `perft loadgen-hold` (internal, for `bench/budgets.sh`): holds worker
//! sessions and job watches open on a coordinator until killed, each
//! charged to the participant whose credential opened it (the holding is
//! `perft-loadgen`'s). Sessions never heartbeat: serve with a
//! `--lease-seconds` longer than the measurement.

use perft_loadgen::HoldCredentials;

use crate::args::LoadgenHoldArgs;
use crate::cluster::{runtime, terminated};
use crate::error::CliError;

pub fn hold(args: &LoadgenHoldArgs) -> Result<(), CliError> {
    let credentials = HoldCredentials::read(
        &args.coordinator,
        args.session_secrets.as_deref(),
        args.stream_secrets.as_deref(),
    )?;
    let (session_credentials, stream_credentials) = (credentials.sessions.len(), credentials.streams.len());
    runtime()?.block_on(async {
        let held = perft_loadgen::hold(credentials, args.sessions, args.in_flight, args.streams).await?;
        outln!(
            "held {} sessions of {session_credentials} credentials ({} refused one past the count; registered in {:.1} s) \
             and {} streams of {stream_credentials} ({} refused one past the count)",
            held.sessions.opened,
            held.sessions.refused_past,
            held.registering.as_secs_f64(),
            held.streams.held.opened,
            held.streams.held.refused_past
        )?;
        terminated().await;
        outln!("streams still open when stopped: {}", held.streams.still_open())?;
        Ok(())
    })
}
