//! A hostile client against a real coordinator process: every RPC gets
//! empty, huge, non-ASCII, control-character, maximal, unknown, forged,
//! missing, absurd and replayed values. Each is refused with a short, clean
//! message (or harmlessly accepted); afterwards the coordinator still
//! serves, and a real job counted by a real worker is exact.

mod common;

use common::{ok, perft, serve, worker};
use perft_core::{GameKind, Leaves, published::published};
use perft_proto as pb;
use perft_proto::perft_service_client::PerftServiceClient;
use perft_proto::worker_service_client::WorkerServiceClient;
use tonic::transport::Channel;
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

async fn register(workers: &mut WorkerServiceClient<Channel>, name: &str) -> String {
    workers
        .register(pb::RegisterRequest {
            name: name.to_owned(),
            threads: 1,
            protocol_version: pb::PROTOCOL_VERSION,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .worker_id
}

fn result(lease: &pb::UnitLease, leaves: Option<pb::Leaves>, tag: Vec<u8>) -> pb::UnitResult {
    pb::UnitResult {
        job_id: lease.job_id.clone(),
        unit_id: lease.unit_id,
        epoch: lease.epoch,
        leaves,
        seconds: 0.0,
        lease_tag: tag,
    }
}

fn count(n: u128, higher: u128) -> Option<pb::Leaves> {
    Some(Leaves { leaves: n, higher }.into())
}

async fn report(
    workers: &mut WorkerServiceClient<Channel>,
    worker_id: &str,
    results: Vec<pb::UnitResult>,
) -> Result<pb::ReportResultsResponse, Status> {
    workers
        .report_results(pb::ReportResultsRequest {
            worker_id: worker_id.to_owned(),
            results,
            released: Vec::new(),
        })
        .await
        .map(tonic::Response::into_inner)
}

#[test]
fn hostile_requests_are_refused_and_a_real_job_stays_exact() {
    let data = tempfile::tempdir().unwrap();
    let (mut server, url) = serve(data.path(), &["--lease-seconds", "2", "--max-units", "20000"]);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let job = runtime.block_on(async {
        let mut clients = PerftServiceClient::connect(url.clone()).await.unwrap();
        let mut workers = WorkerServiceClient::connect(url.clone()).await.unwrap();
        let nf_or_invalid = [Code::NotFound, Code::InvalidArgument];

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
            let submit = |game: &str, position: &str, depth, split_depth| pb::SubmitJobRequest {
                game: game.to_owned(),
                position: position.to_owned(),
                depth,
                split_depth,
                verify: false,
            };
            refused(
                clients.submit_job(submit(&text, "", 5, 0)).await,
                &[Code::InvalidArgument],
            );
            if !text.trim().is_empty() {
                refused(
                    clients.submit_job(submit("reversi", &text, 5, 0)).await,
                    &[Code::InvalidArgument],
                );
                refused(
                    clients.submit_job(submit("checkers", &text, 5, 0)).await,
                    &[Code::InvalidArgument],
                );
            }
            // Worker calls from sessions that do not exist.
            let heartbeat = workers
                .heartbeat(pb::HeartbeatRequest {
                    worker_id: id.clone(),
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
            let register = pb::RegisterRequest {
                name: text.clone(),
                threads: u32::MAX,
                protocol_version: pb::PROTOCOL_VERSION,
                only_job: text.clone(),
                ..Default::default()
            };
            refused(workers.register(register).await, &nf_or_invalid);
        }
        for (depth, split) in [(0, 0), (u32::MAX, 0), (41, 0), (10, 10), (10, u32::MAX)] {
            let request = pb::SubmitJobRequest {
                game: "checkers".to_owned(),
                depth,
                split_depth: split,
                ..Default::default()
            };
            refused(clients.submit_job(request).await, &[Code::InvalidArgument]);
        }
        let old = pb::RegisterRequest {
            name: "old".to_owned(),
            protocol_version: u32::MAX,
            ..Default::default()
        };
        refused(workers.register(old).await, &[Code::FailedPrecondition]);

        // A real job, and a registered hostile worker inside it.
        let depth = 8;
        let job = clients
            .submit_job(pb::SubmitJobRequest {
                game: "reversi".to_owned(),
                depth,
                split_depth: 4,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner()
            .job_id;
        // A worker claiming 2^32-1 threads is taken to have 1024; the
        // automatic split it asks for stays within --max-units.
        let greedy = pb::RegisterRequest {
            name: "greedy".to_owned(),
            threads: u32::MAX,
            protocol_version: pb::PROTOCOL_VERSION,
            ..Default::default()
        };
        workers.register(greedy).await.unwrap();
        let huge = clients
            .submit_job(pb::SubmitJobRequest {
                game: "checkers".to_owned(),
                depth: 30,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner()
            .job_id;
        let planned = clients
            .cancel_job(pb::CancelJobRequest { job_id: huge })
            .await
            .unwrap()
            .into_inner();
        assert!(
            (1..=20_000).contains(&planned.units_total),
            "{} units",
            planned.units_total
        );
        let liar = register(&mut workers, "liar").await;
        let bystander = register(&mut workers, "bystander").await;
        let leases = workers
            .lease_units(pb::LeaseUnitsRequest {
                worker_id: liar.clone(),
                max_units: u32::MAX,
            })
            .await
            .unwrap()
            .into_inner()
            .units;
        assert!(leases.len() > 10, "the liar holds units: {}", leases.len());
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
                report(&mut workers, &liar, vec![bad]).await,
                &[Code::InvalidArgument],
            );
        }
        // Forged tags, another machine's lease, another unit's tag: counted
        // as refused, never as results.
        let forged = vec![
            result(lease, count(1000, 0), Vec::new()),
            result(lease, count(1000, 0), vec![0; 16]),
            result(lease, count(1000, 0), vec![7; 1 << 16]),
            result(&leases[1], count(1000, 0), tag.clone()),
            pb::UnitResult {
                epoch: lease.epoch + 1,
                ..result(lease, count(1000, 0), tag.clone())
            },
            pb::UnitResult {
                job_id: "x".repeat(1 << 16),
                ..result(lease, count(1000, 0), tag.clone())
            },
        ];
        let reply = report(&mut workers, &liar, forged.clone()).await.unwrap();
        assert_eq!((reply.accepted, reply.refused), (0, forged.len() as u32));
        let stolen = report(
            &mut workers,
            &bystander,
            vec![result(lease, count(1000, 0), tag.clone())],
        )
        .await
        .unwrap();
        assert_eq!(
            (stolen.accepted, stolen.refused),
            (0, 1),
            "a tag is for its machine only"
        );
        let released = workers
            .report_results(pb::ReportResultsRequest {
                worker_id: bystander.clone(),
                results: Vec::new(),
                released: vec![pb::UnitRef {
                    job_id: lease.job_id.clone(),
                    unit_id: lease.unit_id,
                    epoch: lease.epoch,
                    lease_tag: vec![1; 16],
                }],
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(released.refused, 1);
        let view = clients
            .get_job(pb::GetJobRequest { job_id: job.clone() })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(view.units_done, 0, "nothing forged was counted");
        // The liar's leases run out (no heartbeat); the real worker counts.
        job
    });

    // Still serving; a real worker finishes the job exactly.
    assert_eq!(ok(perft(&url, &["health"])).trim(), "serving");
    let _worker = worker(&url, "honest", &[]);
    ok(perft(&url, &["watch", &job]));
    let divide: serde_json::Value =
        serde_json::from_str(&ok(perft(&url, &["divide", &job, "--format", "json"]))).unwrap();
    let expected = published(GameKind::Reversi, 8).expect("published Reversi perft(8)");
    assert_eq!(divide["leaves"], expected.total.leaves.to_string());
    assert_eq!(divide["higher"], expected.total.higher.to_string());
    let local: serde_json::Value = serde_json::from_str(&ok(std::process::Command::new(common::PERFT)
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
    assert_eq!(common::divide_lines(&divide), common::divide_lines(&local));
    // The coordinator process is alive: it never crashed.
    assert!(
        server.0.try_wait().unwrap().is_none(),
        "the coordinator still runs"
    );
}
