//! The journal on a real SQLite file: a reopened journal resumes every job
//! with the results already accepted, and a journal this build must not use
//! is refused with a clear message.

use std::time::{Duration, Instant};

use perft_coordinator::jobs::{JobSpec, JobState, Jobs, WorkerRef};
use perft_coordinator::journal::{Journal, JournalError};
use perft_coordinator::planning::{PlanRequest, plan};
use perft_core::{Checkers, GameKind, Leaves};

const TTL: Duration = Duration::from_secs(30);

fn count(position: &str, depth: u32) -> Leaves {
    perft_core::perft(&position.parse::<Checkers>().unwrap(), depth)
}

#[tokio::test]
async fn a_reopened_journal_resumes_jobs_with_their_results() {
    let dir = tempfile::tempdir().unwrap();
    let now = Instant::now();
    let request = PlanRequest {
        position: None,
        depth: 8,
        split_depth: Some(3),
        min_units: 1,
        max_units: 1 << 20,
    };
    let planned = plan(GameKind::Checkers, &request).unwrap();
    let units = planned.units.len();
    let spec = JobSpec {
        game: GameKind::Checkers,
        position: planned.position.clone(),
        depth: 8,
        verify: false,
    };

    let half = {
        let (journal, restored, _) = Journal::open(dir.path()).unwrap();
        assert!(restored.is_empty());
        let mut jobs = Jobs::default();
        jobs.submit("a".into(), spec.clone(), planned.clone(), now);
        jobs.submit("b".into(), spec, planned, now);
        let leased = jobs.lease(WorkerRef::named("w"), units / 2, &mut None, None, now, TTL);
        for unit in &leased {
            jobs.report(
                &unit.job_id,
                unit.unit_id,
                count(&unit.position, unit.depth),
                WorkerRef::named("w"),
            );
        }
        jobs.cancel("b").unwrap();
        journal.send(jobs.take_ops()).wait().await.unwrap();
        leased.len()
        // The journal and the jobs are dropped here, as in a crash.
    };

    let (journal, restored, _) = Journal::open(dir.path()).unwrap();
    assert_eq!(restored.len(), 2);
    assert_eq!(restored[0].id, "a");
    assert_eq!(restored[0].results.len(), half);
    assert_eq!(restored[0].plan.units.len(), units);
    assert_eq!(restored[1].state, JobState::Cancelled);
    let mut jobs = Jobs::default();
    for job in restored {
        jobs.restore(job, now);
    }
    let view = jobs.view("a").unwrap();
    assert_eq!(
        (view.state, view.units_done, view.units_total),
        (JobState::Running, half as u64, units as u64)
    );
    // Only the units without a result are handed out again.
    let rest = jobs.lease(WorkerRef::named("v"), usize::MAX, &mut None, None, now, TTL);
    assert_eq!(rest.len(), units - half);
    assert!(rest.iter().all(|u| u.job_id == "a"));
    for unit in &rest {
        jobs.report(
            &unit.job_id,
            unit.unit_id,
            count(&unit.position, unit.depth),
            WorkerRef::named("v"),
        );
    }
    journal.send(jobs.take_ops()).wait().await.unwrap();
    let divide = jobs.divide("a").unwrap();
    assert_eq!(divide.job.state, JobState::Done);
    assert_eq!(divide.total, Leaves::full(845_931));
    drop(journal);
    let (_, restored, _) = Journal::open(dir.path()).unwrap();
    assert_eq!(restored[0].state, JobState::Done);
    assert_eq!(restored[0].results.len(), units);
}

#[test]
fn a_newer_journal_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    drop(Journal::open(dir.path()).unwrap());
    let db = rusqlite::Connection::open(dir.path().join("journal.sqlite")).unwrap();
    db.execute("UPDATE meta SET value = 99 WHERE key = 'schema_version'", [])
        .unwrap();
    drop(db);
    let err = Journal::open(dir.path()).unwrap_err();
    assert!(matches!(err, JournalError::Newer { found: 99, .. }), "{err}");
    assert!(
        err.to_string()
            .contains("written by a newer Deep Perft (schema 99"),
        "{err}"
    );
}

#[test]
fn a_damaged_or_foreign_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("journal.sqlite"), vec![0x5Au8; 8192]).unwrap();
    let err = Journal::open(dir.path()).unwrap_err();
    assert!(matches!(err, JournalError::Corrupt { .. }), "{err}");
    assert!(err.to_string().contains("is damaged"), "{err}");

    let other = tempfile::tempdir().unwrap();
    let db = rusqlite::Connection::open(other.path().join("journal.sqlite")).unwrap();
    db.execute("CREATE TABLE photos (id INTEGER)", []).unwrap();
    drop(db);
    let err = Journal::open(other.path()).unwrap_err();
    assert!(err.to_string().contains("not a Deep Perft journal"), "{err}");
}

#[test]
fn an_empty_or_missing_database_beside_its_log_is_refused() {
    for database in [Some(Vec::new()), None] {
        let dir = tempfile::tempdir().unwrap();
        if let Some(bytes) = &database {
            std::fs::write(dir.path().join("journal.sqlite"), bytes).unwrap();
        }
        std::fs::write(dir.path().join("journal.sqlite-wal"), vec![7u8; 4096]).unwrap();
        let err = Journal::open(dir.path()).unwrap_err();
        assert!(matches!(err, JournalError::Corrupt { .. }), "{err}");
        assert!(
            err.to_string()
                .contains("the database is missing or empty but its write-ahead log holds 4096 bytes"),
            "{err}"
        );
    }
}

#[test]
fn an_older_journal_and_a_locked_dir_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    drop(Journal::open(dir.path()).unwrap());
    let db = rusqlite::Connection::open(dir.path().join("journal.sqlite")).unwrap();
    db.execute("UPDATE meta SET value = 1 WHERE key = 'schema_version'", [])
        .unwrap();
    drop(db);
    let err = Journal::open(dir.path()).unwrap_err();
    assert!(matches!(err, JournalError::Older { found: 1, .. }), "{err}");

    let locked = tempfile::tempdir().unwrap();
    let first = Journal::open(locked.path()).unwrap();
    let err = Journal::open(locked.path()).unwrap_err();
    assert!(
        err.to_string().contains(&format!(
            "in use by another coordinator (pid {}",
            std::process::id()
        )),
        "{err}"
    );
    drop(first);
}
