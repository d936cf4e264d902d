//! Credit and reliability per participant: counts taken, leaves, CPU time,
//! counts that lost a majority vote, and leases that lapsed. A participant
//! that loses too many votes is quarantined: it leases nothing more, its
//! counts are refused (those waiting for a verdict dropped), and what it
//! decided alone is counted again. One
//! whose leases keep lapsing is suspended: it leases nothing until its
//! strikes fade or an admin lifts them. Either is charged to the
//! participant, never to a job.

use std::collections::{HashMap, HashSet};

use crate::jobs::Op;
use perft_model::ParticipantId;

/// What a participant contributed, and its record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Credit {
    /// Counts it sent that were taken (as votes or verdicts).
    pub units: u64,
    /// Leaves of those counts (unweighted: the work done).
    pub leaves: u128,
    /// CPU milliseconds its workers said the counts took (capped per count).
    pub cpu_ms: u64,
    /// Counts it sent that lost a majority vote.
    pub lost_votes: u64,
    /// Lost votes an admin forgave (lifting a quarantine): quarantine
    /// counts only those past it.
    pub lost_votes_forgiven: u64,
    /// Leases it let lapse (no count by the deadline, or its session lost).
    pub lapses: u64,
    /// Lapse events not yet faded or repaid: one per reaper pass that
    /// lapsed any of its leases.
    pub strikes: u64,
    /// Leases lapsed since its strikes were last cleared, not yet repaid by
    /// counts: an honest machine that crashed counts its way back (each
    /// count taken repays one, and none left clears the strikes); one that
    /// leases and never counts does not.
    pub lapse_debt: u64,
    /// When the last strike was given (ms since the Unix epoch).
    pub last_strike_ms: u64,
}

impl Credit {
    /// Adds `other`'s contribution, saturating: credit is for people,
    /// never for a count. The record (strikes, forgiveness) is not a sum.
    pub fn add(&mut self, other: &Credit) {
        self.units = self.units.saturating_add(other.units);
        self.leaves = self.leaves.saturating_add(other.leaves);
        self.cpu_ms = self.cpu_ms.saturating_add(other.cpu_ms);
        self.lost_votes = self.lost_votes.saturating_add(other.lost_votes);
        self.lapses = self.lapses.saturating_add(other.lapses);
    }

    /// Lost votes that count toward quarantine.
    pub fn unforgiven_lost_votes(&self) -> u64 {
        self.lost_votes.saturating_sub(self.lost_votes_forgiven)
    }

    /// Strikes still standing at `now_ms`: one fades every `fade_ms`
    /// after the last.
    pub fn strikes_at(&self, now_ms: u64, fade_ms: u64) -> u64 {
        let faded = now_ms.saturating_sub(self.last_strike_ms) / fade_ms.max(1);
        self.strikes.saturating_sub(faded)
    }
}

/// Most CPU time one count is credited with: a day.
pub const MAX_CPU_MS_PER_COUNT: u64 = 24 * 3600 * 1000;

/// Credit is journaled at most this often (a lost vote or a lapse at
/// once, since quarantine and suspension follow them): with a thousand
/// participants reporting, a row per report call would cost the
/// acknowledgements a tenth of their speed.
const CREDIT_WRITE_MS: u64 = 1000;

/// When a participant is barred from leasing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Standing {
    /// Lost votes past which a participant is quarantined.
    pub quarantine_after: Option<u64>,
    /// Strikes at which a participant is suspended.
    pub lapse_limit: u64,
    /// A strike fades this long after the last one.
    pub strike_fade_ms: u64,
}

impl Default for Standing {
    fn default() -> Standing {
        Standing {
            quarantine_after: None,
            lapse_limit: DEFAULT_LAPSE_LIMIT,
            strike_fade_ms: STRIKE_FADE_MS,
        }
    }
}

/// Lapse events that suspend a participant by default.
pub const DEFAULT_LAPSE_LIMIT: u64 = 3;
/// A strike fades an hour after the last one by default (at least twice
/// the progress deadline: see `Config::standing`).
pub const STRIKE_FADE_MS: u64 = 3600 * 1000;

/// Every participant's credit and record, and which totals the journal
/// has not yet seen. A restart loses at most the last second's credit,
/// never a count, a lost vote or a lapse.
#[derive(Debug)]
pub(super) struct Ledger {
    totals: HashMap<ParticipantId, Credit>,
    dirty: HashSet<ParticipantId>,
    /// A lost vote, a lapse or a lift is waiting: write at once.
    urgent: bool,
    last_written_ms: u64,
    standing: Standing,
    /// Participants quarantined since last asked.
    newly_quarantined: Vec<ParticipantId>,
}

