//! What makes a count trustworthy, end to end on real processes: one
//! machine never verifies itself, nothing acknowledged is lost to a failing
//! disk or a SIGKILL, the journal defends itself (one coordinator per data
//! dir, checksummed counts), plans are bounded, failed jobs resume, and
//! loadgen never touches a real job.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::cluster::Cluster;
use crate::common::jobs::{JobStatus, status, words};
use crate::common::{PERFT, ok, perft, refused, try_serve_with, wait_for, worker};
use perft_core::GameKind;

fn submit(url: &str, args: &[&str]) -> String {
    let mut all = vec!["submit"];
    all.extend_from_slice(args);
    ok(perft(url, &all)).trim().to_owned()
}

/// The divide table of a finished job equals the published one.
pub(crate) fn assert_published_checkers(url: &str, job: &str, depth: u32) {
    let divide: serde_json::Value =
        serde_json::from_str(&ok(perft(url, &["divide", job, "--format", "json"]))).unwrap();
    let expected = GameKind::Checkers
        .fns()
        .published(depth)
        .expect("published checkers count");
    assert_eq!(divide["leaves"], expected.total.leaves.to_string(), "{divide}");
    if let Some(lines) = expected.divide {
        for (mv, n) in lines {
            let line = divide["divide"]
                .as_array()
                .unwrap()
                .iter()
                .find(|l| l["move"] == mv.as_str())
                .expect("every published move");
            assert_eq!(line["leaves"], n.to_string(), "{mv}");
        }
    }
}

#[test]
fn one_participant_restarted_under_its_name_never_verifies_itself() {
    let mut c = Cluster::builder()
        .participants(&[("root", "admin"), ("owner-a", "worker"), ("owner-b", "worker")])
        .serve_args(&["--lease-seconds", "2"])
        .start();
    let (url, admin) = (c.url.clone(), c.secret("root"));
    let job = ok(crate::common::perft_as(
        &url,
        &admin,
        &words("submit --game checkers --depth 9 --split-depth 3 --verify"),
    ))
    .trim()
    .to_owned();
    let units_done = || {
        let text = ok(crate::common::perft_as(&url, &admin, &["status", &job]));
        let units = text
            .lines()
            .find_map(|l| l.strip_prefix("units: "))
            .unwrap()
            .to_owned();
        units.split_once('/').unwrap().0.parse::<u64>().unwrap()
    };
    let first = c.worker_as("machine-a", "owner-a", &[]);
    std::thread::sleep(Duration::from_secs(3));
    c.kill_worker(first);
    // The same owner again, on a new session and another machine name.
    c.worker_as("machine-a2", "owner-a", &[]);
    std::thread::sleep(Duration::from_secs(4));
    assert_eq!(units_done(), 0, "no unit decided by one participant");
    // A second participant joins: every unit gets its second vote.
    c.worker_as("machine-b", "owner-b", &[]);
    ok(crate::common::perft_as(&url, &admin, &["watch", &job]));
    let divide: serde_json::Value = serde_json::from_str(&ok(crate::common::perft_as(
        &url,
        &admin,
        &["divide", &job, "--format", "json"],
    )))
    .unwrap();
    let expected = GameKind::Checkers
        .fns()
        .published(9)
        .expect("published checkers count");
    assert_eq!(divide["leaves"], expected.total.leaves.to_string(), "{divide}");
}

#[test]
fn a_failing_journal_loses_no_acknowledged_count() {
    let data = tempfile::tempdir().unwrap();
    let fault = data.path().join("disk-full");
    let journal_dir = data.path().join("journal");
    let start = |listen: &str| {
        try_serve_with(listen, &journal_dir, &["--lease-seconds", "2"], |serve| {
            serve
                .env("RUST_LOG", "error")
                .env("PERFT_JOURNAL_FAULT_FILE", &fault);
        })
        .expect("the coordinator starts")
    };
    let (mut server, address) = start("127.0.0.1:0");
    let url = format!("http://{address}");
    let job = submit(
        &url,
        &["--game", "checkers", "--depth", "11", "--split-depth", "5"],
    );
    let _workers = [worker(&url, "disk-a", &[]), worker(&url, "disk-b", &[])];
    assert!(wait_for(Duration::from_secs(60), || status(&url, &job).done > 20));
    // The disk fills: writes fail, the coordinator stops taking reports and
    // says so; workers keep their counts.
    std::fs::write(&fault, b"full").unwrap();
    assert!(wait_for(Duration::from_secs(10), || {
        String::from_utf8_lossy(&perft(&url, &["health"]).stderr).contains("NOT_SERVING")
    }));
    let submitted = perft(&url, &["submit", "--game", "checkers", "--depth", "5"]);
    assert!(
        !submitted.status.success(),
        "no submit while the journal cannot write"
    );
    std::thread::sleep(Duration::from_secs(2));
    // Room again: the re-sent counts are taken and the job finishes.
    std::fs::remove_file(&fault).unwrap();
    assert!(wait_for(Duration::from_secs(10), || perft(&url, &["health"])
        .status
        .success()));
    ok(perft(&url, &["watch", &job]));
    assert_published_checkers(&url, &job, 11);
    // Everything acknowledged is in the journal: after a SIGKILL the job is
    // done, with the same exact table, and only one job exists.
    server.kill();
    let (_server, address) = start(&address);
    let url = format!("http://{address}");
    let JobStatus {
        state, done, total, ..
    } = status(&url, &job);
    assert_eq!((state.as_str(), done), ("done", total));
    assert_published_checkers(&url, &job, 11);
    assert_eq!(ok(perft(&url, &["list"])).matches("checkers").count(), 1);
}

