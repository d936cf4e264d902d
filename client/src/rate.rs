//! A followed job's pace: the work rate over a sliding window, the ETA it
//! gives and leaves/s. Units differ in size by orders of magnitude, so the
//! rate is one of estimated work (the job's `work_done`, weighted by each
//! unit's expected subtree), never of units. Pure arithmetic on samples, so
//! tests pin exact values.

use std::collections::VecDeque;

/// How far back the rate looks: long enough to smooth over units landing
/// in bursts, short enough to follow workers joining or leaving.
pub const WINDOW_SECONDS: f64 = 30.0;

/// The shortest window: a young job's rate looks back a third of its
/// running time, but never less than this.
pub const MIN_WINDOW_SECONDS: f64 = 5.0;

/// One observation of a job.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    /// The job's running time in seconds (the coordinator's clock).
    pub seconds: f64,
    /// The part of the expected work done, 0 to 1.
    pub work_done: f64,
    /// Leaves counted so far.
    pub leaves: f64,
}

/// The samples of the last [`WINDOW_SECONDS`] (plus the one just before,
/// so the span covers the whole window once the job has run that long).
#[derive(Clone, Debug)]
pub struct RateWindow {
    window: f64,
    samples: VecDeque<Sample>,
}

impl RateWindow {
    /// An empty window `window` seconds long.
    pub fn new(window: f64) -> RateWindow {
        RateWindow {
            window,
            samples: VecDeque::new(),
        }
    }

    /// Adds a sample. Time or work going backwards (a job resumed or
    /// restarted) starts the window afresh: old samples would lie.
    pub fn record(&mut self, sample: Sample) {
        if !(sample.seconds.is_finite() && sample.work_done.is_finite() && sample.leaves.is_finite()) {
            return;
        }
        if let Some(last) = self.samples.back() {
            if sample.seconds < last.seconds || sample.work_done < last.work_done {
                self.samples.clear();
            } else if sample.seconds == last.seconds {
                self.samples.pop_back();
            }
        }
        self.samples.push_back(sample);
        let window = self.window_at(sample.seconds);
        while self.samples.len() > 2 && sample.seconds - self.samples[1].seconds >= window {
            self.samples.pop_front();
        }
    }

    /// How far back the rate looks for a job `seconds` old: a third of its
    /// age, from [`MIN_WINDOW_SECONDS`] up to the whole window. A job's
    /// rate climbs while its workers' tables fill, so a window reaching
    /// back to its start lags: measured on checkers perft(17), the ETA at
    /// half time was 22-29% long with the full window, 1-8% with a third.
    /// The window only grows, so no sample it drops is wanted later.
    fn window_at(&self, seconds: f64) -> f64 {
        (seconds / 3.0).clamp(MIN_WINDOW_SECONDS.min(self.window), self.window)
    }

    /// The oldest and newest samples, when time has passed between them.
    fn span(&self) -> Option<(Sample, Sample, f64)> {
        let (first, last) = (*self.samples.front()?, *self.samples.back()?);
        let elapsed = last.seconds - first.seconds;
        (elapsed > 0.0).then_some((first, last, elapsed))
    }

    /// Fraction of the expected work done per second over the window.
    pub fn work_per_second(&self) -> Option<f64> {
        let (first, last, elapsed) = self.span()?;
        Some((last.work_done - first.work_done) / elapsed)
    }

    /// Leaves counted per second over the window.
    pub fn leaves_per_second(&self) -> Option<f64> {
        let (first, last, elapsed) = self.span()?;
        Some((last.leaves - first.leaves).max(0.0) / elapsed)
    }

    /// Seconds until the work is done at the window's rate: `None` while
    /// there is no rate to go by (too early, or nothing finished lately).
    pub fn eta_seconds(&self) -> Option<f64> {
        let last = *self.samples.back()?;
        let remaining = (1.0 - last.work_done).max(0.0);
        if remaining == 0.0 {
            return Some(0.0);
        }
        let rate = self.work_per_second()?;
        (rate > 0.0).then(|| remaining / rate)
    }
}

/// A followed job's pace at one step, as [`RateWindow`] measured it over
/// the steps before: each figure is `None` while there is none to go by
/// (too early, or nothing finished lately).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Pace {
    /// Fraction of the expected work done per second.
    pub work_per_second: Option<f64>,
    /// Leaves counted per second.
    pub leaves_per_second: Option<f64>,
    /// Seconds until the work is done at this rate.
    pub eta_seconds: Option<f64>,
}

