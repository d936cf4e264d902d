use std::path::Path;
use std::time::{Duration, Instant};

use perft_core::{GameKind, Leaves};

use super::super::tests::journaled_job;
use super::super::{Journal, check, mark};
use super::{BackupError, target};
use crate::jobs::Op;
use perft_model::Count;
use perft_model::{JobId, ParticipantId, UnitId};

fn names(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn result(id: &JobId, unit: u64, leaves: u128) -> Op {
    Op::Result {
        job_id: id.clone(),
        unit_id: UnitId(unit),
        count: Count::plain(Leaves::full(leaves)),
        deciders: vec![ParticipantId::parse("lab-a").unwrap()],
    }
}

fn refused(data: &Path, raw: &str, says: &str) {
    match target(data, raw) {
        Err(e @ BackupError::Target { .. }) => {
            assert!(e.to_string().contains(says), "{raw}: {e}");
        }
        other => panic!("{raw}: {other:?}"),
    }
}

#[test]
fn hostile_directories_are_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::write(data.join("journal.sqlite"), b"x").unwrap();
    let full = dir.path().join("full");
    std::fs::create_dir(&full).unwrap();
    std::fs::write(full.join("a"), b"a").unwrap();
    std::fs::write(dir.path().join("file"), b"f").unwrap();
    std::os::unix::fs::symlink(&data, dir.path().join("link")).unwrap();
    let at = |name: &str| dir.path().join(name).to_str().unwrap().to_owned();
    refused(&data, "", "no directory given");
    refused(&data, "copy", "not an absolute path");
    refused(&data, "./copy", "not an absolute path");
    refused(&data, &format!("{}/../copy", at("data")), "'..'");
    refused(&data, &at("data"), "the data dir itself");
    refused(&data, &format!("{}/", at("data")), "the data dir itself");
    refused(&data, &format!("{}/inner", at("data")), "inside the data dir");
    // Through a link, still the data dir.
    refused(&data, &format!("{}/inner", at("link")), "inside the data dir");
    refused(&data, &at("link"), "symbolic link");
    refused(&data, &at("full"), "not empty");
    refused(&data, &at("file"), "not a directory");
    refused(&data, &format!("{}/a/b", at("missing")), "parent directory");
    refused(&data, &format!("{}\n", at("copy")), "control characters");
    refused(&data, "/", "root");
    refused(&data, &format!("/{}", "a".repeat(5000)), "longer than");
    // A new directory, and an empty one, are taken.
    assert!(target(&data, &at("copy")).unwrap().create);
    std::fs::create_dir(dir.path().join("empty")).unwrap();
    assert!(!target(&data, &at("empty")).unwrap().create);
}

#[tokio::test]
async fn a_copy_holds_the_journal_and_a_mark_of_its_own_and_starts_as_it() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let (id, _) = journaled_job(&data, "b", GameKind::Checkers, 4, false, false).await;
    let opened = Journal::open(&data).unwrap();
    opened
        .journal
        .send(vec![result(&id, 0, 11), result(&id, 2, 13)])
        .wait()
        .await
        .unwrap();
    let copy = dir.path().join("copy");
    let backup = opened.journal.backup(copy.to_str().unwrap()).unwrap();
    let live = mark::read(&data.join(mark::MARK_FILE)).unwrap().unwrap();
    assert_eq!(backup.sequence, live);
    assert_eq!(backup.dir, copy.canonicalize().unwrap());
    assert_eq!(names(&copy), ["journal.mark", "journal.sqlite"]);
    assert_eq!(mark::read(&copy.join(mark::MARK_FILE)).unwrap(), Some(live));
    assert_eq!(
        backup.bytes,
        std::fs::metadata(copy.join("journal.sqlite")).unwrap().len()
    );
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&copy).unwrap().permissions().mode() & 0o777,
        0o700
    );
    // The journal goes on; the copy stays as it was taken.
    opened
        .journal
        .send(vec![result(&id, 1, 12)])
        .wait()
        .await
        .unwrap();
    drop(opened);

    let checked = check(&copy).unwrap();
    assert!(checked.is_clean(), "{:?}", checked.findings);
    assert_eq!(checked.sequence, Some(live));
    let restored = Journal::open(&copy).unwrap();
    let job = &restored.restored.jobs[0];
    let mut units: Vec<u64> = job.results.iter().map(|(u, _)| u.0).collect();
    units.sort();
    assert_eq!(units, [0, 2]);
}

