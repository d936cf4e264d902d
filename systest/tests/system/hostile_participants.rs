//! Hostile participants, on real processes: a coordinator (`perft serve`),
//! honest `perft worker` processes on loopback, and a raw gRPC client
//! holding a worker participant's secret as the attacker. Each attack
//! leaves the job it aimed at exact: a quarantined participant cannot
//! replay the forged counts it sent before, a worker cannot fail a job by
//! letting its leases lapse again and again, and a worker cannot park the
//! units it holds behind reports that carry no new count.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::common::cluster::Cluster;
use crate::common::jobs::JobStatus;
use crate::common::jobs::words;
use crate::common::{published_checkers, register_worker, wait_for, worker_client_as};
use perft_core::{Checkers, Game, Leaves};
use perft_proto as pb;
use perft_proto::connect::AuthChannel;
use perft_proto::worker_service_client::WorkerServiceClient;
use tonic::{Code, Status};

type Workers = WorkerServiceClient<AuthChannel>;

/// The shared cluster started with `extra`, an admin participant `root`
/// and worker participants named `workers`; this file's verbs run as the
/// admin.
fn hostile(workers: &[&str], extra: &[&str]) -> Cluster {
    Cluster::builder()
        .participant("root", "admin")
        .workers(workers)
        .serve_args(extra)
        .start()
}

/// Submits a checkers job with `args` after the game; returns its id.
fn submit_checkers(c: &Cluster, args: &[&str]) -> String {
    let mut all = vec!["--game", "checkers"];
    all.extend_from_slice(args);
    c.submit_as("root", &all)
}

/// The job's total leaves, from its divide table.
fn leaves(c: &Cluster, job: &str) -> String {
    c.divide_as("root", job)["leaves"]
        .as_str()
        .expect("leaves as a decimal string")
        .to_owned()
}

/// Waits up to `limit` for `job` to be done; its last status.
fn wait_done(c: &Cluster, job: &str, limit: Duration) -> JobStatus {
    let mut last = c.status_as("root", job);
    wait_for(limit, || {
        last = c.status_as("root", job);
        last.state == "done" || last.state == "failed"
    });
    last
}

/// A participant-list figure: a number, or a decimal string as the counts
/// of `perft participant list --format json` are.
fn figure(participant: &serde_json::Value, field: &str) -> u64 {
    let value = &participant[field];
    value
        .as_u64()
        .or_else(|| value.as_str().and_then(|s| s.parse().ok()))
        .unwrap_or_else(|| panic!("no figure '{field}' in {participant}"))
}

/// One unit leased: its job, the depth to count it to, the lease.
#[derive(Clone, Debug)]
struct Held {
    job_id: String,
    depth: u32,
    lease: pb::UnitLease,
}

/// Leases under `session` until a call hands out nothing (at most 20
/// calls); every unit leased.
async fn lease_all(client: &mut Workers, session: &str) -> Result<Vec<Held>, Status> {
    let mut held = Vec::new();
    for _ in 0..20 {
        let jobs = client
            .lease_units(pb::LeaseUnitsRequest {
                worker_id: session.to_owned(),
                max_units: 1024,
            })
            .await?
            .into_inner()
            .jobs;
        let before = held.len();
        for job in jobs {
            held.extend(job.units.into_iter().map(|lease| Held {
                job_id: job.job_id.clone(),
                depth: job.depth,
                lease,
            }));
        }
        if held.len() == before {
            break;
        }
    }
    Ok(held)
}

/// The true count of a leased checkers unit.
fn true_count(unit: &Held) -> Leaves {
    let position = Checkers::unpack(&unit.lease.position).expect("a packed checkers position");
    perft_core::perft(&position, unit.depth)
}

fn result(unit: &Held, leaves: u128) -> pb::UnitResult {
    pb::UnitResult {
        unit_id: unit.lease.unit_id,
        epoch: unit.lease.epoch,
        leaves: Some(Leaves { leaves, higher: 0 }.into()),
        lease_tag: unit.lease.lease_tag.clone(),
        cpu_seconds: 0.0,
    }
}

/// A report of every unit of `held` (one job) counted as `count` says.
fn report_of(session: &str, held: &[Held], count: impl Fn(&Held) -> u128) -> pb::ReportResultsRequest {
    pb::ReportResultsRequest {
        worker_id: session.to_owned(),
        jobs: vec![pb::JobReport {
            job_id: held[0].job_id.clone(),
            results: held.iter().map(|u| result(u, count(u))).collect(),
            released: Vec::new(),
        }],
    }
}

