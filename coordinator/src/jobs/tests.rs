//! The job state machine's promises, without I/O.

use super::*;
use crate::planning::{PlanRequest, plan};
use perft_core::{Checkers, Game};
use std::time::Duration;

const TTL: Duration = Duration::from_secs(10);

fn planned(depth: u32, split: u32) -> (JobSpec, PlannedJob) {
    let request = PlanRequest {
        position: None,
        depth,
        split_depth: Some(split),
        min_units: 1,
        max_units: 1 << 20,
    };
    let planned = plan(GameKind::Checkers, &request).unwrap();
    let spec = JobSpec {
        game: GameKind::Checkers,
        position: planned.position.clone(),
        depth,
        verify: false,
    };
    (spec, planned)
}

/// Counts a leased unit the slow, obvious way.
fn count(unit: &LeasedUnit) -> Leaves {
    perft_core::perft(&unit.position.parse::<Checkers>().unwrap(), unit.depth)
}

#[test]
fn a_job_runs_to_done_with_the_exact_divide() {
    let now = Instant::now();
    let mut jobs = Jobs::default();
    let (spec, planned) = planned(7, 3);
    let units = planned.units.len();
    jobs.submit("j".into(), spec, planned, now);
    assert_eq!(jobs.view("j").unwrap().state, JobState::Queued);
    let mut affinity = None;
    let leased = jobs.lease(WorkerRef::named("w"), usize::MAX, &mut affinity, None, now, TTL);
    assert_eq!(leased.len(), units);
    assert_eq!(jobs.view("j").unwrap().state, JobState::Running);
    assert!(
        jobs.lease(WorkerRef::named("w"), 10, &mut affinity, None, now, TTL)
            .is_empty(),
        "nothing left to lease"
    );
    for unit in &leased {
        assert_eq!(
            jobs.report("j", unit.unit_id, count(unit), WorkerRef::named("w")),
            Reported::Accepted
        );
    }
    let divide = jobs.divide("j").unwrap();
    assert_eq!(divide.job.state, JobState::Done);
    let published = perft_core::published::published(GameKind::Checkers, 7).unwrap();
    assert_eq!(divide.total, published.total);
    assert_eq!(divide.job.leaves_done, published.total.leaves);
    let direct = perft_core::divide(&Checkers::start(), 7);
    assert_eq!(divide.moves.len(), direct.moves.len());
    for ((mv, n), (dmv, dn)) in divide.moves.iter().zip(&direct.moves) {
        assert_eq!(
            (mv.as_str(), *n),
            (Checkers::start().format_move(*dmv).as_str(), *dn)
        );
    }
}

#[test]
fn duplicate_and_late_results_are_counted_once() {
    let now = Instant::now();
    let mut jobs = Jobs::default();
    let (spec, planned) = planned(6, 2);
    jobs.submit("j".into(), spec, planned, now);
    let mut affinity = None;
    let first = jobs
        .lease(WorkerRef::named("slow"), 1, &mut affinity, None, now, TTL)
        .remove(0);
    // The slow worker's lease runs out; the unit goes to another worker.
    assert_eq!(jobs.expire(now + TTL), 1);
    let mut other = None;
    let second = jobs
        .lease(WorkerRef::named("fast"), 1, &mut other, None, now + TTL, TTL)
        .remove(0);
    assert_eq!((second.unit_id, second.job_id.as_str()), (first.unit_id, "j"));
    assert!(second.epoch > first.epoch);
    // Whichever result arrives first counts; the other is ignored.
    assert_eq!(
        jobs.report("j", first.unit_id, count(&first), WorkerRef::named("slow")),
        Reported::Accepted
    );
    assert_eq!(
        jobs.report("j", second.unit_id, count(&second), WorkerRef::named("fast")),
        Reported::Ignored
    );
    assert_eq!(
        jobs.report("j", first.unit_id, count(&first), WorkerRef::named("slow")),
        Reported::Ignored
    );
    let view = jobs.view("j").unwrap();
    assert_eq!((view.units_done, view.units_released), (1, 1));
    // A late result for a unit back in the queue is taken, and the unit
    // is no longer handed out.
    let third = jobs
        .lease(WorkerRef::named("slow"), 1, &mut affinity, None, now, TTL)
        .remove(0);
    jobs.expire(now + TTL);
    assert_eq!(
        jobs.report("j", third.unit_id, count(&third), WorkerRef::named("slow")),
        Reported::Accepted
    );
    let rest = jobs.lease(WorkerRef::named("fast"), usize::MAX, &mut other, None, now, TTL);
    assert!(
        rest.iter()
            .all(|u| u.unit_id != third.unit_id && u.unit_id != first.unit_id)
    );
    assert_eq!(
        jobs.report("nope", 0, Leaves::ZERO, WorkerRef::named("w")),
        Reported::Ignored
    );
    assert_eq!(
        jobs.report("j", 1 << 40, Leaves::ZERO, WorkerRef::named("w")),
        Reported::Ignored
    );
}

