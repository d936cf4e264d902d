//! Counting a list of positions on a cluster, for `perft audit --on` (a
//! certificate's sampled units) and `perft suite --on` (a suite's lines),
//! with each job's submission and progress shown as `perft watch` shows
//! them.

use perft_client::{Client, PositionCounts, Positions, PositionsStep};

use crate::args::ProgressArgs;
use crate::client::ProgressView;
use crate::error::CliError;

/// Counts `positions` on the cluster of `client` (see
/// [`Client::count_positions`]), showing what it does.
pub async fn count_units(client: &Client, positions: Positions<'_>) -> Result<PositionCounts, CliError> {
    let depth = positions.depth;
    let mut view: Option<ProgressView> = None;
    let counted = client
        .count_positions(positions, |step| match step {
            PositionsStep::Submitted { job, units } => {
                view = None;
                errln!("job {job}: {units} units of depth {depth} submitted");
                view = Some(ProgressView::new(ProgressArgs::DEFAULT));
            }
            PositionsStep::Following { job, step } => {
                if let Some(view) = view.as_mut() {
                    view.show(job, step);
                }
            }
        })
        .await?;
    Ok(counted)
}
