//! Deep Perft's `perft` program as a library: the binary (and the system
//! tests' copy of it) is a global allocator and a call to [`main`].
//!
//! It owns the edges people touch: arguments, output (text, JSON, CSV,
//! progress bars) and exit codes. Counting is `perft-core`'s (arranged on
//! this machine by `perft-local`), serving the coordinator's, working the
//! worker's; a verb here parses, calls one of them, and renders what comes
//! back.

#[macro_use]
mod output;
mod args;
mod audit;
mod bench;
mod bench_anchors;
mod certificate;
mod check;
mod client;
mod cluster;
mod docs;
mod error;
mod estimate;
mod journal;
mod loadgen;
mod loadgen_hold;
mod participants;
mod progress;
mod progress_display;
mod report;
mod run;
mod serve;
mod suite;
mod units_on_cluster;
mod verify;
mod worker;

use std::process::ExitCode;

use clap::Parser;

use crate::args::{Cli, Command};

/// Runs `perft` with this process's arguments; the exit code it ends with.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(err) => return error::clap_exit(&err),
    };
    init_tracing(cli.log_format, default_log_filter(&cli.command));
    let outcome = match cli.command {
        Command::Run(args) => run::run(&args),
        Command::Perftree(args) => run::perftree(&args),
        Command::Bench(args) => bench::bench(&args),
        Command::BenchCase(args) => bench::bench_case(&args),
        Command::Serve(args) => serve::serve(&args),
        Command::Worker(args) => worker::worker(&args),
        Command::Submit(args) => client::submit(&args),
        Command::Watch(args) => client::watch(&args),
        Command::Divide(args) => client::divide(&args),
        Command::List(args) => client::list(&args),
        Command::Status(args) => client::status(&args),
        Command::Cancel(args) => client::cancel(&args),
        Command::Resume(args) => client::resume(&args),
        Command::Delete(args) => client::delete(&args),
        Command::Verify(args) => verify::verify(&args),
        Command::Audit(args) => audit::audit(&args),
        Command::Certificate(args) => certificate::certificate(&args),
        Command::Estimate(args) => estimate::estimate(&args),
        Command::Suite(args) => suite::suite(&args),
        Command::Check(args) => check::check(&args),
        Command::Loadgen(args) => loadgen::loadgen(&args),
        Command::LoadgenHold(args) => loadgen_hold::hold(&args),
        Command::Health(args) => client::health(&args),
        Command::Backup(args) => journal::backup(&args),
        Command::Journal(command) => journal::journal(&command),
        Command::Participant(command) => participants::participant(&command),
        Command::Completions(args) => docs::completions(&args),
        Command::Man(args) => docs::man(&args),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => err.report(),
    }
}

/// What is logged without `RUST_LOG`: the long-running roles say at
/// `info` what they do (registrations, jobs, summaries); a one-shot verb
/// only warns, so its stderr stays quiet beside its result.
fn default_log_filter(command: &Command) -> &'static str {
    match command {
        Command::Serve(_) | Command::Worker(_) => {
            "warn,perft_coordinator=info,perft_worker=info,perft_cli=info"
        }
        _ => "warn",
    }
}

/// Logs go to stderr, filtered by `RUST_LOG` (default: [`default_log_filter`]),
/// so stdout carries nothing but the result.
fn init_tracing(format: args::LogFormat, default_filter: &str) {
    // Nothing a stranger can trigger per connection: our own crates log
    // at info only what an authenticated caller did (a failed TLS
    // handshake is tonic's debug line `tonic::transport::server::io_stream`,
    // shown with RUST_LOG).
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default_filter));
    // A log line that cannot be written is dropped: a server must outlive
    // the reader of its stderr (the default would report the failure on
    // stderr, and panic doing so).
    // Colours for a terminal only: a log file or a collector gets plain
    // text, not escape codes around every field.
    let logs = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .log_internal_errors(false)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_writer(std::io::stderr);
    match format {
        args::LogFormat::Text => logs.init(),
        args::LogFormat::Json => logs.json().init(),
    }
}