async fn send(
    client: &mut Workers,
    request: pb::ReportResultsRequest,
) -> Result<pb::ReportResultsResponse, Status> {
    client
        .report_results(request)
        .await
        .map(tonic::Response::into_inner)
}

/// What the attacker got back for its replays.
#[derive(Debug, Default)]
struct Replays {
    answered: u32,
    errors: u32,
    registered_again: u32,
    ignored: u64,
    refused: u64,
    leases_tried: u32,
}

/// Re-sends `original` under `session`, registering a new session (and
/// sending again) when the old one is gone; asserts nothing was accepted
/// and that a lease under the session hands out nothing.
async fn replay_once(
    evil: &mut Workers,
    session: &mut String,
    original: &pb::ReportResultsRequest,
    replays: &mut Replays,
    round: u32,
    since_quarantine: Duration,
) {
    let mut request = original.clone();
    request.worker_id = session.clone();
    let mut answer = send(evil, request.clone()).await;
    if matches!(&answer, Err(status) if status.code() == Code::NotFound) {
        match evil
            .register(pb::RegisterRequest {
                name: format!("evil-again-{round}"),
                threads: 1,
                ..Default::default()
            })
            .await
        {
            Ok(registered) => {
                *session = registered.into_inner().worker_id;
                replays.registered_again += 1;
                request.worker_id = session.clone();
                answer = send(evil, request).await;
            }
            Err(status) => answer = Err(status),
        }
    }
    match answer {
        Ok(reply) => {
            assert_eq!(
                reply.accepted,
                0,
                "replay {round} of the quarantined participant's forged counts, {:.2} s after its \
                 quarantine was seen, was accepted: {reply:?}",
                since_quarantine.as_secs_f64()
            );
            replays.answered += 1;
            replays.ignored += u64::from(reply.ignored);
            replays.refused += u64::from(reply.refused);
        }
        Err(_) => replays.errors += 1,
    }
    // Leasing while quarantined hands out nothing.
    if let Ok(leased) = evil
        .lease_units(pb::LeaseUnitsRequest {
            worker_id: session.clone(),
            max_units: 1024,
        })
        .await
    {
        let units: usize = leased.into_inner().jobs.iter().map(|j| j.units.len()).sum();
        assert_eq!(
            units, 0,
            "a quarantined participant was leased {units} units (round {round})"
        );
    }
    replays.leases_tried += 1;
}

