//! The journal on a real SQLite file: a reopened journal resumes every job
//! with the results already accepted, and a journal this build must not use
//! is refused with a clear message.

use perft_coordinator::jobs::{JobSpec, Jobs, LeaseHolder};
use perft_coordinator::journal::{Journal, JournalError, plan_ops};
use perft_coordinator::planning::{PlanRequest, PlannedJob, plan};
use perft_core::{Checkers, Convention, Game, GameKind, GameVisitor, Leaves};
use perft_model::Count;
use perft_model::JobState;
use perft_model::{JobId, ParticipantId};

fn id(job: &str) -> JobId {
    JobId::parse(job).unwrap()
}

fn count(position: &[u8], depth: u32) -> Count {
    Count::plain(perft_core::perft(&Checkers::unpack(position).unwrap(), depth))
}

/// Leases up to `max` units to `worker`, counts and reports them; returns
/// how many.
fn count_some(jobs: &mut Jobs, worker: &str, max: usize) -> usize {
    let mut counted = 0;
    for group in jobs.lease(&LeaseHolder::named(worker).unwrap(), max, None) {
        for unit in &group.units {
            jobs.report(
                &group.job_id,
                unit.unit_id,
                unit.epoch,
                count(&unit.position, group.depth),
                0,
                &LeaseHolder::named(worker).unwrap(),
            );
            counted += 1;
        }
    }
    counted
}

/// Who submits every job here.
fn owner() -> ParticipantId {
    ParticipantId::parse("test").unwrap()
}

/// A plain checkers job of `depth` split at `split`: its spec and plan.
fn checkers(depth: u32, split: u32) -> (JobSpec, PlannedJob) {
    let planned = plan(GameKind::Checkers, &PlanRequest::split_at(depth, split)).unwrap();
    (
        JobSpec::plain(GameKind::Checkers, &planned, depth, owner()),
        planned,
    )
}

/// When the jobs here were submitted, as the journal records it.
const SUBMITTED_MS: u64 = 1_763_830_000_000;

/// Journals a plan as the coordinator does, then hands it to the jobs.
async fn submit(journal: &Journal, jobs: &mut Jobs, id: &str, spec: &JobSpec, planned: PlannedJob) {
    let id = JobId::parse(id).unwrap();
    for op in plan_ops(&id, spec, &planned, SUBMITTED_MS) {
        journal.send(vec![op]).wait().await.unwrap();
    }
    jobs.submit(id, spec.clone(), planned);
}

#[tokio::test]
async fn a_reopened_journal_resumes_jobs_with_their_results() {
    let dir = tempfile::tempdir().unwrap();
    let (spec, planned) = checkers(8, 3);
    let units = planned.units.len();

    let half = {
        let opened = Journal::open(dir.path()).unwrap();
        let (journal, restored) = (opened.journal, opened.restored.jobs);
        assert!(restored.is_empty());
        let mut jobs = Jobs::default();
        submit(&journal, &mut jobs, "a", &spec, planned.clone()).await;
        submit(&journal, &mut jobs, "b", &spec, planned).await;
        let counted = count_some(&mut jobs, "w", units / 2);
        jobs.cancel(&id("b")).unwrap();
        journal.send(jobs.take_ops()).wait().await.unwrap();
        counted
        // The journal and the jobs are dropped here, as in a crash.
    };

    let opened = Journal::open(dir.path()).unwrap();
    let (journal, restored) = (opened.journal, opened.restored.jobs);
    assert_eq!(restored.len(), 2);
    assert_eq!(restored[0].id.as_str(), "a");
    assert_eq!(restored[0].results.len(), half);
    assert_eq!(restored[0].plan.units.len(), units);
    assert_eq!(restored[1].state, JobState::Cancelled);
    assert!(
        restored[1].summary.is_some(),
        "a finished job comes back as its summary"
    );
    assert_eq!(restored[1].plan.units.len(), 0, "and its units stay on disk");
    let mut jobs = Jobs::default();
    for job in restored {
        jobs.restore(job);
    }
    assert_eq!(jobs.view(&id("b")).unwrap().units_total, units as u64);
    let view = jobs.view(&id("a")).unwrap();
    assert_eq!(
        view.submitted_ms,
        Some(SUBMITTED_MS),
        "the submission time is kept"
    );
    assert_eq!(
        (view.state, view.units_done, view.units_total),
        (JobState::Running, half as u64, units as u64)
    );
    // Only the units without a result are handed out again.
    assert_eq!(count_some(&mut jobs, "v", usize::MAX), units - half);
    journal.send(jobs.take_ops()).wait().await.unwrap();
    let divide = jobs.divide(&id("a")).unwrap();
    assert_eq!(divide.job.state, JobState::Done);
    assert_eq!(divide.total.leaves, Leaves::full(845_931));
    drop(journal);
    let opened = Journal::open(dir.path()).unwrap();
    let (_, restored) = (opened.journal, opened.restored.jobs);
    assert_eq!(restored[0].state, JobState::Done);
    // A restart loads only open jobs: both are finished, so no unit and no
    // count is read, and the divide comes from the summary.
    assert!(
        restored
            .iter()
            .all(|j| j.plan.units.is_empty() && j.results.is_empty())
    );
    let mut jobs = Jobs::default();
    for job in restored {
        jobs.restore(job);
    }
    assert_eq!(jobs.unit_bytes(), 0);
    let again = jobs.divide(&id("a")).unwrap();
    assert_eq!(again.total.leaves, Leaves::full(845_931));
    assert_eq!(
        again
            .moves
            .iter()
            .map(|l| (l.first_move.clone(), l.count))
            .collect::<Vec<_>>(),
        divide
            .moves
            .iter()
            .map(|l| (l.first_move.clone(), l.count))
            .collect::<Vec<_>>()
    );
}

