//! A hostile client against a real coordinator process: every RPC gets
//! empty, huge, non-ASCII, control-character, maximal, unknown, forged,
//! missing, absurd and replayed values. Each is refused with a short, clean
//! message (or harmlessly accepted); afterwards the coordinator still
//! serves, and a real job counted by a real worker is exact.

use crate::common::cluster::Cluster;
use crate::common::{client_config_as, ok, perft, perft_as, register_worker};
use perft_core::{GameKind, Leaves};
use perft_proto as pb;
use perft_proto::connect::AuthChannel;
use perft_proto::perft_service_client::PerftServiceClient;
use perft_proto::worker_service_client::WorkerServiceClient;
use tonic::{Code, Status};

/// Strings nobody should send.
fn hostile_strings() -> Vec<String> {
    vec![
        String::new(),
        "aéééé".to_owned(),
        "é".repeat(40),
        "x".repeat(1 << 20),
        "nul\0in\0side".to_owned(),
        "esc\u{1b}[31mred\nnew line\r".to_owned(),
        "../../etc/passwd".to_owned(),
        "🦀".repeat(100),
    ]
}

/// A refusal is short, one line, with no raw control character.
fn clean(status: &Status) {
    let message = status.message();
    let chars = message.chars().count();
    assert!(chars < 400, "message of {chars} characters: {status:?}");
    assert!(
        !message.chars().any(char::is_control),
        "raw control character: {message:?}"
    );
}

fn refused(result: Result<impl std::fmt::Debug, Status>, codes: &[Code]) {
    let status = result.expect_err("a hostile request is refused");
    assert!(codes.contains(&status.code()), "{status:?}");
    clean(&status);
}

type Clients = PerftServiceClient<AuthChannel>;
type Workers = WorkerServiceClient<AuthChannel>;

/// Refused for what it is, or answered with nothing: never a panic.
fn empty_or_refused<T: std::fmt::Debug>(result: Result<T, Status>, empty: impl FnOnce(&T) -> bool) {
    match result {
        Ok(answer) => assert!(empty(&answer), "{answer:?}"),
        Err(status) => {
            assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");
            clean(&status);
        }
    }
}

/// Page tokens no coordinator gave.
fn hostile_page_tokens() -> Vec<String> {
    let mut tokens = hostile_strings();
    tokens.retain(|t| !t.is_empty());
    tokens.extend(
        [
            "abc",
            "99999999999999999999",
            "18446744073709551615",
            "340282366920938463463374607431768211456",
            "-1",
            "+5",
            "0x10",
            "1e9",
            "1000000",
            " 1",
        ]
        .map(str::to_owned),
    );
    tokens
}

/// Game enum values that name no game.
const HOSTILE_GAMES: [i32; 6] = [0, 99, -1, 4, i32::MIN, i32::MAX];

fn result(lease: &pb::UnitLease, leaves: Option<pb::Leaves>, tag: Vec<u8>) -> pb::UnitResult {
    pb::UnitResult {
        unit_id: lease.unit_id,
        epoch: lease.epoch,
        leaves,
        lease_tag: tag,
        cpu_seconds: 0.0,
    }
}

fn count(n: u128, higher: u128) -> Option<pb::Leaves> {
    Some(Leaves { leaves: n, higher }.into())
}

fn job_report(job_id: &str, results: Vec<pb::UnitResult>) -> pb::JobReport {
    pb::JobReport {
        job_id: job_id.to_owned(),
        results,
        released: Vec::new(),
    }
}

async fn report(
    workers: &mut Workers,
    worker_id: &str,
    jobs: Vec<pb::JobReport>,
) -> Result<pb::ReportResultsResponse, Status> {
    workers
        .report_results(pb::ReportResultsRequest {
            worker_id: worker_id.to_owned(),
            jobs,
        })
        .await
        .map(tonic::Response::into_inner)
}

