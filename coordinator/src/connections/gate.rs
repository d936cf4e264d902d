//! The count of open connections, in total and per peer address, and
//! which of them have proven a credential. A connection is *unproven*
//! until a call on it carries a valid credential. Once an unproven one
//! has made a call without a credential, or has been open for the grace
//! time without proving itself (an honest client calls within
//! milliseconds), it may be *evicted*: closed to make room for a new
//! connection that finds the unproven half of a cap full. A new connection
//! that finds a cap full takes the place of the oldest unproven one,
//! evictable or not. So sockets that never authenticate, however many,
//! cannot lock out an honest client of the same address (it is refused
//! only when every connection of its address, or of all, proved a
//! credential), and never displace a proven one; a burst of honest
//! clients connecting at once is cut down only past the full cap.

use std::collections::{BTreeMap, HashMap};
use std::net::{IpAddr, Ipv6Addr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use atomic_waker::AtomicWaker;

use super::ConnectionLimits;

/// What a peer is counted as: its address, an IPv6 one by its /64.
pub(crate) fn peer_key(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => {
            let network = u128::from(v6) & !((1u128 << 64) - 1);
            IpAddr::V6(Ipv6Addr::from(network))
        }
        v4 => v4,
    }
}

/// Why a connection was not admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Full {
    Total,
    Peer,
}

/// One admitted connection's standing, shared by the connection, the gate
/// and the request layer (which finds it in the request's extensions).
#[derive(Debug)]
pub(crate) struct ConnState {
    id: u64,
    key: IpAddr,
    accepted: Instant,
    /// A request arrived on it (any, a health check too).
    requested: AtomicBool,
    /// A request on it carried a valid credential.
    proven: AtomicBool,
    /// Closed by the gate to make room: its next read fails.
    evicted: AtomicBool,
    waker: AtomicWaker,
}

impl ConnState {
    /// The peer it is counted under.
    pub(crate) fn peer(&self) -> IpAddr {
        self.key
    }

    pub(crate) fn mark_requested(&self) {
        self.requested.store(true, Ordering::Release);
    }

    pub(crate) fn requested(&self) -> bool {
        self.requested.load(Ordering::Acquire)
    }

    pub(crate) fn is_proven(&self) -> bool {
        self.proven.load(Ordering::Acquire)
    }

    /// Unproven, and either it called without a credential or its grace
    /// time passed.
    fn evictable(&self, grace: Duration, now: Instant) -> bool {
        !self.is_proven() && (self.requested() || now.duration_since(self.accepted) >= grace)
    }

    /// True once evicted; registers `waker` to hear of an eviction.
    pub(crate) fn evicted(&self, waker: &std::task::Waker) -> bool {
        self.waker.register(waker);
        self.evicted.load(Ordering::Acquire)
    }
}

#[derive(Debug, Default)]
struct Peer {
    open: usize,
    /// Unproven connections by age (id order).
    unproven: BTreeMap<u64, Arc<ConnState>>,
}

#[derive(Debug, Default)]
struct Counts {
    total: usize,
    peers: HashMap<IpAddr, Peer>,
    /// Every peer's unproven connections by age.
    unproven: BTreeMap<u64, IpAddr>,
    next_id: u64,
}

impl Counts {
    /// Closes `id` (unproven) of `key` and frees its place at once.
    fn evict(&mut self, key: IpAddr, id: u64) {
        self.unproven.remove(&id);
        let Some(peer) = self.peers.get_mut(&key) else {
            return;
        };
        if let Some(state) = peer.unproven.remove(&id) {
            state.evicted.store(true, Ordering::Release);
            state.waker.wake();
            peer.open -= 1;
            self.total -= 1;
            metrics::counter!("perft_connections_evicted_total").increment(1);
        }
        if peer.open == 0 {
            self.peers.remove(&key);
        }
    }

    /// The oldest evictable connection of `key`.
    fn evictable_of(&self, key: IpAddr, grace: Duration, now: Instant) -> Option<u64> {
        let peer = self.peers.get(&key)?;
        peer.unproven
            .iter()
            .find(|(_, state)| state.evictable(grace, now))
            .map(|(&id, _)| id)
    }

    /// The oldest evictable connection of any peer.
    fn evictable(&self, grace: Duration, now: Instant) -> Option<(u64, IpAddr)> {
        self.unproven.iter().find_map(|(&id, &key)| {
            let state = self.peers.get(&key)?.unproven.get(&id)?;
            state.evictable(grace, now).then_some((id, key))
        })
    }
}