impl RateWindow {
    /// The pace over the window as it stands.
    pub fn pace(&self) -> Pace {
        Pace {
            work_per_second: self.work_per_second(),
            leaves_per_second: self.leaves_per_second(),
            eta_seconds: self.eta_seconds(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(seconds: f64, work_done: f64, leaves: f64) -> Sample {
        Sample {
            seconds,
            work_done,
            leaves,
        }
    }

    #[test]
    fn no_rate_before_time_passes() {
        let mut window = RateWindow::new(30.0);
        assert_eq!(window.eta_seconds(), None);
        window.record(sample(0.0, 0.0, 0.0));
        assert_eq!(window.work_per_second(), None);
        assert_eq!(window.eta_seconds(), None);
        assert_eq!(window.pace(), Pace::default());
    }

    #[test]
    fn eta_is_remaining_work_over_the_work_rate() {
        let mut window = RateWindow::new(30.0);
        window.record(sample(10.0, 0.25, 1000.0));
        window.record(sample(20.0, 0.5, 3000.0));
        // 0.25 of the work in 10 s: the other half takes 20 s.
        assert_eq!(window.work_per_second(), Some(0.025));
        assert_eq!(window.eta_seconds(), Some(20.0));
        assert_eq!(window.leaves_per_second(), Some(200.0));
        assert_eq!(
            window.pace(),
            Pace {
                work_per_second: Some(0.025),
                leaves_per_second: Some(200.0),
                eta_seconds: Some(20.0),
            }
        );
    }

    #[test]
    fn a_big_unit_counts_for_more_than_many_small_ones() {
        // Two units of 100 are done, but they held 0.9 of the work: the ETA
        // follows the work (0.1 left at 0.09/s), not the 98 units left.
        let mut window = RateWindow::new(30.0);
        window.record(sample(0.0, 0.0, 0.0));
        window.record(sample(10.0, 0.9, 9e9));
        let eta = window.eta_seconds().unwrap();
        assert!((eta - 10.0 / 9.0).abs() < 1e-12, "{eta}");
        assert_eq!(window.leaves_per_second(), Some(9e8));
    }

    #[test]
    fn old_samples_leave_the_window() {
        let mut window = RateWindow::new(30.0);
        // Fast at first, then a tenth of the speed for the last 40 s.
        window.record(sample(0.0, 0.0, 0.0));
        window.record(sample(10.0, 0.5, 0.0));
        for t in [20.0, 30.0, 40.0, 50.0] {
            window.record(sample(t, 0.5 + (t - 10.0) * 0.005, 0.0));
        }
        // A job 50 s old looks back a third of that: the window spans
        // 30..50 s, 0.1 of work in 20 s.
        assert_eq!(window.samples.front().map(|s| s.seconds), Some(30.0));
        let rate = window.work_per_second().unwrap();
        assert!((rate - 0.005).abs() < 1e-12, "{rate}");
        let eta = window.eta_seconds().unwrap();
        assert!((eta - 60.0).abs() < 1e-9, "{eta}");
    }

    #[test]
    fn a_young_jobs_rate_looks_back_a_third_of_its_age() {
        // A job that speeds up as its tables fill: 1% a second for 12 s,
        // then 3% a second. At 24 s the window is 8 s long and sees only
        // the faster pace; the whole history would give 2% a second.
        let mut window = RateWindow::new(30.0);
        for t in 0..=24 {
            let t = f64::from(t);
            let work = if t <= 12.0 {
                t * 0.01
            } else {
                0.12 + (t - 12.0) * 0.03
            };
            window.record(sample(t, work, 0.0));
        }
        let rate = window.work_per_second().unwrap();
        assert!((rate - 0.03).abs() < 1e-12, "{rate}");
        let eta = window.eta_seconds().unwrap();
        assert!((eta - 0.52 / 0.03).abs() < 1e-9, "{eta}");
        // Never shorter than the least window, however young: at 6 s it
        // spans the 5 s back to 1 s, not the 2 s back to 4 s.
        let mut young = RateWindow::new(30.0);
        for t in [0.0, 1.0, 2.0, 3.0, 6.0] {
            young.record(sample(t, t * 0.01, 0.0));
        }
        assert_eq!(young.samples.front().map(|s| s.seconds), Some(1.0));
    }

    #[test]
    fn going_backwards_starts_afresh_and_a_stall_has_no_eta() {
        let mut window = RateWindow::new(30.0);
        window.record(sample(5.0, 0.4, 10.0));
        window.record(sample(6.0, 0.5, 20.0));
        window.record(sample(1.0, 0.5, 20.0));
        assert_eq!(window.samples.len(), 1);
        window.record(sample(2.0, 0.5, 20.0));
        assert_eq!(window.work_per_second(), Some(0.0));
        assert_eq!(window.eta_seconds(), None);
        window.record(sample(3.0, 1.0, 30.0));
        assert_eq!(window.eta_seconds(), Some(0.0));
        window.record(sample(f64::NAN, 1.0, 30.0));
        assert_eq!(window.samples.len(), 3);
    }
}
