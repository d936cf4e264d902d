//! The lease and vote state of one open unit: its leases, the counts
//! workers sent for it (votes), and its verdict. A job keeps one only for
//! units with leases, votes or lapses, so its memory follows the open
//! work. A lease is the only authority for a count: a count is taken for a
//! lease the unit still holds, by the participant that holds it. Each lease
//! has its own progress deadline; a session's liveness (heartbeats) is kept
//! by the worker registry. Without verification one count decides; with
//! it, two participants must agree, and each disagreement asks one more. A
//! voter is a participant, as its credential proves: its machines and
//! sessions (a restarted worker, several hosts of one owner) never confirm
//! each other.

use perft_model::Count;

use perft_model::{Epoch, ParticipantId, SessionId};

/// Most counts gathered for one unit before the job fails for want of a
/// majority.
pub const MAX_VOTES: u32 = 5;

#[derive(Clone, Debug, PartialEq, Eq)]
struct Lease {
    /// The registration that holds it.
    session: SessionId,
    /// The participant it belongs to.
    identity: ParticipantId,
    epoch: Epoch,
}

/// Participants whose leases of one unit lapsed before it fails its job:
/// a unit no three owners can count is poison, not one owner's fault.
pub const POISON_PARTICIPANTS: usize = 3;

/// A count a worker sent for a unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Vote {
    /// The worker as people know it: its name and id.
    pub worker: String,
    pub count: Count,
}

/// What a vote did.
// A verdict lives for one report: a count kept inline costs less than a box.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VoteOutcome {
    /// A duplicate, or the unit was already decided.
    Ignored,
    /// Kept; more counts are needed.
    Counted,
    /// The counts disagree: one more worker is needed.
    Disagreed,
    /// The unit's count is settled; `votes` are all counts it got (more
    /// than the quorum when some disagreed), `deciders` the participants
    /// whose counts agreed, `losers` those whose counts lost.
    Decided {
        count: Count,
        votes: Vec<Vote>,
        deciders: Vec<ParticipantId>,
        losers: Vec<ParticipantId>,
    },
    /// No count reached a majority within [`MAX_VOTES`].
    NoMajority { votes: Vec<Vote> },
}

#[derive(Clone, Debug)]
pub(crate) struct Unit {
    leases: Vec<Lease>,
    votes: Vec<Vote>,
    /// The participants of the votes: one vote per participant.
    voters: Vec<ParticipantId>,
    done: Option<Count>,
    /// Counts wanted before a verdict: the quorum, plus one per
    /// disagreement.
    wanted: u32,
    /// Leases that ended without a count.
    pub failures: u32,
    /// The participants whose leases ended without a count, once each.
    lapsers: Vec<ParticipantId>,
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
            lapsers: Vec::new(),
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
    pub fn done(&self) -> Option<Count> {
        self.done
    }

    /// True while the unit should be handed to one more worker.
    pub fn needs_lease(&self) -> bool {
        self.done.is_none() && self.leases.len() + self.votes.len() < self.wanted as usize
    }

    /// True when the participant `identity` holds the lease `epoch` on it:
    /// the only lease a count of it is taken for.
    pub fn holds(&self, epoch: Epoch, identity: &ParticipantId) -> bool {
        self.leases
            .iter()
            .any(|l| l.epoch == epoch && l.identity == *identity)
    }

    /// The participant holding the lease `epoch`, and its session.
    pub fn holder_of(&self, epoch: Epoch) -> Option<(&SessionId, &ParticipantId)> {
        self.leases
            .iter()
            .find(|l| l.epoch == epoch)
            .map(|l| (&l.session, &l.identity))
    }

    /// How many distinct participants let a lease of it lapse.
    pub fn lapsed_participants(&self) -> usize {
        self.lapsers.len()
    }

    /// True when every lease of it that lapsed was the coordinator
    /// owner's own (the built-in admin): its lapses may fail its job.
    pub fn lapsed_by_owner_only(&self) -> bool {
        self.lapsers.iter().all(ParticipantId::is_builtin)
    }

    /// True unless the participant `identity` holds a lease on it or
    /// already counted it.
    pub fn can_take(&self, identity: &ParticipantId) -> bool {
        !self.leases.iter().any(|l| l.identity == *identity) && !self.voters.contains(identity)
    }