/// Calls with hostile `perft-protocol` headers (or none) are refused before
/// anything is read, naming the protocol the coordinator speaks.
async fn hostile_protocol_headers(url: &str) {
    let channel = crate::common::client_config(url)
        .endpoint()
        .unwrap()
        .connect()
        .await
        .unwrap();
    let versions: [Option<&str>; 9] = [
        None,
        Some(""),
        Some("2"),
        Some("3"),
        Some("4"),
        Some("05"),
        Some("4294967295"),
        Some("-1"),
        Some("abc"),
    ];
    for version in versions {
        let header = version.map(|v| v.parse::<tonic::metadata::MetadataValue<_>>().unwrap());
        let add = move |mut request: tonic::Request<()>| {
            if let Some(value) = &header {
                request.metadata_mut().insert(pb::PROTOCOL_HEADER, value.clone());
            }
            Ok(request)
        };
        let mut clients = PerftServiceClient::with_interceptor(channel.clone(), add.clone());
        let mut workers = WorkerServiceClient::with_interceptor(channel.clone(), add);
        let calls = [
            clients
                .submit_job(pb::SubmitJobRequest {
                    game: pb::Game::Reversi.into(),
                    depth: 3,
                    ..Default::default()
                })
                .await
                .map(drop),
            clients.list_jobs(pb::ListJobsRequest::default()).await.map(drop),
            workers
                .register(pb::RegisterRequest {
                    name: "old".to_owned(),
                    threads: 1,
                    ..Default::default()
                })
                .await
                .map(drop),
            workers.heartbeat(pb::HeartbeatRequest::default()).await.map(drop),
        ];
        for call in calls {
            let status = call.expect_err("a call of another protocol is refused");
            assert_eq!(status.code(), Code::FailedPrecondition, "{version:?}: {status:?}");
            assert!(
                status
                    .message()
                    .contains(&format!("perft.v2 protocol {}", pb::PROTOCOL_VERSION)),
                "{version:?}: {status:?}"
            );
            clean(&status);
        }
    }
}

