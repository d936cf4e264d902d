use std::path::Path;

use perft_core::{GameKind, Leaves};

use super::super::tests::journaled_job;
use super::super::{Journal, mark};
use super::{CheckError, Level, check};
use crate::jobs::Op;
use perft_model::Count;
use perft_model::{JobId, ParticipantId, UnitId};

/// Every file of `dir` with its bytes and modification time.
fn state(dir: &Path) -> Vec<(String, Vec<u8>, std::time::SystemTime)> {
    let mut all: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let meta = e.metadata().unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap_or_default(),
                meta.modified().unwrap(),
            )
        })
        .collect();
    all.sort();
    all
}

/// A stopped data dir holding a job with two counts, and its job id.
async fn stopped(dir: &Path) -> JobId {
    let (id, _) = journaled_job(dir, "c", GameKind::Checkers, 4, true, false).await;
    let opened = Journal::open(dir).unwrap();
    let result = |unit| Op::Result {
        job_id: id.clone(),
        unit_id: UnitId(unit),
        count: Count::plain(Leaves::full(unit as u128 + 40)),
        deciders: vec![ParticipantId::parse("lab-a").unwrap()],
    };
    let vote = Op::Vote {
        job_id: id.clone(),
        unit_id: UnitId(3),
        voter: ParticipantId::parse("lab-b").unwrap(),
        label: "lab-b/host".to_owned(),
        count: Count::plain(Leaves::full(9)),
    };
    opened
        .journal
        .send(vec![result(0), result(1), vote])
        .wait()
        .await
        .unwrap();
    opened.journal.close().unwrap();
    id
}

fn damage(dir: &Path) -> Vec<String> {
    let checked = check(dir).unwrap();
    assert!(!checked.is_clean());
    checked.damage().map(|f| f.text.clone()).collect()
}

#[tokio::test]
async fn a_clean_stopped_dir_checks_clean_and_is_left_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    stopped(dir.path()).await;
    let before = state(dir.path());
    let checked = check(dir.path()).unwrap();
    assert!(checked.is_clean(), "{:?}", checked.findings);
    assert!(
        checked.findings.iter().all(|f| f.level == Level::Ok),
        "{:?}",
        checked.findings
    );
    assert_eq!(
        checked.sequence,
        mark::read(&dir.path().join(mark::MARK_FILE)).unwrap()
    );
    assert!(checked.rows >= 4, "{}", checked.rows);
    assert_eq!(state(dir.path()), before);
}

#[tokio::test]
async fn a_flipped_count_a_lost_mark_and_a_mark_ahead_are_damage() {
    let dir = tempfile::tempdir().unwrap();
    stopped(dir.path()).await;
    let db = rusqlite::Connection::open(dir.path().join("journal.sqlite")).unwrap();
    db.execute(
        "UPDATE results SET leaves = CAST(zeroblob(32) AS BLOB) WHERE unit_id = 1",
        [],
    )
    .unwrap();
    drop(db);
    let found = damage(dir.path());
    assert!(
        found
            .iter()
            .any(|f| f.contains("results") && f.contains("unit 1") && f.contains("checksum")),
        "{found:?}"
    );

    let dir = tempfile::tempdir().unwrap();
    stopped(dir.path()).await;
    let mark_path = dir.path().join(mark::MARK_FILE);
    std::fs::remove_file(&mark_path).unwrap();
    let found = damage(dir.path());
    assert!(found.iter().any(|f| f.contains("is missing")), "{found:?}");
    std::fs::write(&mark_path, "deep-perft journal mark 1\nsequence 999999\n").unwrap();
    let found = damage(dir.path());
    assert!(
        found.iter().any(|f| f.contains("lost committed work")),
        "{found:?}"
    );
    std::fs::write(&mark_path, "garbage").unwrap();
    let found = damage(dir.path());
    assert!(
        found.iter().any(|f| f.contains("not a journal mark")),
        "{found:?}"
    );
}

#[tokio::test]
async fn every_kind_of_row_is_checked() {
    let dir = tempfile::tempdir().unwrap();
    stopped(dir.path()).await;
    let db = rusqlite::Connection::open(dir.path().join("journal.sqlite")).unwrap();
    db.execute_batch(
        "UPDATE votes SET checksum = checksum + 1;
         UPDATE unit_chunks SET checksum = checksum + 1;
         UPDATE jobs SET checksum = checksum + 1;",
    )
    .unwrap();
    drop(db);
    let found = damage(dir.path()).join("\n");
    for says in ["votes:", "unit_chunks:", "jobs:"] {
        assert!(found.contains(says), "{says}: {found}");
    }
}

#[test]
fn what_is_no_data_dir_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let input = |path: &Path, says: &str| match check(path) {
        Err(e @ CheckError::Input { .. }) => assert!(e.to_string().contains(says), "{e}"),
        other => panic!("{other:?}"),
    };
    input(&dir.path().join("missing"), "no such directory");
    input(dir.path(), "no journal.sqlite");
    std::fs::write(dir.path().join("file"), b"x").unwrap();
    input(&dir.path().join("file"), "not a directory");
    // A file that is no database is damage, not a mistake.
    std::fs::write(dir.path().join("journal.sqlite"), vec![7u8; 8192]).unwrap();
    let checked = check(dir.path()).unwrap();
    assert!(!checked.is_clean(), "{:?}", checked.findings);
}

#[tokio::test]
async fn a_dir_a_coordinator_holds_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    stopped(dir.path()).await;
    let opened = Journal::open(dir.path()).unwrap();
    match check(dir.path()) {
        Err(e @ CheckError::Input { .. }) => assert!(e.to_string().contains("running coordinator"), "{e}"),
        other => panic!("{other:?}"),
    }
    drop(opened);
    assert!(check(dir.path()).unwrap().is_clean());
}
