//! Redundant verification end to end: one of three real workers reports
//! wrong counts (the test-only fault injector), and `--verify` catches
//! every one: the divide table is exact and each fault is listed as a
//! disagreement naming the faulty worker.

mod common;

use std::io::Read;
use std::process::{Command, Stdio};

use common::{PERFT, Running, ok, perft, serve, worker};

#[test]
fn verification_catches_every_injected_fault() {
    let data = std::env::temp_dir().join(format!("perft-verify-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    let (_server, url) = serve(&data, &[]);
    // The faulty worker logs each fault it injects; its stderr is kept.
    let mut faulty = Running(
        Command::new(PERFT)
            .args([
                "worker",
                "--coordinator",
                &url,
                "--threads",
                "1",
                "--hash",
                "16M",
                "--name",
                "faulty",
            ])
            .env("RUST_LOG", "warn")
            .env("PERFT_FAULT_EVERY", "3")
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let _good = [worker(&url, "good1", &[]), worker(&url, "good2", &[])];

    let id = ok(perft(
        &url,
        &[
            "submit",
            "--game",
            "reversi",
            "--depth",
            "10",
            "--split-depth",
            "4",
            "--verify",
        ],
    ))
    .trim()
    .to_owned();
    ok(perft(&url, &["watch", &id]));
    let divide: serde_json::Value =
        serde_json::from_str(&ok(perft(&url, &["divide", &id, "--format", "json"]))).unwrap();
    assert_eq!(divide["leaves"], "24571284", "the published perft(10)");
    for line in divide["divide"].as_array().unwrap() {
        assert_eq!(
            line["leaves"], "6142821",
            "each of the four symmetric first moves"
        );
    }

    let status = ok(perft(&url, &["status", &id]));
    let disagreements: Vec<&str> = status
        .lines()
        .filter(|l| l.starts_with("disagreement: "))
        .collect();
    for d in &disagreements {
        assert!(d.contains("faulty ("), "the faulty worker is named: {d}");
        assert!(d.contains("; took "), "a majority was taken: {d}");
    }

    // Every fault the worker injected shows up as a disagreement.
    let _ = faulty.0.kill();
    let _ = faulty.0.wait();
    let mut log = String::new();
    faulty.0.stderr.take().unwrap().read_to_string(&mut log).unwrap();
    let injected = log.lines().filter(|l| l.contains("fault injected")).count();
    assert!(
        injected > 0,
        "the faulty worker must have counted some units: {log}"
    );
    assert_eq!(disagreements.len(), injected, "{status}");
    eprintln!("verification: {injected} faults injected, all caught");
    assert!(status.contains(&format!(
        "verified: every unit counted by two workers; {injected} disagreement(s)"
    )));
    let _ = std::fs::remove_dir_all(&data);
}