#[test]
fn a_cancel_survives_a_sigkill_right_after_it() {
    let mut c = Cluster::start(&[]);
    let url = c.url.clone();
    let job = submit(
        &url,
        &["--game", "checkers", "--depth", "12", "--split-depth", "4"],
    );
    ok(perft(&url, &["cancel", &job]));
    c.restart();
    assert_eq!(status(&url, &job).state, "cancelled");
}

#[test]
fn a_second_coordinator_on_one_data_dir_is_refused() {
    let c = Cluster::start(&[]);
    let second = Command::new(PERFT)
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--data-dir",
            c.data().to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let message = refused(&second);
    assert!(
        message.contains("is in use by another coordinator (pid"),
        "{message}"
    );
}

/// Flips one bit of the first stored count in the journal.
fn flip_a_stored_count(dir: &Path) -> u64 {
    let db = rusqlite::Connection::open(dir.join("journal.sqlite")).unwrap();
    let unit: i64 = db
        .query_row(
            "SELECT unit_id FROM results ORDER BY unit_id LIMIT 1",
            [],
            |row| row.get(0),
        )
        .unwrap();
    flip_count_of(&db, unit as u64);
    unit as u64
}

/// Flips one bit of unit `unit`'s stored count in the journal `db`.
pub(crate) fn flip_count_of(db: &rusqlite::Connection, unit: u64) {
    let mut blob: Vec<u8> = db
        .query_row(
            "SELECT leaves FROM results WHERE unit_id = ?1",
            [unit as i64],
            |row| row.get(0),
        )
        .unwrap();
    blob[2] ^= 0x08;
    db.execute(
        "UPDATE results SET leaves = ?1 WHERE unit_id = ?2",
        rusqlite::params![blob, unit as i64],
    )
    .unwrap();
}

/// Flips one bit of the first per-move count in a finished job's stored
/// summary (after its 28-byte header); returns the job's id.
fn flip_a_stored_summary(dir: &Path) -> String {
    let db = rusqlite::Connection::open(dir.join("journal.sqlite")).unwrap();
    let (job, mut blob): (String, Vec<u8>) = db
        .query_row(
            "SELECT id, summary FROM jobs WHERE summary IS NOT NULL LIMIT 1",
            [],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )
        .unwrap();
    blob[28 + 2] ^= 0x08;
    db.execute(
        "UPDATE jobs SET summary = ?1 WHERE id = ?2",
        rusqlite::params![blob, job],
    )
    .unwrap();
    job
}

#[test]
fn a_flipped_bit_in_a_stored_count_is_caught_and_recounted() {
    let mut c = Cluster::start(&[]);
    let url = c.url.clone();
    let job = submit(
        &url,
        &["--game", "checkers", "--depth", "9", "--split-depth", "3"],
    );
    let counter = c.worker("counter", &[]);
    ok(perft(&url, &["watch", &job]));
    c.kill_worker(counter);
    c.kill();
    // A damaged summary over sound counts: caught by its checksum, the job
    // is rebuilt from its units and stays done, exact.
    assert_eq!(flip_a_stored_summary(c.data()), job);
    c.restart();
    let JobStatus {
        state, done, total, ..
    } = status(&url, &job);
    assert_eq!((state.as_str(), done), ("done", total));
    assert_published_checkers(&url, &job, 9);
    c.kill();
    // A damaged count below a done job's summary: caught against the
    // job's Merkle root at start, its unit is open again (done_damage.rs
    // shows how it is reported everywhere).
    flip_a_stored_count(c.data());
    c.restart();
    let JobStatus {
        state, done, total, ..
    } = status(&url, &job);
    assert_eq!((state.as_str(), done + 1), ("running", total));
    c.worker("recounter", &[]);
    ok(perft(&url, &["watch", &job]));
    assert_published_checkers(&url, &job, 9);
}

