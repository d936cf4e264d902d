//! The job state machine's promises, without I/O.

use super::*;
use crate::planning::{PlanRequest, plan};
use perft_core::{Checkers, Game};
use perft_model::Count;

fn id(job: &str) -> JobId {
    JobId::parse(job).unwrap()
}

/// A leased unit with its job's facts, as the wire's group flattened.
#[derive(Clone, Debug)]
struct Flat {
    job_id: String,
    unit_id: UnitId,
    epoch: Epoch,
    position: Vec<u8>,
    depth: u32,
}

fn lease(jobs: &mut Jobs, worker: &LeaseHolder, max: usize) -> Vec<Flat> {
    jobs.lease(worker, max, None)
        .into_iter()
        .flat_map(|group| {
            group.units.into_iter().map(move |u| Flat {
                job_id: group.job_id.to_string(),
                unit_id: u.unit_id,
                epoch: u.epoch,
                position: u.position,
                depth: group.depth,
            })
        })
        .collect()
}

fn lost(session: &str) -> Vec<SessionId> {
    vec![SessionId::parse(session).unwrap()]
}

fn worker(name: &str) -> LeaseHolder {
    LeaseHolder::named(name).unwrap()
}

/// A plain checkers job of `depth` split at `split`, planned.
pub(super) fn planned(depth: u32, split: u32) -> (JobSpec, PlannedJob) {
    let planned = plan(GameKind::Checkers, &PlanRequest::split_at(depth, split)).unwrap();
    let spec = JobSpec::plain(
        GameKind::Checkers,
        &planned,
        depth,
        ParticipantId::parse("test").unwrap(),
    );
    (spec, planned)
}

/// A table holding one job, `j`: [`planned`]'s of `depth` split at
/// `split`, verified or not; and how many units it has.
fn with_job(depth: u32, split: u32, verify: bool) -> (Jobs, usize) {
    let mut jobs = Jobs::default();
    let (mut spec, planned) = planned(depth, split);
    spec.verify = verify;
    let units = planned.units.len();
    jobs.submit(id("j"), spec, planned);
    (jobs, units)
}

/// Job `j`'s divide, checked done with the published checkers
/// perft(`depth`).
fn done_exactly(jobs: &Jobs, depth: u32) -> DivideView {
    let divide = jobs.divide(&id("j")).unwrap();
    assert_eq!(divide.job.state, JobState::Done);
    assert_eq!(
        divide.total.leaves,
        GameKind::Checkers.fns().published(depth).unwrap().total
    );
    divide
}

/// `times` times over, `name` leases a unit and its session is lost.
fn lapse(jobs: &mut Jobs, name: &str, times: u64) {
    for _ in 0..times {
        assert!(!lease(jobs, &worker(name), 1).is_empty());
        jobs.expire(&lost(name));
    }
}

/// Counts a leased unit the slow, obvious way.
fn count(unit: &Flat) -> Count {
    Count::plain(perft_core::perft(
        &Checkers::unpack(&unit.position).unwrap(),
        unit.depth,
    ))
}

/// Reports `unit`'s true count as `by`, under the unit's lease.
fn report_count(jobs: &mut Jobs, unit: &Flat, by: &str) -> Reported {
    jobs.report(
        &id(&unit.job_id),
        unit.unit_id,
        unit.epoch,
        count(unit),
        0,
        &worker(by),
    )
}