#[test]
fn renewed_leases_survive_and_released_units_return() {
    let now = Instant::now();
    let mut jobs = Jobs::default();
    let (spec, planned) = planned(6, 2);
    jobs.submit("j".into(), spec, planned, now);
    let mut affinity = None;
    let held = jobs.lease(WorkerRef::named("w"), 2, &mut affinity, None, now, TTL);
    assert_eq!(jobs.renew("w", now + TTL / 2, TTL), 2);
    assert_eq!(jobs.expire(now + TTL), 0, "the heartbeat moved the deadline");
    assert_eq!(jobs.expire(now + TTL / 2 + TTL), 2);
    let again = jobs.lease(WorkerRef::named("w"), 2, &mut affinity, None, now, TTL);
    assert!(
        !jobs.release("j", again[0].unit_id, again[0].epoch + 100, WorkerRef::named("w")),
        "another epoch releases nothing"
    );
    assert!(jobs.release("j", again[0].unit_id, again[0].epoch, WorkerRef::named("w")));
    let back = jobs.lease(WorkerRef::named("w"), 1, &mut affinity, None, now, TTL);
    assert_eq!(
        back[0].unit_id, again[0].unit_id,
        "a released unit is first in its group"
    );
    assert_eq!(held.len(), 2);
}

#[test]
fn a_unit_that_keeps_failing_fails_its_job() {
    let now = Instant::now();
    let mut jobs = Jobs::default();
    let (spec, planned) = planned(5, 1);
    jobs.submit("j".into(), spec, planned, now);
    let mut t = now;
    for _ in 0..MAX_UNIT_FAILURES {
        assert!(
            !jobs
                .lease(WorkerRef::named("w"), 1, &mut None, None, t, TTL)
                .is_empty()
        );
        t += TTL;
        jobs.expire(t);
    }
    let view = jobs.view("j").unwrap();
    assert_eq!(view.state, JobState::Failed);
    assert!(view.error.unwrap().contains("lost its lease 8 times"));
    assert!(
        jobs.lease(WorkerRef::named("w"), 1, &mut None, None, t, TTL)
            .is_empty()
    );
}

#[test]
fn jobs_run_in_order_and_cancel_frees_units() {
    let now = Instant::now();
    let mut jobs = Jobs::default();
    let (spec, planned_a) = planned(5, 1);
    jobs.submit("a".into(), spec.clone(), planned_a, now);
    let (_, planned_b) = planned(5, 1);
    jobs.submit("b".into(), spec, planned_b, now);
    let mut affinity = None;
    let first = jobs.lease(WorkerRef::named("w"), 3, &mut affinity, None, now, TTL);
    assert!(first.iter().all(|u| u.job_id == "a"));
    assert_eq!(jobs.cancel("a").unwrap().state, JobState::Cancelled);
    assert_eq!(
        jobs.report("a", first[0].unit_id, count(&first[0]), WorkerRef::named("w")),
        Reported::Ignored
    );
    let next = jobs.lease(WorkerRef::named("w"), 3, &mut affinity, None, now, TTL);
    assert!(next.iter().all(|u| u.job_id == "b"));
    assert_eq!(jobs.cancel("zzz").unwrap_err(), JobError::NotFound("zzz".into()));
    assert_eq!(jobs.list().len(), 2);
}

