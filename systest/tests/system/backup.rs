//! Online copies of the journal (`perft backup DIR`) and checking one
//! offline (`perft journal check DIR`): a copy taken mid-run while a
//! worker counts, the original data dir then deleted, starts without
//! `--accept-journal-loss` and the job ends exact; a copy whose mark does
//! not match its journal, or with a damaged row, is found out; a hostile
//! directory is refused. Real processes, a real journal.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use perft_core::GameKind;

use crate::common::jobs::{JobStatus, status, words};
use crate::common::{PERFT, add_participant, ok, perft, perft_as, refused, serve, wait_for, worker};

fn journal_check(dir: &Path) -> Output {
    Command::new(PERFT)
        .args(["journal", "check"])
        .arg(dir)
        .output()
        .expect("perft journal check runs")
}

/// A check that found damage: exit 1, one error line saying `says`.
fn damaged(dir: &Path, says: &str) {
    let output = journal_check(dir);
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("error: ") && stderr.contains(says), "{stderr}");
    assert!(stdout.lines().any(|l| l.starts_with("DAMAGED: ")), "{stdout}");
    assert!(
        stdout.lines().last().unwrap().starts_with("damaged: "),
        "{stdout}"
    );
}

/// The names of the files in `dir`, sorted.
fn names(dir: &Path) -> Vec<String> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        names.push(entry.unwrap().file_name().to_string_lossy().into_owned());
    }
    names.sort();
    names
}

/// Copies a copy (its two files) into a new directory beside it.
fn duplicate(copy: &Path, name: &str) -> std::path::PathBuf {
    let to = copy.parent().unwrap().join(name);
    std::fs::create_dir(&to).unwrap();
    for file in ["journal.sqlite", "journal.mark"] {
        std::fs::copy(copy.join(file), to.join(file)).unwrap();
    }
    to
}

#[test]
fn a_copy_taken_mid_run_replaces_a_lost_data_dir_and_the_job_ends_exact() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let copy = dir.path().join("copy");
    let (mut server, url) = serve(&data, &[]);
    let mut counting = worker(&url, "w1", &[]);
    let depth = 13;
    let job = ok(perft(
        &url,
        &[
            "submit",
            "--game",
            "checkers",
            "--depth",
            &depth.to_string(),
            "--split-depth",
            "6",
        ],
    ))
    .trim()
    .to_owned();
    // Copied as soon as something is counted: most of the job is left.
    assert!(
        wait_for(Duration::from_secs(120), || status(&url, &job).done >= 1),
        "nothing counted"
    );
    let JobStatus {
        done: counted, total, ..
    } = status(&url, &job);
    let said = ok(perft(&url, &["backup", copy.to_str().unwrap()]));
    eprintln!("{}", said.trim());
    assert!(said.starts_with("journal copied at commit "), "{said}");
    let JobStatus {
        done: after, state, ..
    } = status(&url, &job);
    eprintln!("copied at {counted} to {after} of {total} units counted");
    assert!(
        after < total && state != "done",
        "the job ended before the copy: make it longer"
    );
    assert_eq!(names(&copy), ["journal.mark", "journal.sqlite"]);

    // The machine is lost: coordinator, worker and data dir.
    counting.kill();
    server.kill();
    std::fs::remove_dir_all(&data).unwrap();

    let checked = ok(journal_check(&copy));
    assert!(
        checked.lines().last().unwrap().starts_with("clean: "),
        "{checked}"
    );
    // Starts from the copy as from its data dir: no --accept-journal-loss.
    let (_server, url) = serve(&copy, &[]);
    let JobStatus {
        done: resumed,
        total: resumed_total,
        ..
    } = status(&url, &job);
    assert_eq!(resumed_total, total);
    assert!(
        resumed >= counted,
        "{resumed} < {counted}: the copy lost counts acknowledged before it"
    );
    let _counting = worker(&url, "w2", &[]);
    ok(perft(&url, &["watch", &job]));
    let divide: serde_json::Value =
        serde_json::from_str(&ok(perft(&url, &["divide", &job, "--format", "json"]))).unwrap();
    let published = GameKind::Checkers.fns().published(depth).unwrap();
    assert_eq!(
        divide["leaves"],
        published.total.leaves.to_string(),
        "published checkers perft({depth})"
    );
}