/// Counts a leased unit of any game in its convention.
struct CountIn<'a>(&'a [u8], u32);

impl GameVisitor for CountIn<'_> {
    type Output = Leaves;
    fn visit<G: Game>(self) -> Leaves {
        perft_core::perft(&G::unpack(self.0).unwrap(), self.1)
    }
}

/// Plans, journals and counts a whole job of `game` in `convention`.
async fn counted_job(
    journal: &Journal,
    jobs: &mut Jobs,
    id: &str,
    game: GameKind,
    convention: Option<Convention>,
    depth: u32,
) {
    let request = PlanRequest {
        convention,
        ..PlanRequest::split_at(depth, 3)
    };
    let planned = plan(game, &request).unwrap();
    let spec = JobSpec {
        convention: game.resolve_convention(convention).unwrap(),
        ..JobSpec::plain(game, &planned, depth, owner())
    };
    submit(journal, jobs, id, &spec, planned).await;
    while let Some(group) = jobs.lease(&LeaseHolder::named("w").unwrap(), 64, None).pop() {
        for unit in &group.units {
            let leaves = game
                .dispatch_in(group.convention, CountIn(&unit.position, group.depth))
                .unwrap();
            jobs.report(
                &group.job_id,
                unit.unit_id,
                unit.epoch,
                Count::plain(leaves),
                0,
                &LeaseHolder::named("w").unwrap(),
            );
        }
    }
    journal.send(jobs.take_ops()).wait().await.unwrap();
    assert_eq!(
        jobs.view(&JobId::parse(id).unwrap()).unwrap().state,
        JobState::Done
    );
}

/// The total of a done job's certificate made from the journal, which
/// names the job, the time the journal stamped on it when it was done and
/// the program it was given.
fn certified_total(journal: &Journal, id: &str) -> Leaves {
    let bytes =
        perft_coordinator::certify::certificate_file(journal, &JobId::parse(id).unwrap(), "perft 9.9.9")
            .unwrap();
    let cert = perft_certificate::Certificate::decode(&bytes).unwrap();
    assert_eq!(cert.version(), perft_certificate::VERSION_LEAVES_PROVENANCE);
    let provenance = cert.provenance.expect("a coordinator writes version 3");
    assert_eq!(
        (provenance.job.as_str(), provenance.program.as_str()),
        (id, "perft 9.9.9")
    );
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    assert!(
        (now - 600..=now).contains(&provenance.finished),
        "finished {} but now is {now}",
        provenance.finished
    );
    cert.total
}

