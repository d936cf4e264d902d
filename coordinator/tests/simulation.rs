//! Hostile participants, found by simulation: the job table
//! (`perft_coordinator::jobs::Jobs`) over a real journal, on a hand-moved
//! clock, driven by a seeded generator through random interleavings of
//! honest and hostile participants, an admin, the reaper and crashes
//! (some with the journal damaged on disk before the start);
//! every step checked against a model of what the table should hold
//! (FoundationDB's simulation testing and TigerBeetle's VOPR are the
//! models: one seed replays one run exactly).
//!
//! The world: two or three small checkers jobs (perft 4 or 5 split at 2,
//! the first and some others verified), a `ManualClock`, a `Journal` in a
//! temporary directory (under /dev/shm when there is one). Participants:
//! honest ones (count truly, report promptly or late), the coordinator's
//! owner (honest, loses sessions), forgers (wrong counts), replayers (send
//! again what they sent, also after a quarantine, a restart or a
//! reopening), lapsers (lease and go silent: their sessions are found
//! lost), parkers (lease, never report, hand back leases they no longer
//! hold), colluders (two agreeing on the same wrong count). The door is
//! modelled as the coordinator's: a participant names only leases issued
//! to it (its lease tags), and a revoked one is refused. The admin revokes
//! (votes dropped, sessions expired, sometimes a recount), lifts
//! quarantines and suspensions, and resumes failed jobs; the reaper
//! recounts what the newly quarantined decided alone (the coordinator's
//! path: `decided_by`, `Op::Reopen`, `load_job`, `reopen`) and lapses
//! overdue leases. Only ops the journal committed are acknowledged: a
//! crash loses the rest, and the table is rebuilt from the journal, later.
//! At the end the hostile participants stop, the admin lifts the honest
//! ones, and honest workers (two fresh ones among them) finish every job.
//!
//! Invariants, checked after every step:
//! 1. A decided count is the true count unless every vote for it (its
//!    deciders) came from hostile participants.
//! 2. Nothing of a quarantined or revoked participant is taken after its
//!    quarantine or revocation: no report of it is accepted, no vote of it
//!    kept, no verdict counts it among its deciders; it leases nothing
//!    (nor does a suspended one).
//! 3. Every acknowledged change survives a restart: the journal gives back
//!    exactly the acknowledged verdicts (less those a recount reopened),
//!    pending votes, bars and job states, and the rebuilt table shows the
//!    same units done and totals (7).
//! 4. No job fails because of one participant: a job fails only when a
//!    unit's leases lapsed 8 times, with 3 different participants or all
//!    the owner's, or its unit found no majority among `MAX_VOTES`
//!    counts; and such a unit does fail its job.
//! 5. No unit stays leased past its deadline once `lapse_overdue` ran.
//! 6. A unit reopened because of a participant's counts is never leased to
//!    that participant again, nor is a count of it taken for that unit.
//! 7. The oracle: the table answers as the model predicts. A report is
//!    Accepted only for a lease the table holds for that participant, or
//!    one issued before the last restart whose unit no reopening (lapse,
//!    hand-back, recount) ended since; else Stale (or Refused, Ignored).
//!    Likewise hand-backs, the leases a lost session or `lapse_overdue`
//!    ends, the newly quarantined, the journal's deciders, and every view
//!    (state, units done and leased, total, standing, lost votes,
//!    lapses). `PERFT_SIM_ORACLE=off` leaves this one out, to see what the
//!    others catch alone.
//! 8. A quarantine recounts what the participant decided alone before it,
//!    restarts notwithstanding.
//! 9. Leases follow the rules: never more than asked, never a unit of a
//!    finished job or a decided one, never one the participant (any of its
//!    machines) holds or counted, each with its own unit's position; and
//!    epochs only grow, across restarts.
//! 10. A unit's count is accepted once, and a verdict's deciders are
//!     exactly the votes equal to it.
//! 11. Damage to the journal while it is stopped (a flipped count, a
//!     deleted count, changed deciders, a done job's flipped Merkle root:
//!     `simulation/damage.rs`) loses nothing silently: every acknowledged
//!     count comes back as it was, or its unit is open again to be counted
//!     (a done job comes back running, its journal still saying done,
//!     until it is); a damaged row decides nothing, not even which units
//!     a quarantine recounts. Checked by invariants 3 and 7 against a
//!     model that forgets exactly the damaged counts.
//!
//! And at the end every job is done, with the published total unless a
//! hostile-only verdict stands.
//!
//! A failing seed panics with the invariant, the last steps and how to
//! replay it: `PERFT_SIM_SEED=1234 cargo test -p perft-coordinator --test
//! simulation`. `PERFT_SIM_SEEDS=N` runs N seeds; the long mode
//! (`--ignored`) runs 20,000.

