//! Rate samples kept by the dashboard: once a second it notes each running
//! job's leaves and work done, and each worker's leaves, so the pages show
//! leaves/s over a run's whole life and an ETA from the observed rate. A
//! job's ring holds at most [`RING`] samples: when full, every other one is
//! dropped and the spacing doubles, so a days-long run costs the same
//! memory as a minute's.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::clock::unix_ms;
use crate::jobs::JobView;
use perft_model::JobState;
use perft_model::{JobId, MachineName, SessionId};

/// Most samples kept per job.
const RING: usize = 600;
/// Jobs whose samples are kept: the oldest finished ones go first.
const JOBS_KEPT: usize = 256;
/// The window of the "now" rate of a job or worker.
const RATE_WINDOW: Duration = Duration::from_secs(10);
/// The window of the rate of work done that the ETA extrapolates.
const ETA_WINDOW_MS: u64 = 120_000;
/// Workers that left or were lost, remembered for the workers page.
const GONE_KEPT: usize = 64;

#[derive(Clone, Copy, Debug)]
struct Sample {
    at_ms: u64,
    leaves: u128,
    work: f64,
}

#[derive(Debug)]
struct JobSamples {
    samples: VecDeque<Sample>,
    /// Least spacing between kept samples.
    spacing_ms: u64,
    finished: bool,
}

impl JobSamples {
    /// Keeps `sample` unless it is closer than the spacing to the last one
    /// (with a tenth of slack, as the sampler's ticks jitter). A `last`
    /// sample (the job just finished) is always kept, in place of a close
    /// one: without it the chart would end on the tail's last interval,
    /// often one in which no unit was decided, and drop to 0.
    fn push(&mut self, sample: Sample, last: bool) {
        if let Some(previous) = self.samples.back()
            && sample.at_ms.saturating_sub(previous.at_ms) < self.spacing_ms - self.spacing_ms / 10
        {
            if !last {
                return;
            }
            if self.samples.len() > 1 {
                self.samples.pop_back();
            }
        }
        if self.samples.len() >= RING {
            let mut keep = false;
            self.samples.retain(|_| {
                keep = !keep;
                keep
            });
            self.spacing_ms = self.spacing_ms.saturating_mul(2);
        }
        self.samples.push_back(sample);
    }
}

/// A registered worker's recent leaves, and what it was last seen as.
#[derive(Debug)]
struct WorkerSamples {
    name: MachineName,
    threads: u32,
    draining: bool,
    units_done: u64,
    leaves: VecDeque<(Instant, u128)>,
}

/// A worker session no longer registered.
#[derive(Clone, Debug)]
pub(super) struct GoneWorker {
    pub session: SessionId,
    pub name: MachineName,
    pub threads: u32,
    pub units_done: u64,
    /// It drained and left (else it was lost: no heartbeat in time).
    pub left: bool,
    pub gone_ms: u64,
}

/// What the dashboard computed of a job from its samples.
#[derive(Clone, Debug, Default)]
pub(super) struct JobRate {
    pub leaves_per_second: f64,
    /// Seconds until done, from the rate of (weighted) work done.
    pub eta_seconds: Option<f64>,
}

