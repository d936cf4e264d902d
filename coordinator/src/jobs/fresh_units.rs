//! The units of a job never handed out yet, as stretches of plan order,
//! each worked through by one worker session.
//!
//! Neighbouring units share most of their deeper positions (in chess, the
//! units under one first move transpose into each other), and a worker's
//! table finds those only when the same worker counts them. So a session
//! keeps taking the next unit of its own stretch; a session without one
//! takes over the largest stretch nobody works on, else splits off the
//! back half of the largest one. Two workers on a fresh job thus split it into two
//! halves of plan order instead of taking turns unit by unit, which
//! counted chess perft(9) on two workers with 1.16x less CPU time
//! (`BENCHMARKS.md`). Memory is one entry per stretch and per session.

use std::collections::{BTreeMap, HashMap, HashSet};

use perft_model::SessionId;

/// Units `start..end` of plan order, never handed out, in disjoint
/// stretches; and where each session works.
#[derive(Debug)]
pub(super) struct FreshUnits {
    /// Stretch start to its end (exclusive); no stretch is empty.
    by_start: BTreeMap<u64, u64>,
    /// Each session's next unit: the start of the stretch it works through.
    runs: HashMap<SessionId, u64>,
    /// Units in all stretches.
    len: u64,
}

impl FreshUnits {
    /// Units `0..units`, one stretch nobody works on yet.
    pub fn new(units: u64) -> FreshUnits {
        let mut by_start = BTreeMap::new();
        if units > 0 {
            by_start.insert(0, units);
        }
        FreshUnits {
            by_start,
            runs: HashMap::new(),
            len: units,
        }
    }

    /// Units not handed out yet.
    pub fn len(&self) -> u64 {
        self.len
    }

    /// Whether unit `u` was never handed out.
    pub fn contains(&self, u: u64) -> bool {
        self.by_start
            .range(..=u)
            .next_back()
            .is_some_and(|(_, &end)| u < end)
    }

    /// The next unit for `session` that `skip` does not pass over: the
    /// next of its stretch, else the first of a stretch it takes over or
    /// splits off. Passed-over units leave the stretches too; the second
    /// value says how many. `None` when no unit is left.
    ///
    /// Skipping runs along a stretch before the maps are touched once, so
    /// a job restored with millions of decided units walks them at the
    /// cost of a bit test each.
    pub fn next_for(&mut self, session: &SessionId, skip: impl Fn(u64) -> bool) -> (Option<u64>, u64) {
        let mut skipped = 0;
        loop {
            let start = match self.runs.get(session) {
                Some(start) if self.by_start.contains_key(start) => *start,
                _ => match self.take_stretch() {
                    Some(start) => start,
                    None => {
                        self.runs.remove(session);
                        return (None, skipped);
                    }
                },
            };
            let Some(end) = self.by_start.remove(&start) else {
                return (None, skipped);
            };
            let mut u = start;
            while u < end && skip(u) {
                u += 1;
            }
            skipped += u - start;
            self.len -= u - start;
            if u == end {
                self.runs.remove(session);
                continue;
            }
            if u + 1 < end {
                self.by_start.insert(u + 1, end);
            }
            self.len -= 1;
            match self.runs.get_mut(session) {
                Some(next) => *next = u + 1,
                None => {
                    self.runs.insert(session.clone(), u + 1);
                }
            }
            return (Some(u), skipped);
        }
    }

    /// The start of a stretch for a session that has none: the largest
    /// stretch nobody works on, whole; else the back half of the largest
    /// (the whole of it when one unit is left).
    fn take_stretch(&mut self) -> Option<u64> {
        // One pass over the runs, so a choice costs O(stretches + sessions).
        let worked: HashSet<u64> = self.runs.values().copied().collect();
        let largest = |(a_start, a_end): (&u64, &u64), (b_start, b_end): (&u64, &u64)| {
            (a_end - a_start)
                .cmp(&(b_end - b_start))
                .then(b_start.cmp(a_start))
        };
        if let Some((&start, _)) = self
            .by_start
            .iter()
            .filter(|(start, _)| !worked.contains(*start))
            .max_by(|a, b| largest(*a, *b))
        {
            return Some(start);
        }
        let (&start, &end) = self.by_start.iter().max_by(|a, b| largest(*a, *b))?;
        if end - start == 1 {
            return Some(start);
        }
        let middle = start + (end - start) / 2;
        self.by_start.insert(start, middle);
        self.by_start.insert(middle, end);
        Some(middle)
    }