#[test]
fn hostile_requests_are_refused_and_a_real_job_stays_exact() {
    let mut c = Cluster::builder()
        .participants(&[
            ("root", "admin"),
            ("liar", "worker"),
            ("bystander", "worker"),
            ("honest", "worker"),
        ])
        .serve_args(&["--lease-seconds", "2", "--max-units", "20000"])
        .start();
    let url = c.url.clone();
    let (admin, liar_secret, bystander_secret) = (c.secret("root"), c.secret("liar"), c.secret("bystander"));
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let job = runtime.block_on(async {
        hostile_protocol_headers(&url).await;
        let channel = |secret: &std::path::Path| {
            let config = client_config_as(&url, secret);
            let channel = config.endpoint().unwrap().connect_lazy();
            (channel, config.interceptor())
        };
        let (admin_channel, admin_auth) = channel(&admin);
        let mut clients: Clients = PerftServiceClient::with_interceptor(admin_channel, admin_auth);
        let (liar_channel, liar_auth) = channel(&liar_secret);
        let mut workers: Workers = WorkerServiceClient::with_interceptor(liar_channel, liar_auth);
        let (bystander_channel, bystander_auth) = channel(&bystander_secret);
        let mut bystanders: Workers =
            WorkerServiceClient::with_interceptor(bystander_channel, bystander_auth);
        let nf_or_invalid = [Code::NotFound, Code::InvalidArgument];
        let submit = |game: i32, position: &str, depth, split_depth| pb::SubmitJobRequest {
            game,
            position: position.to_owned(),
            depth,
            split_depth,
            verify: false,
            convention: 0,
            units: Vec::new(),
            stats: false,
        };
        let (reversi, checkers, chess) = (
            i32::from(pb::Game::Reversi),
            i32::from(pb::Game::Checkers),
            i32::from(pb::Game::Chess),
        );

        // Game values that name no game, with and without a position.
        for game in HOSTILE_GAMES {
            for position in ["", "x"] {
                let status = clients
                    .submit_job(submit(game, position, 5, 0))
                    .await
                    .expect_err("an unknown game is refused");
                assert_eq!(status.code(), Code::InvalidArgument, "{game}: {status:?}");
                assert!(
                    status.message().contains(&format!("unknown game {game}")),
                    "{status:?}"
                );
                clean(&status);
            }
        }

        // Convention values that name none, and one for a game without a
        // choice.
        for (game, convention) in [
            (reversi, 3),
            (reversi, -1),
            (reversi, i32::MIN),
            (checkers, 2),
            (chess, 1),
        ] {
            let status = clients
                .submit_job(pb::SubmitJobRequest {
                    convention,
                    ..submit(game, "", 5, 0)
                })
                .await
                .expect_err("a bad convention is refused");
            assert_eq!(status.code(), Code::InvalidArgument, "{convention}: {status:?}");
            assert!(
                status.message().contains("unknown convention")
                    || status.message().contains("one way of counting"),
                "{status:?}"
            );
            clean(&status);
        }

        // Client calls with hostile ids and submissions.
        for text in hostile_strings() {
            let id = text.clone();
            refused(
                clients.get_job(pb::GetJobRequest { job_id: id.clone() }).await,
                &nf_or_invalid,
            );
            refused(
                clients
                    .cancel_job(pb::CancelJobRequest { job_id: id.clone() })
                    .await,
                &nf_or_invalid,
            );
            refused(
                clients
                    .resume_job(pb::ResumeJobRequest { job_id: id.clone() })
                    .await,
                &nf_or_invalid,
            );
            refused(
                clients
                    .get_divide(pb::GetDivideRequest { job_id: id.clone() })
                    .await,
                &nf_or_invalid,
            );
            refused(
                clients
                    .watch_job(pb::WatchJobRequest { job_id: id.clone() })
                    .await,
                &nf_or_invalid,
            );
            refused(
                clients
                    .get_certificate(pb::GetCertificateRequest { job_id: id.clone() })
                    .await,
                &nf_or_invalid,
            );
            refused(
                clients
                    .get_unit_counts(pb::GetUnitCountsRequest {
                        job_id: id.clone(),
                        start: u64::MAX,
                        page_size: u32::MAX,
                    })
                    .await,
                &nf_or_invalid,
            );
            for (page_size, page_token) in [(0, String::new()), (u32::MAX, text.clone())] {
                refused(
                    clients
                        .get_disagreements(pb::GetDisagreementsRequest {
                            job_id: id.clone(),
                            page_size,
                            page_token,
                        })
                        .await,
                    &nf_or_invalid,
                );
            }
            refused(
                clients.submit_job(submit(0, &text, 5, 0)).await,
                &[Code::InvalidArgument],
            );
            if !text.trim().is_empty() {
                for game in [reversi, checkers, chess] {
                    refused(
                        clients.submit_job(submit(game, &text, 5, 0)).await,
                        &[Code::InvalidArgument],
                    );
                }
            }
            // Worker calls from sessions that do not exist.
            let heartbeat = workers
                .heartbeat(pb::HeartbeatRequest {
                    worker_id: id.clone(),
                    stats: Some(pb::WorkerStats {
                        table_fill: f64::NAN,
                        ..Default::default()
                    }),
                    draining: true,
                })
                .await;
            refused(heartbeat, &nf_or_invalid);
            let lease = workers
                .lease_units(pb::LeaseUnitsRequest {
                    worker_id: id.clone(),
                    max_units: u32::MAX,
                })
                .await;
            refused(lease, &nf_or_invalid);
            // The name of the issue's remote crash: "aéééé".
            refused(report(&mut workers, &id, Vec::new()).await, &nf_or_invalid);
            refused(
                report(&mut workers, &id, vec![job_report(&id, Vec::new())]).await,
                &nf_or_invalid,
            );
            let register = pb::RegisterRequest {
                name: text.clone(),
                threads: u32::MAX,
                only_job: text.clone(),
            };
            refused(workers.register(register).await, &nf_or_invalid);
        }
        for (depth, split) in [(0, 0), (u32::MAX, 0), (41, 0), (10, 10), (10, u32::MAX)] {
            refused(
                clients.submit_job(submit(checkers, "", depth, split)).await,
                &[Code::InvalidArgument],
            );
        }

        // A real job, and a registered hostile worker inside it.
        let depth = 8;
        let job = clients
            .submit_job(submit(reversi, "", depth, 4))
            .await
            .unwrap()
            .into_inner()
            .job_id;
        // A worker claiming 2^32-1 threads is taken to have 1024; the
        // automatic split it asks for stays within --max-units.
        let greedy = pb::RegisterRequest {
            name: "greedy".to_owned(),
            threads: u32::MAX,
            ..Default::default()
        };
        workers.register(greedy).await.unwrap();
        let huge = clients
            .submit_job(submit(checkers, "", 30, 0))
            .await
            .unwrap()
            .into_inner()
            .job_id;
        let planned = clients
            .cancel_job(pb::CancelJobRequest { job_id: huge.clone() })
            .await
            .unwrap()
            .into_inner();
        assert!(
            (1..=20_000).contains(&planned.units_total),
            "{} units",
            planned.units_total
        );
        assert_eq!(planned.game, checkers);

        // Hostile pages: unknown tokens are refused or give an empty page;
        // a huge page size is capped.
        for token in hostile_page_tokens() {
            for page_size in [0, 1, u32::MAX] {
                let listed = clients
                    .list_jobs(pb::ListJobsRequest {
                        page_size,
                        page_token: token.clone(),
                    })
                    .await
                    .map(tonic::Response::into_inner);
                empty_or_refused(listed, |page| page.jobs.is_empty());
                let found = clients
                    .get_disagreements(pb::GetDisagreementsRequest {
                        job_id: job.clone(),
                        page_size,
                        page_token: token.clone(),
                    })
                    .await
                    .map(tonic::Response::into_inner);
                empty_or_refused(found, |page| page.disagreements.is_empty());
            }
        }
        let all = clients
            .list_jobs(pb::ListJobsRequest {
                page_size: u32::MAX,
                page_token: String::new(),
            })
            .await
            .unwrap()
            .into_inner();
        let ids: Vec<&str> = all.jobs.iter().map(|j| j.job_id.as_str()).collect();
        assert_eq!(
            ids,
            [job.as_str(), huge.as_str()],
            "every job, in submission order"
        );
        assert!(all.next_page_token.is_empty());
        let first = clients
            .list_jobs(pb::ListJobsRequest {
                page_size: 1,
                page_token: String::new(),
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(first.jobs.len(), 1);
        assert_eq!(first.jobs[0].job_id, job);
        assert!(!first.next_page_token.is_empty());
        let none = clients
            .get_disagreements(pb::GetDisagreementsRequest {
                job_id: job.clone(),
                page_size: u32::MAX,
                page_token: String::new(),
            })
            .await
            .unwrap()
            .into_inner();
        assert!(none.disagreements.is_empty() && none.next_page_token.is_empty());

        let liar = register_worker(&mut workers, "liar").await;
        let bystander = register_worker(&mut bystanders, "bystander").await;
        let leased = workers
            .lease_units(pb::LeaseUnitsRequest {
                worker_id: liar.clone(),
                max_units: u32::MAX,
            })
            .await
            .unwrap()
            .into_inner()
            .jobs;
        assert_eq!(leased.len(), 1, "only the real job has units");
        let leased_job = &leased[0];
        assert_eq!(leased_job.job_id, job);
        assert_eq!(leased_job.game, reversi);
        let leases = &leased_job.units;
        assert!(leases.len() > 10, "the liar holds units: {}", leases.len());
        for lease in leases {
            GameKind::Reversi
                .fns()
                .show_packed(&lease.position)
                .expect("a leased position is a packed Reversi position");
        }
        let lease = &leases[0];
        let tag = lease.lease_tag.clone();
        // Missing, inconsistent and impossible counts refuse the whole call.
        for bad in [
            result(lease, None, tag.clone()),
            result(lease, Some(pb::Leaves::default()), tag.clone()),
            result(lease, count(5, 6), tag.clone()),
            result(lease, count(u128::MAX, 0), tag.clone()),
            result(lease, count(65u128.pow(4), 0), tag.clone()),
        ] {
            refused(
                report(&mut workers, &liar, vec![job_report(&job, vec![bad])]).await,
                &[Code::InvalidArgument],
            );
        }
        // Forged tags, another machine's lease, another unit's tag, another
        // job's id: counted as refused, never as results.
        let forged = vec![
            result(lease, count(1000, 0), Vec::new()),
            result(lease, count(1000, 0), vec![0; 16]),
            result(lease, count(1000, 0), vec![7; 1 << 16]),
            result(&leases[1], count(1000, 0), tag.clone()),
            pb::UnitResult {
                epoch: lease.epoch + 1,
                ..result(lease, count(1000, 0), tag.clone())
            },
        ];
        let genuine = || vec![result(lease, count(1000, 0), tag.clone())];
        let reports = vec![
            job_report(&job, forged.clone()),
            job_report(&"x".repeat(1 << 16), genuine()),
            job_report("", genuine()),
            job_report("esc\u{1b}[31m", genuine()),
            job_report(&huge, genuine()),
        ];
        let reply = report(&mut workers, &liar, reports).await.unwrap();
        assert_eq!(
            (reply.accepted, reply.ignored, reply.refused),
            (0, 0, forged.len() as u32 + 4)
        );
        let stolen = report(&mut bystanders, &bystander, vec![job_report(&job, genuine())])
            .await
            .unwrap();
        assert_eq!(
            (stolen.accepted, stolen.refused),
            (0, 1),
            "a tag is for its participant only"
        );
        let released = report(
            &mut bystanders,
            &bystander,
            vec![pb::JobReport {
                job_id: job.clone(),
                results: Vec::new(),
                released: vec![pb::UnitRef {
                    unit_id: lease.unit_id,
                    epoch: lease.epoch,
                    lease_tag: vec![1; 16],
                }],
            }],
        )
        .await
        .unwrap();
        assert_eq!(released.refused, 1);
        // Absurd worker stats are taken, clamped, and harm nothing.
        for table_fill in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -1.0, 2.0, f64::MAX] {
            bystanders
                .heartbeat(pb::HeartbeatRequest {
                    worker_id: bystander.clone(),
                    stats: Some(pb::WorkerStats {
                        table_probes: 5,
                        table_hits: u64::MAX,
                        table_fill,
                        table_bytes: u64::MAX,
                        units_done: u64::MAX,
                        leaves_done: Some(u128::MAX.into()),
                    }),
                    draining: false,
                })
                .await
                .expect("absurd stats are accepted");
        }
        let view = clients
            .get_job(pb::GetJobRequest { job_id: job.clone() })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(view.units_done, 0, "nothing forged was counted");
        assert_eq!(view.disagreements, 0);
        assert_eq!(view.game, reversi);
        // A draining worker leases nothing more.
        bystanders
            .heartbeat(pb::HeartbeatRequest {
                worker_id: bystander.clone(),
                stats: None,
                draining: true,
            })
            .await
            .unwrap();
        let drained = bystanders
            .lease_units(pb::LeaseUnitsRequest {
                worker_id: bystander.clone(),
                max_units: u32::MAX,
            })
            .await
            .unwrap()
            .into_inner();
        assert!(drained.jobs.is_empty(), "{drained:?}");
        // The liar's leases run out (no heartbeat); the real worker counts.
        job
    });

    // Still serving; a real worker finishes the job exactly.
    assert_eq!(ok(perft(&url, &["health"])).trim(), "serving");
    c.worker_as("honest", "honest", &[]);
    ok(perft_as(&url, &admin, &["watch", &job]));
    let divide: serde_json::Value =
        serde_json::from_str(&ok(perft_as(&url, &admin, &["divide", &job, "--format", "json"]))).unwrap();
    let expected = GameKind::Reversi
        .fns()
        .published(8)
        .expect("published Reversi perft(8)");
    assert_eq!(divide["leaves"], expected.total.leaves.to_string());
    assert_eq!(divide["higher"], expected.total.higher.to_string());
    let local: serde_json::Value =
        serde_json::from_str(&ok(std::process::Command::new(crate::common::PERFT)
            .args([
                "run",
                "--game",
                "reversi",
                "--depth",
                "8",
                "--format",
                "json",
                "--threads",
                "1",
                "--no-hash",
            ])
            .output()
            .unwrap()))
        .unwrap();
    assert_eq!(
        crate::common::divide_lines(&divide),
        crate::common::divide_lines(&local)
    );
    // The coordinator process is alive: it never crashed.
    assert!(
        c.server().0.try_wait().unwrap().is_none(),
        "the coordinator still runs"
    );
}
