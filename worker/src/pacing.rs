//! How far ahead a worker leases and how it batches its reports, from the
//! size of the units it has counted.

use std::time::Duration;

use crate::compute::Outcome;

/// How far ahead the worker leases and how it batches reports: each
/// thread keeps about `QUEUED_WORK` of units queued, so a unit of a few
/// milliseconds (a deep split with the table) finds the next one waiting
/// while reports and leases are on the wire, yet big units are not hoarded
/// at a job's end; leases top up a quarter of the queue at a time, and counts wait
/// up to `REPORT_WITHIN` to go in one report. Each call costs the
/// coordinator more than a small unit's count.
pub(crate) struct Pacing {
    threads: usize,
    /// Mean CPU seconds a unit took, recent units weighing most.
    unit_seconds: Option<f64>,
}

impl Pacing {
    const QUEUED_WORK: f64 = 0.1;
    const MIN_PER_THREAD: usize = 2;
    /// High enough that `QUEUED_WORK` decides for units of 0.2 ms and
    /// more: a lower cap made units that small cost a lease and a report
    /// call every few of them, whose wake-ups and frames cost the
    /// workers about a fifth more CPU than the counts (`BENCHMARKS.md`).
    const MAX_PER_THREAD: usize = 512;
    /// At most this many units queued or counting: one lease's worth.
    const MAX_PREFETCH: usize = 1024;
    pub const REPORT_WITHIN: Duration = Duration::from_millis(100);
    /// How often the worker's loop collects the threads' counts while
    /// units are in flight, so a count waits at most this long for its
    /// report batch.
    pub const COLLECT_EVERY: Duration = Duration::from_millis(10);

    pub fn new(threads: usize) -> Pacing {
        Pacing {
            threads: threads.max(1),
            unit_seconds: None,
        }
    }

    /// Learns the size of units from a counted one.
    pub fn saw(&mut self, outcome: &Outcome) {
        let Outcome::Counted { cpu_seconds, .. } = *outcome else {
            return;
        };
        if !cpu_seconds.is_finite() || cpu_seconds < 0.0 {
            return;
        }
        self.unit_seconds = Some(match self.unit_seconds {
            Some(mean) => mean + (cpu_seconds - mean) / 16.0,
            None => cpu_seconds,
        });
    }

    /// Units to hold, queued or counting.
    pub fn prefetch(&self) -> usize {
        let per_thread = match self.unit_seconds {
            Some(mean) if mean > 0.0 => (Self::QUEUED_WORK / mean).ceil().min(1e6) as usize,
            Some(_) => Self::MAX_PER_THREAD,
            None => Self::MIN_PER_THREAD,
        };
        let per_thread = per_thread.clamp(Self::MIN_PER_THREAD, Self::MAX_PER_THREAD);
        (per_thread * self.threads).min(Self::MAX_PREFETCH)
    }

    /// Units to lease now, holding `in_flight`: `None` until a batch is
    /// missing (or nothing is held).
    pub fn lease_due(&self, in_flight: usize) -> Option<usize> {
        let wanted = self.prefetch().saturating_sub(in_flight);
        (wanted > 0 && (wanted >= self.batch() || in_flight == 0)).then_some(wanted)
    }

    /// The fewest units worth a lease or a report call: a quarter of the
    /// queue, so a thread still has work while the call is on the wire.
    pub fn batch(&self) -> usize {
        (self.prefetch() / 4).max(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compute::UnitLease;

    fn counted(cpu_seconds: f64) -> Outcome {
        Outcome::Counted {
            lease: UnitLease {
                job_id: perft_model::JobId::parse("j").unwrap(),
                unit_id: perft_model::UnitId(0),
                epoch: perft_model::Epoch(0),
                lease_tag: Vec::new(),
                game: perft_core::GameKind::Chess,
                convention: None,
                depth: 1,
                position: Vec::new(),
                stats: false,
            },
            count: perft_model::Count::ZERO,
            cpu_seconds,
        }
    }

    #[test]
    fn small_units_are_leased_and_reported_in_batches_big_ones_one_by_one() {
        let mut pacing = Pacing::new(2);
        // Nothing counted yet: two a thread, one at a time.
        assert_eq!((pacing.prefetch(), pacing.batch()), (4, 1));
        // Units of 3 ms: 100 ms of work is 34 a thread.
        for _ in 0..200 {
            pacing.saw(&counted(0.003));
        }
        assert_eq!((pacing.prefetch(), pacing.batch()), (68, 17));
        assert_eq!(pacing.lease_due(52), None, "16 missing: under a batch");
        assert_eq!(pacing.lease_due(51), Some(17));
        assert_eq!(pacing.lease_due(0), Some(68));
        // Units of 0.1 ms: 1000 a thread, capped at 512 and at one lease.
        for _ in 0..200 {
            pacing.saw(&counted(0.0001));
        }
        assert_eq!((pacing.prefetch(), pacing.batch()), (1024, 256));
        // Units of a minute: back to two a thread, every count at once.
        for _ in 0..200 {
            pacing.saw(&counted(60.0));
        }
        assert_eq!((pacing.prefetch(), pacing.batch()), (4, 1));
        // A nonsense time teaches nothing.
        pacing.saw(&counted(f64::NAN));
        pacing.saw(&counted(-1.0));
        assert_eq!(pacing.prefetch(), 4);
    }

    #[test]
    fn many_threads_stay_within_one_lease() {
        let mut pacing = Pacing::new(1024);
        pacing.saw(&counted(0.0));
        assert_eq!((pacing.prefetch(), pacing.batch()), (1024, 256));
    }
}
