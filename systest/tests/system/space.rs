//! The journal gives space back: a cancelled plan's rows leave it and its
//! pages go back to the file system while the coordinator serves; `perft
//! delete` removes a finished job entirely; a plan that would not fit the
//! data dir is refused. Real processes, a real journal file.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::common::cluster::Cluster;
use crate::common::jobs::words;
use crate::common::{ok, perft, refused, try_serve_with};

/// Bytes of the journal on disk: the database and its write-ahead log.
fn journal_bytes(data: &Path) -> u64 {
    ["journal.sqlite", "journal.sqlite-wal"]
        .iter()
        .map(|name| std::fs::metadata(data.join(name)).map_or(0, |m| m.len()))
        .sum()
}

/// A line of `perft status JOB`, without its label.
fn status_line(url: &str, job: &str, label: &str) -> String {
    let text = ok(perft(url, &["status", job]));
    text.lines()
        .find_map(|l| l.strip_prefix(label))
        .unwrap_or_else(|| panic!("no '{label}' in:\n{text}"))
        .trim()
        .to_owned()
}

#[test]
fn a_cancelled_big_plan_gives_its_space_back_and_delete_removes_a_job() {
    let mut c = Cluster::start(&[]);
    let (url, data) = (c.url.clone(), c.data().to_owned());
    let empty = journal_bytes(&data);
    let job = ok(perft(
        &url,
        &words("submit --game checkers --depth 20 --split-depth 11"),
    ))
    .trim()
    .to_owned();
    let units: u64 = status_line(&url, &job, "units:")
        .split(['/', ' '])
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    assert!(units >= 2_000_000, "{units} units");
    let planned = journal_bytes(&data);
    assert!(planned > empty + units * 20, "{planned} bytes for {units} units");
    // A worker counts some units first, so the cancelled job has counts
    // whose sum must survive its plan.
    let counting = c.worker("w1", &[]);
    let deadline = Instant::now() + Duration::from_secs(60);
    while status_line(&url, &job, "units:").starts_with("0/") {
        assert!(Instant::now() < deadline, "the worker counted nothing");
        std::thread::sleep(Duration::from_millis(200));
    }
    ok(perft(&url, &["cancel", &job]));
    let cancelled = Instant::now();
    c.kill_worker(counting);
    let divide = ok(perft(&url, &["divide", &job, "--format", "json"]));
    assert!(!divide.contains(r#""leaves":"0","full"#), "{divide}");
    let given_back = loop {
        let now = journal_bytes(&data);
        if now < empty + 2_000_000 {
            break cancelled.elapsed();
        }
        assert!(
            cancelled.elapsed() < Duration::from_secs(60),
            "the journal still holds {now} bytes a minute after the cancel ({planned} planned, {empty} empty)"
        );
        std::thread::sleep(Duration::from_millis(250));
    };
    eprintln!(
        "{units} units: {empty} bytes empty, {planned} planned, {} after the cancel, back within {given_back:?}",
        journal_bytes(&data)
    );
    // The cancelled job keeps its summary and divide.
    assert_eq!(status_line(&url, &job, "state:"), "cancelled");
    assert_eq!(ok(perft(&url, &["divide", &job, "--format", "json"])), divide);

    // An open job is not deleted; a finished one is, entirely.
    let open = ok(perft(&url, &["submit", "--game", "checkers", "--depth", "9"]))
        .trim()
        .to_owned();
    let open_refused = refused(&perft(&url, &["delete", &open]));
    assert!(
        open_refused.contains("cancel it before deleting it"),
        "{open_refused}"
    );
    assert!(ok(perft(&url, &["delete", &job])).contains("deleted"));
    let list = ok(perft(&url, &["list"]));
    assert!(!list.contains(&job), "{list}");
    assert!(list.contains(&open), "{list}");
    let gone = refused(&perft(&url, &["status", &job]));
    assert!(gone.contains("no job"), "{gone}");
    refused(&perft(&url, &["delete", &job]));

    // After a restart the deleted job is still gone, and a cancelled one
    // keeps its divide without its plan.
    ok(perft(&url, &["cancel", &open]));
    let open_divide = ok(perft(&url, &["divide", &open, "--format", "json"]));
    c.restart_elsewhere();
    let url = c.url.clone();
    let list = ok(perft(&url, &["list"]));
    assert!(!list.contains(&job), "{list}");
    assert!(list.contains(&open), "{list}");
    assert_eq!(
        ok(perft(&url, &["divide", &open, "--format", "json"])),
        open_divide
    );
    assert_eq!(status_line(&url, &open, "state:"), "cancelled");
}

#[test]
fn a_plan_that_does_not_fit_the_data_dir_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    // Test builds read the free space from PERFT_FREE_BYTES.
    let (_server, address) = try_serve_with("127.0.0.1:0", &data, &[], |serve| {
        serve.env("RUST_LOG", "error").env("PERFT_FREE_BYTES", "70000000");
    })
    .expect("perft serve starts");
    let url = format!("http://{address}");
    let line = refused(&perft(
        &url,
        &words("submit --game checkers --depth 14 --split-depth 8"),
    ));
    assert!(
        line.contains("units, about") && line.contains("has 70 MB free"),
        "{line}"
    );
    // A small plan fits.
    ok(perft(&url, &["submit", "--game", "checkers", "--depth", "6"]));
    let list = ok(perft(&url, &["list"]));
    assert_eq!(
        list.lines().filter(|l| l.contains("checkers")).count(),
        1,
        "{list}"
    );
}
