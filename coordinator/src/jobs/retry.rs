//! A job's units handed out before that want a lease again, grouped by the
//! participants that may not take them (those holding a lease on one or
//! that counted it). A lease passes over a whole group it may not take in
//! one step, so an owner running a verified job alone, every unit it
//! counted waiting for another owner, is not slowed by its own backlog.

use std::collections::{BTreeMap, HashMap, VecDeque};

use perft_model::{ParticipantId, UnitId};

/// What the job says of a unit taken from the queue for a participant.
pub(super) enum Wanted {
    /// It wants a lease and the participant may take it.
    Take,
    /// It wants no lease any more (decided, or leased enough).
    Drop,
    /// It wants a lease, but not from these participants, the asking one
    /// among them (sorted or not).
    NotFrom(Vec<ParticipantId>),
}

/// The group of participants who may take anything: nobody is barred.
const ANYONE: u32 = 0;

#[derive(Debug)]
pub(super) struct Retry {
    /// Each group's barred participants, sorted; group 0 bars nobody.
    groups: Vec<Vec<ParticipantId>>,
    group_ids: HashMap<Vec<ParticipantId>, u32>,
    /// Each non-empty group's units, most urgent first. An entry whose
    /// unit has since moved to another group (see `group_of`) is stale and
    /// skipped when reached.
    queues: BTreeMap<u32, VecDeque<UnitId>>,
    /// The group of each waiting unit.
    group_of: HashMap<UnitId, u32>,
    /// Entries in `queues`, stale ones included.
    entries: usize,
}

impl Default for Retry {
    fn default() -> Retry {
        Retry {
            groups: vec![Vec::new()],
            group_ids: HashMap::from([(Vec::new(), ANYONE)]),
            queues: BTreeMap::new(),
            group_of: HashMap::new(),
            entries: 0,
        }
    }
}

impl Retry {
    /// Units waiting.
    pub fn len(&self) -> u64 {
        self.group_of.len() as u64
    }

    /// Whether unit `u` waits.
    #[cfg(test)]
    pub fn contains(&self, u: UnitId) -> bool {
        self.group_of.contains_key(&u)
    }

    /// Queues `u`, barred to `barred`, ahead of its group; a unit already
    /// waiting moves to the group of its new bars (and keeps its place when
    /// they are the same).
    pub fn push_front(&mut self, u: UnitId, barred: Vec<ParticipantId>) {
        if let Some(group) = self.place(u, barred) {
            self.queues.entry(group).or_default().push_front(u);
            self.entries += 1;
            self.compact_if_stale();
        }
    }

    /// As [`Retry::push_front`], behind its group.
    pub fn push_back(&mut self, u: UnitId, barred: Vec<ParticipantId>) {
        if let Some(group) = self.place(u, barred) {
            self.queues.entry(group).or_default().push_back(u);
            self.entries += 1;
            self.compact_if_stale();
        }
    }

    /// Drops stale entries once they outnumber the waiting units (plus a
    /// margin): a group only its own barred participants ask of is never
    /// walked, so its stale entries would otherwise stay. Each entry is
    /// dropped once, so this costs O(1) a push, amortized.
    fn compact_if_stale(&mut self) {
        if self.entries <= 2 * self.group_of.len() + 1024 {
            return;
        }
        let group_of = &self.group_of;
        let mut kept = std::collections::HashSet::new();
        for (group, queue) in &mut self.queues {
            queue.retain(|u| group_of.get(u) == Some(group) && kept.insert(*u));
        }
        self.queues.retain(|_, queue| !queue.is_empty());
        self.entries = kept.len();
    }

    /// Records `u` in the group of `barred`; the group to queue it in, or
    /// `None` when it already waits there.
    fn place(&mut self, u: UnitId, mut barred: Vec<ParticipantId>) -> Option<u32> {
        barred.sort_unstable();
        barred.dedup();
        let group = match self.group_ids.get(&barred) {
            Some(&group) => group,
            None => {
                let group = self.groups.len() as u32;
                self.groups.push(barred.clone());
                self.group_ids.insert(barred, group);
                group
            }
        };
        (self.group_of.insert(u, group) != Some(group)).then_some(group)
    }

    /// The most urgent unit `identity` may take, asking `wanted` of each
    /// unit it reaches: a unit no longer wanted is dropped, one barred to
    /// `identity` moves to its group. Groups barring `identity` are passed
    /// over whole; each stale entry is dropped once.
    pub fn take_for(
        &mut self,
        identity: &ParticipantId,
        mut wanted: impl FnMut(UnitId) -> Wanted,
    ) -> Option<UnitId> {
        let mut from = ANYONE;
        loop {
            let group = self
                .queues
                .range(from..)
                .map(|(&group, _)| group)
                .find(|&group| self.groups[group as usize].binary_search(identity).is_err())?;
            from = group + 1;
            while let Some(u) = self.pop(group) {
                if self.group_of.get(&u) != Some(&group) {
                    continue;
                }
                self.group_of.remove(&u);
                match wanted(u) {
                    Wanted::Take => return Some(u),
                    Wanted::Drop => {}
                    // Barred to `identity`, so never in a group still ahead.
                    Wanted::NotFrom(barred) => self.push_back(u, barred),
                }
            }
        }
    }

