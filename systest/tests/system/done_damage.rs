//! A done job's counts damaged on disk while the coordinator is stopped
//! (a flipped byte, a deleted row, a changed decider, a damaged Merkle
//! root): the next start checks every done job against the root stored
//! when it finished, logs the damage, and says so everywhere (status, the
//! dashboard, `perft certificate` refused naming the units, `perft
//! journal check`) until the damaged units are counted again; then the
//! job ends exact and certifies. Real processes, a real journal.

use std::path::Path;
use std::process::Command;

use rusqlite::Connection;

use crate::common::http::{agent, get, json};
use crate::common::jobs::{self, JobStatus};
use crate::common::tamper::audit_all;
use crate::common::{PERFT, free_port, ok, perft, worker};
use crate::journal_loss::{Start, done_job, start, terminate};
use crate::trust::{assert_published_checkers, flip_count_of};

/// The journal of a stopped coordinator, to damage.
fn journal(data: &Path) -> Connection {
    Connection::open(data.join("journal.sqlite")).unwrap()
}

/// `perft journal check DIR`: (exit code, everything it printed).
fn journal_check(data: &Path) -> (Option<i32>, String) {
    let out = Command::new(PERFT)
        .args(["journal", "check", data.to_str().unwrap()])
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), text)
}

/// A checkers perft(7) job done and stopped cleanly, then `damage` to its
/// stored counts (returning the unit it damaged): the start says so and
/// serves the job as damaged until a worker counts the unit again, and
/// the job then ends exact, certifies and starts clean.
fn damaged_then_recounted(damage: impl FnOnce(&Connection) -> u64) {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let job = done_job(&data);
    let unit = damage(&journal(&data));
    let units = format!("units {unit} ");

    let (code, checked) = journal_check(&data);
    assert_eq!(code, Some(1), "{checked}");
    assert!(
        checked.contains(&units),
        "journal check does not name unit {unit}: {checked}"
    );

    let log = dir.path().join("serve.log");
    let port = free_port().to_string();
    let dashboard = format!("http://127.0.0.1:{port}");
    let listen = format!("127.0.0.1:{port}");
    let Start::Started { mut server, url } = start(&data, &["--http-listen", &listen], &log) else {
        panic!("a journal with a damaged done job was refused: its damage can be counted again");
    };
    let said = std::fs::read_to_string(&log).unwrap();
    assert!(
        said.lines().any(|l| l.contains("ERROR")
            && l.contains("a done job is damaged")
            && l.contains(&job)
            && l.contains(&format!("units={unit}"))),
        "{said}"
    );

    // Status: not done, and why.
    let status = ok(perft(&url, &["status", &job]));
    let JobStatus {
        done, total, state, ..
    } = jobs::status(&url, &job);
    assert_eq!((state.as_str(), done + 1), ("running", total), "{status}");
    let error = status
        .lines()
        .find_map(|l| l.strip_prefix("error: "))
        .unwrap_or_else(|| panic!("status does not say the job is damaged: {status}"));
    assert!(
        error.starts_with("damaged: ") && error.contains(&units),
        "{status}"
    );
    // The dashboard says the same.
    let (code, body) = get(&agent(), &format!("{dashboard}/api/jobs/{job}"), &[]);
    assert_eq!(code, 200, "{body}");
    let shown = json(&body);
    assert_eq!(shown["job"]["state"], "running", "{body}");
    assert!(
        shown["job"]["error"]
            .as_str()
            .unwrap_or_default()
            .contains(&units),
        "{body}"
    );
    // Its certificate is refused, naming the unit.
    let cert = dir.path().join("job.cert");
    let refused = perft(&url, &["certificate", &job, "--output", cert.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "a damaged job was certified");
    assert!(stderr.contains(&units) && stderr.contains("damaged"), "{stderr}");

    // Counted again, the job ends exact and certifies.
    {
        let _worker = worker(&url, "recounter", &[]);
        ok(perft(&url, &["watch", &job]));
    }
    assert_published_checkers(&url, &job, 7);
    assert!(!ok(perft(&url, &["status", &job])).contains("error: "));
    ok(perft(
        &url,
        &["certificate", &job, "--output", cert.to_str().unwrap()],
    ));
    ok(audit_all(&cert));
    terminate(&mut server);

    // And the next start finds nothing wrong.
    let clean = dir.path().join("clean.log");
    let Start::Started { mut server, url } = start(&data, &[], &clean) else {
        panic!("the recounted journal was refused");
    };
    assert_eq!(jobs::status(&url, &job).state, "done");
    terminate(&mut server);
    let said = std::fs::read_to_string(&clean).unwrap();
    assert!(!said.contains("damaged"), "{said}");
    let (code, checked) = journal_check(&data);
    assert_eq!(code, Some(0), "{checked}");
}

#[test]
fn a_flipped_byte_in_a_done_jobs_count_is_shown_and_recounted() {
    damaged_then_recounted(|db| {
        flip_count_of(db, 5);
        5
    });
}

#[test]
fn a_deleted_count_of_a_done_job_is_shown_and_recounted() {
    damaged_then_recounted(|db| {
        assert_eq!(
            db.execute("DELETE FROM results WHERE unit_id = 7", []).unwrap(),
            1
        );
        7
    });
}

#[test]
fn a_changed_decider_of_a_done_job_is_shown_and_recounted() {
    damaged_then_recounted(|db| {
        let changed = db
            .execute("UPDATE results SET machines = 'mallory' WHERE unit_id = 9", [])
            .unwrap();
        assert_eq!(changed, 1);
        9
    });
}

/// A damaged root over sound counts costs nothing: it is computed again,
/// logged, and the job stays done and certifies.
#[test]
fn a_damaged_merkle_root_over_sound_counts_is_rebuilt() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let job = done_job(&data);
    {
        let db = journal(&data);
        let mut root: Vec<u8> = db
            .query_row("SELECT counts_root FROM jobs WHERE id = ?1", [&job], |row| {
                row.get(0)
            })
            .unwrap();
        assert_eq!(
            root.len(),
            40,
            "a done job keeps its root and the root's checksum"
        );
        root[0] ^= 0x01;
        db.execute(
            "UPDATE jobs SET counts_root = ?1 WHERE id = ?2",
            rusqlite::params![root, job],
        )
        .unwrap();
    }
    let (code, checked) = journal_check(&data);
    assert_eq!(code, Some(1), "{checked}");
    assert!(checked.contains("Merkle root fails its checksum"), "{checked}");
    let log = dir.path().join("serve.log");
    let Start::Started { mut server, url } = start(&data, &[], &log) else {
        panic!("refused a damaged root over sound counts");
    };
    let said = std::fs::read_to_string(&log).unwrap();
    assert!(said.contains("Merkle root fails its own checksum"), "{said}");
    assert_eq!(jobs::status(&url, &job).state, "done");
    let cert = dir.path().join("job.cert");
    ok(perft(
        &url,
        &["certificate", &job, "--output", cert.to_str().unwrap()],
    ));
    terminate(&mut server);
    let (code, checked) = journal_check(&data);
    assert_eq!(code, Some(0), "the root was not stored again: {checked}");
}