#[tokio::test]
async fn a_schema_4_journal_is_upgraded_and_its_reversi_jobs_read_as_bik() {
    let dir = tempfile::tempdir().unwrap();
    let bik = GameKind::Reversi.fns().published(9).unwrap().total;
    let oeis = GameKind::Reversi
        .fns_in(Some(Convention::Oeis))
        .unwrap()
        .published(10)
        .unwrap()
        .total;
    {
        let opened = Journal::open(dir.path()).unwrap();
        let mut jobs = Jobs::default();
        counted_job(&opened.journal, &mut jobs, "r", GameKind::Reversi, None, 9).await;
        counted_job(&opened.journal, &mut jobs, "c", GameKind::Checkers, None, 7).await;
    }
    // What a schema-4 journal is: the same tables without the convention,
    // the statistics flag, the lapse record, the done jobs' roots and the
    // submission times.
    let db = rusqlite::Connection::open(dir.path().join("journal.sqlite")).unwrap();
    db.execute_batch(
        "ALTER TABLE jobs DROP COLUMN convention; ALTER TABLE jobs DROP COLUMN stats;
         ALTER TABLE credit DROP COLUMN lost_votes_forgiven; ALTER TABLE credit DROP COLUMN lapses;
         ALTER TABLE credit DROP COLUMN strikes; ALTER TABLE credit DROP COLUMN last_strike_ms;
         ALTER TABLE credit DROP COLUMN lapse_debt;
         DROP TABLE unit_floors; DROP TABLE unit_bars; ALTER TABLE jobs DROP COLUMN counts_root;
         ALTER TABLE jobs DROP COLUMN submitted_ms;
         UPDATE meta SET value = 4 WHERE key = 'schema_version';",
    )
    .unwrap();
    drop(db);

    let opened = Journal::open(dir.path()).unwrap();
    let version: i64 = rusqlite::Connection::open(dir.path().join("journal.sqlite"))
        .unwrap()
        .query_row("SELECT value FROM meta WHERE key = 'schema_version'", [], |row| {
            row.get(0)
        })
        .unwrap();
    assert_eq!(version, perft_coordinator::journal::SCHEMA_VERSION);
    let restored = &opened.restored.jobs;
    assert_eq!(restored.len(), 2);
    assert!(
        restored.iter().all(|job| !job.spec.stats),
        "no older job counts kinds"
    );
    assert_eq!(restored[0].spec.convention, Some(Convention::Bik));
    assert_eq!(restored[1].spec.convention, None);
    assert!(
        restored.iter().all(|job| job.submitted_ms.is_none()),
        "an older journal did not record submission times"
    );
    assert!(
        restored
            .iter()
            .all(|j| j.damage.is_empty() && j.state == JobState::Done)
    );
    assert_eq!(certified_total(&opened.journal, "r"), bik);
    assert_eq!(
        certified_total(&opened.journal, "c"),
        GameKind::Checkers.fns().published(7).unwrap().total
    );

    // A job of the other convention keeps it across a restart.
    let mut jobs = Jobs::default();
    for job in opened.restored.jobs {
        jobs.restore(job);
    }
    counted_job(
        &opened.journal,
        &mut jobs,
        "o",
        GameKind::Reversi,
        Some(Convention::Oeis),
        10,
    )
    .await;
    assert_eq!(jobs.divide(&id("o")).unwrap().total.leaves, oeis);
    drop(opened.journal);
    let opened = Journal::open(dir.path()).unwrap();
    let restored = &opened.restored.jobs;
    assert_eq!(restored[2].spec.convention, Some(Convention::Oeis));
    assert!(restored[2].damage.is_empty());
    let certificate = perft_certificate::Certificate::decode(
        &perft_coordinator::certify::certificate_file(&opened.journal, &id("o"), "perft 9.9.9").unwrap(),
    )
    .unwrap();
    assert_eq!(
        (certificate.header.convention, certificate.total),
        (Some(Convention::Oeis), oeis)
    );
}