/// Attack 1. `evil` decides a whole plain job alone with forged counts,
/// then loses votes on a verified job and is quarantined: the coordinator
/// reopens what it decided alone. `evil` then replays its original
/// report, every lease tag genuine, every 50 ms: nothing of it is taken,
/// it is leased nothing, and an honest worker makes the job exact.
#[test]
fn a_quarantined_participant_cannot_replay_its_forged_counts() {
    let start = Instant::now();
    let mut c = hostile(&["evil", "honest", "honest2"], &["--quarantine-after", "1"]);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut evil = runtime.block_on(worker_client_as(&c.url, &c.worker_secret(0)));
    let mut session = runtime.block_on(register_worker(&mut evil, "evil-1"));

    // A plain job, every unit counted by `evil` alone as 1 leaf.
    let first = submit_checkers(&c, &["--depth", "6"]);
    let held = runtime.block_on(lease_all(&mut evil, &session)).unwrap();
    let units = c.status_as("root", &first).total;
    assert_eq!(held.len() as u64, units, "evil holds every unit");
    assert!(held.iter().all(|u| u.job_id == first));
    let forged = report_of(&session, &held, |_| 1);
    let reply = runtime.block_on(send(&mut evil, forged.clone())).unwrap();
    assert_eq!(u64::from(reply.accepted), units, "{reply:?}");
    let status = c.status_as("root", &first);
    assert_eq!((status.state.as_str(), status.done), ("done", units));
    let wrong = leaves(&c, &first);
    assert_ne!(wrong, published_checkers(6), "the forged counts decided the job");
    eprintln!(
        "{:.2} s: job {first} done with {wrong} leaves, {units} units forged by evil",
        start.elapsed().as_secs_f64()
    );

    // A verified job: evil counts every unit wrong first, an honest worker
    // process second (they disagree), honest2 third, deciding against evil.
    // honest2 is a raw client so that no honest process is running when
    // the first job reopens: the replay meets open units, not units an
    // honest worker is counting at the same moment.
    let second = submit_checkers(&c, &["--depth", "5", "--verify"]);
    let verified = runtime.block_on(lease_all(&mut evil, &session)).unwrap();
    let verified_units = c.status_as("root", &second).total;
    assert_eq!(verified.len() as u64, verified_units);
    assert!(verified.iter().all(|u| u.job_id == second));
    let lies = report_of(&session, &verified, |u| true_count(u).leaves + 1);
    let reply = runtime.block_on(send(&mut evil, lies)).unwrap();
    assert_eq!(u64::from(reply.accepted), verified_units, "{reply:?}");
    let honest = c.worker_as("honest-1", "honest", &[]);
    assert!(
        wait_for(Duration::from_secs(30), || {
            figure(&c.participant_row("root", "honest"), "units") == verified_units
        }),
        "the honest worker counts every unit of the verified job: {}",
        c.participant_row("root", "honest")
    );
    c.kill_worker(honest);
    assert_eq!(
        c.status_as("root", &second).done,
        0,
        "evil and honest disagree on every unit"
    );
    assert_eq!(
        figure(&c.participant_row("root", "evil"), "lost_votes"),
        0,
        "nothing decided against evil yet"
    );
    let mut honest2 = runtime.block_on(worker_client_as(&c.url, &c.worker_secret(2)));
    let honest2_session = runtime.block_on(register_worker(&mut honest2, "honest2-1"));
    let third = runtime
        .block_on(lease_all(&mut honest2, &honest2_session))
        .unwrap();
    assert_eq!(third.len() as u64, verified_units);
    let truth = report_of(&honest2_session, &third, |u| true_count(u).leaves);
    let reply = runtime.block_on(send(&mut honest2, truth)).unwrap();
    assert_eq!(u64::from(reply.accepted), verified_units, "{reply:?}");
    assert_eq!(c.status_as("root", &second).state, "done");
    assert_eq!(leaves(&c, &second), published_checkers(5));
    assert!(
        wait_for(
            Duration::from_secs(10),
            || c.participant_row("root", "evil")["quarantined"] == true
        ),
        "evil lost {} votes and is not quarantined: {}",
        verified_units,
        c.participant_row("root", "evil")
    );
    let quarantined = Instant::now();
    assert!(
        wait_for(Duration::from_secs(10), || {
            let s = c.status_as("root", &first);
            s.state != "done" && s.done == 0
        }),
        "what evil decided alone is reopened: {:?}",
        c.status_as("root", &first)
    );
    eprintln!(
        "{:.2} s: evil quarantined after losing {verified_units} votes, job {first} reopened in {:.2} s",
        start.elapsed().as_secs_f64(),
        quarantined.elapsed().as_secs_f64()
    );

    // The replay, on open units: nothing of it is taken.
    let mut replays = Replays::default();
    let mut round = 0;
    // One more round of the replay, then a pause before the next.
    let mut replay = || {
        round += 1;
        let since_quarantine = quarantined.elapsed();
        runtime.block_on(replay_once(
            &mut evil,
            &mut session,
            &forged,
            &mut replays,
            round,
            since_quarantine,
        ));
        std::thread::sleep(Duration::from_millis(50));
    };
    let replay_start = Instant::now();
    while replay_start.elapsed() < Duration::from_secs(3) {
        replay();
    }
    let status = c.status_as("root", &first);
    assert_eq!(
        status.done, 0,
        "nothing decided the reopened units while only evil called: {status:?}"
    );
    // An honest worker counts the job, evil replaying all the while.
    let counting = Instant::now();
    c.worker_as("honest-2", "honest", &[]);
    let mut status = c.status_as("root", &first);
    while status.state != "done" && counting.elapsed() < Duration::from_secs(40) {
        replay();
        status = c.status_as("root", &first);
    }
    eprintln!(
        "{:.2} s: {round} replays over {:.2} s, none accepted: {replays:?}; the honest worker took {:.2} s",
        start.elapsed().as_secs_f64(),
        replay_start.elapsed().as_secs_f64(),
        counting.elapsed().as_secs_f64()
    );
    assert_eq!(
        status.state, "done",
        "the reopened job is done 40 s after an honest worker started: {status:?}"
    );
    assert_eq!(status.done, units);
    assert_eq!(leaves(&c, &first), published_checkers(6));
    let evil_record = c.participant_row("root", "evil");
    assert_eq!(evil_record["quarantined"], true, "{evil_record}");
    // Quarantined at its first lost vote: its other votes still waiting
    // for a verdict were dropped with it, so they lose nothing more.
    let lost = figure(&evil_record, "lost_votes");
    assert!((1..=verified_units).contains(&lost), "{evil_record}");
}

