//! A lease is the only authority for a count: the table's promises about
//! deadlines, reopened units, quarantined participants and leases that
//! outlive a restart, on a hand-moved clock.

use std::sync::Arc;

use super::*;
use crate::clock::ManualClock;
use perft_core::{Checkers, Game};
use perft_model::Count;

fn id() -> JobId {
    JobId::parse("j").unwrap()
}

fn who(name: &str) -> LeaseHolder {
    LeaseHolder::named(name).unwrap()
}

/// A table on a manual clock with a plain checkers perft(5) job split at
/// 2, a 10 s progress deadline, quarantine after one lost vote.
fn table(verify: bool) -> (Jobs, Arc<ManualClock>) {
    table_at(verify, 1_000_000)
}

fn table_at(verify: bool, ms: u64) -> (Jobs, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::at(ms));
    let policy = Policy {
        standing: Standing {
            quarantine_after: Some(1),
            ..Standing::default()
        },
        progress_ms: 10_000,
    };
    let mut jobs = Jobs::new(policy, clock.clone(), Vec::new());
    let (mut spec, planned) = super::tests::planned(5, 2);
    spec.verify = verify;
    jobs.submit(id(), spec, planned);
    (jobs, clock)
}

fn true_count(unit: &LeasedUnit) -> Count {
    Count::plain(perft_core::perft(&Checkers::unpack(&unit.position).unwrap(), 3))
}

fn lease_all(jobs: &mut Jobs, worker: &LeaseHolder) -> Vec<LeasedUnit> {
    jobs.lease(worker, usize::MAX, None)
        .into_iter()
        .flat_map(|group| group.units)
        .collect()
}

#[test]
fn a_held_unit_lapses_at_its_own_deadline_whatever_its_session_sends() {
    let (mut jobs, clock) = table(false);
    let parked = lease_all(&mut jobs, &who("parker"));
    let total = parked.len() as u64;
    assert_eq!(jobs.view(&id()).unwrap().units_leased, total);
    // Hand-backs of leases it does not hold and duplicates change nothing.
    clock.advance(9_000);
    assert!(!jobs.release(&id(), parked[0].unit_id, Epoch(1), &who("parker")));
    assert_eq!(jobs.lapse_overdue(), 0, "not yet due");
    clock.advance(1_000);
    let average = jobs.lapse_overdue();
    assert!(average > 0 && average < total, "the smaller units first");
    // A unit 3x the average size gets 3x the time, up to 100x.
    clock.advance(990_000);
    assert_eq!(
        average + jobs.lapse_overdue(),
        total,
        "every lease at its deadline"
    );
    assert_eq!(jobs.view(&id()).unwrap().units_leased, 0);
    assert_eq!(jobs.credit(&who("parker").identity).lapses, total);
    // Its counts for those leases are refused; an honest worker's count.
    let unit = &parked[0];
    assert_eq!(
        jobs.report(
            &id(),
            unit.unit_id,
            unit.epoch,
            true_count(unit),
            0,
            &who("parker")
        ),
        Reported::Stale
    );
    for unit in lease_all(&mut jobs, &who("honest")) {
        assert_eq!(
            jobs.report(
                &id(),
                unit.unit_id,
                unit.epoch,
                true_count(&unit),
                0,
                &who("honest")
            ),
            Reported::Accepted
        );
    }
    let view = jobs.view(&id()).unwrap();
    assert_eq!(view.state, JobState::Done);
    assert_eq!(view.leaves_done, 7_361);
}

#[test]
fn a_quarantined_participants_counts_are_refused_and_it_never_gets_its_units_back() {
    let (mut jobs, _clock) = table(true);
    let evil = who("evil");
    let mine = lease_all(&mut jobs, &evil);
    let theirs = lease_all(&mut jobs, &who("honest"));
    // Evil lies on one unit; two honest participants outvote it.
    let lied = &mine[0];
    let wrong = Count::plain(perft_core::Leaves::full(1));
    assert_eq!(
        jobs.report(&id(), lied.unit_id, lied.epoch, wrong, 0, &evil),
        Reported::Accepted
    );
    let honest = theirs.iter().find(|u| u.unit_id == lied.unit_id).unwrap();
    jobs.report(
        &id(),
        honest.unit_id,
        honest.epoch,
        true_count(honest),
        0,
        &who("honest"),
    );
    let third = lease_all(&mut jobs, &who("third"));
    let tie = third.iter().find(|u| u.unit_id == lied.unit_id).unwrap();
    jobs.report(&id(), tie.unit_id, tie.epoch, true_count(tie), 0, &who("third"));
    assert!(jobs.is_quarantined(&evil.identity));
    // Its other leases still stand in the table, but its counts are not
    // taken, and it leases nothing.
    let other = &mine[1];
    assert_eq!(
        jobs.report(&id(), other.unit_id, other.epoch, true_count(other), 0, &evil),
        Reported::Refused
    );
    assert!(lease_all(&mut jobs, &evil).is_empty());
    // Lifted: it may lease again, but a unit it was barred from (as a
    // recount bars it) is never handed to it.
    let job = jobs.jobs.get_mut(&id()).unwrap();
    job.bar(other.unit_id, &evil.identity);
    jobs.lift(&evil.identity, true, false);
    assert!(!jobs.is_quarantined(&evil.identity));
    let again = lease_all(&mut jobs, &evil);
    assert!(again.iter().all(|u| u.unit_id != other.unit_id));
}

