//! Log lines about refusals, at most one an interval per principal: a
//! flood of bogus calls costs a counter, never a line each.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use super::Principal;

/// Most principals remembered; past it, those whose interval passed are
/// forgotten (a forgotten one may log one line early).
const REMEMBERED: usize = 16_384;

#[derive(Debug)]
pub(super) struct Refusals {
    every: Duration,
    /// When each principal's last line was written, and refusals since.
    last: Mutex<HashMap<Principal, (Instant, u64)>>,
}

impl Refusals {
    pub(super) fn new(every: Duration) -> Refusals {
        Refusals {
            every,
            last: Mutex::new(HashMap::new()),
        }
    }

    /// Counts a refusal of `principal`; `Some(n)` when a line is due now,
    /// `n` being the refusals it covers (this one and those not logged).
    pub(super) fn due(&self, principal: &Principal) -> Option<u64> {
        let now = Instant::now();
        let mut last = self.last.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((at, unlogged)) = last.get_mut(principal) {
            if now.duration_since(*at) < self.every {
                *unlogged += 1;
                return None;
            }
            let times = *unlogged + 1;
            *at = now;
            *unlogged = 0;
            return Some(times);
        }
        if last.len() >= REMEMBERED {
            let every = self.every;
            last.retain(|_, (at, _)| now.duration_since(*at) < every);
            if last.len() >= REMEMBERED {
                // All recent: stay quiet rather than grow.
                return None;
            }
        }
        last.insert(principal.clone(), (now, 0));
        Some(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_an_interval_per_principal() {
        let refusals = Refusals::new(Duration::from_millis(200));
        let a = Principal::Address("10.0.0.1".parse().unwrap());
        let b = Principal::Address("10.0.0.2".parse().unwrap());
        assert_eq!(refusals.due(&a), Some(1));
        for _ in 0..1000 {
            assert_eq!(refusals.due(&a), None);
        }
        assert_eq!(refusals.due(&b), Some(1), "another principal has its own line");
        std::thread::sleep(Duration::from_millis(250));
        assert_eq!(
            refusals.due(&a),
            Some(1001),
            "the next line sums what was not logged"
        );
    }
}
