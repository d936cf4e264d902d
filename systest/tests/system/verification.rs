//! Redundant verification end to end: one of three real workers reports
//! wrong counts (the test-only fault injector), and `--verify` catches
//! every one: the divide table is exact and each fault is listed as a
//! disagreement naming the faulty worker.

use std::io::Read;
use std::process::Stdio;

use crate::common::cluster::Cluster;
use crate::common::jobs::words;
use crate::common::{ok, perft_as};

#[test]
fn verification_catches_every_injected_fault() {
    // Verification counts participants: each machine is one.
    let mut c = Cluster::builder()
        .participant("root", "admin")
        .workers(&["faulty", "good1", "good2"])
        .start();
    let (url, admin) = (c.url.clone(), c.secret("root"));
    let perft = |args: &[&str]| perft_as(&url, &admin, args);
    // The faulty worker logs each fault it injects; its stderr is kept.
    let faulty = c.worker_with("faulty", Some("faulty"), &[], |worker| {
        worker
            .env("RUST_LOG", "warn")
            .env("PERFT_FAULT_EVERY", "3")
            .stderr(Stdio::piped());
    });
    c.worker_as("good1", "good1", &[]);

    let id = ok(perft(&words(
        "submit --game reversi --depth 10 --split-depth 4 --verify",
    )))
    .trim()
    .to_owned();
    // With two machines every decided unit has the faulty worker's vote, and
    // a disagreement waits for a third: once six units are decided it has
    // counted at least one wrong, which only the third machine can settle.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    loop {
        assert!(std::time::Instant::now() < deadline, "six units decided in time");
        let status = ok(perft(&["status", &id]));
        let done: u64 = status
            .lines()
            .find_map(|l| l.strip_prefix("units: "))
            .and_then(|u| u.split('/').next())
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        if done >= 6 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    c.worker_as("good2", "good2", &[]);
    ok(perft(&["watch", &id]));
    let divide: serde_json::Value =
        serde_json::from_str(&ok(perft(&["divide", &id, "--format", "json"]))).unwrap();
    assert_eq!(divide["leaves"], "24571284", "the published perft(10)");
    for line in divide["divide"].as_array().unwrap() {
        assert_eq!(
            line["leaves"], "6142821",
            "each of the four symmetric first moves"
        );
    }

    let status = ok(perft(&["status", &id]));
    let disagreements: Vec<&str> = status
        .lines()
        .filter(|l| l.starts_with("disagreement: "))
        .collect();
    for d in &disagreements {
        assert!(d.contains("faulty/faulty ("), "the faulty worker is named: {d}");
        assert!(d.contains("; took "), "a majority was taken: {d}");
    }

    // Every fault the worker injected shows up as a disagreement.
    let faulty = c.worker_process(faulty);
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
        "verified: every unit counted for two participants; {injected} disagreement(s)"
    )));
}