    /// The front entry of `group`'s queue, dropping the queue once empty.
    fn pop(&mut self, group: u32) -> Option<UnitId> {
        let queue = self.queues.get_mut(&group)?;
        let u = queue.pop_front();
        self.entries -= usize::from(u.is_some());
        if queue.is_empty() {
            self.queues.remove(&group);
        }
        u
    }

    /// Heap bytes held, roughly.
    pub fn heap_bytes(&self) -> usize {
        self.group_of.capacity() * 16
            + self.queues.values().map(|q| q.capacity() * 8 + 48).sum::<usize>()
            + self.groups.iter().map(|g| g.len() * 16 + 48).sum::<usize>() * 2
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn who(name: &str) -> ParticipantId {
        ParticipantId::parse(name).unwrap()
    }

    #[test]
    fn a_participant_passes_over_the_units_barred_to_it() {
        let mut retry = Retry::default();
        for u in 0..1000 {
            retry.push_front(UnitId(u), vec![who("a")]);
        }
        retry.push_back(UnitId(1000), Vec::new());
        let mut asked = Vec::new();
        let mut take_for = |identity: &str| {
            retry.take_for(&who(identity), |u| {
                asked.push(u.0);
                Wanted::Take
            })
        };
        // "a" reaches the one unit open to anyone without touching its own;
        // "b" takes a's units, most urgent (last pushed to the front) first.
        assert_eq!(take_for("a"), Some(UnitId(1000)));
        assert_eq!(take_for("a"), None);
        assert_eq!(take_for("b"), Some(UnitId(999)));
        assert_eq!(asked, [1000, 999]);
        assert_eq!(retry.len(), 999);
    }

    #[test]
    fn a_unit_whose_bars_change_moves_and_is_handed_out_once() {
        let mut retry = Retry::default();
        retry.push_front(UnitId(7), vec![who("b"), who("a")]);
        assert_eq!(retry.take_for(&who("a"), |_| Wanted::Take), None);
        // Its lease by "b" ended: only "a" is barred now.
        retry.push_front(UnitId(7), vec![who("a")]);
        retry.push_front(UnitId(7), vec![who("a")]);
        assert_eq!(retry.len(), 1);
        assert_eq!(retry.take_for(&who("a"), |_| Wanted::Take), None);
        assert_eq!(retry.take_for(&who("b"), |_| Wanted::Take), Some(UnitId(7)));
        assert!(!retry.contains(UnitId(7)));
        // The stale entry in a's and b's group is never handed out again.
        assert_eq!(retry.take_for(&who("c"), |_| Wanted::Take), None);
    }

    #[test]
    fn stale_entries_nobody_walks_are_dropped() {
        let mut retry = Retry::default();
        // "a" alone: its unit is handed back (bars nobody) and leased by it
        // again (bars "a") over and over, leaving a stale entry each time
        // in a group only "a" is barred from.
        for _ in 0..10_000 {
            retry.push_front(UnitId(1), vec![who("a")]);
            retry.push_front(UnitId(1), Vec::new());
            assert_eq!(retry.take_for(&who("a"), |_| Wanted::Take), Some(UnitId(1)));
        }
        assert!(retry.entries < 2000, "{} entries", retry.entries);
        retry.push_front(UnitId(1), vec![who("a")]);
        assert_eq!(retry.take_for(&who("b"), |_| Wanted::Take), Some(UnitId(1)));
        assert_eq!(retry.take_for(&who("b"), |_| Wanted::Take), None);
        assert_eq!(retry.len(), 0);
    }

    #[test]
    fn units_no_longer_wanted_are_dropped_and_newly_barred_ones_move() {
        let mut retry = Retry::default();
        retry.push_back(UnitId(1), Vec::new());
        retry.push_back(UnitId(2), Vec::new());
        retry.push_back(UnitId(3), Vec::new());
        let taken = retry.take_for(&who("a"), |u| match u.0 {
            1 => Wanted::Drop,
            2 => Wanted::NotFrom(vec![who("a")]),
            _ => Wanted::Take,
        });
        assert_eq!(taken, Some(UnitId(3)));
        assert_eq!(retry.len(), 1);
        assert_eq!(retry.take_for(&who("a"), |_| Wanted::Take), None);
        assert_eq!(retry.take_for(&who("b"), |_| Wanted::Take), Some(UnitId(2)));
        assert_eq!(retry.len(), 0);
    }
}
