//! Command-line arguments of every `perft` subcommand: the command tree
//! here, each subcommand's arguments in the file of its concern.

mod cluster;
mod engine;
mod journal;
mod local;
mod participant;
mod tree;
mod values;

use clap::{Args, Parser, Subcommand, ValueEnum};

pub use cluster::{
    CertificateArgs, CoordinatorArg, DivideArgs, HealthArgs, JobArgs, ListArgs, LoadgenArgs, LoadgenHoldArgs,
    ProgressArgs, ServeArgs, SubmitArgs, WatchArgs, WorkerArgs,
};
pub use engine::EngineArgs;
pub use journal::{BackupArgs, JournalCheckArgs, JournalCommand};
pub use local::{
    AuditArgs, BenchArgs, BenchCaseArgs, CheckArgs, EstimateArgs, PerftreeArgs, RunArgs, SuiteArgs,
    VerifyArgs,
};
pub use participant::{
    ParticipantAddArgs, ParticipantBudgetArgs, ParticipantCommand, ParticipantLiftArgs, ParticipantListArgs,
    ParticipantRevokeArgs,
};
pub use tree::TreeArgs;
pub use values::Format;

/// Deep Perft: exact perft and divide counts for Reversi, checkers and chess.
#[derive(Debug, Parser)]
// `bin_name`: usage and errors say `perft` whatever the program file is
// called (the system tests run a copy under another name).
#[command(name = "perft", bin_name = "perft", version, about)]
pub struct Cli {
    /// Log format on stderr (filter with RUST_LOG, e.g. RUST_LOG=info).
    #[arg(long, value_enum, global = true, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    #[command(subcommand)]
    pub command: Command,
}

/// The program a certificate names as its maker: `perft` and this build's
/// version, as `perft --version` prints them (`perft 0.1.0`), for `perft
/// run --certificate`, a coordinator `perft serve` runs and `perft
/// certificate --data-dir`.
pub fn program() -> String {
    format!("perft {}", env!("CARGO_PKG_VERSION"))
}

/// How logs are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line, for log collectors.
    Json,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Count a perft on this machine and print the divide table.
    Run(RunArgs),
    /// Speak perftree's protocol: `perft perftree DEPTH FEN [MOVES]` prints
    /// `move count` lines, a blank line and the total, as Stockfish does.
    Perftree(PerftreeArgs),
    /// Measure the engine on fixed cases (medians of several runs).
    Bench(BenchArgs),
    /// Run a coordinator: plans jobs, leases units to workers, sums results.
    Serve(ServeArgs),
    /// Run a worker: counts units leased from a coordinator.
    Worker(WorkerArgs),
    /// Submit a job to a coordinator; prints the job id.
    Submit(SubmitArgs),
    /// Follow a job's progress until it ends (exit 0 only when done).
    Watch(WatchArgs),
    /// Print a job's divide table, as `perft run` prints one.
    Divide(DivideArgs),
    /// List the coordinator's jobs.
    List(ListArgs),
    /// Show one job.
    ///
    /// `units` are decided of planned; `leaves so far` are the job's perft
    /// leaves: each decided unit's count times the paths that reach its
    /// position from the first moves (as the dashboard's `leaves_done`),
    /// not the leaves its workers counted (each unit's count once); `time`
    /// is since it started.
    Status(JobArgs),
    /// Cancel a job.
    Cancel(JobArgs),
    /// Queue a failed job's open units again, keeping its accepted counts.
    Resume(JobArgs),
    /// Remove a finished (done, failed or cancelled) job entirely, from the
    /// list and the journal.
    Delete(JobArgs),
    /// Count and compare with the published tables (exit 1 on a mismatch).
    Verify(VerifyArgs),
    /// Check a certificate: re-plan, re-sum, and recount a random sample
    /// of its units (exit 1 on a mismatch, 2 on a bad file).
    Audit(AuditArgs),
    /// Write a done job's certificate (every unit with its count and who
    /// decided it), from a coordinator or a stopped one's --data-dir.
    Certificate(CertificateArgs),
    /// Predict a perft's leaves, CPU time and journal size before running
    /// it, from a random sample of its units timed on this machine.
    Estimate(EstimateArgs),
    /// Count every position of an EPD perft suite (`POSITION ;D1 n ;D2 n`
    /// lines) and print a table, mismatches first (exit 1 on a mismatch).
    Suite(SuiteArgs),
    /// Compare another engine's divides with ours and print the move path
    /// to where their move lists differ (exit 1 when they differ).
    Check(CheckArgs),
    /// Load-test a coordinator with many simulated workers and tiny units.
    Loadgen(LoadgenArgs),
    /// Ask a coordinator's gRPC health service; exit 0 when it serves.
    Health(HealthArgs),
    /// Write a consistent copy of a running coordinator's journal, with its
    /// own commit mark, into DIR on the coordinator's machine (admin);
    /// `perft serve --data-dir DIR` starts from it. The copy holds the
    /// lease key and the credentials' hashes: keep it as secret as the
    /// data dir.
    Backup(BackupArgs),
    /// Check a stopped data dir or a copy offline (`perft journal check DIR`).
    #[command(subcommand)]
    Journal(JournalCommand),
    /// Manage participants: who may work, submit and read, each with its
    /// own secret (admin credential, or offline with --data-dir).
    #[command(subcommand)]
    Participant(ParticipantCommand),
    /// Print a completion script for SHELL on stdout, e.g.
    /// `perft completions bash > ~/.local/share/bash-completion/completions/perft`.
    Completions(CompletionsArgs),
    /// Print the man page (roff) on stdout, e.g. `perft man > perft.1`, or
    /// a subcommand's, e.g. `perft man serve > perft-serve.1`.
    Man(ManArgs),
    /// One benchmark measurement, for `perft bench` (internal).
    #[command(hide = true)]
    BenchCase(BenchCaseArgs),
    /// Hold worker sessions and job watches open until killed, each
    /// charged to the participant that opened it, for bench/budgets.sh
    /// (internal).
    #[command(hide = true)]
    LoadgenHold(LoadgenHoldArgs),
}

/// Arguments of `perft completions`.
#[derive(Debug, Clone, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Arguments of `perft man`.
#[derive(Debug, Clone, Args)]
pub struct ManArgs {
    /// The subcommand whose page to print (default: the page of `perft`).
    pub subcommand: Option<String>,
}
