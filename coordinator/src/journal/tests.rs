//! What the journal reads back of ids it holds, where only the crate can
//! forge a row's checksum.

use perft_core::{GameKind, Leaves};
use rusqlite::params;

use super::codec::count_blob;
use super::restore::count_checksum;
use super::{Journal, plan_ops};
use crate::jobs::{JobSpec, Op};
use crate::planning::{PlanRequest, PlannedJob, plan};
use perft_model::Count;
use perft_model::{JobId, ParticipantId, UnitId};

/// Job `name` of `game` from the start to `depth`, split at ply 1, planned
/// and journaled in `dir` (the journal closed again); its id and plan.
pub(super) async fn journaled_job(
    dir: &std::path::Path,
    name: &str,
    game: GameKind,
    depth: u32,
    verify: bool,
    stats: bool,
) -> (JobId, PlannedJob) {
    let request = PlanRequest {
        stats,
        ..PlanRequest::split_at(depth, 1)
    };
    let planned = plan(game, &request).unwrap();
    let spec = JobSpec {
        verify,
        stats,
        ..JobSpec::plain(game, &planned, depth, ParticipantId::parse("test").unwrap())
    };
    let id = JobId::parse(name).unwrap();
    let opened = Journal::open(dir).unwrap();
    for op in plan_ops(&id, &spec, &planned, 0) {
        opened.journal.send(vec![op]).wait().await.unwrap();
    }
    (id, planned)
}

#[tokio::test]
async fn a_pending_vote_of_a_machine_is_left_out_and_its_unit_counted_again() {
    let dir = tempfile::tempdir().unwrap();
    let (id, _) = journaled_job(dir.path(), "v", GameKind::Checkers, 4, true, false).await;
    let count = Count::plain(Leaves::full(7));
    {
        let opened = Journal::open(dir.path()).unwrap();
        let vote = |unit| Op::Vote {
            job_id: id.clone(),
            unit_id: UnitId(unit),
            voter: ParticipantId::parse("lab-a").unwrap(),
            label: "lab-a/host".to_owned(),
            count,
        };
        opened.journal.send(vec![vote(0), vote(1)]).wait().await.unwrap();
    }
    // Unit 1's vote as a journal from before participants holds it: named
    // after a machine, under a checksum that holds.
    let db = rusqlite::Connection::open(dir.path().join("journal.sqlite")).unwrap();
    let sum = count_checksum(&id, UnitId(1), "host a", &count_blob(&count));
    db.execute(
        "UPDATE votes SET voter = 'host a', checksum = ?1 WHERE unit_id = 1",
        params![sum],
    )
    .unwrap();
    drop(db);

    let opened = Journal::open(dir.path()).unwrap();
    let job = &opened.restored.jobs[0];
    let votes: Vec<(UnitId, &str)> = job.votes.iter().map(|v| (v.unit_id, v.voter.as_str())).collect();
    assert_eq!(votes, [(UnitId(0), "lab-a")]);
    assert!(job.damaged_counts.is_empty() && job.damage.is_empty());
}

#[tokio::test]
async fn a_stored_count_whose_kinds_do_not_fit_is_counted_again() {
    let dir = tempfile::tempdir().unwrap();
    let (id, planned) = journaled_job(dir.path(), "k", GameKind::Chess, 3, false, true).await;
    let chess = GameKind::Chess.fns();
    let truth = |unit: usize| {
        let stats = chess.count_packed_stats(planned.units.position(unit), 2).unwrap();
        Count::with_kinds(stats.leaves, &stats.counts).unwrap()
    };
    let worker = ParticipantId::parse("lab-a").unwrap();
    {
        let opened = Journal::open(dir.path()).unwrap();
        let result = |unit: usize| Op::Result {
            job_id: id.clone(),
            unit_id: UnitId(unit as u64),
            count: truth(unit),
            deciders: vec![worker.clone()],
        };
        opened
            .journal
            .send(vec![result(0), result(1), result(2)])
            .wait()
            .await
            .unwrap();
    }
    // Unit 1's count forged with a check its total lacks, unit 2's with no
    // kinds at all, both under checksums that hold.
    let db = rusqlite::Connection::open(dir.path().join("journal.sqlite")).unwrap();
    let checks = chess
        .stats_kinds()
        .iter()
        .position(|&k| k == "direct_checks")
        .unwrap();
    let mut kinds = truth(1).kinds().to_vec();
    kinds[checks] += 1;
    let unsummed = Count::with_kinds(truth(1).leaves, &kinds).unwrap();
    let plain = Count::plain(truth(2).leaves);
    // Unit 0 is written again as it was, through the same forging: the
    // forged checksums hold, so only the kinds can condemn 1 and 2.
    for (unit, forged) in [(0u64, truth(0)), (1, unsummed), (2, plain)] {
        let blob = count_blob(&forged);
        let sum = count_checksum(&id, UnitId(unit), "lab-a", &blob);
        db.execute(
            "UPDATE results SET leaves = ?1, checksum = ?2 WHERE unit_id = ?3",
            params![blob, sum, unit as i64],
        )
        .unwrap();
    }
    drop(db);

    let opened = Journal::open(dir.path()).unwrap();
    let job = &opened.restored.jobs[0];
    let kept: Vec<(UnitId, Count)> = job.results.clone();
    assert_eq!(kept, [(UnitId(0), truth(0))]);
    let mut damaged = job.damaged_counts.clone();
    damaged.sort();
    assert_eq!(damaged, [UnitId(1), UnitId(2)]);
}