#[test]
fn verification_catches_a_lying_worker_and_keeps_the_table_exact() {
    let now = Instant::now();
    let mut jobs = Jobs::default();
    let (mut spec, planned) = planned(6, 2);
    spec.verify = true;
    let units = planned.units.len();
    jobs.submit("j".into(), spec, planned, now);
    let (mut honest, mut liar, mut third) = (None, None, None);
    // Every unit goes to two different workers; the liar adds one leaf.
    let from_honest = jobs.lease(
        WorkerRef::named("honest"),
        usize::MAX,
        &mut honest,
        None,
        now,
        TTL,
    );
    let from_liar = jobs.lease(WorkerRef::named("liar"), usize::MAX, &mut liar, None, now, TTL);
    assert_eq!((from_honest.len(), from_liar.len()), (units, units));
    assert!(
        jobs.lease(
            WorkerRef::named("honest"),
            usize::MAX,
            &mut honest,
            None,
            now,
            TTL
        )
        .is_empty(),
        "never the same unit twice"
    );
    for unit in &from_liar {
        let wrong = Leaves::full(count(unit).leaves + 1);
        assert_eq!(
            jobs.report("j", unit.unit_id, wrong, WorkerRef::named("liar")),
            Reported::Accepted
        );
    }
    for unit in &from_honest {
        jobs.report("j", unit.unit_id, count(unit), WorkerRef::named("honest"));
    }
    assert_eq!(jobs.view("j").unwrap().units_done, 0, "no two counts agree yet");
    // Each disagreement goes to a third worker, whose count decides.
    let tie_breaks = jobs.lease(WorkerRef::named("third"), usize::MAX, &mut third, None, now, TTL);
    assert_eq!(tie_breaks.len(), units);
    for unit in &tie_breaks {
        jobs.report("j", unit.unit_id, count(unit), WorkerRef::named("third"));
    }
    let divide = jobs.divide("j").unwrap();
    assert_eq!(divide.job.state, JobState::Done);
    assert_eq!(
        divide.total,
        perft_core::published::published(GameKind::Checkers, 6)
            .unwrap()
            .total
    );
    assert_eq!(divide.job.disagreements.len(), units);
    for d in &divide.job.disagreements {
        let liar_vote = d
            .votes
            .iter()
            .find(|v| v.worker == "liar")
            .expect("the liar is named");
        assert_eq!(
            Some(liar_vote.leaves),
            d.decided.map(|l| Leaves::full(l.leaves + 1))
        );
        assert_eq!(d.votes.len(), 3);
    }
}

#[test]
fn a_failed_job_resumes_with_its_counts_and_leases_afresh() {
    let now = Instant::now();
    let mut jobs = Jobs::default();
    let (spec, planned) = planned(5, 1);
    let units = planned.units.len();
    jobs.submit("j".into(), spec, planned, now);
    let first = jobs
        .lease(WorkerRef::named("w"), 1, &mut None, None, now, TTL)
        .remove(0);
    assert_eq!(
        jobs.report("j", first.unit_id, count(&first), WorkerRef::named("w")),
        Reported::Accepted
    );
    let mut t = now;
    while jobs.view("j").unwrap().state != JobState::Failed {
        assert!(
            !jobs
                .lease(WorkerRef::named("flaky"), 1, &mut None, None, t, TTL)
                .is_empty()
        );
        t += TTL;
        jobs.expire(t);
    }
    // Leases still held when the job failed do not block the resumed job.
    jobs.lease(WorkerRef::named("other"), usize::MAX, &mut None, None, t, TTL);
    assert_eq!(jobs.resume("zzz").unwrap_err(), JobError::NotFound("zzz".into()));
    let resumed = jobs.resume("j").unwrap();
    assert_eq!((resumed.state, resumed.units_done), (JobState::Running, 1));
    let rest = jobs.lease(WorkerRef::named("w"), usize::MAX, &mut None, None, t, TTL);
    assert_eq!(rest.len(), units - 1, "every open unit is leased again");
    for unit in &rest {
        jobs.report("j", unit.unit_id, count(unit), WorkerRef::named("w"));
    }
    let divide = jobs.divide("j").unwrap();
    assert_eq!(divide.job.state, JobState::Done);
    assert_eq!(
        divide.total,
        perft_core::published::published(GameKind::Checkers, 5)
            .unwrap()
            .total
    );
    assert!(matches!(jobs.resume("j"), Err(JobError::NotFailed { .. })));
}
