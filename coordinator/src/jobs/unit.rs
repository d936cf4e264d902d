//! The lease and vote state of one open unit: its leases, the counts
//! workers sent for it (votes), and its verdict. A job keeps one only for
//! units with leases or votes, so its memory follows the open work. Lease deadlines are kept per worker session by the job
//! table (a heartbeat renews all of a session's leases at once), not here.
//! Without verification one count decides; with it, two participants must
//! agree, and each disagreement asks one more. A voter is a participant,
//! as its credential proves: its machines and sessions (a restarted
//! worker, several hosts of one owner) never confirm each other.

use perft_core::Leaves;

/// Most counts gathered for one unit before the job fails for want of a
/// majority.
pub const MAX_VOTES: u32 = 5;

#[derive(Clone, Debug, PartialEq, Eq)]
struct Lease {
    /// The registration that holds it.
    session: String,
    /// The machine's name.
    identity: String,
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
    /// than the quorum when some disagreed), `machines` the participants
    /// whose counts agreed, `losers` those whose counts lost.
    Decided {
        leaves: Leaves,
        votes: Vec<Vote>,
        machines: Vec<String>,
        losers: Vec<String>,
    },
    /// No count reached a majority within [`MAX_VOTES`].
    NoMajority { votes: Vec<Vote> },
}

#[derive(Clone, Debug)]
pub(crate) struct Unit {
    leases: Vec<Lease>,
    votes: Vec<Vote>,
    /// Machine names of the votes: one vote per machine.
    voters: Vec<String>,
    done: Option<Leaves>,
    /// Counts wanted before a verdict: the quorum, plus one per
    /// disagreement.
    wanted: u32,
    /// Leases that ended without a count.
    pub failures: u32,
}

impl Unit {
    pub fn new(quorum: u32) -> Unit {
        Unit {
            leases: Vec::new(),
            votes: Vec::new(),
            voters: Vec::new(),
            done: None,
            wanted: quorum,
            failures: 0,
        }
    }

    /// True when it holds nothing a fresh unit would not: it can be
    /// forgotten.
    pub fn is_idle(&self, quorum: u32) -> bool {
        self.leases.is_empty()
            && self.votes.is_empty()
            && self.done.is_none()
            && self.failures == 0
            && self.wanted == quorum
    }

    /// The unit's count once decided.
    #[cfg(test)]
    pub fn done(&self) -> Option<Leaves> {
        self.done
    }

    /// True while the unit should be handed to one more worker.
    pub fn needs_lease(&self) -> bool {
        self.done.is_none() && self.leases.len() + self.votes.len() < self.wanted as usize
    }

    /// True unless the machine `identity` holds a lease on it or already
    /// counted it.
    pub fn can_take(&self, identity: &str) -> bool {
        !self.leases.iter().any(|l| l.identity == identity) && !self.voters.iter().any(|v| v == identity)
    }

    pub fn lease(&mut self, session: &str, identity: &str, epoch: u64) {
        self.leases.push(Lease {
            session: session.to_owned(),
            identity: identity.to_owned(),
            epoch,
        });
    }

    /// Takes a count from the machine `identity` (shown as `worker`), with
    /// `quorum` equal counts from distinct machines deciding.
    pub fn vote(&mut self, identity: &str, worker: &str, leaves: Leaves, quorum: u32) -> VoteOutcome {
        if self.done.is_some() || self.voters.iter().any(|v| v == identity) {
            return VoteOutcome::Ignored;
        }
        self.leases.retain(|l| l.identity != identity);
        self.voters.push(identity.to_owned());
        self.votes.push(Vote {
            worker: worker.to_owned(),
            leaves,
        });
        let agreeing = self.votes.iter().filter(|v| v.leaves == leaves).count();
        if agreeing >= quorum as usize {
            self.done = Some(leaves);
            let (agreed, lost): (Vec<_>, Vec<_>) = self
                .voters
                .iter()
                .zip(&self.votes)
                .partition(|(_, v)| v.leaves == leaves);
            let names = |pairs: Vec<(&String, &Vote)>| pairs.into_iter().map(|(p, _)| p.clone()).collect();
            let (machines, losers) = (names(agreed), names(lost));
            return VoteOutcome::Decided {
                leaves,
                votes: std::mem::take(&mut self.votes),
                machines,
                losers,
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

    /// Ends the lease of `epoch` held by the machine `identity` (it gave
    /// the unit back); returns the session that held it.
    pub fn release(&mut self, epoch: u64, identity: &str) -> Option<String> {
        let at = self
            .leases
            .iter()
            .position(|l| l.epoch == epoch && l.identity == identity)?;
        Some(self.leases.swap_remove(at).session)
    }

    /// Ends `session`'s lease without a count (the worker was lost).
    pub fn drop_lease(&mut self, session: &str) -> bool {
        let before = self.leases.len();
        self.leases.retain(|l| l.session != session);
        let dropped = self.leases.len() != before;
        self.failures += u32::from(dropped);
        dropped
    }

    /// True when `identity` sent a count still waiting for a verdict.
    pub fn has_voter(&self, identity: &str) -> bool {
        self.done.is_none() && self.voters.iter().any(|v| v == identity)
    }

    /// Forgets `identity`'s undecided count and its leases (it was
    /// revoked); true when a count went.
    pub fn drop_voter(&mut self, identity: &str) -> bool {
        self.leases.retain(|l| l.identity != identity);
        let Some(at) = self
            .voters
            .iter()
            .position(|v| v == identity)
            .filter(|_| self.done.is_none())
        else {
            return false;
        };
        self.voters.remove(at);
        self.votes.remove(at);
        true
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
        Unit::new(quorum)
    }

    #[test]
    fn one_count_decides_without_verification() {
        let mut u = unit(1);
        assert!(u.needs_lease());
        u.lease("a", "a", 1);
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
        u.lease("a", "a", 1);
        assert!(u.needs_lease(), "a second worker is wanted at once");
        assert!(!u.can_take("a"), "not the same worker twice");
        u.lease("b", "b", 2);
        assert!(!u.needs_lease());
        assert_eq!(u.vote("a", "A", Leaves::full(7), 2), VoteOutcome::Counted);
        assert_eq!(
            u.vote("a", "A", Leaves::full(7), 2),
            VoteOutcome::Ignored,
            "one vote per worker"
        );
        assert_eq!(u.vote("b", "B", Leaves::full(8), 2), VoteOutcome::Disagreed);
        assert!(u.needs_lease() && !u.can_take("b") && u.can_take("c"));
        u.lease("c", "c", 3);
        match u.vote("c", "C", Leaves::full(7), 2) {
            VoteOutcome::Decided {
                leaves,
                votes,
                machines,
                losers,
            } => {
                assert_eq!(machines, ["a", "c"]);
                assert_eq!(losers, ["b"]);
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
    fn one_machine_never_confirms_itself() {
        let mut u = unit(2);
        u.lease("session-1", "host-a", 1);
        assert!(!u.can_take("host-a"), "another session of the same machine");
        assert_eq!(u.vote("host-a", "A", Leaves::full(7), 2), VoteOutcome::Counted);
        // Restarted under its name: a new session, the same machine.
        assert!(!u.can_take("host-a"));
        assert_eq!(
            u.vote("host-a", "A again", Leaves::full(7), 2),
            VoteOutcome::Ignored
        );
        assert_eq!(u.done(), None);
        u.lease("session-2", "host-b", 2);
        assert!(matches!(
            u.vote("host-b", "B", Leaves::full(7), 2),
            VoteOutcome::Decided { .. }
        ));
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