impl Ledger {
    pub fn new(restored: Vec<(ParticipantId, Credit)>, standing: Standing, now_ms: u64) -> Ledger {
        let mut ledger = Ledger {
            totals: restored.into_iter().collect(),
            dirty: HashSet::new(),
            urgent: false,
            last_written_ms: now_ms,
            standing,
            newly_quarantined: Vec::new(),
        };
        // The recount a quarantine calls for runs after the verdict that
        // caused it is journaled: a restart (or a rebuild after a failed
        // write) in between would lose it, and what the participant decided
        // alone would stand. So every participant quarantined when the
        // table is rebuilt is recounted once more; a recount finds nothing
        // it reopened before.
        let mut quarantined: Vec<ParticipantId> = ledger
            .totals
            .keys()
            .filter(|p| ledger.is_quarantined(p))
            .cloned()
            .collect();
        quarantined.sort();
        ledger.newly_quarantined = quarantined;
        ledger
    }

    pub fn credit(&mut self, participant: &ParticipantId, delta: Credit) {
        let was = self.is_quarantined(participant);
        let credit = self.totals.entry(participant.clone()).or_default();
        credit.add(&delta);
        if delta.units > 0 && credit.lapse_debt > 0 {
            // Repaying lapses decides suspension: written at once, like
            // the lapses themselves (rare: only while a debt stands).
            self.urgent = true;
            credit.lapse_debt = credit.lapse_debt.saturating_sub(delta.units);
            if credit.lapse_debt == 0 {
                credit.strikes = 0;
            }
        }
        self.dirty.insert(participant.clone());
        self.urgent |= delta.lost_votes > 0;
        if !was && self.is_quarantined(participant) {
            tracing::warn!(
                %participant,
                "participant quarantined: too many of its counts lost a majority vote"
            );
            self.newly_quarantined.push(participant.clone());
        }
    }

    /// Charges `participant` with `leases` lapsed leases, as one strike.
    /// True when that suspends it.
    pub fn lapsed(&mut self, participant: &ParticipantId, leases: u64, now_ms: u64) -> bool {
        let fade = self.standing.strike_fade_ms;
        let limit = self.standing.lapse_limit;
        let credit = self.totals.entry(participant.clone()).or_default();
        let was = credit.strikes_at(now_ms, fade) >= limit;
        credit.lapses = credit.lapses.saturating_add(leases);
        credit.lapse_debt = credit.lapse_debt.saturating_add(leases);
        credit.strikes = credit.strikes_at(now_ms, fade).saturating_add(1);
        credit.last_strike_ms = now_ms;
        let now = credit.strikes >= limit;
        self.dirty.insert(participant.clone());
        self.urgent = true;
        !was && now && !participant.is_builtin()
    }

    pub fn is_quarantined(&self, participant: &ParticipantId) -> bool {
        self.standing.quarantine_after.is_some_and(|n| {
            self.totals
                .get(participant)
                .is_some_and(|c| c.unforgiven_lost_votes() >= n)
        })
    }

    /// Whether `participant`'s leases lapsed too often lately. The
    /// coordinator's owner (a built-in participant) is never suspended.
    pub fn is_suspended(&self, participant: &ParticipantId, now_ms: u64) -> bool {
        !participant.is_builtin()
            && self.totals.get(participant).is_some_and(|c| {
                c.strikes_at(now_ms, self.standing.strike_fade_ms) >= self.standing.lapse_limit
            })
    }

    /// An admin's pardon: forgives the lost votes so far (lifting a
    /// quarantine) and the strikes (lifting a suspension).
    pub fn lift(&mut self, participant: &ParticipantId, quarantine: bool, lapses: bool) -> Credit {
        let credit = self.totals.entry(participant.clone()).or_default();
        if quarantine {
            credit.lost_votes_forgiven = credit.lost_votes;
        }
        if lapses {
            credit.strikes = 0;
            credit.lapse_debt = 0;
        }
        let lifted = *credit;
        self.dirty.insert(participant.clone());
        self.urgent = true;
        lifted
    }

    pub fn get(&self, participant: &ParticipantId) -> Credit {
        self.totals.get(participant).copied().unwrap_or_default()
    }

    pub fn take_newly_quarantined(&mut self) -> Vec<ParticipantId> {
        std::mem::take(&mut self.newly_quarantined)
    }

    /// The changed totals, as journal writes, when they are due.
    pub fn take_ops(&mut self, now_ms: u64) -> Vec<Op> {
        if !self.has_pending(now_ms) {
            return Vec::new();
        }
        self.urgent = false;
        self.last_written_ms = now_ms;
        let mut dirty: Vec<ParticipantId> = self.dirty.drain().collect();
        dirty.sort();
        dirty
            .into_iter()
            .map(|participant| Op::Credit {
                total: self.get(&participant),
                participant,
            })
            .collect()
    }