#[tokio::test]
async fn a_plan_cut_short_by_a_crash_is_dropped_and_a_damaged_chunk_fails_its_job() {
    let dir = tempfile::tempdir().unwrap();
    let (spec, planned) = checkers(12, 9);
    assert!(
        planned.units.len() > perft_coordinator::journal::CHUNK_UNITS,
        "{} units",
        planned.units.len()
    );
    {
        let opened = Journal::open(dir.path()).unwrap();
        let (journal, _) = (opened.journal, opened.restored.jobs);
        // Everything but the mark that the plan is complete: a crash.
        let ops: Vec<_> = plan_ops(&id("cut"), &spec, &planned, 0).collect();
        for op in &ops[..ops.len() - 1] {
            journal.send(vec![op.clone()]).wait().await.unwrap();
        }
        for op in plan_ops(&id("whole"), &spec, &planned, 0) {
            journal.send(vec![op]).wait().await.unwrap();
        }
    }
    {
        let opened = Journal::open(dir.path()).unwrap();
        let (_, restored) = (opened.journal, opened.restored.jobs);
        assert_eq!(restored.len(), 1, "the cut plan is dropped");
        assert_eq!(restored[0].id.as_str(), "whole");
        assert_eq!(
            restored[0].plan.units, planned.units,
            "every unit read back exactly"
        );
        assert!(restored[0].damage.is_empty());
    }
    let db = rusqlite::Connection::open(dir.path().join("journal.sqlite")).unwrap();
    db.execute(
        "UPDATE unit_chunks SET units = zeroblob(length(units)) WHERE chunk = 1",
        [],
    )
    .unwrap();
    drop(db);
    let opened = Journal::open(dir.path()).unwrap();
    let (_, restored) = (opened.journal, opened.restored.jobs);
    let mut jobs = Jobs::default();
    for job in restored {
        jobs.restore(job);
    }
    let view = jobs.view(&id("whole")).unwrap();
    assert_eq!(view.state, JobState::Failed);
    assert!(
        view.error.unwrap().contains("unit chunk 1"),
        "the damage is named"
    );
}

/// Runs `sql` on the database of the journal in `dir`, then opens the
/// journal: it must refuse, and says why.
fn refused_after(dir: &std::path::Path, sql: &str) -> JournalError {
    let db = rusqlite::Connection::open(dir.join("journal.sqlite")).unwrap();
    db.execute_batch(sql).unwrap();
    drop(db);
    Journal::open(dir).unwrap_err()
}

/// What a new journal says on opening once its schema version reads
/// `version`.
fn refused_at_schema(version: u32) -> JournalError {
    let dir = tempfile::tempdir().unwrap();
    drop(Journal::open(dir.path()).unwrap());
    let sql = format!("UPDATE meta SET value = {version} WHERE key = 'schema_version'");
    refused_after(dir.path(), &sql)
}

#[test]
fn a_newer_journal_is_refused() {
    let err = refused_at_schema(99);
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
    let err = refused_after(other.path(), "CREATE TABLE photos (id INTEGER)");
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
    let err = refused_at_schema(1);
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

/// Journals one small checkers job named `name`.
async fn one_job(dir: &std::path::Path, name: &str) {
    let (spec, planned) = checkers(4, 1);
    let opened = Journal::open(dir).unwrap();
    let mut jobs = Jobs::default();
    submit(&opened.journal, &mut jobs, name, &spec, planned).await;
}

/// A journal holding job `j`, or none, damaged by `sql`: opening it is
/// refused, saying `says`.
async fn refused_damaged(job: bool, sql: &str, says: &str) {
    let dir = tempfile::tempdir().unwrap();
    if job {
        one_job(dir.path(), "j").await;
    } else {
        drop(Journal::open(dir.path()).unwrap());
    }
    let err = refused_after(dir.path(), sql);
    assert!(matches!(err, JournalError::Corrupt { .. }), "{err}");
    assert!(err.to_string().contains(says), "{err}");
}

#[tokio::test]
async fn ids_the_journal_holds_malformed_refuse_it() {
    refused_damaged(
        true,
        "UPDATE jobs SET id = 'a' || char(10) || 'b'",
        "is damaged (job id 'a\\nb' must be 1 to 64 bytes of printable characters)",
    )
    .await;
    refused_damaged(
        true,
        "UPDATE jobs SET owner = 'lab a'",
        "is damaged (job j: participant name 'lab a' must be 1 to 64 of A-Z a-z 0-9 . _ -)",
    )
    .await;
    refused_damaged(
        false,
        "INSERT INTO credit (participant, units, leaves, cpu_ms, lost_votes) VALUES ('', 1, zeroblob(32), 0, 0)",
        "is damaged (credit: participant name '' must be 1 to 64 of A-Z a-z 0-9 . _ -)",
    )
    .await;
}