/// The samples of every job and worker.
#[derive(Debug, Default)]
pub(super) struct Rates {
    jobs: Mutex<HashMap<JobId, JobSamples>>,
    workers: Mutex<HashMap<SessionId, WorkerSamples>>,
    gone: Mutex<VecDeque<GoneWorker>>,
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    // Samples are plain numbers: a panic elsewhere leaves them usable.
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Rates {
    /// Notes the jobs' counts now; a job seen finished gets its last sample.
    pub fn sample_jobs(&self, views: &[JobView]) {
        let now = unix_ms();
        let mut jobs = lock(&self.jobs);
        for view in views {
            // A job finished before it was ever sampled needs no samples:
            // its rate is its average.
            let sampled = jobs.get(&view.id).map(|s| s.finished);
            // A job resumed after it failed runs again: sample it again.
            let wanted = match sampled {
                None => view.state == JobState::Running,
                Some(finished) => !finished || !view.state.is_final(),
            };
            if !wanted {
                continue;
            }
            let samples = jobs.entry(view.id.clone()).or_insert_with(|| JobSamples {
                samples: VecDeque::new(),
                spacing_ms: 1000,
                finished: false,
            });
            let finished = view.state.is_final();
            samples.push(
                Sample {
                    at_ms: now,
                    leaves: view.leaves_done,
                    work: view.work_done,
                },
                finished,
            );
            samples.finished = finished;
        }
        if jobs.len() > JOBS_KEPT {
            let mut finished: Vec<(u64, JobId)> = jobs
                .iter()
                .filter(|(_, s)| s.finished)
                .map(|(id, s)| (s.samples.back().map_or(0, |x| x.at_ms), id.clone()))
                .collect();
            finished.sort();
            for (_, id) in finished.into_iter().take(jobs.len() - JOBS_KEPT) {
                jobs.remove(&id);
            }
        }
    }

    /// The job's leaves/s over its life: (unix ms, leaves/s) per interval.
    pub fn chart(&self, job_id: &JobId) -> Vec<(u64, f64)> {
        let jobs = lock(&self.jobs);
        let Some(samples) = jobs.get(job_id) else {
            return Vec::new();
        };
        let samples: Vec<Sample> = samples.samples.iter().copied().collect();
        samples
            .windows(2)
            .map(|pair| (pair[1].at_ms, per_second(pair[0], pair[1])))
            .collect()
    }

    /// The job's rate now and its ETA; a finished job's average rate.
    pub fn job_rate(&self, view: &JobView) -> JobRate {
        let average = if view.seconds > 0.0 {
            view.leaves_done as f64 / view.seconds
        } else {
            0.0
        };
        if view.state.is_final() {
            return JobRate {
                leaves_per_second: average,
                eta_seconds: (view.state == JobState::Done).then_some(0.0),
            };
        }
        let jobs = lock(&self.jobs);
        let samples = jobs.get(&view.id).map(|s| &s.samples);
        let last = samples.and_then(|s| s.back().copied());
        let since = |window_ms: u64| {
            let last = last?;
            samples?
                .iter()
                .find(|s| last.at_ms.saturating_sub(s.at_ms) <= window_ms && s.at_ms < last.at_ms)
                .copied()
                .map(|first| (first, last))
        };
        let leaves_per_second =
            since(RATE_WINDOW.as_millis() as u64).map_or(average, |(first, last)| per_second(first, last));
        // Work is units weighed by their expected size: the ETA follows the
        // work done, not the unit count, as units differ by orders of
        // magnitude.
        let work_per_second = since(ETA_WINDOW_MS)
            .map(|(first, last)| (last.work - first.work) / ((last.at_ms - first.at_ms) as f64 / 1000.0))
            .filter(|rate| *rate > 0.0)
            .or_else(|| (view.seconds > 0.0 && view.work_done > 0.0).then(|| view.work_done / view.seconds));
        let eta_seconds = work_per_second.map(|rate| ((1.0 - view.work_done).max(0.0) / rate).min(1e12));
        JobRate {
            leaves_per_second,
            eta_seconds,
        }
    }

    /// Notes the registered workers now; those gone since are remembered
    /// as lost or left.
    pub fn sample_workers(&self, now: &[super::source::WorkerRead]) {
        let at = Instant::now();
        let mut workers = lock(&self.workers);
        let mut gone = lock(&self.gone);
        let present: std::collections::HashSet<&SessionId> = now.iter().map(|w| &w.session).collect();
        workers.retain(|session, w| {
            let here = present.contains(session);
            if !here {
                gone.push_front(GoneWorker {
                    session: session.clone(),
                    name: w.name.clone(),
                    threads: w.threads,
                    units_done: w.units_done,
                    left: w.draining,
                    gone_ms: unix_ms(),
                });
            }
            here
        });
        gone.truncate(GONE_KEPT);
        for read in now {
            let entry = workers
                .entry(read.session.clone())
                .or_insert_with(|| WorkerSamples {
                    name: read.name.clone(),
                    threads: read.threads,
                    draining: false,
                    units_done: 0,
                    leaves: VecDeque::new(),
                });
            entry.draining = read.draining;
            entry.threads = read.threads;
            if let Some(stats) = read.stats {
                entry.units_done = stats.units_done;
                entry.leaves.push_back((at, stats.leaves_done));
            }
            while entry
                .leaves
                .front()
                .is_some_and(|(t, _)| at.duration_since(*t) > RATE_WINDOW)
            {
                entry.leaves.pop_front();
            }
        }
    }

    /// A registered worker's leaves/s over the last few seconds.
    pub fn worker_rate(&self, session: &SessionId) -> f64 {
        let workers = lock(&self.workers);
        let Some(w) = workers.get(session) else {
            return 0.0;
        };
        match (w.leaves.front(), w.leaves.back()) {
            (Some((t0, l0)), Some((t1, l1))) if t1 > t0 => {
                l1.saturating_sub(*l0) as f64 / t1.duration_since(*t0).as_secs_f64()
            }
            _ => 0.0,
        }
    }

    /// Workers that left or were lost, latest first.
    pub fn gone(&self) -> Vec<GoneWorker> {
        lock(&self.gone).iter().cloned().collect()
    }
}

fn per_second(first: Sample, last: Sample) -> f64 {
    let seconds = last.at_ms.saturating_sub(first.at_ms) as f64 / 1000.0;
    if seconds <= 0.0 {
        return 0.0;
    }
    last.leaves.saturating_sub(first.leaves) as f64 / seconds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_ring_halves_and_doubles_its_spacing() {
        let mut ring = JobSamples {
            samples: VecDeque::new(),
            spacing_ms: 1000,
            finished: false,
        };
        for i in 0..RING as u64 + 1 {
            ring.push(
                Sample {
                    at_ms: i * 1000,
                    leaves: u128::from(i),
                    work: 0.0,
                },
                false,
            );
        }
        assert_eq!(ring.samples.len(), RING / 2 + 1);
        assert_eq!(ring.spacing_ms, 2000);
        // A sample closer than the spacing is not kept.
        ring.push(
            Sample {
                at_ms: RING as u64 * 1000 + 1000,
                leaves: 0,
                work: 0.0,
            },
            false,
        );
        assert_eq!(ring.samples.len(), RING / 2 + 1);
    }

    /// A job's last sample is kept even when it comes early (the sampler's
    /// tick jitters): it replaces the one it is too close to, so the chart
    /// ends on the leaves of the units decided last, not on a 0.
    #[test]
    fn the_last_sample_is_kept_and_the_chart_ends_on_it() {
        let rates = Rates::default();
        let id = JobId::parse("j").unwrap();
        let sample = |at_ms: u64, leaves: u128| Sample {
            at_ms,
            leaves,
            work: 0.0,
        };
        let mut ring = JobSamples {
            samples: VecDeque::new(),
            spacing_ms: 1000,
            finished: false,
        };
        // Ticks 999 and 1001 ms apart are both a second's samples.
        ring.push(sample(0, 0), false);
        ring.push(sample(999, 5_000), false);
        ring.push(sample(2_000, 5_000), false);
        // The tail: no unit decided in the last second, then the last
        // unit ends the job 400 ms later.
        ring.push(sample(2_400, 9_000), true);
        assert_eq!(
            ring.samples
                .iter()
                .map(|s| (s.at_ms, s.leaves))
                .collect::<Vec<_>>(),
            [(0, 0), (999, 5_000), (2_400, 9_000)]
        );
        lock(&rates.jobs).insert(id.clone(), ring);
        let chart = rates.chart(&id);
        assert_eq!(chart.len(), 2);
        assert_eq!(chart[1].0, 2_400);
        assert!((chart[1].1 - 4_000.0 / 1.401).abs() < 1e-6, "{chart:?}");
    }
}