#[test]
fn a_job_runs_to_done_with_the_exact_divide() {
    let (mut jobs, units) = with_job(7, 3, false);
    assert_eq!(jobs.view(&id("j")).unwrap().state, JobState::Queued);
    let leased = lease(&mut jobs, &worker("w"), usize::MAX);
    assert_eq!(leased.len(), units);
    assert_eq!(jobs.view(&id("j")).unwrap().state, JobState::Running);
    assert!(
        lease(&mut jobs, &worker("w"), 10).is_empty(),
        "nothing left to lease"
    );
    for unit in &leased {
        assert_eq!(report_count(&mut jobs, unit, "w"), Reported::Accepted);
    }
    let divide = done_exactly(&jobs, 7);
    let published = GameKind::Checkers.fns().published(7).unwrap();
    assert_eq!(divide.job.leaves_done, published.total.leaves);
    let direct = perft_core::divide(&Checkers::start(), 7);
    assert_eq!(divide.moves.len(), direct.moves.len());
    for (line, (dmv, dn)) in divide.moves.iter().zip(&direct.moves) {
        assert_eq!(line.units_done, line.units_total);
        assert_eq!(
            (line.first_move.as_str(), line.count.leaves),
            (Checkers::start().format_move(*dmv).as_str(), *dn)
        );
    }
}

#[test]
fn duplicate_and_late_results_are_counted_once() {
    let (mut jobs, _) = with_job(6, 2, false);
    let first = lease(&mut jobs, &worker("slow"), 1).remove(0);
    // The slow worker's lease runs out; the unit goes to another worker.
    assert_eq!(jobs.expire(&lost("slow")), 1);
    let second = lease(&mut jobs, &worker("fast"), 1).remove(0);
    assert_eq!((second.unit_id, second.job_id.as_str()), (first.unit_id, "j"));
    assert!(second.epoch > first.epoch);
    // Only the lease the unit holds counts: the lapsed one is refused.
    assert_eq!(report_count(&mut jobs, &first, "slow"), Reported::Stale);
    assert_eq!(report_count(&mut jobs, &second, "fast"), Reported::Accepted);
    assert_eq!(
        report_count(&mut jobs, &second, "fast"),
        Reported::Ignored,
        "a duplicate"
    );
    assert_eq!(report_count(&mut jobs, &first, "slow"), Reported::Ignored);
    let view = jobs.view(&id("j")).unwrap();
    assert_eq!((view.units_done, view.units_released), (1, 1));
    // A late result for a unit back in the queue is refused, and the unit
    // is handed out again.
    let third = lease(&mut jobs, &worker("slow"), 1).remove(0);
    jobs.expire(&lost("slow"));
    assert_eq!(report_count(&mut jobs, &third, "slow"), Reported::Stale);
    let rest = lease(&mut jobs, &worker("fast"), usize::MAX);
    assert!(rest.iter().all(|u| u.unit_id != first.unit_id));
    assert!(rest.iter().any(|u| u.unit_id == third.unit_id));
    assert_eq!(
        jobs.report(&id("nope"), UnitId(0), Epoch(0), Count::ZERO, 0, &worker("w")),
        Reported::Ignored
    );
    assert_eq!(
        jobs.report(&id("j"), UnitId(1 << 40), Epoch(0), Count::ZERO, 0, &worker("w")),
        Reported::Ignored
    );
    // Another participant's lease, or a made-up epoch: refused.
    let held = rest[0].clone();
    assert_eq!(report_count(&mut jobs, &held, "other"), Reported::Stale);
    assert_eq!(
        jobs.report(
            &id("j"),
            held.unit_id,
            Epoch(held.epoch.0 + 1),
            count(&held),
            0,
            &worker("fast")
        ),
        Reported::Stale
    );
}

