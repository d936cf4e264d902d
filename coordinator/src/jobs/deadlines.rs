//! Every lease's progress deadline, soonest first. A lease that ended
//! (counted, handed back, lapsed) leaves its entry behind; the entry is
//! dropped when it comes due and the unit no longer holds that lease, so
//! ending a lease costs nothing here.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use perft_model::{Epoch, JobId, UnitId};

/// A lease's deadline.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Due {
    pub at_ms: u64,
    pub epoch: Epoch,
    pub unit_id: UnitId,
    pub job_id: JobId,
}

#[derive(Debug)]
pub(super) struct Deadlines {
    heap: BinaryHeap<Reverse<Due>>,
    /// Entries at which to look for ended leases again.
    compact_at: usize,
}

/// Fewest entries worth a compaction.
const MIN_COMPACT: usize = 4096;

impl Default for Deadlines {
    fn default() -> Deadlines {
        Deadlines {
            heap: BinaryHeap::new(),
            compact_at: MIN_COMPACT,
        }
    }
}

impl Deadlines {
    pub fn push(&mut self, due: Due) {
        self.heap.push(Reverse(due));
    }

    /// The next deadline passed at `now_ms`, if any.
    pub fn pop_due(&mut self, now_ms: u64) -> Option<Due> {
        if self.heap.peek().is_some_and(|Reverse(d)| d.at_ms <= now_ms) {
            return self.heap.pop().map(|Reverse(d)| d);
        }
        None
    }

    /// Entries held, ended leases' included.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    /// Whether the entries grew enough since the last compaction to look
    /// for ended leases (an O(1) test, so each lease call may ask).
    pub fn due_for_compaction(&self) -> bool {
        self.heap.len() >= self.compact_at
    }

    /// Drops the entries of leases that `still_held` says ended, when they
    /// outnumber the `live` ones (every lease that ended leaves its entry
    /// until due); each entry is looked at a bounded number of times.
    pub fn compact(&mut self, live: usize, still_held: impl Fn(&Due) -> bool) {
        if self.heap.len() > 2 * live + 1024 {
            let kept: Vec<Reverse<Due>> = std::mem::take(&mut self.heap)
                .into_vec()
                .into_iter()
                .filter(|Reverse(d)| still_held(d))
                .collect();
            self.heap = BinaryHeap::from(kept);
        }
        self.compact_at = (2 * self.heap.len()).max(MIN_COMPACT);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadlines_come_due_soonest_first() {
        let job = JobId::parse("j").unwrap();
        let due = |at_ms, unit| Due {
            at_ms,
            epoch: Epoch(unit),
            unit_id: UnitId(unit),
            job_id: job.clone(),
        };
        let mut deadlines = Deadlines::default();
        deadlines.push(due(30, 3));
        deadlines.push(due(10, 1));
        deadlines.push(due(20, 2));
        assert_eq!(deadlines.pop_due(5), None);
        assert_eq!(deadlines.pop_due(25).map(|d| d.unit_id), Some(UnitId(1)));
        assert_eq!(deadlines.pop_due(25).map(|d| d.unit_id), Some(UnitId(2)));
        assert_eq!(deadlines.pop_due(25), None);
        assert_eq!(deadlines.len(), 1);
        deadlines.compact(0, |_| false);
        assert_eq!(deadlines.len(), 1, "few entries are left alone");
        for unit in 0..5000 {
            deadlines.push(due(100 + unit, unit));
        }
        assert!(deadlines.due_for_compaction());
        deadlines.compact(10, |d| d.unit_id.0 % 1000 == 0);
        assert_eq!(deadlines.len(), 5, "ended leases dropped");
        assert!(!deadlines.due_for_compaction());
    }
}
