//! One unit of a job: its leases, the counts workers sent for it (votes),
//! and its verdict. Lease deadlines are kept per worker by the job table
//! (a heartbeat renews all of a worker's leases at once), not here. Without verification one count decides; with it, two
//! workers must agree, and each disagreement asks one more worker.

use perft_core::{Leaves, Weight};

/// Most counts gathered for one unit before the job fails for want of a
/// majority.
pub const MAX_VOTES: u32 = 5;

#[derive(Clone, Debug, PartialEq, Eq)]
struct Lease {
    worker: String,
    epoch: u64,
}

/// A count a worker sent for a unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vote {
    /// The worker as people know it: its name and id.
    pub worker: String,
    pub leaves: Leaves,
}

/// What a vote did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VoteOutcome {
    /// A duplicate, or the unit was already decided.
    Ignored,
    /// Kept; more counts are needed.
    Counted,
    /// The counts disagree: one more worker is needed.
    Disagreed,
    /// The unit's count is settled; `votes` are all counts it got (more
    /// than the quorum when some disagreed).
    Decided { leaves: Leaves, votes: Vec<Vote> },
    /// No count reached a majority within [`MAX_VOTES`].
    NoMajority { votes: Vec<Vote> },
}

#[derive(Clone, Debug)]
pub(crate) struct Unit {
    pub position: String,
    pub weights: Vec<Weight>,
    leases: Vec<Lease>,
    votes: Vec<Vote>,
    /// Worker ids of the votes, to tell a duplicate from a new worker.
    voters: Vec<String>,
    done: Option<Leaves>,
    /// Counts wanted before a verdict: the quorum, plus one per
    /// disagreement.
    wanted: u32,
    /// Leases that ended without a count.
    pub failures: u32,
    /// Whether the unit sits in its job's pending queue.
    pub queued: bool,
}

impl Unit {
    pub fn new(position: String, weights: Vec<Weight>, quorum: u32) -> Unit {
        Unit {
            position,
            weights,
            leases: Vec::new(),
            votes: Vec::new(),
            voters: Vec::new(),
            done: None,
            wanted: quorum,
            failures: 0,
            queued: false,
        }
    }

    /// The unit's count once decided.
    pub fn done(&self) -> Option<Leaves> {
        self.done
    }

    /// Sets the count read back from the journal.
    pub fn restore(&mut self, leaves: Leaves) {
        self.done = Some(leaves);
    }

    /// True while the unit should be handed to one more worker.
    pub fn needs_lease(&self) -> bool {
        self.done.is_none() && self.leases.len() + self.votes.len() < self.wanted as usize
    }

    /// True unless `worker` holds a lease on it or already counted it.
    pub fn can_take(&self, worker: &str) -> bool {
        !self.leases.iter().any(|l| l.worker == worker) && !self.voters.iter().any(|v| v == worker)
    }

    pub fn lease(&mut self, worker: &str, epoch: u64) {
        self.leases.push(Lease {
            worker: worker.to_owned(),
            epoch,
        });
    }

    /// Takes a count from `worker_id` (shown as `worker`), with `quorum`
    /// equal counts deciding.
    pub fn vote(&mut self, worker_id: &str, worker: &str, leaves: Leaves, quorum: u32) -> VoteOutcome {
        if self.done.is_some() || self.voters.iter().any(|v| v == worker_id) {
            return VoteOutcome::Ignored;
        }
        self.leases.retain(|l| l.worker != worker_id);
        self.voters.push(worker_id.to_owned());
        self.votes.push(Vote {
            worker: worker.to_owned(),
            leaves,
        });
        let agreeing = self.votes.iter().filter(|v| v.leaves == leaves).count();
        if agreeing >= quorum as usize {
            self.done = Some(leaves);
            return VoteOutcome::Decided {
                leaves,
                votes: std::mem::take(&mut self.votes),
            };
        }
        if self.votes.len() >= self.wanted as usize && self.votes.iter().any(|v| v.leaves != leaves) {
            self.wanted += 1;
            if self.wanted > MAX_VOTES {
                return VoteOutcome::NoMajority {
                    votes: self.votes.clone(),
                };
            }
            return VoteOutcome::Disagreed;
        }
        VoteOutcome::Counted
    }

    /// Ends the lease of `epoch` (its worker gave the unit back); returns
    /// that worker.
    pub fn release(&mut self, epoch: u64) -> Option<String> {
        let at = self.leases.iter().position(|l| l.epoch == epoch)?;
        Some(self.leases.swap_remove(at).worker)
    }

    /// Ends `worker`'s lease without a count (the worker was lost).
    pub fn drop_lease(&mut self, worker: &str) -> bool {
        let before = self.leases.len();
        self.leases.retain(|l| l.worker != worker);
        let dropped = self.leases.len() != before;
        self.failures += u32::from(dropped);
        dropped
    }

    /// True while some worker holds a lease.
    pub fn leased(&self) -> bool {
        !self.leases.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(quorum: u32) -> Unit {
        Unit::new("B:W21-32:B1-12".to_owned(), Vec::new(), quorum)
    }

    #[test]
    fn one_count_decides_without_verification() {
        let mut u = unit(1);
        assert!(u.needs_lease());
        u.lease("a", 1);
        assert!(!u.needs_lease());
        assert!(matches!(
            u.vote("a", "A", Leaves::full(7), 1),
            VoteOutcome::Decided { .. }
        ));
        assert_eq!(u.done(), Some(Leaves::full(7)));
        assert_eq!(u.vote("b", "B", Leaves::full(7), 1), VoteOutcome::Ignored);
    }

    #[test]
    fn verification_needs_two_workers_and_takes_the_majority() {
        let mut u = unit(2);
        u.lease("a", 1);
        assert!(u.needs_lease(), "a second worker is wanted at once");
        assert!(!u.can_take("a"), "not the same worker twice");
        u.lease("b", 2);
        assert!(!u.needs_lease());
        assert_eq!(u.vote("a", "A", Leaves::full(7), 2), VoteOutcome::Counted);
        assert_eq!(
            u.vote("a", "A", Leaves::full(7), 2),
            VoteOutcome::Ignored,
            "one vote per worker"
        );
        assert_eq!(u.vote("b", "B", Leaves::full(8), 2), VoteOutcome::Disagreed);
        assert!(u.needs_lease() && !u.can_take("b") && u.can_take("c"));
        u.lease("c", 3);
        match u.vote("c", "C", Leaves::full(7), 2) {
            VoteOutcome::Decided { leaves, votes } => {
                assert_eq!(leaves, Leaves::full(7));
                assert_eq!(votes.len(), 3);
                assert_eq!(
                    votes[1],
                    Vote {
                        worker: "B".into(),
                        leaves: Leaves::full(8)
                    }
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn no_majority_within_the_limit_is_reported() {
        let mut u = unit(2);
        let mut last = VoteOutcome::Counted;
        for (i, worker) in ["a", "b", "c", "d", "e"].into_iter().enumerate() {
            last = u.vote(worker, worker, Leaves::full(i as u128), 2);
        }
        assert!(
            matches!(last, VoteOutcome::NoMajority { ref votes } if votes.len() == 5),
            "{last:?}"
        );
    }
}