#[test]
fn lost_sessions_lose_their_leases_and_released_units_return() {
    let (mut jobs, _) = with_job(6, 2, false);
    let held = lease(&mut jobs, &worker("w"), 2);
    assert_eq!(jobs.held_by(&worker("w").session), 2);
    assert_eq!(jobs.view(&id("j")).unwrap().units_leased, 2);
    assert_eq!(
        jobs.expire(&lost("other")),
        0,
        "another session's loss touches nothing"
    );
    assert_eq!(jobs.expire(&lost("w")), 2);
    assert_eq!(jobs.view(&id("j")).unwrap().units_leased, 0);
    let again = lease(&mut jobs, &worker("w"), 2);
    assert_eq!(
        again.iter().map(|u| u.unit_id).collect::<Vec<_>>(),
        held.iter().map(|u| u.unit_id).rev().collect::<Vec<_>>(),
        "expired units come back first"
    );
    assert!(
        !jobs.release(
            &id("j"),
            again[0].unit_id,
            Epoch(again[0].epoch.0 + 100),
            &worker("w")
        ),
        "another epoch releases nothing"
    );
    assert!(jobs.release(&id("j"), again[0].unit_id, again[0].epoch, &worker("w")));
    let back = lease(&mut jobs, &worker("w"), 1);
    assert_eq!(back[0].unit_id, again[0].unit_id, "a released unit is first");
}

#[test]
fn units_go_out_in_stretches_of_plan_order_and_counters_follow() {
    let (mut jobs, units) = with_job(6, 3, false);
    let total = units as u64;
    let a = lease(&mut jobs, &worker("a"), 5);
    let b = lease(&mut jobs, &worker("b"), 5);
    assert_eq!(a.iter().map(|u| u.unit_id.0).collect::<Vec<_>>(), [0, 1, 2, 3, 4]);
    // b works through the back half of what a left: the two workers'
    // tables see the neighbours of their own units.
    let half = 5 + (total - 5) / 2;
    assert_eq!(
        b.iter().map(|u| u.unit_id.0).collect::<Vec<_>>(),
        (half..half + 5).collect::<Vec<_>>()
    );
    let more = lease(&mut jobs, &worker("a"), 2);
    assert_eq!(more.iter().map(|u| u.unit_id.0).collect::<Vec<_>>(), [5, 6]);
    for unit in more {
        jobs.release(&id("j"), unit.unit_id, unit.epoch, &worker("a"));
    }
    let view = jobs.view(&id("j")).unwrap();
    assert_eq!((view.units_leased, view.units_queued), (10, total - 10));
    for unit in &a {
        report_count(&mut jobs, unit, "a");
    }
    let view = jobs.view(&id("j")).unwrap();
    assert_eq!(
        (view.units_done, view.units_leased, view.units_queued),
        (5, 5, total - 10)
    );
    assert!(view.work_done > 0.0 && view.work_done < 1.0, "{}", view.work_done);
}

#[test]
fn a_lost_sessions_stretch_is_taken_over_whole_by_the_next_session() {
    let (mut jobs, units) = with_job(6, 3, false);
    let total = units as u64;
    assert_eq!(lease(&mut jobs, &worker("a"), 1)[0].unit_id.0, 0);
    let half = 1 + (total - 1) / 2;
    assert_eq!(lease(&mut jobs, &worker("b"), 1)[0].unit_id.0, half);
    assert_eq!(jobs.expire(&lost("b")), 1);
    // c gets b's unit back first, then goes on where b would have: b's
    // stretch is nobody's now, so c takes it over rather than split one.
    let c = lease(&mut jobs, &worker("c"), 2);
    assert_eq!(
        c.iter().map(|u| u.unit_id.0).collect::<Vec<_>>(),
        [half, half + 1]
    );
}

#[test]
fn a_finished_job_releases_its_units() {
    let (mut jobs, _) = with_job(5, 2, false);
    assert!(jobs.unit_bytes() > 0);
    let all = lease(&mut jobs, &worker("w"), usize::MAX);
    for unit in &all {
        report_count(&mut jobs, unit, "w");
    }
    done_exactly(&jobs, 5);
    assert_eq!(jobs.unit_bytes(), 0, "a done job keeps its summary only");
    let (spec, plan_c) = planned(5, 2);
    jobs.submit(id("c"), spec, plan_c);
    assert!(jobs.unit_bytes() > 0);
    jobs.cancel(&id("c")).unwrap();
    assert_eq!(jobs.unit_bytes(), 0, "a cancelled job releases its units");
}