/// Attack 3. `lapser` leases every unit, goes silent until its session
/// is lost, and again under a new session, up to 10 rounds. The job never
/// fails for its lapses: after `--lapse-limit` lapses it leases nothing
/// more and is listed suspended, and an honest worker makes the job exact.
#[test]
fn a_worker_cannot_fail_a_job_by_letting_its_leases_lapse() {
    const ROUNDS: u32 = 10;
    const LAPSE_LIMIT: u32 = 3;
    let start = Instant::now();
    let mut c = hostile(
        &["lapser", "honest"],
        &words("--lease-seconds 3 --progress-seconds 3 --lapse-limit 3"),
    );
    let job = submit_checkers(&c, &["--depth", "5"]);
    let units = c.status_as("root", &job).total;
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut lapser = runtime.block_on(worker_client_as(&c.url, &c.worker_secret(0)));
    let mut leased_rounds = 0;
    for round in 1..=ROUNDS {
        let status = c.status_as("root", &job);
        assert_ne!(
            status.state,
            "failed",
            "the job failed after {} rounds of lapsed leases: {}",
            round - 1,
            status.error
        );
        let session = match runtime.block_on(lapser.register(pb::RegisterRequest {
            name: format!("lapser-{round}"),
            threads: 1,
            ..Default::default()
        })) {
            Ok(registered) => registered.into_inner().worker_id,
            Err(refused) => {
                eprintln!("round {round}: register refused: {refused:?}");
                break;
            }
        };
        let held = match runtime.block_on(lease_all(&mut lapser, &session)) {
            Ok(held) => held.len() as u64,
            Err(refused) => {
                eprintln!("round {round}: lease refused: {refused:?}");
                0
            }
        };
        eprintln!(
            "{:.2} s: round {round}: lapser holds {held} units; job {} {}/{} ({} handed out again)",
            start.elapsed().as_secs_f64(),
            status.state,
            status.done,
            status.total,
            status.released
        );
        if held == 0 {
            break;
        }
        leased_rounds += 1;
        // Silent: no heartbeat, until the coordinator takes the units back.
        let silent = Instant::now();
        let mut now = c.status_as("root", &job);
        assert!(
            wait_for(Duration::from_secs(15), || {
                now = c.status_as("root", &job);
                now.released >= status.released + held || now.state == "failed"
            }),
            "the lapser's {held} units did not go back within 15 s: {now:?}"
        );
        eprintln!(
            "round {round}: its leases lapsed after {:.2} s",
            silent.elapsed().as_secs_f64()
        );
    }
    let status = c.status_as("root", &job);
    assert_ne!(
        status.state, "failed",
        "the job failed after {leased_rounds} rounds of lapsed leases: {}",
        status.error
    );
    assert!(
        leased_rounds <= LAPSE_LIMIT,
        "the lapser leased units in {leased_rounds} rounds, past its {LAPSE_LIMIT} lapses"
    );
    let record = c.participant_row("root", "lapser");
    assert!(figure(&record, "lapses") > 0, "{record}");
    assert_eq!(record["suspended"], true, "{record}");
    let honest_start = Instant::now();
    c.worker_as("honest-1", "honest", &[]);
    let status = wait_done(&c, &job, Duration::from_secs(40));
    eprintln!(
        "{:.2} s: {leased_rounds} rounds leased; the honest worker finished in {:.2} s: {status:?}",
        start.elapsed().as_secs_f64(),
        honest_start.elapsed().as_secs_f64()
    );
    assert_eq!(
        (status.state.as_str(), status.done),
        ("done", units),
        "{status:?}"
    );
    assert_eq!(leaves(&c, &job), published_checkers(5));
    assert_eq!(c.participant_row("root", "lapser")["suspended"], true);
}

/// What the parker got back.
#[derive(Debug, Default)]
struct Parked {
    reports: u32,
    errors: u32,
    heartbeats_ok: u32,
    refused: u64,
}

