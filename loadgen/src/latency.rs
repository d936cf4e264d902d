//! Report acknowledgement times, gathered from every simulated worker.

use hdrhistogram::Histogram;

/// Acknowledgement times in microseconds, up to a minute, at 3
/// significant digits.
#[derive(Clone, Debug)]
pub struct Latency(Histogram<u64>);

impl Latency {
    pub(crate) fn new() -> Latency {
        Latency(Histogram::new_with_bounds(1, 60_000_000, 3).expect("static bounds are valid"))
    }

    /// Records one acknowledgement (at least a microsecond).
    pub(crate) fn record(&mut self, micros: u64) {
        self.0.saturating_record(micros.max(1));
    }

    pub(crate) fn add(&mut self, other: &Latency) -> Result<(), hdrhistogram::errors::AdditionError> {
        self.0.add(&other.0)
    }

    /// How many acknowledgements were recorded.
    pub fn calls(&self) -> u64 {
        self.0.len()
    }

    /// The acknowledgement time at quantile `q` (0 to 1), in milliseconds.
    pub fn quantile_ms(&self, q: f64) -> f64 {
        self.0.value_at_quantile(q) as f64 / 1000.0
    }

    /// The longest acknowledgement, in milliseconds.
    pub fn max_ms(&self) -> f64 {
        self.0.max() as f64 / 1000.0
    }
}
