//! Arguments of `perft backup` and `perft journal`: copies of a
//! coordinator's journal, and checking one offline.

use clap::{Args, Subcommand};

use super::cluster::CoordinatorArg;

/// `perft backup DIR`.
#[derive(Debug, Args)]
pub struct BackupArgs {
    /// Directory for the copy ON THE COORDINATOR'S MACHINE (it writes it
    /// there): an absolute path, new (its parent existing) or empty, not
    /// the data dir nor inside it.
    pub dir: String,
    #[command(flatten)]
    pub coordinator: CoordinatorArg,
}

/// `perft journal ...`.
#[derive(Debug, Subcommand)]
pub enum JournalCommand {
    /// Check a stopped data dir or a copy (`perft backup`) without serving
    /// it or changing it: SQLite's integrity check, the schema, the commit
    /// mark against the journal, every row's checksum. A line a finding,
    /// then a summary; exit 0 when clean, 1 when damaged, 2 when DIR is
    /// no data dir (or a running coordinator holds it).
    Check(JournalCheckArgs),
}

#[derive(Debug, Args)]
pub struct JournalCheckArgs {
    /// The data dir or copy.
    pub dir: std::path::PathBuf,
}