#[tokio::test]
async fn a_failed_copy_leaves_nothing_behind() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    journaled_job(&data, "b", GameKind::Checkers, 3, false, false).await;
    let opened = Journal::open(&data).unwrap();
    let copy = dir.path().join("copy");
    let target = target(&data, copy.to_str().unwrap()).unwrap();
    // A source that is no journal: the copy fails, and its directory goes.
    let bogus = dir.path().join("bogus.sqlite");
    std::fs::write(&bogus, b"not a database at all, not at all, not at all").unwrap();
    assert!(super::copy(&bogus, &target).is_err());
    assert!(!copy.exists());
    drop(opened);
}

/// What a copy costs the commits behind it: a journal of `UNITS` units,
/// each counted, copied while small commits go on one after another; the
/// commits' latencies before and during the copy.
/// `cargo test -p perft-coordinator backup_stall -- --ignored --nocapture`
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore]
async fn backup_stall() {
    const UNITS: usize = 400_000;
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let id = JobId::parse("big").unwrap();
    let opened = Journal::open(&data).unwrap();
    let journal = std::sync::Arc::new(opened.journal);
    let request = crate::planning::PlanRequest::split_at(14, 1);
    let mut planned = crate::planning::plan(GameKind::Checkers, &request).unwrap();
    let stride = planned.units.stride();
    let mut units = crate::columns::UnitColumns::new(stride);
    for i in 0..UNITS {
        let mut position = vec![0u8; stride];
        position[..8.min(stride)].copy_from_slice(&(i as u64).to_le_bytes()[..8.min(stride)]);
        let weight = perft_core::Weight {
            first_move: (i % planned.first_moves.len()) as u32,
            paths: 1 + (i % 3) as u64,
        };
        units.push(&position, &[weight], 1.0).unwrap();
    }
    planned.units = units;
    let owner = ParticipantId::parse("test").unwrap();
    let spec = crate::jobs::JobSpec::plain(GameKind::Checkers, &planned, 14, owner);
    let started = Instant::now();
    for op in super::super::plan_ops(&id, &spec, &planned, 0) {
        journal.send(vec![op]).wait().await.unwrap();
    }
    for first in (0..UNITS as u64).step_by(4096) {
        let ops = (first..(first + 4096).min(UNITS as u64))
            .map(|u| result(&id, u, u128::from(u) * 1_000_003))
            .collect();
        journal.send(ops).wait().await.unwrap();
    }
    // Let the periodic checkpoint move it all into the database.
    tokio::time::sleep(Duration::from_secs(3)).await;
    let db_bytes = std::fs::metadata(data.join("journal.sqlite")).unwrap().len();
    eprintln!(
        "journal of {UNITS} units, each counted: {db_bytes} bytes, written in {:?}",
        started.elapsed()
    );
    let participant = ParticipantId::parse("lab-a").unwrap();
    let commit = |n: u64| {
        let journal = std::sync::Arc::clone(&journal);
        let participant = participant.clone();
        async move {
            let op = Op::Credit {
                participant,
                total: crate::jobs::Credit {
                    units: n,
                    ..Default::default()
                },
            };
            let at = Instant::now();
            journal.send(vec![op]).wait().await.unwrap();
            at.elapsed()
        }
    };
    let summary = |name: &str, mut took: Vec<Duration>| {
        took.sort();
        let at = |q: f64| took[((took.len() - 1) as f64 * q) as usize];
        eprintln!(
            "{name}: {} commits, median {:?}, p99 {:?}, max {:?}",
            took.len(),
            at(0.5),
            at(0.99),
            took[took.len() - 1]
        );
    };
    for round in 0..2 {
        let mut before = Vec::new();
        let until = Instant::now() + Duration::from_secs(3);
        let mut n = 0;
        while Instant::now() < until {
            n += 1;
            before.push(commit(n).await);
        }
        summary("without a copy", before);
        let copy = dir.path().join(format!("copy{round}"));
        let copying = {
            let journal = std::sync::Arc::clone(&journal);
            tokio::task::spawn_blocking(move || journal.backup(copy.to_str().unwrap()))
        };
        let mut during = Vec::new();
        while !copying.is_finished() {
            n += 1;
            during.push(commit(n).await);
        }
        let backup = copying.await.unwrap().unwrap();
        eprintln!(
            "copy: {} bytes at sequence {} in {:?}",
            backup.bytes, backup.sequence, backup.took
        );
        summary("during the copy", during);
        let at = Instant::now();
        let checked = check(&backup.dir).unwrap();
        eprintln!(
            "journal check of the copy: {:?}, clean {}, {} rows",
            at.elapsed(),
            checked.is_clean(),
            checked.rows
        );
    }
}