    /// The participants that may not take it: those holding a lease on it
    /// and those that counted it.
    pub fn barred(&self) -> Vec<ParticipantId> {
        let leasing = self.leases.iter().map(|l| l.identity.clone());
        leasing.chain(self.voters.iter().cloned()).collect()
    }

    pub fn lease(&mut self, session: &SessionId, identity: &ParticipantId, epoch: Epoch) {
        self.leases.push(Lease {
            session: session.clone(),
            identity: identity.clone(),
            epoch,
        });
    }

    /// Takes a count from the participant `identity` (shown as `worker`),
    /// with `quorum` equal counts from distinct participants deciding.
    pub fn vote(&mut self, identity: &ParticipantId, worker: &str, count: Count, quorum: u32) -> VoteOutcome {
        if self.done.is_some() || self.voters.contains(identity) {
            return VoteOutcome::Ignored;
        }
        self.leases.retain(|l| l.identity != *identity);
        self.voters.push(identity.clone());
        self.votes.push(Vote {
            worker: worker.to_owned(),
            count,
        });
        let agreeing = self.votes.iter().filter(|v| v.count == count).count();
        if agreeing >= quorum as usize {
            self.done = Some(count);
            let (agreed, lost): (Vec<_>, Vec<_>) = self
                .voters
                .iter()
                .zip(&self.votes)
                .partition(|(_, v)| v.count == count);
            let names =
                |pairs: Vec<(&ParticipantId, &Vote)>| pairs.into_iter().map(|(p, _)| p.clone()).collect();
            let (deciders, losers) = (names(agreed), names(lost));
            return VoteOutcome::Decided {
                count,
                votes: std::mem::take(&mut self.votes),
                deciders,
                losers,
            };
        }
        if self.votes.len() >= self.wanted as usize && self.votes.iter().any(|v| v.count != count) {
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

    /// Ends the lease of `epoch` held by the participant `identity` (it
    /// gave the unit back); returns the session that held it.
    pub fn release(&mut self, epoch: Epoch, identity: &ParticipantId) -> Option<SessionId> {
        let at = self
            .leases
            .iter()
            .position(|l| l.epoch == epoch && l.identity == *identity)?;
        Some(self.leases.swap_remove(at).session)
    }

    /// Ends `session`'s lease without a count (the worker was lost);
    /// returns the participant it was charged to.
    pub fn drop_lease(&mut self, session: &SessionId) -> Option<ParticipantId> {
        let at = self.leases.iter().position(|l| l.session == *session)?;
        let lease = self.leases.swap_remove(at);
        Some(self.lapsed(lease))
    }

    /// Ends the lease `epoch` without a count (it passed its deadline);
    /// returns its session and the participant it was charged to.
    pub fn lapse(&mut self, epoch: Epoch) -> Option<(SessionId, ParticipantId)> {
        let at = self.leases.iter().position(|l| l.epoch == epoch)?;
        let lease = self.leases.swap_remove(at);
        let session = lease.session.clone();
        Some((session, self.lapsed(lease)))
    }

    fn lapsed(&mut self, lease: Lease) -> ParticipantId {
        self.failures += 1;
        if !self.lapsers.contains(&lease.identity) {
            self.lapsers.push(lease.identity.clone());
        }
        lease.identity
    }

    /// True when `identity` sent a count still waiting for a verdict.
    pub fn has_voter(&self, identity: &ParticipantId) -> bool {
        self.done.is_none() && self.voters.contains(identity)
    }

    /// Forgets `identity`'s undecided count and its leases (it was
    /// revoked); true when a count went.
    pub fn drop_voter(&mut self, identity: &ParticipantId) -> bool {
        self.leases.retain(|l| l.identity != *identity);
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

    fn p(name: &str) -> ParticipantId {
        ParticipantId::parse(name).unwrap()
    }

    fn full(n: u128) -> Count {
        Count::plain(perft_core::Leaves::full(n))
    }

    #[test]
    fn equal_leaves_with_different_kinds_disagree() {
        let mut u = unit(2);
        let kinds = |k: &[u128]| Count::with_kinds(perft_core::Leaves::full(9), k).unwrap();
        assert_eq!(u.vote(&p("a"), "A", kinds(&[1, 2]), 2), VoteOutcome::Counted);
        assert_eq!(u.vote(&p("b"), "B", kinds(&[1, 3]), 2), VoteOutcome::Disagreed);
        assert!(matches!(
            u.vote(&p("c"), "C", kinds(&[1, 3]), 2),
            VoteOutcome::Decided { count, .. } if count.kinds() == [1, 3]
        ));
    }

    fn s(id: &str) -> SessionId {
        SessionId::parse(id).unwrap()
    }

    #[test]
    fn one_count_decides_without_verification() {
        let mut u = unit(1);
        assert!(u.needs_lease());
        u.lease(&s("a"), &p("a"), Epoch(1));
        assert!(!u.needs_lease());
        assert!(matches!(
            u.vote(&p("a"), "A", full(7), 1),
            VoteOutcome::Decided { .. }
        ));
        assert_eq!(u.done(), Some(full(7)));
        assert_eq!(u.vote(&p("b"), "B", full(7), 1), VoteOutcome::Ignored);
    }

    #[test]
    fn verification_needs_two_workers_and_takes_the_majority() {
        let mut u = unit(2);
        u.lease(&s("a"), &p("a"), Epoch(1));
        assert!(u.needs_lease(), "a second worker is wanted at once");
        assert!(!u.can_take(&p("a")), "not the same worker twice");
        u.lease(&s("b"), &p("b"), Epoch(2));
        assert!(!u.needs_lease());
        assert_eq!(u.vote(&p("a"), "A", full(7), 2), VoteOutcome::Counted);
        assert_eq!(
            u.vote(&p("a"), "A", full(7), 2),
            VoteOutcome::Ignored,
            "one vote per worker"
        );
        assert_eq!(u.vote(&p("b"), "B", full(8), 2), VoteOutcome::Disagreed);
        assert!(u.needs_lease() && !u.can_take(&p("b")) && u.can_take(&p("c")));
        u.lease(&s("c"), &p("c"), Epoch(3));
        match u.vote(&p("c"), "C", full(7), 2) {
            VoteOutcome::Decided {
                count,
                votes,
                deciders,
                losers,
            } => {
                assert_eq!(deciders, [p("a"), p("c")]);
                assert_eq!(losers, [p("b")]);
                assert_eq!(count, full(7));
                assert_eq!(votes.len(), 3);
                assert_eq!(
                    votes[1],
                    Vote {
                        worker: "B".into(),
                        count: full(8)
                    }
                );
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn one_participant_never_confirms_itself() {
        let mut u = unit(2);
        u.lease(&s("session-1"), &p("lab-a"), Epoch(1));
        assert!(
            !u.can_take(&p("lab-a")),
            "another session of the same participant"
        );
        assert_eq!(u.vote(&p("lab-a"), "A", full(7), 2), VoteOutcome::Counted);
        // Restarted: a new session, the same participant.
        assert!(!u.can_take(&p("lab-a")));
        assert_eq!(u.vote(&p("lab-a"), "A again", full(7), 2), VoteOutcome::Ignored);
        assert_eq!(u.done(), None);
        u.lease(&s("session-2"), &p("lab-b"), Epoch(2));
        assert_eq!(u.release(Epoch(2), &p("lab-a")), None, "not its lease");
        assert_eq!(u.release(Epoch(1), &p("lab-b")), None, "not its epoch");
        assert!(matches!(
            u.vote(&p("lab-b"), "B", full(7), 2),
            VoteOutcome::Decided { .. }
        ));
    }

    #[test]
    fn a_lease_is_released_by_its_participant_and_epoch_and_dropped_by_its_session() {
        let mut u = unit(2);
        u.lease(&s("session-1"), &p("a"), Epoch(1));
        u.lease(&s("session-2"), &p("b"), Epoch(2));
        assert_eq!(u.release(Epoch(1), &p("b")), None);
        assert_eq!(u.release(Epoch(1), &p("a")), Some(s("session-1")));
        assert_eq!(u.drop_lease(&s("session-1")), None, "released already");
        assert_eq!(u.drop_lease(&s("session-2")), Some(p("b")));
        assert_eq!(u.failures, 1);
        assert!(!u.leased());
    }

    #[test]
    fn no_majority_within_the_limit_is_reported() {
        let mut u = unit(2);
        let mut last = VoteOutcome::Counted;
        for (i, worker) in ["a", "b", "c", "d", "e"].into_iter().enumerate() {
            last = u.vote(&p(worker), worker, full(i as u128), 2);
        }
        assert!(
            matches!(last, VoteOutcome::NoMajority { ref votes } if votes.len() == 5),
            "{last:?}"
        );
    }
}