/// Attack 4. `parker` leases the whole job, counts one unit, then every
/// second heartbeats and sends a report with that count again and two
/// stale hand-backs (the lease its count ended, and a unit with another
/// unit's tag): never a new count. Its units lapse regardless, and an
/// honest worker started 1 s after it took everything finishes the job,
/// exact, within a bounded time.
#[test]
fn units_cannot_be_parked_behind_stale_reports() {
    const PROGRESS_SECONDS: u64 = 3;
    let start = Instant::now();
    let mut c = hostile(&["parker", "honest"], &["--progress-seconds", "3"]);
    let job = submit_checkers(&c, &["--depth", "6"]);
    let units = c.status_as("root", &job).total;
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let mut parker = runtime.block_on(worker_client_as(&c.url, &c.worker_secret(0)));
    let session = runtime.block_on(register_worker(&mut parker, "parker-1"));
    let held = runtime.block_on(lease_all(&mut parker, &session)).unwrap();
    let took = Instant::now();
    assert_eq!(held.len() as u64, units, "the parker holds every unit");
    assert!(held.len() >= 3);
    // One true count, taken: what it re-sends from now on.
    let taken = result(&held[0], true_count(&held[0]).leaves);
    let reply = runtime
        .block_on(send(
            &mut parker,
            pb::ReportResultsRequest {
                worker_id: session.clone(),
                jobs: vec![pb::JobReport {
                    job_id: job.clone(),
                    results: vec![taken.clone()],
                    released: Vec::new(),
                }],
            },
        ))
        .unwrap();
    assert_eq!(reply.accepted, 1, "{reply:?}");
    let stale = pb::ReportResultsRequest {
        worker_id: session.clone(),
        jobs: vec![pb::JobReport {
            job_id: job.clone(),
            results: vec![taken],
            released: vec![
                // The lease its count ended.
                pb::UnitRef {
                    unit_id: held[0].lease.unit_id,
                    epoch: held[0].lease.epoch,
                    lease_tag: held[0].lease.lease_tag.clone(),
                },
                // A unit it holds, with another unit's tag.
                pb::UnitRef {
                    unit_id: held[1].lease.unit_id,
                    epoch: held[1].lease.epoch,
                    lease_tag: held[2].lease.lease_tag.clone(),
                },
            ],
        }],
    };
    let stop = Arc::new(AtomicBool::new(false));
    let parking = {
        let stop = Arc::clone(&stop);
        let session = session.clone();
        runtime.spawn(async move {
            let mut parked = Parked::default();
            let deadline = Instant::now() + Duration::from_secs(70);
            while !stop.load(Ordering::Relaxed) && Instant::now() < deadline {
                let beat = parker
                    .heartbeat(pb::HeartbeatRequest {
                        worker_id: session.clone(),
                        stats: None,
                        draining: false,
                    })
                    .await;
                parked.heartbeats_ok += u32::from(beat.is_ok());
                match send(&mut parker, stale.clone()).await {
                    Ok(reply) => {
                        assert_eq!(reply.accepted, 0, "a re-sent count was taken again: {reply:?}");
                        assert!(reply.refused >= 1, "a tag of another unit is refused: {reply:?}");
                        parked.reports += 1;
                        parked.refused += u64::from(reply.refused);
                    }
                    Err(_) => parked.errors += 1,
                }
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            parked
        })
    };
    std::thread::sleep(Duration::from_secs(1).saturating_sub(took.elapsed()));
    let honest_start = Instant::now();
    c.worker_as("honest-1", "honest", &[]);
    let mut first_lapse = None;
    let mut status = c.status_as("root", &job);
    while status.state != "done"
        && status.state != "failed"
        && honest_start.elapsed() < Duration::from_secs(60)
    {
        std::thread::sleep(Duration::from_millis(250));
        status = c.status_as("root", &job);
        if first_lapse.is_none() && status.released > 0 {
            first_lapse = Some(took.elapsed());
        }
    }
    stop.store(true, Ordering::Relaxed);
    let parked = runtime
        .block_on(parking)
        .expect("the parker's replies are as expected");
    eprintln!(
        "{:.2} s: first lapse {:.2} s after the parker took {units} units; job {} {}/{} ({} handed out \
         again) {:.2} s after the honest worker started; parker: {parked:?}",
        start.elapsed().as_secs_f64(),
        first_lapse.map_or(f64::NAN, |t| t.as_secs_f64()),
        status.state,
        status.done,
        status.total,
        status.released,
        honest_start.elapsed().as_secs_f64()
    );
    assert_eq!(
        status.state, "done",
        "the job is not done 60 s after an honest worker started while the parker re-sends stale \
         reports: {status:?}"
    );
    let lapsed = first_lapse.expect("a lapse was seen");
    assert!(
        lapsed <= Duration::from_secs(2 * PROGRESS_SECONDS + 4),
        "the parked units lapsed only {:.2} s after they were taken",
        lapsed.as_secs_f64()
    );
    assert!(
        parked.reports + parked.errors >= 2,
        "the parker kept at it: {parked:?}"
    );
    assert_eq!(status.done, units);
    assert_eq!(leaves(&c, &job), published_checkers(6));
    assert!(
        c.server().0.try_wait().unwrap().is_none(),
        "the coordinator still runs"
    );
}