#[test]
fn a_damaged_copy_or_one_whose_mark_does_not_match_is_found_and_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let copy = dir.path().join("copy");
    {
        let (_server, url) = serve(&data, &[]);
        let _counting = worker(&url, "w1", &[]);
        let job = ok(perft(
            &url,
            &words("submit --game checkers --depth 7 --split-depth 3"),
        ))
        .trim()
        .to_owned();
        ok(perft(&url, &["watch", &job]));
        ok(perft(&url, &["backup", copy.to_str().unwrap()]));
    }
    let clean = ok(journal_check(&copy));
    assert!(clean.lines().last().unwrap().starts_with("clean: "), "{clean}");
    assert!(!clean.contains("DAMAGED"), "{clean}");

    // A flipped byte in one result row.
    let flipped = duplicate(&copy, "flipped");
    let db = rusqlite::Connection::open(flipped.join("journal.sqlite")).unwrap();
    let (job_id, unit, mut leaves): (String, i64, Vec<u8>) = db
        .query_row(
            "SELECT job_id, unit_id, leaves FROM results ORDER BY unit_id LIMIT 1 OFFSET 3",
            [],
            |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)),
        )
        .unwrap();
    leaves[0] ^= 0x01;
    db.execute(
        "UPDATE results SET leaves = ?1 WHERE job_id = ?2 AND unit_id = ?3",
        rusqlite::params![leaves, job_id, unit],
    )
    .unwrap();
    drop(db);
    damaged(&flipped, &format!("unit {unit}: its count fails its checksum"));

    // No mark: lost work cannot be ruled out.
    let unmarked = duplicate(&copy, "unmarked");
    std::fs::remove_file(unmarked.join("journal.mark")).unwrap();
    damaged(&unmarked, "is missing");

    // A mark ahead of its journal: the journal lost committed work, and
    // `perft serve` refuses it like any other.
    let ahead = duplicate(&copy, "ahead");
    std::fs::write(
        ahead.join("journal.mark"),
        "deep-perft journal mark 1\nsequence 1000000\n",
    )
    .unwrap();
    damaged(&ahead, "lost committed work");
    let refused_start = Command::new(PERFT)
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(&ahead)
        .env_remove("PERFT_TOKEN")
        .output()
        .unwrap();
    assert_eq!(refused_start.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&refused_start.stderr).contains("its mark says 1000000"));

    // Not a data dir: exit 2.
    refused(&journal_check(&dir.path().join("nowhere")));
    refused(&journal_check(dir.path()));
}

#[test]
fn hostile_backup_directories_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let keys = tempfile::tempdir().unwrap();
    let admin = add_participant(&data, keys.path(), "root", "admin");
    let reader = add_participant(&data, keys.path(), "eve", "reader");
    let (_server, url) = serve(&data, &[]);
    let full = dir.path().join("full");
    std::fs::create_dir(&full).unwrap();
    std::fs::write(full.join("keep"), b"keep").unwrap();
    let data_text = data.to_str().unwrap().to_owned();
    for (target, says) in [
        ("copy".to_owned(), "not an absolute path"),
        ("../copy".to_owned(), "not an absolute path"),
        (data_text.clone(), "the data dir itself"),
        (format!("{data_text}/inner"), "inside the data dir"),
        (format!("{data_text}/../data/x"), "'..'"),
        (full.to_str().unwrap().to_owned(), "not empty"),
        (format!("{}/no/such", dir.path().display()), "parent directory"),
    ] {
        let stderr = refused(&perft_as(&url, &admin, &["backup", &target]));
        assert!(stderr.contains(says), "{target}: {stderr}");
    }
    assert_eq!(names(&full), ["keep"]);
    assert!(!data.join("inner").exists());
    // Only an admin copies the journal (it holds every secret's hash).
    let stderr = refused(&perft_as(
        &url,
        &reader,
        &["backup", dir.path().join("copy").to_str().unwrap()],
    ));
    assert!(
        stderr.contains("may not manage") && stderr.contains("copy the journal"),
        "{stderr}"
    );
    assert!(!dir.path().join("copy").exists());
    // An admin's copy goes through.
    ok(perft_as(
        &url,
        &admin,
        &["backup", dir.path().join("copy").to_str().unwrap()],
    ));
    assert_eq!(
        names(&dir.path().join("copy")),
        ["journal.mark", "journal.sqlite"]
    );
}
