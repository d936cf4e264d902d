//! Participants end to end, on real processes: each attack that one shared
//! token allowed now fails for the attacker. Two names of one participant
//! never verify a unit; a session id copied from the dashboard authorises
//! nothing; registrations alone cannot inflate a plan; a participant whose
//! counts lose a vote is out-voted and credited so; a revoked worker stops
//! and what it decided is counted again; the last admin cannot be revoked;
//! a revoked reader's live views end at their next update.

use std::time::Duration;

use crate::common::cluster::Cluster;
use crate::common::jobs::words;
use crate::common::{ok, perft_as, published_checkers, wait_for, worker_client_as};
use perft_core::{Game, GameVisitor, Leaves};
use perft_proto as pb;

/// A cluster with an admin `root` and the given worker participants,
/// serving with `extra`.
fn cluster(workers: &[&str], extra: &[&str]) -> Cluster {
    Cluster::builder()
        .participant("root", "admin")
        .workers(workers)
        .serve_args(extra)
        .start()
}

/// (units done, units in all) of job `id`.
fn units_done(cluster: &Cluster, id: &str) -> (u64, u64) {
    let status = cluster.status_as("root", id);
    (status.done, status.total)
}

#[test]
fn two_machines_of_one_participant_never_verify_and_two_participants_do() {
    let mut c = cluster(&["alice", "bob"], &["--lease-seconds", "3"]);
    let id = c.submit_as(
        "root",
        &words("--game checkers --depth 9 --split-depth 3 --verify"),
    );
    c.worker_as("alice-1", "alice", &[]);
    c.worker_as("alice-2", "alice", &[]);
    std::thread::sleep(Duration::from_secs(4));
    let (done, total) = units_done(&c, &id);
    assert_eq!(done, 0, "two machines of one participant decided units");
    assert!(total > 0);
    c.worker_as("bob-1", "bob", &[]);
    ok(perft_as(&c.url, &c.secret("root"), &["watch", &id]));
    let report = c.divide_as("root", &id);
    assert_eq!(report["leaves"], published_checkers(9));
    // Every unit was counted by both participants: one vote each.
    assert_eq!(c.participant_row("root", "alice")["units"], total.to_string());
    assert_eq!(c.participant_row("root", "bob")["units"], total.to_string());
}

/// A packed position's true count.
struct Count<'a>(&'a [u8], u32);

impl GameVisitor for Count<'_> {
    type Output = Leaves;
    fn visit<G: Game>(self) -> Leaves {
        perft_core::perft(&G::unpack(self.0).unwrap(), self.1)
    }
}

/// Leases every unit it can under `session` and reports `forge(count)`.
async fn lease_and_report(
    client: &mut pb::worker_service_client::WorkerServiceClient<perft_proto::connect::AuthChannel>,
    session: &str,
    forge: impl Fn(u128) -> u128,
) -> (u32, u32) {
    let leased = client
        .lease_units(pb::LeaseUnitsRequest {
            worker_id: session.to_owned(),
            max_units: 1024,
        })
        .await
        .unwrap()
        .into_inner();
    let mut reports = Vec::new();
    for group in leased.jobs {
        let game = pb::game_kind(group.game).unwrap();
        let results = group
            .units
            .iter()
            .map(|u| {
                let Leaves { leaves, higher } = game.dispatch(Count(&u.position, group.depth));
                pb::UnitResult {
                    unit_id: u.unit_id,
                    epoch: u.epoch,
                    leaves: Some(
                        Leaves {
                            leaves: forge(leaves),
                            higher,
                        }
                        .into(),
                    ),
                    lease_tag: u.lease_tag.clone(),
                    cpu_seconds: 0.0,
                }
            })
            .collect();
        reports.push(pb::JobReport {
            job_id: group.job_id,
            results,
            released: Vec::new(),
        });
    }
    let reply = client
        .report_results(pb::ReportResultsRequest {
            worker_id: session.to_owned(),
            jobs: reports,
        })
        .await
        .unwrap()
        .into_inner();
    (reply.accepted, reply.refused)
}