#[test]
fn a_lease_from_before_a_restart_counts_until_its_unit_is_reopened() {
    let (mut jobs, clock) = table(false);
    let before = lease_all(&mut jobs, &who("w"));
    // A restart: a new table, later, on the same journal (no floors yet).
    clock.advance(5_000);
    let (mut restarted, _) = table_at(false, clock.now_ms());
    let unit = &before[0];
    assert_eq!(
        restarted.report(&id(), unit.unit_id, unit.epoch, true_count(unit), 0, &who("w")),
        Reported::Accepted,
        "a lease issued before the restart still stands"
    );
    // Another unit is handed out anew and lapses: its floor rises, so the
    // old lease of it no longer counts.
    let reopened = &before[1];
    let new_lease = lease_all(&mut restarted, &who("x"));
    assert!(new_lease.iter().any(|u| u.unit_id == reopened.unit_id));
    restarted.expire(&[SessionId::parse("x").unwrap()]);
    assert_eq!(
        restarted.report(
            &id(),
            reopened.unit_id,
            reopened.epoch,
            true_count(reopened),
            0,
            &who("w")
        ),
        Reported::Stale
    );
    // The floor is journaled with the lapse.
    let ops = restarted.take_ops();
    assert!(
        ops.iter()
            .any(|op| matches!(op, Op::Floors { unit_ids, .. } if unit_ids.contains(&reopened.unit_id)))
    );
    // Every unit that lapsed with x ended w's old leases of it too.
    for old in &before[1..] {
        assert_eq!(
            restarted.report(&id(), old.unit_id, old.epoch, true_count(old), 0, &who("w")),
            Reported::Stale
        );
    }
}

#[test]
fn a_quarantine_drops_the_participants_votes_still_waiting_for_a_verdict() {
    let (mut jobs, _clock) = table(true);
    let (evil, accomplice, honest) = (who("evil"), who("accomplice"), who("honest"));
    let mine = lease_all(&mut jobs, &evil);
    let theirs = lease_all(&mut jobs, &accomplice);
    let copy = |unit: &LeasedUnit| theirs.iter().find(|u| u.unit_id == unit.unit_id).unwrap().clone();
    let wrong = |n: u128| Count::plain(perft_core::Leaves::full(n));
    // Evil sends two wrong counts: one is outvoted, the other waits.
    let (lied, waiting) = (&mine[0], &mine[1]);
    for (unit, count) in [(lied, wrong(1)), (waiting, wrong(2))] {
        assert_eq!(
            jobs.report(&id(), unit.unit_id, unit.epoch, count, 0, &evil),
            Reported::Accepted
        );
    }
    let other = copy(lied);
    jobs.report(
        &id(),
        other.unit_id,
        other.epoch,
        true_count(&other),
        0,
        &accomplice,
    );
    let tie = lease_all(&mut jobs, &honest);
    let tie = tie.iter().find(|u| u.unit_id == lied.unit_id).unwrap();
    jobs.report(&id(), tie.unit_id, tie.epoch, true_count(tie), 0, &honest);
    assert!(jobs.is_quarantined(&evil.identity));
    let ops = jobs.take_ops();
    assert!(
        ops.iter()
            .any(|op| matches!(op, Op::DropVotesOf { voter } if *voter == evil.identity)),
        "the drop is journaled"
    );
    // The accomplice's equal count no longer makes a verdict with evil's.
    let second = copy(waiting);
    assert_eq!(
        jobs.report(&id(), second.unit_id, second.epoch, wrong(2), 0, &accomplice),
        Reported::Accepted
    );
    assert_eq!(jobs.view(&id()).unwrap().units_done, 1, "only the outvoted unit");
    assert!(
        lease_all(&mut jobs, &honest)
            .iter()
            .any(|u| u.unit_id == waiting.unit_id),
        "the unit wants another count"
    );
}
