//! Counts coming in: a worker's report decides its unit, waits for another
//! participant's vote, or records a disagreement; a revoked or quarantined
//! participant's undecided votes go. A count is taken only for a lease the
//! unit still holds, from the participant holding it, in good standing:
//! the lease tag checked at the door proves who was issued the lease, this
//! proves the lease still stands.

use perft_model::Count;

use super::unit::VoteOutcome;
use super::{Credit, Disagreement, Jobs, LeaseHolder, MAX_CPU_MS_PER_COUNT, MAX_VOTES, Op};
use perft_model::JobState;
use perft_model::{Epoch, JobId, ParticipantId, UnitId};

/// Outcome of one reported count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reported {
    /// Kept: it decided its unit, or it waits for another participant's
    /// count.
    Accepted,
    /// Unknown job or unit, a finished job, a unit already decided, or a
    /// second count from the same participant.
    Ignored,
    /// The lease it answers no longer stands: it lapsed, was handed back,
    /// or its unit was reopened since (or it was never this
    /// participant's).
    Stale,
    /// Its participant is quarantined: none of its counts is taken.
    Refused,
}

impl Reported {
    /// Whether the count was refused (stale lease, quarantined sender),
    /// as opposed to accepted or harmlessly ignored.
    pub fn is_refused(self) -> bool {
        matches!(self, Reported::Stale | Reported::Refused)
    }
}

impl Jobs {
    /// Drops every undecided vote of `participant` (it was revoked or
    /// quarantined): its units want another count.
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

    /// Takes a unit's count from `worker` for its lease `epoch` (whose tag
    /// the caller checked); it took `cpu_ms` of CPU time (the worker's
    /// word, for credit only).
    pub fn report(
        &mut self,
        job_id: &JobId,
        unit_id: UnitId,
        epoch: Epoch,
        count: Count,
        cpu_ms: u64,
        worker: &LeaseHolder,
    ) -> Reported {
        if self.ledger.is_quarantined(&worker.identity) {
            return Reported::Refused;
        }
        let boot_epoch = self.boot_epoch;
        let now = self.clock.now_ms();
        let Some(job) = self.jobs.get_mut(job_id) else {
            return Reported::Ignored;
        };
        if job.state.is_final() || !job.is_open(unit_id) {
            self.forget_lease(&worker.session, job_id, unit_id);
            return Reported::Ignored;
        }
        let (voted, holds) = job
            .with_unit(unit_id, |unit| {
                (
                    unit.has_voter(&worker.identity),
                    unit.holds(epoch, &worker.identity),
                )
            })
            .unwrap_or((false, false));
        if voted {
            return Reported::Ignored;
        }
        // A lease issued before the restart that built this table is known
        // by its tag alone; it stands unless its unit was reopened since.
        let old_lease = epoch.0 < boot_epoch && job.old_lease_stands(unit_id, epoch, &worker.identity);
        if !holds && !old_lease {
            return Reported::Stale;
        }
        self.forget_lease(&worker.session, job_id, unit_id);
        let Some(job) = self.jobs.get_mut(job_id) else {
            return Reported::Ignored;
        };
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
                    ..Credit::default()
                },
            );
        }
        // Losers this count quarantines: their undecided votes go too.
        let mut quarantined = Vec::new();
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
                    let was = self.ledger.is_quarantined(loser);
                    self.ledger.credit(
                        loser,
                        Credit {
                            lost_votes: 1,
                            ..Credit::default()
                        },
                    );
                    if !was && self.ledger.is_quarantined(loser) {
                        quarantined.push(loser.clone());
                    }
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
                if !job.decided(unit_id, count, now) {
                    self.outbox.push(job.state_op());
                } else if job.summary.done == job.units_total {
                    job.finish(JobState::Done, None, now);
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
                    now,
                );
                self.outbox.push(job.state_op());
            }
        }
        // A quarantined participant's counts are refused, the ones waiting
        // for a verdict included: else one sent before its quarantine
        // still decides a unit with the next equal count (an accomplice's).
        for participant in &quarantined {
            self.drop_votes_of(participant);
        }
        Reported::Accepted
    }
}

impl Jobs {
    /// Drops (job, unit) from what `session` holds: its lease ended.
    fn forget_lease(&mut self, session: &perft_model::SessionId, job_id: &JobId, unit_id: UnitId) {
        if let Some(holder) = self.holders.get_mut(session) {
            holder.units.remove(&(job_id.clone(), unit_id));
        }
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