/// Peak resident memory of a process, in KiB.
fn peak_kib(pid: u32) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = text.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn a_huge_plan_is_refused_with_bounded_memory() {
    let c = Cluster::start(&["--max-units", "200000"]);
    let url = c.url.clone();
    let started = Instant::now();
    let message = refused(&perft(
        &url,
        &words("submit --game checkers --depth 40 --split-depth 16"),
    ));
    eprintln!("refused in {:.2} s: {message}", started.elapsed().as_secs_f64());
    assert!(message.contains("more than 200000 units"), "{message}");
    let peak = peak_kib(c.pid());
    eprintln!("coordinator peak memory {peak} KiB");
    assert!(peak < 512 * 1024, "peak {peak} KiB");
    assert_eq!(ok(perft(&url, &["health"])).trim(), "serving");
}

#[test]
fn a_failed_job_resumes_with_its_counts() {
    let mut c = Cluster::start(&["--lease-seconds", "1"]);
    let url = c.url.clone();
    let job = submit(
        &url,
        &["--game", "checkers", "--depth", "8", "--split-depth", "2"],
    );
    let runtime = tokio::runtime::Runtime::new().unwrap();
    // A worker that counts one unit, then keeps taking every unit and
    // dying with them, until the job fails.
    runtime.block_on(async {
        use perft_proto as pb;
        let mut workers = crate::common::worker_client(&url).await;
        let mut counted = false;
        for round in 0..40 {
            let id = workers
                .register(pb::RegisterRequest {
                    name: format!("flaky-{round}"),
                    threads: 1,
                    ..Default::default()
                })
                .await
                .unwrap()
                .into_inner()
                .worker_id;
            let Ok(leased) = workers
                .lease_units(pb::LeaseUnitsRequest {
                    worker_id: id.clone(),
                    max_units: 1024,
                })
                .await
            else {
                break;
            };
            let jobs = leased.into_inner().jobs;
            if jobs.iter().all(|j| j.units.is_empty()) {
                break;
            }
            if !counted {
                let leased_job = &jobs[0];
                assert_eq!(leased_job.job_id, job);
                assert_eq!(leased_job.game, i32::from(pb::Game::Checkers));
                let unit = &leased_job.units[0];
                let position = <perft_core::Checkers as perft_core::Game>::unpack(&unit.position).unwrap();
                let leaves = perft_core::perft(&position, leased_job.depth);
                let reply = workers
                    .report_results(pb::ReportResultsRequest {
                        worker_id: id.clone(),
                        jobs: vec![pb::JobReport {
                            job_id: leased_job.job_id.clone(),
                            results: vec![pb::UnitResult {
                                unit_id: unit.unit_id,
                                epoch: unit.epoch,
                                leaves: Some(leaves.into()),
                                lease_tag: unit.lease_tag.clone(),
                                cpu_seconds: 0.0,
                            }],
                            released: Vec::new(),
                        }],
                    })
                    .await
                    .unwrap()
                    .into_inner();
                assert_eq!(reply.accepted, 1);
                counted = true;
            }
            tokio::time::sleep(Duration::from_millis(1300)).await;
        }
    });
    assert!(wait_for(Duration::from_secs(10), || status(&url, &job).state == "failed"));
    let JobStatus {
        done: done_before,
        total,
        ..
    } = status(&url, &job);
    assert_eq!(done_before, 1, "the one count accepted stays");
    let resumed = ok(perft(&url, &["resume", &job]));
    assert!(
        resumed.contains(&format!("job {job} running: 1/{total} units counted")),
        "{resumed}"
    );
    c.worker("steady", &[]);
    ok(perft(&url, &["watch", &job]));
    assert_published_checkers(&url, &job, 8);
    // Only a failed job resumes.
    let again = refused(&perft(&url, &["resume", &job]));
    assert!(again.contains("only a failed job can be resumed"), "{again}");
}

#[test]
fn loadgen_never_touches_a_real_job() {
    let c = Cluster::start(&[]);
    let url = c.url.clone();
    let real = submit(&url, &["--game", "checkers", "--depth", "10"]);
    let JobStatus {
        total: units_before, ..
    } = status(&url, &real);
    ok(perft(
        &url,
        &words("loadgen --workers 50 --game checkers --depth 6 --batch 8"),
    ));
    let JobStatus {
        state, done, total, ..
    } = status(&url, &real);
    assert_eq!((state.as_str(), done, total), ("queued", 0, units_before));
    // A job submitted while loadgen's workers are still registered is split
    // as if they were not there.
    let later = submit(&url, &["--game", "checkers", "--depth", "10"]);
    assert_eq!(status(&url, &later).total, units_before);
}