    /// Forgets where `session` works (it was lost or left): its stretch
    /// stays, for any session to take over.
    pub fn forget(&mut self, session: &SessionId) {
        self.runs.remove(session);
    }

    /// Heap bytes, roughly.
    pub fn heap_bytes(&self) -> usize {
        self.by_start.len() * 48 + self.runs.capacity() * 64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(name: &str) -> SessionId {
        SessionId::parse(name).unwrap()
    }

    fn take(stretches: &mut FreshUnits, who: &SessionId, n: usize) -> Vec<u64> {
        (0..n)
            .filter_map(|_| stretches.next_for(who, |_| false).0)
            .collect()
    }

    #[test]
    fn one_session_takes_every_unit_in_plan_order() {
        let mut stretches = FreshUnits::new(5);
        let a = session("a");
        assert_eq!(take(&mut stretches, &a, 7), [0, 1, 2, 3, 4]);
        assert_eq!(stretches.len(), 0);
        assert_eq!(stretches.next_for(&a, |_| false), (None, 0));
    }

    #[test]
    fn a_second_session_works_through_the_back_half() {
        let mut stretches = FreshUnits::new(10);
        let (a, b) = (session("a"), session("b"));
        assert_eq!(take(&mut stretches, &a, 2), [0, 1]);
        // 2..10 is a's: b splits off 6..10.
        assert_eq!(take(&mut stretches, &b, 2), [6, 7]);
        assert_eq!(take(&mut stretches, &a, 2), [2, 3]);
        assert!(stretches.contains(4) && stretches.contains(9));
        assert!(!stretches.contains(3) && !stretches.contains(6));
        assert_eq!(stretches.len(), 4);
        // a runs out at 6 and splits b's 8..10.
        assert_eq!(take(&mut stretches, &a, 3), [4, 5, 9]);
        assert_eq!(take(&mut stretches, &b, 3), [8]);
        assert_eq!(stretches.len(), 0);
    }

    #[test]
    fn a_lost_sessions_stretch_is_taken_over_whole() {
        let mut stretches = FreshUnits::new(8);
        let (a, b, c) = (session("a"), session("b"), session("c"));
        assert_eq!(take(&mut stretches, &a, 1), [0]);
        assert_eq!(take(&mut stretches, &b, 1), [4]);
        stretches.forget(&b);
        // b's 5..8 is nobody's now: c takes it over rather than split a's.
        assert_eq!(take(&mut stretches, &c, 3), [5, 6, 7]);
        // c then splits a's 1..4 (as large as anything left).
        assert_eq!(take(&mut stretches, &c, 1), [2]);
        assert_eq!(take(&mut stretches, &a, 3), [1, 3]);
        assert_eq!(stretches.len(), 0);
    }

    #[test]
    fn skipped_units_leave_in_one_walk_and_are_counted() {
        let mut stretches = FreshUnits::new(10);
        let a = session("a");
        // Units 0..4 and 6..10 are decided: a gets 4, then 5, then nothing.
        let decided = |u: u64| u != 4 && u != 5;
        assert_eq!(stretches.next_for(&a, decided), (Some(4), 4));
        assert_eq!(stretches.next_for(&a, decided), (Some(5), 0));
        assert_eq!(stretches.next_for(&a, decided), (None, 4));
        assert_eq!(stretches.len(), 0);
        assert!(stretches.by_start.is_empty() && stretches.runs.is_empty());
    }

    #[test]
    fn every_unit_is_handed_out_once_whatever_the_sessions_do() {
        let sessions: Vec<SessionId> = (0..5).map(|i| session(&format!("s{i}"))).collect();
        let mut stretches = FreshUnits::new(1000);
        let mut seen = vec![false; 1000];
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        while stretches.len() > 0 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let who = &sessions[(state % 5) as usize];
            if state.is_multiple_of(37) {
                stretches.forget(who);
                continue;
            }
            let u = stretches.next_for(who, |_| false).0.expect("units are left");
            assert!(!seen[u as usize], "unit {u} twice");
            assert!(!stretches.contains(u));
            seen[u as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
        assert!(stretches.by_start.is_empty());
    }

    #[test]
    fn an_empty_plan_has_nothing_to_hand_out() {
        let mut stretches = FreshUnits::new(0);
        assert_eq!(stretches.next_for(&session("a"), |_| false), (None, 0));
        assert!(!stretches.contains(0));
    }
}
