//! Counts coming in: a worker's report decides its unit, waits for another
//! participant's vote, or records a disagreement; a revoked participant's
//! undecided votes go.

use crate::count::Count;

use super::unit::VoteOutcome;
use super::{Credit, Disagreement, JobState, Jobs, Lessee, MAX_CPU_MS_PER_COUNT, MAX_VOTES, Op};
use crate::ids::{JobId, ParticipantId, UnitId};

/// Outcome of one reported count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reported {
    /// Kept: it decided its unit, or it waits for another participant's
    /// count.
    Accepted,
    /// Unknown job or unit, a finished job, a unit already decided, or a
    /// second count from the same participant.
    Ignored,
}

impl Jobs {
    /// Drops every undecided vote of `participant` (it was revoked): its
    /// units want another count.
    pub fn drop_votes_of(&mut self, participant: &ParticipantId) -> u64 {
        let mut dropped = 0;
        for id in &self.order {
            let job = self.jobs.get_mut(id).expect("ordered jobs exist");
            if job.state.is_final() {
                continue;
            }
            for unit_id in job.units_voted_by(participant) {
                if job.with_unit(unit_id, |unit| unit.drop_voter(participant)) == Some(true) {
                    dropped += 1;
                    job.requeue(unit_id);
                }
            }
        }
        self.outbox.push(Op::DropVotesOf {
            voter: participant.clone(),
        });
        dropped
    }

    /// Takes a unit's count from `worker`, whose lease the caller checked;
    /// it took `cpu_ms` of CPU time (the worker's word, for credit only).
    pub fn report(
        &mut self,
        job_id: &JobId,
        unit_id: UnitId,
        count: Count,
        cpu_ms: u64,
        worker: &Lessee,
    ) -> Reported {
        if let Some(holder) = self.holders.get_mut(&worker.session) {
            holder.units.remove(&(job_id.clone(), unit_id));
        }
        let Some(job) = self.jobs.get_mut(job_id) else {
            return Reported::Ignored;
        };
        if job.state.is_final() || !job.is_open(unit_id) {
            return Reported::Ignored;
        }
        let quorum = job.spec.quorum();
        let vote_op = || Op::Vote {
            job_id: job_id.clone(),
            unit_id,
            voter: worker.identity.clone(),
            label: worker.label.to_string(),
            count,
        };
        let outcome = job
            .with_unit(unit_id, |unit| {
                unit.vote(&worker.identity, &worker.label, count, quorum)
            })
            .unwrap_or(VoteOutcome::Ignored);
        if outcome != VoteOutcome::Ignored {
            self.ledger.credit(
                &worker.identity,
                Credit {
                    units: 1,
                    leaves: count.leaves.leaves,
                    cpu_ms: cpu_ms.min(MAX_CPU_MS_PER_COUNT),
                    lost_votes: 0,
                },
            );
        }
        match outcome {
            VoteOutcome::Ignored => return Reported::Ignored,
            VoteOutcome::Counted => self.outbox.push(vote_op()),
            VoteOutcome::Disagreed => {
                self.outbox.push(vote_op());
                job.requeue(unit_id);
            }
            VoteOutcome::Decided {
                count,
                votes,
                deciders,
                losers,
            } => {
                for loser in &losers {
                    self.ledger.credit(
                        loser,
                        Credit {
                            lost_votes: 1,
                            ..Credit::default()
                        },
                    );
                }
                self.outbox.push(Op::Result {
                    job_id: job_id.clone(),
                    unit_id,
                    count,
                    deciders,
                });
                if votes.iter().any(|v| v.count != count) {
                    let disagreement = Disagreement {
                        unit_id,
                        position: job.shown_position(unit_id),
                        votes,
                        decided: Some(count),
                    };
                    tracing_disagreement(job_id, &disagreement);
                    self.outbox.push(Op::Disagreement {
                        job_id: job_id.clone(),
                        disagreement: disagreement.clone(),
                    });
                    job.disagreements.push(disagreement);
                }
                if !job.decided(unit_id, count) {
                    self.outbox.push(job.state_op());
                } else if job.summary.done == job.units_total {
                    job.finish(JobState::Done, None);
                    self.outbox.push(job.state_op());
                }
            }
            VoteOutcome::NoMajority { votes } => {
                self.outbox.push(vote_op());
                let disagreement = Disagreement {
                    unit_id,
                    position: job.shown_position(unit_id),
                    votes,
                    decided: None,
                };
                tracing_disagreement(job_id, &disagreement);
                self.outbox.push(Op::Disagreement {
                    job_id: job_id.clone(),
                    disagreement: disagreement.clone(),
                });
                job.disagreements.push(disagreement);
                job.finish(
                    JobState::Failed,
                    Some(format!(
                        "no {quorum} machines agree on unit {unit_id} within {MAX_VOTES} counts"
                    )),
                );
                self.outbox.push(job.state_op());
            }
        }
        Reported::Accepted
    }
}

fn tracing_disagreement(job_id: &JobId, d: &Disagreement) {
    let votes: Vec<String> = d
        .votes
        .iter()
        .map(|v| format!("{}={}", v.worker, v.count.leaves.leaves))
        .collect();
    tracing::warn!(job = %job_id, unit = d.unit_id.0, position = %d.position, votes = %votes.join(" "), "workers disagree");
}
