//! Why a load stopped, with its cause.

use perft_model::UnitId;

/// A failed load.
#[derive(Debug, thiserror::Error)]
pub enum LoadgenError {
    /// A call to the coordinator failed.
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
}
