//! A coordinator nobody else can use: the shared token (right, wrong,
//! missing), TLS with a certificate made in the test, and the limits that
//! keep one request from exhausting the coordinator.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::{PERFT, Running, refused, try_serve};

fn serve(data: &Path, extra: &[&str]) -> (Running, String) {
    try_serve("127.0.0.1:0", data, extra, "error").expect("serve prints its address")
}

fn perft(args: &[&str]) -> Output {
    Command::new(PERFT)
        .args(args)
        .env_remove("PERFT_TOKEN")
        .env_remove("PERFT_COORDINATOR")
        .output()
        .unwrap()
}

#[test]
fn tls_and_token_guard_every_call() {
    let dir = tempfile::tempdir().unwrap();
    let cert =
        rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned(), "localhost".to_owned()]).unwrap();
    let (cert_pem, key_pem, token) = (
        dir.path().join("cert.pem"),
        dir.path().join("key.pem"),
        dir.path().join("token"),
    );
    std::fs::write(&cert_pem, cert.cert.pem()).unwrap();
    std::fs::write(&key_pem, cert.signing_key.serialize_pem()).unwrap();
    std::fs::write(&token, "s3cret-token-42\n").unwrap();
    let wrong = dir.path().join("wrong");
    std::fs::write(&wrong, "not-the-token").unwrap();
    let (cert_pem, key_pem, token, wrong) = (
        cert_pem.to_str().unwrap(),
        key_pem.to_str().unwrap(),
        token.to_str().unwrap(),
        wrong.to_str().unwrap(),
    );

    let (_server, address) = serve(
        &dir.path().join("data"),
        &[
            "--token-file",
            token,
            "--tls-cert",
            cert_pem,
            "--tls-key",
            key_pem,
        ],
    );
    let url = format!("https://{address}");
    let with = |args: &[&str], token_file: &str| {
        let mut all = args.to_vec();
        all.extend([
            "--coordinator",
            &url,
            "--tls-ca",
            cert_pem,
            "--token-file",
            token_file,
        ]);
        perft(&all)
    };

    // The right token over TLS: a worker joins and a job runs to its exact end.
    let _worker = Running(
        Command::new(PERFT)
            .args([
                "worker",
                "--coordinator",
                &url,
                "--tls-ca",
                cert_pem,
                "--token-file",
                token,
            ])
            .args(["--threads", "1", "--hash", "16M"])
            .env("RUST_LOG", "error")
            .spawn()
            .unwrap(),
    );
    let submitted = with(&["submit", "--game", "reversi", "--depth", "8"], token);
    assert!(
        submitted.status.success(),
        "{}",
        String::from_utf8_lossy(&submitted.stderr)
    );
    let id = String::from_utf8(submitted.stdout).unwrap().trim().to_owned();
    assert!(with(&["watch", &id], token).status.success());
    let status = String::from_utf8(with(&["status", &id], token).stdout).unwrap();
    assert!(status.contains("leaves so far: 390216\n"), "{status}");

    // A wrong token, or none: Unauthenticated, one line, exit 2.
    for output in [
        with(&["list"], wrong),
        perft(&["list", "--coordinator", &url, "--tls-ca", cert_pem]),
    ] {
        let stderr = refused(&output);
        assert!(stderr.contains("missing or wrong token"), "{stderr}");
    }
    // The token from the environment works too, and is never printed.
    let env_token = Command::new(PERFT)
        .args(["list", "--coordinator", &url, "--tls-ca", cert_pem])
        .env("PERFT_TOKEN", "s3cret-token-42")
        .output()
        .unwrap();
    assert!(env_token.status.success());
    assert!(!String::from_utf8_lossy(&env_token.stdout).contains("s3cret"));
    // Health answers without a token, for probes.
    let health = perft(&["health", "--coordinator", &url, "--tls-ca", cert_pem]);
    assert_eq!(String::from_utf8_lossy(&health.stdout), "serving\n");
    // Plain text against a TLS server fails; https without a CA is refused.
    let plain = perft(&[
        "list",
        "--coordinator",
        &format!("http://{address}"),
        "--token-file",
        token,
    ]);
    assert!(!plain.status.success());
    let no_ca = refused(&perft(&["list", "--coordinator", &url, "--token-file", token]));
    assert!(no_ca.contains("--tls-ca"), "{no_ca}");
}

#[test]
fn limits_refuse_oversized_requests() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, address) = serve(dir.path(), &["--max-units", "100"]);
    let url = format!("http://{address}");
    let too_many = refused(&perft(&[
        "submit",
        "--coordinator",
        &url,
        "--game",
        "checkers",
        "--depth",
        "8",
        "--split-depth",
        "5",
    ]));
    assert!(
        too_many.contains("the plan has more than 100 units at split depth 3: use a smaller split depth"),
        "{too_many}"
    );
    let too_deep = refused(&perft(&[
        "submit",
        "--coordinator",
        &url,
        "--game",
        "checkers",
        "--depth",
        "41",
    ]));
    assert!(
        too_deep.contains("depth 41 is above the checkers limit of 40"),
        "{too_deep}"
    );

    // A 5 MiB request is cut off at the message limit, before any work.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let status = runtime.block_on(async {
        let mut client = perft_proto::perft_service_client::PerftServiceClient::connect(url.clone())
            .await
            .unwrap();
        let huge = perft_proto::SubmitJobRequest {
            game: "reversi".to_owned(),
            position: "-".repeat(5 << 20),
            depth: 3,
            split_depth: 0,
            verify: false,
        };
        client.submit_job(huge).await.unwrap_err()
    });
    assert_eq!(status.code(), tonic::Code::OutOfRange, "{status:?}");
    assert!(
        status.message().contains("message length too large"),
        "{status:?}"
    );

    // A worker of another protocol version is refused with the reason.
    let refused = runtime.block_on(async {
        let mut client = perft_proto::worker_service_client::WorkerServiceClient::connect(url.clone())
            .await
            .unwrap();
        let register = perft_proto::RegisterRequest {
            name: "old".to_owned(),
            threads: 1,
            table_bytes: 0,
            protocol_version: perft_proto::PROTOCOL_VERSION + 1,
            ..Default::default()
        };
        client.register(register).await.unwrap_err()
    });
    assert_eq!(refused.code(), tonic::Code::FailedPrecondition);
    assert!(
        refused.message().contains("run the same release on both"),
        "{refused:?}"
    );
}
