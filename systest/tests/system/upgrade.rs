//! A run that lasts weeks moves to a new build: the journals the release
//! before lease floors wrote (schema 6) and the release before the
//! journal's integrity work wrote (schema 7: no commit mark, no Merkle
//! roots), each stopped mid-run (see `fixtures/journal-schema-*/README.md`),
//! are upgraded in place at start, and every job ends exact, the verified
//! one with its restored votes, and the done one certifies.

use crate::common::{perft_as, serve, wait_for, worker_as};
use perft_core::GameKind;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");

/// The leaves of `job` from `perft divide --format json`, once done.
fn done_leaves(url: &str, admin: &std::path::Path, job: &str) -> Option<String> {
    let out = perft_as(url, admin, &["divide", job, "--format", "json"]);
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).ok()?;
    (report["state"] == "done").then(|| report["leaves"].as_str().unwrap_or_default().to_owned())
}

/// Starts on a copy of fixture `name`, with a worker of each worker
/// participant; each of `jobs` (a verified perft(7), a done perft(9), a
/// perft(11) mid-run) must end with the published count, and the done one
/// certify.
fn upgraded_mid_run_every_job_ends_exact(name: &str, jobs: [(&str, u32); 3]) {
    let fixture = format!("{FIXTURES}/{name}");
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::copy(format!("{fixture}/journal.sqlite"), data.join("journal.sqlite")).unwrap();
    let secret = |name: &str| std::path::PathBuf::from(format!("{fixture}/{name}"));
    let started = std::time::Instant::now();
    let (_server, url) = serve(&data, &[]);
    let admin = secret("admin");
    let _a = worker_as(&url, "a2", &secret("lab-a"), &[]);
    let _b = worker_as(&url, "b1", &secret("lab-b"), &[]);
    for (job, depth) in jobs {
        let published = GameKind::Checkers.fns().published(depth).unwrap().total.leaves;
        let mut leaves = None;
        assert!(
            wait_for(std::time::Duration::from_secs(120), || {
                leaves = done_leaves(&url, &admin, job);
                leaves.is_some()
            }),
            "job {job} (checkers perft({depth})) did not finish after the upgrade"
        );
        assert_eq!(leaves.unwrap(), published.to_string(), "checkers perft({depth})");
    }
    eprintln!(
        "upgraded journal {name}: three jobs exact {:.1} s after the start",
        started.elapsed().as_secs_f64()
    );
    let (done, _) = jobs[1];
    let cert = dir.path().join("done.cert");
    let out = perft_as(
        &url,
        &admin,
        &["certificate", done, "--output", cert.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let version: i64 = rusqlite::Connection::open(data.join("journal.sqlite"))
        .unwrap()
        .query_row("SELECT value FROM meta WHERE key = 'schema_version'", [], |row| {
            row.get(0)
        })
        .unwrap();
    assert_eq!(version, perft_coordinator::journal::SCHEMA_VERSION);
}

#[test]
fn a_schema_6_journal_stopped_mid_run_is_upgraded_and_every_job_ends_exact() {
    upgraded_mid_run_every_job_ends_exact(
        "journal-schema-6",
        [("2fb3e34d63be", 7), ("7bac36637d02", 9), ("f381eea6fe18", 11)],
    );
}

#[test]
fn a_schema_7_journal_stopped_mid_run_is_upgraded_and_every_job_ends_exact() {
    upgraded_mid_run_every_job_ends_exact(
        "journal-schema-7",
        [("a11a577d1dac", 7), ("8908ac72bbc5", 9), ("2344fd4a5ccc", 11)],
    );
}