#[test]
fn one_participants_lapses_never_fail_a_job_but_three_participants_do() {
    let (mut jobs, _) = with_job(5, 1, false);
    // One participant, session after session: suspended, the job runs on.
    lapse(&mut jobs, "w", DEFAULT_LAPSE_LIMIT);
    assert!(jobs.is_suspended(&worker("w").identity));
    assert!(lease(&mut jobs, &worker("w"), 1).is_empty(), "suspended");
    assert_eq!(jobs.view(&id("j")).unwrap().state, JobState::Running);
    assert_eq!(jobs.credit(&worker("w").identity).lapses, 3);
    // A poison unit: it lapses with more participants, eight times in all.
    let unit = lease(&mut jobs, &worker("x"), 1).remove(0).unit_id;
    jobs.expire(&lost("x"));
    for lapser in ["y", "z", "y"] {
        let again = lease(&mut jobs, &worker(lapser), 1).remove(0).unit_id;
        assert_eq!(again, unit, "the lapsed unit comes first");
        jobs.expire(&lost(lapser));
        assert_eq!(jobs.view(&id("j")).unwrap().state, JobState::Running);
    }
    let again = lease(&mut jobs, &worker("v"), 1).remove(0).unit_id;
    assert_eq!(again, unit);
    jobs.expire(&lost("v"));
    let view = jobs.view(&id("j")).unwrap();
    assert_eq!(view.state, JobState::Failed);
    let error = view.error.unwrap();
    assert!(
        error.contains("lapsed 8 times, with 5 different participants"),
        "{error}"
    );
}

#[test]
fn the_owners_own_lapses_fail_its_job_after_eight() {
    let (mut jobs, _) = with_job(5, 1, false);
    lapse(&mut jobs, "anonymous", u64::from(MAX_UNIT_FAILURES));
    let view = jobs.view(&id("j")).unwrap();
    assert_eq!(view.state, JobState::Failed);
    assert!(view.error.unwrap().contains("lost its lease 8 times"));
}

#[test]
fn jobs_run_in_order_and_cancel_frees_units() {
    let mut jobs = Jobs::default();
    let (spec, planned_a) = planned(5, 1);
    jobs.submit(id("a"), spec.clone(), planned_a);
    let (_, planned_b) = planned(5, 1);
    jobs.submit(id("b"), spec, planned_b);
    let first = lease(&mut jobs, &worker("w"), 3);
    assert!(first.iter().all(|u| u.job_id == "a"));
    assert_eq!(jobs.cancel(&id("a")).unwrap().state, JobState::Cancelled);
    assert_eq!(report_count(&mut jobs, &first[0], "w"), Reported::Ignored);
    let next = lease(&mut jobs, &worker("w"), 3);
    assert!(next.iter().all(|u| u.job_id == "b"));
    assert_eq!(
        jobs.cancel(&id("zzz")).unwrap_err(),
        JobError::NotFound("zzz".into())
    );
    let (page, next) = jobs.list(0, 1);
    assert_eq!((page.len(), page[0].id.as_str(), next), (1, "a", Some(1)));
    let (page, next) = jobs.list(1, 100);
    assert_eq!((page.len(), page[0].id.as_str(), next), (1, "b", None));
}