/// The gate of one listener.
#[derive(Debug)]
pub(crate) struct Gate {
    pub(crate) limits: ConnectionLimits,
    counts: Mutex<Counts>,
}

impl Gate {
    pub(crate) fn new(limits: ConnectionLimits) -> Arc<Gate> {
        Arc::new(Gate {
            limits,
            counts: Mutex::new(Counts::default()),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Counts> {
        self.counts.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Unproven connections one peer may hold, and all peers together.
    fn unproven_caps(&self) -> (usize, usize) {
        (
            (self.limits.max_per_peer / 2).max(1),
            (self.limits.max_total / 2).max(1),
        )
    }

    /// A slot for a new connection from `peer`, or why there is none. A
    /// full unproven half of a cap closes the oldest evictable connection
    /// if there is one, and admits the newcomer either way; a full cap
    /// closes the oldest unproven connection it counts, evictable or not
    /// (a newcomer may be an honest client, the oldest silent one is the
    /// likelier attacker), and refuses the newcomer only when every
    /// connection it counts is proven.
    pub(crate) fn admit(self: &Arc<Gate>, peer: IpAddr) -> Result<Slot, Full> {
        let key = peer_key(peer);
        let (peer_unproven_cap, total_unproven_cap) = self.unproven_caps();
        let grace = self.limits.unproven_grace;
        let now = Instant::now();
        let mut counts = self.lock();
        let peer_open = counts.peers.get(&key).map_or(0, |p| p.open);
        let peer_unproven = counts.peers.get(&key).map_or(0, |p| p.unproven.len());
        let peer_full = peer_open >= self.limits.max_per_peer;
        if peer_full || peer_unproven >= peer_unproven_cap {
            // At a full cap, any unproven connection may go, oldest first.
            let forced = if peer_full { Duration::ZERO } else { grace };
            match counts.evictable_of(key, forced, now) {
                Some(oldest) => counts.evict(key, oldest),
                None if peer_full => return Err(Full::Peer),
                None => {}
            }
        }
        let total_full = counts.total >= self.limits.max_total;
        if total_full || counts.unproven.len() >= total_unproven_cap {
            let forced = if total_full { Duration::ZERO } else { grace };
            match counts.evictable(forced, now) {
                Some((oldest, its_peer)) => counts.evict(its_peer, oldest),
                None if total_full => return Err(Full::Total),
                None => {}
            }
        }
        let id = counts.next_id;
        counts.next_id += 1;
        let state = Arc::new(ConnState {
            id,
            key,
            accepted: now,
            requested: AtomicBool::new(false),
            proven: AtomicBool::new(false),
            evicted: AtomicBool::new(false),
            waker: AtomicWaker::new(),
        });
        counts.total += 1;
        counts.unproven.insert(id, key);
        let entry = counts.peers.entry(key).or_default();
        entry.open += 1;
        entry.unproven.insert(id, Arc::clone(&state));
        Ok(Slot {
            gate: Arc::clone(self),
            state,
        })
    }

    /// A call with a valid credential came on the connection: it is no
    /// longer counted in the unproven half, and never evicted.
    pub(crate) fn prove(&self, state: &ConnState) {
        if state.is_proven() {
            return;
        }
        let mut counts = self.lock();
        if state.evicted.load(Ordering::Acquire) {
            return;
        }
        counts.unproven.remove(&state.id);
        if let Some(peer) = counts.peers.get_mut(&state.key) {
            peer.unproven.remove(&state.id);
        }
        state.proven.store(true, Ordering::Release);
    }

    /// Connections open now.
    pub(crate) fn open(&self) -> usize {
        self.lock().total
    }
}

/// A counted connection; dropping it frees its place (unless an eviction
/// freed it already).
#[derive(Debug)]
pub(crate) struct Slot {
    gate: Arc<Gate>,
    pub(crate) state: Arc<ConnState>,
}

impl Slot {
    pub(crate) fn gate(&self) -> &Arc<Gate> {
        &self.gate
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut counts = self.gate.lock();
        if self.state.evicted.load(Ordering::Acquire) {
            return;
        }
        let (id, key) = (self.state.id, self.state.key);
        counts.unproven.remove(&id);
        counts.total -= 1;
        if let Some(peer) = counts.peers.get_mut(&key) {
            peer.unproven.remove(&id);
            peer.open -= 1;
            if peer.open == 0 {
                counts.peers.remove(&key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
    use std::time::Duration;

    use super::*;

    fn limits(max_total: usize, max_per_peer: usize) -> ConnectionLimits {
        ConnectionLimits {
            max_total,
            max_per_peer,
            ..ConnectionLimits::default()
        }
    }

    fn ip(last: u8) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(10, 0, 0, last))
    }

    #[test]
    fn proven_connections_fill_the_caps_and_free_on_drop() {
        let gate = Gate::new(limits(3, 2));
        let a1 = gate.admit(ip(1)).unwrap();
        gate.prove(&a1.state);
        let a2 = gate.admit(ip(1)).unwrap();
        gate.prove(&a2.state);
        assert_eq!(gate.admit(ip(1)).unwrap_err(), Full::Peer);
        let b1 = gate.admit(ip(2)).unwrap();
        gate.prove(&b1.state);
        assert_eq!(gate.admit(ip(3)).unwrap_err(), Full::Total);
        assert_eq!(gate.open(), 3);
        drop(a1);
        assert_eq!(gate.open(), 2);
        let _a3 = gate.admit(ip(1)).unwrap();
        drop(b1);
        assert!(
            !gate.lock().peers.contains_key(&ip(2)),
            "an address with nothing open is forgotten"
        );
    }

    /// A connection that called without a credential: evictable at once.
    fn anonymous(gate: &Arc<Gate>, from: IpAddr) -> Slot {
        let slot = gate.admit(from).unwrap();
        slot.state.mark_requested();
        slot
    }

    #[test]
    fn unproven_connections_hold_half_and_the_oldest_makes_room() {
        let gate = Gate::new(limits(100, 8));
        let silent: Vec<Slot> = (0..4).map(|_| anonymous(&gate, ip(1))).collect();
        // The fifth unproven one from the address closes the oldest.
        let honest = gate.admit(ip(1)).unwrap();
        let waker = std::task::Waker::noop();
        assert!(silent[0].state.evicted(waker));
        assert!(!silent[1].state.evicted(waker));
        assert_eq!(gate.open(), 4);
        // Proven, the honest one is never evicted, and frees its unproven place.
        gate.prove(&honest.state);
        for _ in 0..20 {
            let _ = anonymous(&gate, ip(1));
        }
        assert!(!honest.state.evicted(waker));
        drop(silent);
        assert_eq!(gate.open(), 1, "evicted slots were freed once, not twice");
    }

    #[test]
    fn a_burst_of_new_connections_is_not_cut_down_before_it_could_call() {
        let gate = Gate::new(limits(100, 8));
        // Eight at once, none has called yet: all admitted (the unproven
        // half is soft while nothing is evictable).
        let burst: Vec<Slot> = (0..8).map(|_| gate.admit(ip(1)).unwrap()).collect();
        let waker = std::task::Waker::noop();
        assert!(burst.iter().all(|slot| !slot.state.evicted(waker)));
        // At the full cap, a ninth takes the place of the oldest.
        let _ninth = gate.admit(ip(1)).unwrap();
        assert!(burst[0].state.evicted(waker) && !burst[1].state.evicted(waker));
        // Past the grace time, silence makes them evictable.
        let quick = Gate::new(ConnectionLimits {
            unproven_grace: Duration::ZERO,
            ..limits(100, 8)
        });
        let silent: Vec<Slot> = (0..8).map(|_| quick.admit(ip(1)).unwrap()).collect();
        let _honest = quick.admit(ip(1)).unwrap();
        assert_eq!(silent.iter().filter(|s| s.state.evicted(waker)).count(), 5);
    }

    #[test]
    fn many_addresses_of_silent_sockets_cannot_fill_the_total() {
        let gate = Gate::new(limits(8, 8));
        let silent: Vec<Slot> = (1..=8).map(|i| anonymous(&gate, ip(i))).collect();
        assert_eq!(gate.open(), 4, "unproven connections take half of the total");
        let honest = gate.admit(ip(200)).unwrap();
        gate.prove(&honest.state);
        assert_eq!(gate.open(), 4);
        drop(silent);
        assert_eq!(gate.open(), 1);
    }

    #[test]
    fn an_ipv6_peer_counts_by_its_network() {
        let one: Ipv6Addr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let other: Ipv6Addr = "2001:db8:1:2:bbbb::9".parse().unwrap();
        assert_eq!(peer_key(IpAddr::V6(one)), peer_key(IpAddr::V6(other)));
        let mapped: Ipv6Addr = "::ffff:10.0.0.1".parse().unwrap();
        assert_eq!(peer_key(IpAddr::V6(mapped)), ip(1));
    }
}