mod simulation {
    pub mod actors;
    pub mod admin;
    pub mod checks;
    pub mod damage;
    pub mod model;
    pub mod participants;
    pub mod plans;
    pub mod trace;
    pub mod world;
}

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use simulation::actors::Stats;
use simulation::trace::take_trace;
use simulation::world;

/// Seeds a plain `cargo test` runs.
const QUICK_SEEDS: u64 = 500;
/// Seeds the long mode runs.
const LONG_SEEDS: u64 = 20_000;

fn env_u64(name: &str) -> Option<u64> {
    let value = std::env::var(name).ok()?;
    Some(
        value
            .trim()
            .parse()
            .unwrap_or_else(|_| panic!("{name}={value} is no number")),
    )
}

/// Runs the seeds asked for (`PERFT_SIM_SEED`, else `PERFT_SIM_SEEDS` or
/// `default` seeds from 0) on two threads, in order; panics as soon as a
/// seed breaks an invariant.
fn run_seeds(default: u64) {
    let seeds: Vec<u64> = match env_u64("PERFT_SIM_SEED") {
        Some(seed) => vec![seed],
        None => (0..env_u64("PERFT_SIM_SEEDS").unwrap_or(default)).collect(),
    };
    let started = Instant::now();
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 2);
    let next = AtomicUsize::new(0);
    let tried = AtomicUsize::new(0);
    // The lowest failing seed found, with its report.
    let failed: Mutex<Option<(u64, String)>> = Mutex::new(None);
    let stats: Vec<Stats> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut total = Stats::default();
                    while failed.lock().expect("a lock").is_none() {
                        let Some(&seed) = seeds.get(next.fetch_add(1, Ordering::Relaxed)) else {
                            break;
                        };
                        let outcome = run_one(seed, seeds.len() == 1);
                        tried.fetch_add(1, Ordering::Relaxed);
                        match outcome {
                            Ok(stats) => total.add(&stats),
                            Err(report) => {
                                let mut failed = failed.lock().expect("a lock");
                                if failed.as_ref().is_none_or(|(first, _)| seed < *first) {
                                    *failed = Some((seed, report));
                                }
                            }
                        }
                    }
                    total
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a simulation thread"))
            .collect()
    });
    let seconds = started.elapsed().as_secs_f64();
    let tried = tried.into_inner();
    if let Some((_, report)) = failed.into_inner().expect("a lock") {
        panic!("{report}\n(caught after {tried} seeds, {seconds:.1} s)");
    }
    let mut total = Stats::default();
    for s in &stats {
        total.add(s);
    }
    println!(
        "{tried} seeds in {seconds:.1} s ({:.1} seeds/s): {total:?}",
        tried as f64 / seconds
    );
}

/// Runs one seed: its stats, or what it broke with its replay line and
/// trace.
fn run_one(seed: u64, alone: bool) -> Result<Stats, String> {
    take_trace();
    let outcome = catch_unwind(AssertUnwindSafe(|| world::run(seed)));
    let broken = match outcome {
        Ok(Ok(stats)) => {
            if alone && std::env::var_os("PERFT_SIM_TRACE").is_some() {
                println!("{}", take_trace().join("\n"));
            }
            return Ok(stats);
        }
        Ok(Err(broken)) => broken,
        Err(panic) => {
            let message = panic
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                .unwrap_or_else(|| "a panic".to_owned());
            format!("panicked: {message}")
        }
    };
    Err(format!(
        "seed {seed} broke an invariant: {broken}\n\
         replay it: PERFT_SIM_SEED={seed} cargo test -p perft-coordinator --test simulation\n\
         (PERFT_SIM_TRACE=full shows every step) its last steps:\n{}\n\
         seed {seed} broke an invariant: {broken}",
        take_trace().join("\n")
    ))
}

#[test]
fn hostile_participants_never_break_the_job_tables_promises() {
    run_seeds(QUICK_SEEDS);
}

#[test]
#[ignore = "long mode: a benchmark, run with --ignored"]
fn hostile_participants_long_mode() {
    run_seeds(LONG_SEEDS);
}
