//! Why a load stopped, with its cause.

use std::path::PathBuf;

use perft_model::{IdError, UnitId};

/// A failed load.
#[derive(Debug, thiserror::Error)]
pub enum LoadgenError {
    /// A call to the coordinator failed, or a secret is no token.
    #[error(transparent)]
    Client(#[from] perft_client::ClientError),
    /// A leased unit's position does not unpack.
    #[error("bad packed position in unit {unit}")]
    BadPosition { unit: UnitId },
    /// A simulated worker or holder panicked or was cancelled.
    #[error("{0}")]
    Task(#[from] tokio::task::JoinError),
    /// The workers' histograms do not add up.
    #[error("latency histogram: {0}")]
    Histogram(#[from] hdrhistogram::errors::AdditionError),
    /// The latency log cannot be written.
    #[error("cannot write the latency log '{}': {source}", path.display())]
    LatencyLog {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A file of secrets cannot be read.
    #[error("cannot read '{}': {source}", path.display())]
    Secrets {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A line of the stream secrets is not a secret and a job id.
    #[error("lines are `SECRET JOB`")]
    StreamLine,
    /// A stream secret's job id is none.
    #[error("{0}")]
    JobId(#[source] IdError),
}

impl LoadgenError {
    /// Whether the files of secrets given are at fault (a call's own
    /// errors say whose fault they are themselves).
    pub fn is_bad_secrets(&self) -> bool {
        matches!(
            self,
            LoadgenError::Secrets { .. } | LoadgenError::StreamLine | LoadgenError::JobId(_)
        )
    }
}