#[test]
fn verification_catches_a_lying_worker_and_keeps_the_table_exact() {
    let (mut jobs, units) = with_job(6, 2, true);
    // Every unit goes to two different workers; the liar adds one leaf.
    let from_honest = lease(&mut jobs, &worker("honest"), usize::MAX);
    let from_liar = lease(&mut jobs, &worker("liar"), usize::MAX);
    assert_eq!((from_honest.len(), from_liar.len()), (units, units));
    assert!(
        lease(&mut jobs, &worker("honest"), usize::MAX).is_empty(),
        "never the same unit twice"
    );
    for unit in &from_liar {
        let wrong = Count::plain(perft_core::Leaves::full(count(unit).leaves.leaves + 1));
        assert_eq!(
            jobs.report(&id("j"), unit.unit_id, unit.epoch, wrong, 0, &worker("liar")),
            Reported::Accepted
        );
    }
    for unit in &from_honest {
        report_count(&mut jobs, unit, "honest");
    }
    assert_eq!(
        jobs.view(&id("j")).unwrap().units_done,
        0,
        "no two counts agree yet"
    );
    // Each disagreement goes to a third worker, whose count decides.
    let tie_breaks = lease(&mut jobs, &worker("third"), usize::MAX);
    assert_eq!(tie_breaks.len(), units);
    for unit in &tie_breaks {
        report_count(&mut jobs, unit, "third");
    }
    let divide = done_exactly(&jobs, 6);
    assert_eq!(divide.job.disagreements, units as u64);
    let (found, next) = jobs.disagreements(&id("j"), 0, 1000).unwrap();
    assert_eq!((found.len(), next), (units, None));
    for d in &found {
        let liar_vote = d
            .votes
            .iter()
            .find(|v| v.worker == "liar")
            .expect("the liar is named");
        assert_eq!(
            Some(liar_vote.count.leaves),
            d.decided.map(|c| perft_core::Leaves::full(c.leaves.leaves + 1))
        );
        assert_eq!(d.votes.len(), 3);
    }
}

#[test]
fn the_sessions_holding_a_jobs_units_are_known() {
    let (mut jobs, _) = with_job(6, 2, false);
    let (spec, planned_job) = planned(5, 2);
    jobs.submit(id("k"), spec, planned_job);
    let first = lease(&mut jobs, &worker("a"), 3);
    lease(&mut jobs, &worker("b"), 1);
    assert_eq!(
        jobs.holders_of(&id("j")),
        vec![(worker("a").session, 3), (worker("b").session, 1)]
    );
    assert_eq!(jobs.holders_of(&id("k")), vec![]);
    let unit = &first[0];
    report_count(&mut jobs, unit, "a");
    assert_eq!(
        jobs.holders_of(&id("j")),
        vec![(worker("a").session, 2), (worker("b").session, 1)]
    );
    jobs.expire(&lost("a"));
    assert_eq!(jobs.holders_of(&id("j")), vec![(worker("b").session, 1)]);
    assert_eq!(jobs.holders_of(&id("nope")), vec![]);
}

#[test]
fn a_cancel_drops_the_plan_and_only_a_finished_job_is_deleted() {
    let mut jobs = Jobs::default();
    let (spec, plan) = planned(6, 2);
    jobs.submit(id("j"), spec.clone(), plan.clone());
    jobs.submit(id("k"), spec, plan);
    jobs.take_ops();
    assert_eq!(
        jobs.delete(&id("j")).unwrap_err(),
        JobError::NotFinished {
            id: id("j"),
            state: JobState::Queued
        }
    );
    jobs.cancel(&id("j")).unwrap();
    let ops = jobs.take_ops();
    assert!(matches!(&ops[..], [Op::JobState { .. }, Op::DropPlan { job_id }] if job_id.as_str() == "j"));
    // Cancelling again changes nothing.
    jobs.cancel(&id("j")).unwrap();
    assert!(jobs.take_ops().is_empty());
    assert_eq!(jobs.delete(&id("j")).unwrap().state, JobState::Cancelled);
    assert!(matches!(&jobs.take_ops()[..], [Op::DeleteJob { job_id }] if job_id.as_str() == "j"));
    assert_eq!(jobs.view(&id("j")).unwrap_err(), JobError::NotFound("j".into()));
    let (listed, next) = jobs.list(0, 10);
    assert_eq!(listed.iter().map(|v| v.id.as_str()).collect::<Vec<_>>(), ["k"]);
    assert_eq!(next, None);
    assert_eq!(jobs.delete(&id("j")).unwrap_err(), JobError::NotFound("j".into()));
}