    /// Whether changed totals are due for the journal.
    pub fn has_pending(&self, now_ms: u64) -> bool {
        !self.dirty.is_empty()
            && (self.urgent || now_ms.saturating_sub(self.last_written_ms) >= CREDIT_WRITE_MS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn standing(quarantine_after: Option<u64>) -> Standing {
        Standing {
            quarantine_after,
            ..Standing::default()
        }
    }

    #[test]
    fn credit_merges_and_quarantines_once() {
        let a = ParticipantId::parse("a").unwrap();
        let mut ledger = Ledger::new(
            vec![(
                a.clone(),
                Credit {
                    units: 1,
                    ..Credit::default()
                },
            )],
            standing(Some(2)),
            0,
        );
        let lost = Credit {
            lost_votes: 1,
            ..Credit::default()
        };
        ledger.credit(&a, lost);
        assert!(!ledger.is_quarantined(&a));
        ledger.credit(&a, lost);
        ledger.credit(&a, lost);
        assert!(ledger.is_quarantined(&a));
        assert_eq!(ledger.take_newly_quarantined(), std::slice::from_ref(&a));
        assert!(ledger.take_newly_quarantined().is_empty());
        assert_eq!(ledger.get(&a).units, 1);
        let ops: Vec<Op> = ledger.take_ops(0);
        assert!(matches!(
            &ops[..],
            [Op::Credit { participant, total }] if *participant == a && total.lost_votes == 3 && total.units == 1
        ));
        assert!(!ledger.has_pending(0));
        // Plain credit waits for the interval; a lost vote does not.
        ledger.credit(
            &a,
            Credit {
                units: 1,
                ..Credit::default()
            },
        );
        assert!(!ledger.has_pending(500) && ledger.take_ops(500).is_empty());
        assert!(ledger.has_pending(1000));
        // An admin lifts the quarantine: only new lost votes count.
        ledger.lift(&a, true, false);
        assert!(!ledger.is_quarantined(&a));
        ledger.credit(&a, lost);
        assert!(!ledger.is_quarantined(&a));
        ledger.credit(&a, lost);
        assert!(ledger.is_quarantined(&a));
    }

    #[test]
    fn a_rebuilt_ledger_owes_every_quarantined_participant_its_recount() {
        let (a, b, c) = (
            ParticipantId::parse("a").unwrap(),
            ParticipantId::parse("b").unwrap(),
            ParticipantId::parse("c").unwrap(),
        );
        let lost = |lost_votes, lost_votes_forgiven| Credit {
            lost_votes,
            lost_votes_forgiven,
            ..Credit::default()
        };
        // c was quarantined and lifted; b lost too few votes.
        let restored = vec![(c.clone(), lost(3, 3)), (b, lost(1, 0)), (a.clone(), lost(2, 0))];
        let mut ledger = Ledger::new(restored.clone(), standing(Some(2)), 0);
        assert_eq!(ledger.take_newly_quarantined(), [a]);
        assert!(ledger.take_newly_quarantined().is_empty());
        let mut ledger = Ledger::new(restored, standing(None), 0);
        assert!(ledger.take_newly_quarantined().is_empty());
        assert!(!ledger.is_quarantined(&c));
    }

    #[test]
    fn lapses_suspend_until_they_fade_or_are_lifted() {
        let a = ParticipantId::parse("a").unwrap();
        let mut ledger = Ledger::new(Vec::new(), standing(None), 0);
        let hour = STRIKE_FADE_MS;
        assert!(!ledger.lapsed(&a, 5, 0));
        assert!(!ledger.lapsed(&a, 5, 10));
        assert!(!ledger.is_suspended(&a, 10));
        assert!(ledger.lapsed(&a, 5, 20), "the third strike suspends");
        assert!(ledger.is_suspended(&a, 20));
        assert_eq!(ledger.get(&a).lapses, 15);
        // One strike fades an hour after the last.
        assert!(!ledger.is_suspended(&a, 20 + hour));
        assert!(ledger.lapsed(&a, 1, 20 + hour));
        assert!(ledger.is_suspended(&a, 20 + hour));
        // Counts repay the lapsed leases; all repaid clears the strikes.
        let counted = |units| Credit {
            units,
            ..Credit::default()
        };
        ledger.credit(&a, counted(10));
        assert!(ledger.is_suspended(&a, 20 + hour), "6 leases still owed");
        ledger.credit(&a, counted(6));
        assert!(!ledger.is_suspended(&a, 20 + hour));
        assert!(!ledger.lapsed(&a, 1, 30 + hour), "one strike again, not three");
        assert!(!ledger.is_suspended(&a, 30 + hour));
        ledger.lift(&a, false, true);
        assert!(!ledger.is_suspended(&a, 20 + hour));
        assert_eq!(ledger.get(&a).lapses, 17, "the record stays");
        // The coordinator's owner is never suspended.
        let owner = ParticipantId::parse("anonymous").unwrap();
        for t in 0..5 {
            assert!(!ledger.lapsed(&owner, 1, t));
        }
        assert!(!ledger.is_suspended(&owner, 5));
    }
}