async fn register(
    client: &mut pb::worker_service_client::WorkerServiceClient<perft_proto::connect::AuthChannel>,
    name: &str,
    threads: u32,
) -> String {
    client
        .register(pb::RegisterRequest {
            name: name.to_owned(),
            threads,
            only_job: String::new(),
        })
        .await
        .unwrap()
        .into_inner()
        .worker_id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_counts_from_two_names_are_outvoted_and_counted_against_their_owner() {
    let mut c = cluster(&["evil", "bob", "carol"], &["--lease-seconds", "30"]);
    let id = c.submit_as(
        "root",
        &words("--game checkers --depth 6 --split-depth 2 --verify"),
    );
    // The attack of the shared-token days: two names, the same forged counts.
    let mut evil = worker_client_as(&c.url, &c.worker_secret(0)).await;
    let a = register(&mut evil, "evil-a", 1).await;
    let b = register(&mut evil, "evil-b", 1).await;
    let (accepted_a, _) = lease_and_report(&mut evil, &a, |n| n / 10 + 1).await;
    let (accepted_b, _) = lease_and_report(&mut evil, &b, |n| n / 10 + 1).await;
    assert!(accepted_a > 0);
    assert_eq!(accepted_b, 0, "the second name got nothing to count");
    let (done, total) = units_done(&c, &id);
    assert_eq!(
        (done, total as u32),
        (0, accepted_a),
        "a forged count decided a unit"
    );
    // Two honest participants out-vote it.
    c.worker_as("bob-1", "bob", &[]);
    c.worker_as("carol-1", "carol", &[]);
    ok(perft_as(&c.url, &c.secret("root"), &["watch", &id]));
    assert_eq!(c.divide_as("root", &id)["leaves"], published_checkers(6));
    let evil_credit = c.participant_row("root", "evil");
    assert_eq!(evil_credit["lost_votes"], total.to_string(), "{evil_credit}");
    assert_eq!(c.participant_row("root", "bob")["lost_votes"], "0");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_id_authorises_nothing_for_another_credential() {
    let c = cluster(&["alice", "mallory"], &[]);
    let mut alice = worker_client_as(&c.url, &c.worker_secret(0)).await;
    let session = register(&mut alice, "alice-1", 2).await;
    // Mallory holds a valid credential of its own and Alice's session id.
    let mut mallory = worker_client_as(&c.url, &c.worker_secret(1)).await;
    let lease = mallory
        .lease_units(pb::LeaseUnitsRequest {
            worker_id: session.clone(),
            max_units: 8,
        })
        .await
        .unwrap_err();
    assert_eq!(lease.code(), tonic::Code::NotFound, "{lease:?}");
    let beat = mallory
        .heartbeat(pb::HeartbeatRequest {
            worker_id: session.clone(),
            stats: None,
            draining: true,
        })
        .await
        .unwrap_err();
    assert_eq!(beat.code(), tonic::Code::NotFound, "{beat:?}");
    // Alice's own calls still work, and her session is not draining.
    alice
        .heartbeat(pb::HeartbeatRequest {
            worker_id: session.clone(),
            stats: None,
            draining: false,
        })
        .await
        .unwrap();
    // A worker credential reads nothing, and submits nothing.
    let refused = perft_as(&c.url, &c.worker_secret(1), &["list"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("role worker"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn units_held_without_progress_go_back_to_the_queue() {
    let mut c = cluster(
        &["squatter", "bob"],
        &["--lease-seconds", "30", "--progress-seconds", "3"],
    );
    let id = c.submit_as(
        "root",
        &["--game", "checkers", "--depth", "8", "--split-depth", "4"],
    );
    let mut squatter = worker_client_as(&c.url, &c.worker_secret(0)).await;
    let session = register(&mut squatter, "parker", 1).await;
    let leased: usize = squatter
        .lease_units(pb::LeaseUnitsRequest {
            worker_id: session.clone(),
            max_units: 1024,
        })
        .await
        .unwrap()
        .into_inner()
        .jobs
        .iter()
        .map(|j| j.units.len())
        .sum();
    let (_, total) = units_done(&c, &id);
    assert_eq!(leased as u64, total, "it holds every unit");
    // It keeps its session alive, draining, and never reports.
    let beating = tokio::spawn(async move {
        loop {
            let _ = squatter
                .heartbeat(pb::HeartbeatRequest {
                    worker_id: session.clone(),
                    stats: None,
                    draining: true,
                })
                .await;
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    });
    c.worker_as("bob-1", "bob", &[]);
    let url = c.url.clone();
    let admin = c.secret("root");
    tokio::task::spawn_blocking(move || ok(perft_as(&url, &admin, &["watch", &id])))
        .await
        .unwrap();
    beating.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registrations_alone_do_not_grow_an_automatic_split() {
    let c = cluster(&["phantom"], &[]);
    let mut phantom = worker_client_as(&c.url, &c.worker_secret(0)).await;
    for i in 0..320 {
        register(&mut phantom, &format!("ghost-{i}"), 1024).await;
    }
    // Depth 12: its units are small enough that only the unit-count
    // minimum could drive the split deep (32 a registered thread would ask
    // for 10 M units, ply 10); on its own it stops at a few hundred.
    let id = c.submit_as("root", &["--game", "checkers", "--depth", "12"]);
    let (_, total) = units_done(&c, &id);
    assert!(total < 10_000, "{total} units from 320 phantom registrations");
    ok(perft_as(&c.url, &c.secret("root"), &["cancel", &id]));
}

/// The process ended by itself within `limit`.
fn exits_within(worker: &mut crate::common::Running, limit: Duration) -> bool {
    wait_for(limit, || worker.0.try_wait().unwrap().is_some())
}

#[test]
fn a_revoked_worker_stops_and_what_it_decided_is_counted_again() {
    let mut c = cluster(&["alice", "bob"], &["--lease-seconds", "3"]);
    let id = c.submit_as(
        "root",
        &["--game", "checkers", "--depth", "11", "--split-depth", "5"],
    );
    let alice = c.worker_as("alice-1", "alice", &[]);
    assert!(
        wait_for(Duration::from_secs(60), || units_done(&c, &id).0 >= 20),
        "alice decides some units"
    );
    let revoked = ok(perft_as(
        &c.url,
        &c.secret("root"),
        &["participant", "revoke", "alice", "--recount"],
    ));
    assert!(revoked.contains("revoked"), "{revoked}");
    assert!(
        exits_within(c.worker_process(alice), Duration::from_secs(3)),
        "one heartbeat is 1 s"
    );
    let alice_units: u64 = c.participant_row("root", "alice")["units"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(units_done(&c, &id).0, 0, "every unit alice decided is open again");
    c.worker_as("bob-1", "bob", &[]);
    ok(perft_as(&c.url, &c.secret("root"), &["watch", &id]));
    assert_eq!(c.divide_as("root", &id)["leaves"], published_checkers(11));
    let (_, total) = units_done(&c, &id);
    let bob_units: u64 = c.participant_row("root", "bob")["units"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(
        bob_units, total,
        "bob counted every unit, alice's {alice_units} too"
    );
    assert_eq!(c.participant_row("root", "alice")["revoked"], true);
    // Its secret opens nothing any more.
    let refused = perft_as(&c.url, &c.worker_secret(0), &["participant", "list"]);
    assert_eq!(refused.status.code(), Some(2));
}

#[test]
fn participant_verbs_refuse_bad_input_in_one_line() {
    let c = cluster(&["alice"], &[]);
    for (args, says) in [
        (&["participant", "add", "bad name"][..], "participant name"),
        (&["participant", "add", "alice"][..], "exists already"),
        (&["participant", "add", "operator"][..], "built in"),
        (&["participant", "revoke", "nobody"][..], "no participant"),
    ] {
        let out = perft_as(&c.url, &c.secret("root"), args);
        let stderr = crate::common::refused(&out);
        assert!(stderr.contains(says), "{args:?}: {stderr}");
    }
    // A worker may not manage participants.
    let out = perft_as(&c.url, &c.worker_secret(0), &["participant", "add", "x"]);
    assert!(crate::common::refused(&out).contains("may not manage"));
}

/// A raw `ParticipantService` client of `url` carrying the credential in
/// `secret_file`.
async fn participant_client(
    url: &str,
    secret_file: &std::path::Path,
) -> pb::participant_service_client::ParticipantServiceClient<perft_proto::connect::AuthChannel> {
    let config = crate::common::client_config_as(url, secret_file);
    let channel = config.endpoint().unwrap().connect().await.unwrap();
    pb::participant_service_client::ParticipantServiceClient::with_interceptor(channel, config.interceptor())
}

fn revoke_request(name: &str) -> pb::RevokeParticipantRequest {
    pb::RevokeParticipantRequest {
        name: name.to_owned(),
        recount: false,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_last_active_admin_cannot_be_revoked_even_by_itself() {
    let c = cluster(&[], &[]);
    // Root is the only admin and no token is configured: refused, in one
    // line, as FAILED_PRECONDITION.
    let out = perft_as(&c.url, &c.secret("root"), &["participant", "revoke", "root"]);
    let stderr = crate::common::refused(&out);
    assert!(stderr.contains("'root' is the last active admin"), "{stderr}");
    let mut root = participant_client(&c.url, &c.secret("root")).await;
    let status = root.revoke_participant(revoke_request("root")).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::FailedPrecondition, "{status:?}");
    assert_eq!(c.participant_row("root", "root")["revoked"], false);

    // With two more admins, root may go.
    let keys = c.files();
    let [carol, dave] = ["carol", "dave"].map(|name| {
        let file = keys.join(format!("{name}.secret"));
        ok(perft_as(
            &c.url,
            &c.secret("root"),
            &[
                "participant",
                "add",
                name,
                "--role",
                "admin",
                "--secret-file",
                file.to_str().unwrap(),
            ],
        ));
        file
    });
    ok(perft_as(
        &c.url,
        &c.secret("root"),
        &["participant", "revoke", "root"],
    ));

    // The last two revoke each other at the same moment: exactly one wins,
    // and the other is refused (as the last admin, or as revoked already).
    let mut as_carol = participant_client(&c.url, &carol).await;
    let mut as_dave = participant_client(&c.url, &dave).await;
    let (by_carol, by_dave) = tokio::join!(
        as_carol.revoke_participant(revoke_request("dave")),
        as_dave.revoke_participant(revoke_request("carol")),
    );
    let ((survivor, survivor_name, revoked), lost) = match (by_carol, by_dave) {
        (Ok(_), Err(lost)) => ((&carol, "carol", "dave"), lost),
        (Err(lost), Ok(_)) => ((&dave, "dave", "carol"), lost),
        both => panic!("exactly one revocation must win: {both:?}"),
    };
    assert!(
        [tonic::Code::FailedPrecondition, tonic::Code::Unauthenticated].contains(&lost.code()),
        "{lost:?}"
    );
    let out = perft_as(&c.url, survivor, &["participant", "revoke", survivor_name]);
    let stderr = crate::common::refused(&out);
    assert!(stderr.contains("last active admin"), "{stderr}");
    // Revoking one revoked already loses no admin: allowed.
    ok(perft_as(&c.url, survivor, &["participant", "revoke", revoked]));
    let text = ok(perft_as(
        &c.url,
        survivor,
        &["participant", "list", "--format", "json"],
    ));
    let active: Vec<String> = serde_json::from_str::<serde_json::Value>(&text)
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["revoked"] == false)
        .map(|p| p["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(active, [survivor_name]);
}

/// Every message of a watch as it arrives: an update's state, or the
/// status that ended it; `None` once the stream has ended.
type Arrival = (std::time::Instant, Option<Result<i32, tonic::Status>>);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_reader_stops_seeing_the_job_at_its_next_update() {
    use crate::common::http::{agent, get};
    let mut c = Cluster::builder()
        .participants(&[("root", "admin"), ("rita", "reader"), ("alice", "worker")])
        .dashboard()
        .start();
    let (admin, reader) = (c.secret("root"), c.secret("rita"));
    let dashboard = c.dashboard.clone().unwrap();
    let url = c.url.clone();
    let id = ok(perft_as(
        &url,
        &admin,
        &words("submit --game checkers --depth 14 --split-depth 5"),
    ))
    .trim()
    .to_owned();
    c.worker_as("alice-1", "alice", &[]);

    // Rita watches it on gRPC; every message is stamped as it arrives.
    let mut client = crate::common::perft_client_as(&url, &reader).await;
    let mut stream = client
        .watch_job(pb::WatchJobRequest { job_id: id.clone() })
        .await
        .unwrap()
        .into_inner();
    let (tx, mut arrivals) = tokio::sync::mpsc::unbounded_channel::<Arrival>();
    tokio::spawn(async move {
        let mut failed = false;
        loop {
            let arrival = match stream.message().await {
                Ok(Some(job)) => Some(Ok(job.state)),
                Ok(None) => None,
                Err(status) => Some(Err(status)),
            };
            let ended = arrival.is_none();
            let error = matches!(arrival, Some(Err(_)));
            let _ = tx.send((std::time::Instant::now(), arrival));
            // After an error, one more read shows what follows it.
            if ended || failed {
                return;
            }
            failed = error;
        }
    });
    // Live: updates come while the job runs.
    let running = i32::from(pb::JobState::Running);
    let mut updates = 0;
    while updates < 3 {
        let (_, arrival) = tokio::time::timeout(Duration::from_secs(30), arrivals.recv())
            .await
            .expect("an update within 30 s")
            .unwrap();
        match arrival {
            Some(Ok(state)) if state == running => updates += 1,
            Some(Ok(_)) => {}
            other => panic!("the watch ended before the revocation: {other:?}"),
        }
    }
    // Rita's dashboard: a session cookie from her secret, and the JSON the
    // job page polls once a second.
    let http = agent();
    let secret = std::fs::read_to_string(&reader).unwrap();
    let first = http
        .get(format!("{dashboard}/jobs/{id}?token={}", secret.trim()))
        .call()
        .unwrap();
    assert_eq!(first.status().as_u16(), 303);
    let cookie = first.headers().get("set-cookie").unwrap().to_str().unwrap();
    let session = cookie.split(';').next().unwrap().to_owned();
    let poll = format!("{dashboard}/api/jobs/{id}");
    let bearer = format!("Bearer {}", secret.trim());
    assert_eq!(get(&http, &poll, &[("Cookie", &session)]).0, 200);
    assert_eq!(get(&http, &poll, &[("Authorization", &bearer)]).0, 200);

    // Revoked: the watch ends with UNAUTHENTICATED within a second or two,
    // with no update after the revocation; the dashboard's next poll is
    // refused.
    ok(perft_as(&url, &admin, &["participant", "revoke", "rita"]));
    let revoked_at = std::time::Instant::now();
    let mut late_updates = 0;
    let ended = loop {
        let (at, arrival) = tokio::time::timeout(Duration::from_secs(5), arrivals.recv())
            .await
            .expect("the watch ends within 5 s")
            .unwrap();
        match arrival {
            Some(Ok(_)) if at > revoked_at => late_updates += 1,
            Some(Ok(_)) => {}
            Some(Err(status)) => break (at, status),
            None => panic!("the watch ended without a status"),
        }
    };
    assert_eq!(late_updates, 0, "updates arrived after the revocation");
    let (at, status) = ended;
    assert_eq!(status.code(), tonic::Code::Unauthenticated, "{status:?}");
    assert!(status.message().contains("'rita' was revoked"), "{status:?}");
    assert!(
        at.duration_since(revoked_at) < Duration::from_secs(2),
        "ended {:?} after the revocation",
        at.duration_since(revoked_at)
    );
    let (_, end) = tokio::time::timeout(Duration::from_secs(5), arrivals.recv())
        .await
        .expect("the stream's end")
        .unwrap();
    assert!(end.is_none(), "after the status: {end:?}");
    for headers in [
        [("Cookie", session.as_str())],
        [("Authorization", bearer.as_str())],
    ] {
        let (status, body) = get(&http, &poll, &headers);
        assert_eq!(status, 401, "{body}");
        assert_eq!(body.lines().count(), 1, "{body}");
    }
    // A new watch is refused at once.
    let status = client
        .watch_job(pb::WatchJobRequest { job_id: id.clone() })
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::Unauthenticated, "{status:?}");
    ok(perft_as(&url, &admin, &["cancel", &id]));
}
