//! Credit and reliability per participant: counts taken, leaves, CPU time,
//! and counts that lost a majority vote. A participant that loses too many
//! is quarantined: it leases nothing more, and what it decided alone is
//! counted again.

use std::collections::HashMap;

use crate::ids::ParticipantId;
use crate::jobs::Op;

/// What a participant contributed.
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
}

impl Credit {
    /// Adds `other`, saturating: credit is for people, never for a count.
    pub fn add(&mut self, other: &Credit) {
        self.units = self.units.saturating_add(other.units);
        self.leaves = self.leaves.saturating_add(other.leaves);
        self.cpu_ms = self.cpu_ms.saturating_add(other.cpu_ms);
        self.lost_votes = self.lost_votes.saturating_add(other.lost_votes);
    }
}

/// Most CPU time one count is credited with: a day.
pub const MAX_CPU_MS_PER_COUNT: u64 = 24 * 3600 * 1000;

/// Credit is journaled at most this often (a lost vote at once, since
/// quarantine follows it): with a thousand participants reporting, a row
/// per report call would cost the acknowledgements a tenth of their speed.
const CREDIT_WRITE_INTERVAL: std::time::Duration = std::time::Duration::from_secs(1);

/// Every participant's credit, and which totals the journal has not yet
/// seen. A restart loses at most the last second's credit, never a count
/// or a lost vote.
#[derive(Debug)]
pub(super) struct Ledger {
    totals: HashMap<ParticipantId, Credit>,
    dirty: std::collections::HashSet<ParticipantId>,
    /// A lost vote is waiting: write at once.
    urgent: bool,
    last_written: std::time::Instant,
    /// Lost votes past which a participant is quarantined.
    quarantine_after: Option<u64>,
    /// Participants quarantined since last asked.
    newly_quarantined: Vec<ParticipantId>,
}

impl Default for Ledger {
    fn default() -> Ledger {
        Ledger::new(Vec::new(), None)
    }
}

impl Ledger {
    pub fn new(restored: Vec<(ParticipantId, Credit)>, quarantine_after: Option<u64>) -> Ledger {
        Ledger {
            totals: restored.into_iter().collect(),
            dirty: std::collections::HashSet::new(),
            urgent: false,
            last_written: std::time::Instant::now(),
            quarantine_after,
            newly_quarantined: Vec::new(),
        }
    }

    pub fn credit(&mut self, participant: &ParticipantId, delta: Credit) {
        let was = self.is_quarantined(participant);
        self.totals.entry(participant.clone()).or_default().add(&delta);
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

    pub fn is_quarantined(&self, participant: &ParticipantId) -> bool {
        self.quarantine_after
            .is_some_and(|n| self.totals.get(participant).is_some_and(|c| c.lost_votes >= n))
    }

    pub fn get(&self, participant: &ParticipantId) -> Credit {
        self.totals.get(participant).copied().unwrap_or_default()
    }

    pub fn take_newly_quarantined(&mut self) -> Vec<ParticipantId> {
        std::mem::take(&mut self.newly_quarantined)
    }

    /// The changed totals, as journal writes, when they are due.
    pub fn take_ops(&mut self) -> Vec<Op> {
        if !self.has_pending() {
            return Vec::new();
        }
        self.urgent = false;
        self.last_written = std::time::Instant::now();
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
    pub fn has_pending(&self) -> bool {
        !self.dirty.is_empty() && (self.urgent || self.last_written.elapsed() >= CREDIT_WRITE_INTERVAL)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
            Some(2),
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
        let ops: Vec<Op> = ledger.take_ops();
        assert!(matches!(
            &ops[..],
            [Op::Credit { participant, total }] if *participant == a && total.lost_votes == 3 && total.units == 1
        ));
        assert!(!ledger.has_pending());
        // Plain credit waits for the interval; a lost vote does not.
        ledger.credit(
            &a,
            Credit {
                units: 1,
                ..Credit::default()
            },
        );
        assert!(!ledger.has_pending() && ledger.take_ops().is_empty());
    }
}
