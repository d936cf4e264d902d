//! Why a count on this machine did not happen: a job its plan or table
//! cannot hold, a certificate that cannot be made, a benchmark whose runs
//! disagree.

use perft_core::{PlanError, TableTooSmall};

/// What stopped a local count. Every variant but
/// [`LocalError::Certificate`] and the benchmark's are the caller's to fix
/// by asking differently ([`LocalError::is_request`]).
#[derive(Debug, thiserror::Error)]
pub enum LocalError {
    /// A count by kind was given a split depth that leaves its units no
    /// last ply to classify.
    #[error(
        "a count by kind needs a split depth below the depth {depth} (units count the last ply), got {split}"
    )]
    SplitTooDeep {
        /// Plies counted.
        depth: u32,
        /// Plies expanded into units.
        split: u32,
    },
    /// A certificate of a depth-0 count: it has no units.
    #[error("a certificate needs a depth of at least 1")]
    CertificateAtDepthZero,
    /// A certificate by kind of a count too shallow to leave its units the
    /// last ply.
    #[error("a statistics certificate needs depth 2 or more (its units count the last ply), got {depth}")]
    StatsCertificateTooShallow {
        /// Plies counted.
        depth: u32,
    },
    /// The root cannot be planned to the depth and split depth asked for.
    #[error("{0}")]
    Plan(#[source] PlanError),
    /// The table asked for holds no entry.
    #[error("{0}")]
    Table(#[source] TableTooSmall),
    /// A suite's table of `bytes` holds no entry.
    #[error("a table of {bytes} bytes holds no entry")]
    SuiteTable {
        /// The bytes asked for.
        bytes: u64,
    },
    /// A suite line's position cannot be planned to one of its depths.
    #[error("line {line}: {source}")]
    SuiteLine {
        /// The suite file's 1-based line.
        line: usize,
        /// Why it cannot be planned.
        #[source]
        source: PlanError,
    },
    /// A certificate's root that does not unpack: nothing can be checked.
    #[error("root: {0}")]
    AuditRoot(#[source] perft_core::UnpackError),
    /// A certificate's convention its game does not have.
    #[error("{0}")]
    AuditConvention(#[source] perft_core::ConventionRefused),
    /// The counts were made but their certificate cannot be built from
    /// them.
    #[error("cannot make the certificate: {0}")]
    Certificate(#[source] perft_certificate::BuildError),
    /// A benchmark case was summed over no runs.
    #[error("no runs of {game} depth {depth} to sum")]
    NoRuns {
        /// The case's game.
        game: &'static str,
        /// The case's depth.
        depth: u32,
    },
    /// Runs of one benchmark case counted different leaves.
    #[error("runs of {game} depth {depth} disagree")]
    RunsDisagree {
        /// The case's game.
        game: &'static str,
        /// The case's depth.
        depth: u32,
    },
    /// An anchor's (or our) benchmark command could not be started.
    #[error("cannot start `{command}`: {source}")]
    AnchorStart {
        /// The command line.
        command: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A benchmark command failed or did not print the count it must.
    #[error("`{command}` did not count what it must ({status}); it said: {output}")]
    AnchorMiscounted {
        /// The command line.
        command: String,
        /// Its exit status.
        status: String,
        /// The end of what it printed.
        output: String,
    },
    /// Side-by-side runs cannot be pinned to the core asked for.
    #[error("cannot pin the runs to core {core} (this machine has {cores} cores)")]
    NoSuchCore {
        /// The core asked for.
        core: usize,
        /// The cores this process may run on.
        cores: usize,
    },
}

impl LocalError {
    /// Whether asking differently (another depth, split depth, table or
    /// position) would avoid the error, rather than the count or the
    /// machine having failed.
    pub fn is_request(&self) -> bool {
        !matches!(
            self,
            LocalError::Certificate(_)
                | LocalError::NoRuns { .. }
                | LocalError::RunsDisagree { .. }
                | LocalError::AnchorStart { .. }
                | LocalError::AnchorMiscounted { .. }
        )
    }
}
