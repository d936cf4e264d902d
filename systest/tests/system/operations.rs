//! What operators read: Prometheus metrics of the coordinator and a worker,
//! and JSON logs for log collectors.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::jobs::submit_to;
use crate::common::{PERFT, Running, free_port};

fn scrape(port: u16) -> String {
    ureq::get(&format!("http://127.0.0.1:{port}/metrics"))
        .call()
        .unwrap()
        .into_body()
        .read_to_string()
        .unwrap()
}

/// Waits until the scrape of `port` has a line `name value` (exactly).
fn wait_for_line(port: u16, line: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let text = scrape(port);
        if text.lines().any(|l| l == line) {
            return text;
        }
        assert!(Instant::now() < deadline, "no line '{line}' in:\n{text}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn coordinator_and_worker_export_metrics_and_json_logs() {
    let dir = tempfile::tempdir().unwrap();
    let (coordinator_metrics, worker_metrics) = (free_port(), free_port());
    let mut server = Running(
        Command::new(PERFT)
            .args(["--log-format", "json", "serve", "--listen", "127.0.0.1:0"])
            .args(["--data-dir", dir.path().to_str().unwrap()])
            .args(["--metrics-listen", &format!("127.0.0.1:{coordinator_metrics}")])
            .env("RUST_LOG", "info")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut line = String::new();
    BufReader::new(server.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let url = format!("http://{}", line.trim().strip_prefix("listening on ").unwrap());
    let _worker = Running(
        Command::new(PERFT)
            .args(["worker", "--coordinator", &url, "--threads", "1", "--hash", "16M"])
            .args(["--name", "metrics-w1"])
            .args(["--metrics-listen", &format!("127.0.0.1:{worker_metrics}")])
            .env("RUST_LOG", "error")
            .spawn()
            .unwrap(),
    );
    wait_for_line(coordinator_metrics, "perft_workers_connected 1");
    let submitted = Command::new(PERFT)
        .args(submit_to(&url, "--game checkers --depth 10"))
        .output()
        .unwrap();
    let id = String::from_utf8(submitted.stdout).unwrap().trim().to_owned();
    assert!(
        Command::new(PERFT)
            .args(["watch", "--coordinator", &url, &id])
            .status()
            .unwrap()
            .success()
    );

    let coordinator = wait_for_line(coordinator_metrics, "perft_jobs{state=\"done\"} 1");
    for expected in [
        "perft_worker_threads 1",
        "perft_units{state=\"queued\"} 0",
        "perft_leaves_total 18391564",
    ] {
        assert!(
            coordinator.lines().any(|l| l == expected),
            "no '{expected}' in:\n{coordinator}"
        );
    }
    let worker = scrape(worker_metrics);
    let value = |name: &str| -> f64 {
        worker
            .lines()
            .find_map(|l| l.strip_prefix(name).and_then(|v| v.trim().parse().ok()))
            .unwrap_or_else(|| panic!("no {name} in:\n{worker}"))
    };
    let units_line = coordinator
        .lines()
        .find_map(|l| l.strip_prefix("perft_units{state=\"done\"} "))
        .unwrap();
    assert_eq!(
        value("perft_worker_units_total "),
        units_line.parse::<f64>().unwrap()
    );
    assert!(value("perft_worker_table_probes_total ") > 0.0);
    assert!(value("perft_worker_table_hits_total ") > 0.0);
    assert!((0.0..=1.0).contains(&value("perft_worker_table_fill ")));
    assert!(value("perft_worker_leaves_total ") > 0.0);

    // The coordinator shows each participant from its machines' heartbeats
    // (here the open coordinator's one, anonymous): the same units as the
    // worker's own count, and its table's hit ratio.
    let by_name = wait_for_line(
        coordinator_metrics,
        &format!("perft_workers_units_done{{participant=\"anonymous\"}} {units_line}"),
    );
    let gauge = |name: &str| -> f64 {
        let prefix = format!("{name}{{participant=\"anonymous\"}} ");
        by_name
            .lines()
            .find_map(|l| l.strip_prefix(&prefix).and_then(|v| v.parse().ok()))
            .unwrap_or_else(|| panic!("no {prefix} in:\n{by_name}"))
    };
    assert_eq!(gauge("perft_workers_threads"), 1.0);
    assert!(gauge("perft_workers_leaves_done") > 0.0);
    let ratio = gauge("perft_workers_table_hit_ratio");
    assert!(ratio > 0.0 && ratio <= 1.0, "{ratio}");
    assert!((0.0..=1.0).contains(&gauge("perft_workers_table_fill")));

    // Logs are one JSON object per line, with the level and the message.
    drop(_worker);
    let _ = server.0.kill();
    let _ = server.0.wait();
    let logs = BufReader::new(server.0.stderr.take().unwrap());
    let lines: Vec<serde_json::Value> = logs
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).expect("every log line is JSON"))
        .collect();
    assert!(
        lines
            .iter()
            .any(|l| l["level"] == "INFO" && l["fields"]["message"] == "job queued"),
        "{lines:?}"
    );
}

/// Server reflection, as grpcurl uses it: lists every service, and answers
/// only with the token when the coordinator has one.
#[test]
fn reflection_lists_the_services() {
    use tonic_reflection::pb::v1::ServerReflectionRequest;
    use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;

    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("token");
    std::fs::write(&token, "reflect-me").unwrap();
    let (_server, address) = crate::common::try_serve(
        "127.0.0.1:0",
        dir.path(),
        &["--token-file", token.to_str().unwrap()],
        "error",
    )
    .unwrap();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let list = |with_token: bool| {
        runtime.block_on(async {
            let channel = tonic::transport::Endpoint::from_shared(format!("http://{address}"))
                .unwrap()
                .connect()
                .await
                .unwrap();
            let mut client = ServerReflectionClient::new(channel);
            let ask = ServerReflectionRequest {
                host: String::new(),
                message_request: Some(MessageRequest::ListServices(String::new())),
            };
            let mut request = tonic::Request::new(tokio_stream::iter([ask]));
            if with_token {
                request
                    .metadata_mut()
                    .insert("authorization", "Bearer reflect-me".parse().unwrap());
            }
            let mut replies = client.server_reflection_info(request).await?.into_inner();
            let reply = replies.message().await?.expect("one answer");
            match reply.message_response {
                Some(MessageResponse::ListServicesResponse(list)) => {
                    Ok(list.service.into_iter().map(|s| s.name).collect::<Vec<_>>())
                }
                other => panic!("unexpected {other:?}"),
            }
        })
    };
    let services: Result<Vec<String>, tonic::Status> = list(true);
    let services = services.unwrap();
    for name in [
        "perft.v2.PerftService",
        "perft.v2.WorkerService",
        "grpc.health.v1.Health",
    ] {
        assert!(
            services.iter().any(|s| s == name),
            "{name} missing from {services:?}"
        );
    }
    let refused: Result<Vec<String>, tonic::Status> = list(false);
    assert_eq!(refused.unwrap_err().code(), tonic::Code::Unauthenticated);
}