#[test]
fn a_statistics_job_sums_its_units_kinds_into_the_local_divide() {
    let mut jobs = Jobs::default();
    let (mut spec, _) = planned(6, 2);
    spec.stats = true;
    let request = PlanRequest {
        stats: true,
        ..PlanRequest::split_at(6, 2)
    };
    let planned = plan(GameKind::Checkers, &request).unwrap();
    jobs.submit(id("s"), spec, planned);
    let kinds = GameKind::Checkers.fns().stats_kinds().len();
    for unit in lease(&mut jobs, &worker("w"), usize::MAX) {
        let stats = perft_core::perft_stats(&Checkers::unpack(&unit.position).unwrap(), unit.depth);
        let plain = count(&unit);
        assert_eq!(
            jobs.checked_count(&id("s"), &perft_proto::Leaves::from(plain.leaves))
                .map_err(|e| e.to_string()),
            Err(format!(
                "the job counts {kinds} kinds of leaves, yet the count has 0"
            ))
        );
        let wire = perft_proto::Leaves::from(Count::from(stats));
        let checked = jobs.checked_count(&id("s"), &wire).unwrap();
        assert_eq!(
            jobs.report(&id("s"), unit.unit_id, unit.epoch, checked, 0, &worker("w")),
            Reported::Accepted
        );
    }
    let divide = jobs.divide(&id("s")).unwrap();
    assert_eq!(divide.job.state, JobState::Done);
    let local = perft_core::divide_stats(&Checkers::start(), 6);
    assert_eq!(divide.total, Count::from(local.total));
    for (line, (mv, stats)) in divide.moves.iter().zip(&local.moves) {
        assert_eq!(line.first_move, Checkers::start().format_move(*mv));
        assert_eq!(line.count, Count::from(*stats));
    }
}

#[test]
fn an_owner_alone_on_a_verified_job_leases_every_unit_once_then_waits() {
    let (mut jobs, units) = with_job(7, 3, true);
    // One unit a call, as a worker asks: each counted unit waits for
    // another owner, and the owner's next lease passes over all of them.
    let mut alone = Vec::new();
    while let Some(unit) = lease(&mut jobs, &worker("a"), 1).pop() {
        report_count(&mut jobs, &unit, "a");
        alone.push(unit.unit_id);
    }
    assert_eq!(alone.len(), units);
    let view = jobs.view(&id("j")).unwrap();
    assert_eq!((view.units_done, view.units_queued), (0, units as u64));
    // A second session of the same owner gets nothing either.
    let other_machine = LeaseHolder {
        session: SessionId::parse("a-2").unwrap(),
        ..worker("a")
    };
    assert!(lease(&mut jobs, &other_machine, usize::MAX).is_empty());
    // Another owner confirms every unit, most recently counted first.
    let confirming = lease(&mut jobs, &worker("b"), usize::MAX);
    let mut expected = alone.clone();
    expected.reverse();
    assert_eq!(confirming.iter().map(|u| u.unit_id).collect::<Vec<_>>(), expected);
    for unit in &confirming {
        report_count(&mut jobs, unit, "b");
    }
    done_exactly(&jobs, 7);
}

#[test]
fn a_unit_whose_only_lease_expired_goes_back_to_its_owner() {
    let (mut jobs, units) = with_job(6, 2, true);
    // "a" leases everything, then its worker is lost before counting.
    let first = lease(&mut jobs, &worker("a"), usize::MAX);
    assert_eq!(first.len(), units);
    assert_eq!(jobs.expire(&lost("a")), units as u64);
    // Its next session may lease them all again: no count of it is in.
    let again = lease(&mut jobs, &worker("a"), usize::MAX);
    assert_eq!(again.len(), units);
    assert!(lease(&mut jobs, &worker("a"), usize::MAX).is_empty());
    assert_eq!(lease(&mut jobs, &worker("b"), usize::MAX).len(), units);
}
