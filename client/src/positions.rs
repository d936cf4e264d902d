//! Counting a list of positions on a cluster (an audit's sampled units, a
//! suite's lines): the positions go to the coordinator as ordinary jobs of
//! explicit units (packed position, remaining depth), as many as fit in a
//! message each, one job after another; once a job is done its counts are
//! read back in order, with their leaves by kind when it counts them.

use perft_core::{Convention, GameKind};
use perft_model::{Count, JobId, JobState};

use crate::Client;
use crate::error::ClientError;
use crate::follow::Progress;
use crate::job::Submission;

/// Positions to count on the cluster, each to the same depth.
#[derive(Clone, Copy, Debug)]
pub struct Positions<'a> {
    pub game: GameKind,
    /// Reversi's convention (`None`: the game's default).
    pub convention: Option<Convention>,
    /// Plies below each position.
    pub depth: u32,
    /// The positions, packed.
    pub packed: &'a [Vec<u8>],
    /// Count the leaves by kind too.
    pub stats: bool,
}

/// What [`Client::count_positions`] tells its caller as it goes.
#[derive(Clone, Copy, Debug)]
pub enum PositionsStep<'a> {
    /// A job of `units` of the positions was submitted.
    Submitted { job: &'a JobId, units: usize },
    /// A step of following that job.
    Following { job: &'a JobId, step: &'a Progress },
}

/// The counts of [`Client::count_positions`], in the order of the
/// positions, and the jobs that made them.
#[derive(Clone, Debug, PartialEq)]
pub struct PositionCounts {
    pub counts: Vec<Count>,
    pub jobs: Vec<JobId>,
}

/// Units a job carries: a submit of them stays well under the 4 MiB
/// message limit (each unit is its packed bytes and three of framing).
fn units_per_job(packed_bytes: usize) -> usize {
    ((3 << 20) / (packed_bytes + 3)).min(100_000)
}

impl Client {
    /// Counts `positions` on the cluster as jobs of explicit units, one
    /// after another, telling `observe` of each job and each step of it;
    /// fails when a job ends other than done.
    pub async fn count_positions(
        &self,
        positions: Positions<'_>,
        mut observe: impl FnMut(PositionsStep<'_>),
    ) -> Result<PositionCounts, ClientError> {
        let Positions {
            game,
            convention,
            depth,
            packed,
            stats,
        } = positions;
        let kinds = perft_model::kinds_of(game, stats);
        let mut counts = Vec::with_capacity(packed.len());
        let mut jobs = Vec::new();
        for chunk in packed.chunks(units_per_job(game.packed_bytes())) {
            let submission = Submission {
                convention,
                units: chunk.to_vec(),
                stats,
                ..Submission::new(game, depth)
            };
            let id = self.submit(&submission).await?;
            observe(PositionsStep::Submitted {
                job: &id,
                units: chunk.len(),
            });
            let mut following = self.follow(&id, false);
            let job = loop {
                let Some(step) = following.next().await else {
                    return Err(crate::ReplyError::Nothing(id).into());
                };
                let step = step?;
                observe(PositionsStep::Following {
                    job: &id,
                    step: &step,
                });
                if let Progress::Finished(job) = step {
                    break job;
                }
            };
            if job.state != JobState::Done {
                return Err(ClientError::JobEnded {
                    job: id,
                    state: job.state,
                    error: job.error,
                });
            }
            counts.extend(self.unit_counts(&id, game, chunk.len(), kinds).await?);
            jobs.push(id);
        }
        Ok(PositionCounts { counts, jobs })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_of_units_fits_in_a_message() {
        // Chess packs into 34 bytes, checkers into 13, Reversi into 17.
        for bytes in [13, 17, 34] {
            let units = units_per_job(bytes);
            assert!(units * (bytes + 3) <= 3 << 20, "{bytes}");
            assert!(units >= 80_000, "{bytes}: {units}");
        }
        assert_eq!(units_per_job(1), 100_000);
    }
}
