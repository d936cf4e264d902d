//! What the worker tells its log at `info`: each job's work as it starts
//! and, once the job has nothing more for it, as it ends with its rate;
//! and a summary every few minutes, so a log shows a live worker.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use perft_model::JobId;

use crate::compute::{Outcome, UnitLease};

/// How often a summary line is written while the worker counts.
pub(crate) const SUMMARY_EVERY: Duration = Duration::from_secs(300);

/// How long a job must have had nothing here before its end is logged:
/// a coordinator may have no unit to lease for a moment mid-job (all out
/// on other workers, or waiting on a verification).
const QUIET: Duration = Duration::from_secs(2);

/// Work done: units, their leaves and the CPU time they took.
#[derive(Debug, Default, Clone, Copy)]
struct Done {
    units: u64,
    leaves: u128,
    cpu_seconds: f64,
}

impl Done {
    fn add(&mut self, leaves: u128, cpu_seconds: f64) {
        self.units += 1;
        self.leaves = self.leaves.saturating_add(leaves);
        self.cpu_seconds += cpu_seconds;
    }
}

/// One job's work on this worker since its first unit here.
#[derive(Debug)]
struct JobWork {
    since: Instant,
    /// When a unit of the job was last leased or finished here.
    last_seen: Instant,
    /// Units leased and not yet counted or refused.
    in_flight: u64,
    done: Done,
}

/// The worker's activity, for its log.
#[derive(Debug)]
pub(crate) struct Activity {
    jobs: HashMap<JobId, JobWork>,
    /// Since the last summary.
    window: Done,
    window_since: Instant,
}

impl Activity {
    pub fn new() -> Activity {
        Activity {
            jobs: HashMap::new(),
            window: Done::default(),
            window_since: Instant::now(),
        }
    }

    /// Units leased: a job seen for the first time is announced.
    pub fn leased(&mut self, units: &[UnitLease]) {
        for unit in units {
            let work = self.jobs.entry(unit.job_id.clone()).or_insert_with(|| {
                tracing::info!(
                    job = %unit.job_id,
                    game = %unit.game,
                    depth = unit.depth,
                    stats = unit.stats,
                    "counting units of a job"
                );
                JobWork {
                    since: Instant::now(),
                    last_seen: Instant::now(),
                    in_flight: 0,
                    done: Done::default(),
                }
            });
            work.in_flight += 1;
            work.last_seen = Instant::now();
        }
    }

    /// A unit counted or refused.
    pub fn finished(&mut self, outcome: &Outcome) {
        let (lease, counted) = match outcome {
            Outcome::Counted {
                lease,
                count,
                cpu_seconds,
            } => (lease, Some((count.leaves.leaves, *cpu_seconds))),
            Outcome::Refused { lease, .. } => (lease, None),
        };
        let Some(work) = self.jobs.get_mut(&lease.job_id) else {
            return;
        };
        work.in_flight = work.in_flight.saturating_sub(1);
        work.last_seen = Instant::now();
        if let Some((leaves, cpu_seconds)) = counted {
            work.done.add(leaves, cpu_seconds);
            self.window.add(leaves, cpu_seconds);
        }
    }

    /// Units handed back uncounted (at shutdown).
    pub fn handed_back(&mut self, lease: &UnitLease) {
        if let Some(work) = self.jobs.get_mut(&lease.job_id) {
            work.in_flight = work.in_flight.saturating_sub(1);
        }
    }

    /// The coordinator has nothing more for this worker now: every job
    /// with nothing counting here for a while is done here, and says so.
    pub fn idle(&mut self) {
        self.end_jobs(QUIET);
    }

    /// The worker stops: every job it worked on says what it got.
    pub fn stopped(&mut self) {
        self.end_jobs(Duration::ZERO);
    }

    /// Logs and forgets the jobs with nothing in flight for `quiet`.
    fn end_jobs(&mut self, quiet: Duration) {
        self.jobs.retain(|job, work| {
            if work.in_flight > 0 || work.last_seen.elapsed() < quiet {
                return true;
            }
            let seconds = work.last_seen.duration_since(work.since).as_secs_f64();
            tracing::info!(
                %job,
                units = work.done.units,
                leaves = %work.done.leaves,
                seconds = format_args!("{seconds:.1}"),
                leaves_per_second = %rate(work.done.leaves, seconds),
                cpu_seconds = format_args!("{:.1}", work.done.cpu_seconds),
                "done with the job's units for now"
            );
            false
        });
    }

    /// The summary line of the last few minutes, then a new window.
    pub fn summary(&mut self) {
        let seconds = self.window_since.elapsed().as_secs_f64();
        tracing::info!(
            units = self.window.units,
            leaves = %self.window.leaves,
            leaves_per_second = %rate(self.window.leaves, seconds),
            jobs = self.jobs.len(),
            minutes = format_args!("{:.1}", seconds / 60.0),
            "counted since the last summary"
        );
        self.window = Done::default();
        self.window_since = Instant::now();
    }
}

/// Leaves per second, rounded, for people.
fn rate(leaves: u128, seconds: f64) -> String {
    if seconds <= 0.0 {
        return "-".to_owned();
    }
    format!("{:.0}", leaves as f64 / seconds)
}
