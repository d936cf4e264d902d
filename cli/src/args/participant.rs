//! Arguments of `perft participant`: adding, listing and revoking who may
//! work, submit and read.

use clap::{Args, Subcommand};

use super::cluster::CoordinatorArg;

/// `perft participant ...`.
#[derive(Debug, Subcommand)]
pub enum ParticipantCommand {
    /// Add a participant; prints its secret once (only a hash is kept).
    Add(ParticipantAddArgs),
    /// List participants with their credit and reliability.
    ///
    /// `units` are its counts that were taken (as votes or verdicts) and
    /// `leaves` their leaves, each unit's count once: not a job's perft
    /// leaves, which weigh a unit by the paths that reach it, and a
    /// verified job's units are credited to two participants each.
    List(ParticipantListArgs),
    /// Revoke a participant: its sessions end, its leases are queued
    /// again, its undecided votes dropped.
    Revoke(ParticipantRevokeArgs),
    /// Lift a participant's quarantine (forgive its lost votes so far)
    /// and/or suspension (forgive its lapse strikes), after a false alarm.
    /// Without --quarantine or --lapses, both. The units it was barred
    /// from stay barred.
    Lift(ParticipantLiftArgs),
    /// Set what a participant may hold at once, in place of the
    /// coordinator's defaults (`perft serve --help`); journaled. `perft
    /// participant list` shows each figure beside what it holds.
    Budget(ParticipantBudgetArgs),
}

/// Where a participant verb acts: a running coordinator (with an admin
/// credential), or a data dir whose coordinator is stopped.
#[derive(Debug, Args)]
pub struct ParticipantTarget {
    #[command(flatten)]
    pub coordinator: CoordinatorArg,
    /// Act on this data dir's journal directly (its coordinator stopped):
    /// how the first admin of a new cluster is made.
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<std::path::PathBuf>,
}

#[derive(Debug, Args)]
pub struct ParticipantAddArgs {
    /// 1 to 64 of A-Z a-z 0-9 . _ -
    pub name: String,
    /// worker (register, lease, report), submitter (submit, cancel and
    /// resume its own jobs, read), reader (read), admin (everything).
    #[arg(long, default_value = "worker", value_parser = ["worker", "submitter", "reader", "admin"])]
    pub role: String,
    /// Write the secret to this file (created with mode 0600) instead of
    /// printing it.
    #[arg(long, value_name = "FILE")]
    pub secret_file: Option<std::path::PathBuf>,
    /// With --secret-file: when the file exists already, do nothing (for
    /// provisioning steps that run at every start, as in deploy/compose.yaml).
    #[arg(long, requires = "secret_file")]
    pub keep_existing: bool,
    #[command(flatten)]
    pub target: ParticipantTarget,
}

#[derive(Debug, Args)]
pub struct ParticipantListArgs {
    #[command(flatten)]
    pub target: ParticipantTarget,
    /// `text` (a table) or `json` (counts as decimal strings).
    #[arg(long, default_value = "text", value_parser = ["text", "json"])]
    pub format: String,
}

#[derive(Debug, Args)]
pub struct ParticipantRevokeArgs {
    pub name: String,
    /// Also count again every unit whose verdict its counts were part of.
    #[arg(long)]
    pub recount: bool,
    #[command(flatten)]
    pub coordinator: CoordinatorArg,
}

#[derive(Debug, Args)]
pub struct ParticipantLiftArgs {
    pub name: String,
    /// Lift the quarantine only.
    #[arg(long)]
    pub quarantine: bool,
    /// Lift the suspension for lapsed leases only.
    #[arg(long)]
    pub lapses: bool,
    #[command(flatten)]
    pub coordinator: CoordinatorArg,
}

#[derive(Debug, Args)]
pub struct ParticipantBudgetArgs {
    pub name: String,
    /// Unfinished jobs it may have submitted.
    #[arg(long, value_name = "N")]
    pub open_jobs: Option<u64>,
    /// Units its unfinished jobs may hold in all.
    #[arg(long, value_name = "N")]
    pub open_units: Option<u64>,
    /// Live worker sessions.
    #[arg(long, value_name = "N")]
    pub sessions: Option<u64>,
    /// Streams open at once (job watches, certificate downloads).
    #[arg(long, value_name = "N")]
    pub streams: Option<u64>,
    /// Live dashboard sessions (`?token=` logins; past it, its oldest ends).
    #[arg(long, value_name = "N")]
    pub dashboard_sessions: Option<u64>,
    /// Put this resource's figure back to the coordinator's default
    /// (open_jobs, open_units, sessions, streams, dashboard_sessions;
    /// repeatable).
    #[arg(long, value_name = "RESOURCE")]
    pub reset: Vec<String>,
    #[command(flatten)]
    pub coordinator: CoordinatorArg,
}
