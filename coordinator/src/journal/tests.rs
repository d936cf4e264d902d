//! What the journal reads back of ids it holds, where only the crate can
//! forge a row's checksum.

use perft_core::{GameKind, Leaves};
use rusqlite::params;

use super::codec::count_blob;
use super::restore::count_checksum;
use super::{Journal, plan_ops};
use crate::count::Count;
use crate::ids::{JobId, ParticipantId, UnitId};
use crate::jobs::{JobSpec, Op};
use crate::planning::{PlanRequest, plan};

#[tokio::test]
async fn a_pending_vote_of_a_machine_is_left_out_and_its_unit_counted_again() {
    let dir = tempfile::tempdir().unwrap();
    let request = PlanRequest {
        position: None,
        depth: 4,
        split_depth: Some(1),
        min_units: 1,
        max_units: 1 << 20,
        convention: None,
        stats: false,
    };
    let planned = plan(GameKind::Checkers, &request).unwrap();
    let spec = JobSpec {
        game: GameKind::Checkers,
        convention: None,
        position: planned.position.clone(),
        depth: 4,
        verify: true,
        owner: ParticipantId::parse("test").unwrap(),
        stats: false,
    };
    let id = JobId::parse("v").unwrap();
    let count = Count::plain(Leaves::full(7));
    {
        let opened = Journal::open(dir.path()).unwrap();
        for op in plan_ops(&id, &spec, &planned) {
            opened.journal.send(vec![op]).wait().await.unwrap();
        }
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
