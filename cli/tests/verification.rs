//! Redundant verification end to end: one of three real workers reports
//! wrong counts (the test-only fault injector), and `--verify` catches
//! every one: the divide table is exact and each fault is listed as a
//! disagreement naming the faulty worker.

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Output, Stdio};

const PERFT: &str = env!("CARGO_BIN_EXE_perft");

struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn perft(url: &str, args: &[&str]) -> Output {
    Command::new(PERFT)
        .args(args)
        .env("PERFT_COORDINATOR", url)
        .output()
        .expect("perft runs")
}

fn ok(output: Output) -> String {
    assert!(
        output.status.success(),
        "perft failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn verification_catches_every_injected_fault() {
    let data = std::env::temp_dir().join(format!("perft-verify-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    let mut server = Running(
        Command::new(PERFT)
            .args([
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--data-dir",
                data.to_str().unwrap(),
            ])
            .env("RUST_LOG", "error")
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut line = String::new();
    BufReader::new(server.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = format!("http://{}", line.trim().strip_prefix("listening on ").unwrap());

    let worker = |name: &str, fault_every: Option<&str>| {
        let mut command = Command::new(PERFT);
        command
            .args([
                "worker",
                "--coordinator",
                &url,
                "--threads",
                "1",
                "--hash",
                "16M",
                "--name",
                name,
            ])
            .env("RUST_LOG", "warn")
            .env_remove("PERFT_FAULT_EVERY")
            .stderr(Stdio::piped());
        if let Some(every) = fault_every {
            command.env("PERFT_FAULT_EVERY", every);
        }
        Running(command.spawn().unwrap())
    };
    let mut faulty = worker("faulty", Some("3"));
    let _good = [worker("good1", None), worker("good2", None)];

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
