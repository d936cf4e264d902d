//! A coordinator nobody else can use: the shared token (right, wrong,
//! missing), TLS with a certificate made in the test, the limits that
//! keep one request from exhausting the coordinator, and an open
//! coordinator that closes for good once a participant is added.

use std::path::Path;
use std::process::{Command, Output};

use crate::common::cluster::Cluster;
use crate::common::jobs::submit_to;
use crate::common::{PERFT, Running, refused, try_serve};
use perft_proto as pb;
use perft_proto::perft_service_client::PerftServiceClient;
use perft_proto::worker_service_client::WorkerServiceClient;
use tonic::codegen::http;
use tonic::transport::Channel;

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
        assert!(stderr.contains("credential"), "{stderr}");
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
    let c = Cluster::start(&["--max-units", "100"]);
    let url = c.url.clone();
    let too_many = refused(&perft(&submit_to(
        &url,
        "--game checkers --depth 8 --split-depth 5",
    )));
    assert!(
        too_many.contains("the plan has more than 100 units at split depth 3: use a smaller split depth"),
        "{too_many}"
    );
    let too_deep = refused(&perft(&submit_to(&url, "--game checkers --depth 41")));
    assert!(
        too_deep.contains("depth 41 is above the checkers limit of 40"),
        "{too_deep}"
    );

    // A 5 MiB request is cut off at the message limit, before any work.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let status = runtime.block_on(async {
        let mut client = crate::common::perft_client(&url).await;
        let huge = pb::SubmitJobRequest {
            game: pb::Game::Reversi.into(),
            position: "-".repeat(5 << 20),
            depth: 3,
            split_depth: 0,
            verify: false,
            convention: 0,
            units: Vec::new(),
            stats: false,
        };
        client.submit_job(huge).await.unwrap_err()
    });
    assert_eq!(status.code(), tonic::Code::OutOfRange, "{status:?}");
    assert!(
        status.message().contains("message length too large"),
        "{status:?}"
    );
}

/// Sets the `perft-protocol` header to a value, or leaves it out.
#[derive(Clone)]
struct Version(Option<&'static str>);

impl tonic::service::Interceptor for Version {
    fn call(&mut self, mut request: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(version) = self.0 {
            request
                .metadata_mut()
                .insert(pb::PROTOCOL_HEADER, version.parse().unwrap());
        }
        Ok(request)
    }
}

/// A channel whose calls go to the retired `perft.v1` services: what a
/// client of the previous release sends.
#[derive(Clone)]
struct ToV1(Channel);

impl tonic::codegen::Service<http::Request<tonic::body::Body>> for ToV1 {
    type Response = <Channel as tonic::codegen::Service<http::Request<tonic::body::Body>>>::Response;
    type Error = <Channel as tonic::codegen::Service<http::Request<tonic::body::Body>>>::Error;
    type Future = <Channel as tonic::codegen::Service<http::Request<tonic::body::Body>>>::Future;

    fn poll_ready(&mut self, cx: &mut std::task::Context<'_>) -> std::task::Poll<Result<(), Self::Error>> {
        self.0.poll_ready(cx)
    }

    fn call(&mut self, mut request: http::Request<tonic::body::Body>) -> Self::Future {
        let path = request.uri().path().replacen("/perft.v2.", "/perft.v1.", 1);
        assert!(path.starts_with("/perft.v1."), "{path}");
        *request.uri_mut() = http::Uri::builder().path_and_query(path).build().unwrap();
        self.0.call(request)
    }
}

/// FAILED_PRECONDITION naming the protocol the coordinator speaks.
fn wrong_protocol(status: &tonic::Status) {
    assert_eq!(status.code(), tonic::Code::FailedPrecondition, "{status:?}");
    assert!(status.message().contains("perft.v2 protocol 5"), "{status:?}");
    assert!(
        status
            .message()
            .contains("use a perft release of the same protocol"),
        "{status:?}"
    );
    assert!(status.message().len() < 400, "{status:?}");
}

#[test]
fn callers_of_another_protocol_are_refused_with_the_version() {
    let c = Cluster::start(&[]);
    let url = c.url.clone();
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let channel = crate::common::client_config(&url)
            .endpoint()
            .unwrap()
            .connect()
            .await
            .unwrap();
        let submit = || pb::SubmitJobRequest {
            game: pb::Game::Reversi.into(),
            depth: 3,
            ..Default::default()
        };
        let register = || pb::RegisterRequest {
            name: "old".to_owned(),
            threads: 1,
            ..Default::default()
        };
        // No header (a perft.v1 client or a bare gRPC tool), or another
        // version: refused on both services.
        for version in [None, Some("3"), Some("4"), Some("6"), Some("5.0"), Some("")] {
            let mut clients = PerftServiceClient::with_interceptor(channel.clone(), Version(version));
            let mut workers = WorkerServiceClient::with_interceptor(channel.clone(), Version(version));
            wrong_protocol(&clients.submit_job(submit()).await.unwrap_err());
            wrong_protocol(
                &clients
                    .list_jobs(pb::ListJobsRequest::default())
                    .await
                    .unwrap_err(),
            );
            wrong_protocol(&workers.register(register()).await.unwrap_err());
            if version.is_none() {
                let status = workers.register(register()).await.unwrap_err();
                assert!(status.message().contains("no protocol version"), "{status:?}");
            }
        }
        // The retired perft.v1 services, with or without the header.
        for version in [None, Some("5")] {
            let mut clients = PerftServiceClient::with_interceptor(ToV1(channel.clone()), Version(version));
            let mut workers = WorkerServiceClient::with_interceptor(ToV1(channel.clone()), Version(version));
            let status = clients.submit_job(submit()).await.unwrap_err();
            wrong_protocol(&status);
            assert!(status.message().contains("perft.v1"), "{status:?}");
            wrong_protocol(&clients.get_job(pb::GetJobRequest::default()).await.unwrap_err());
            wrong_protocol(&workers.register(register()).await.unwrap_err());
        }
        // The header of this release: served.
        let mut clients = PerftServiceClient::with_interceptor(channel.clone(), Version(Some("5")));
        let job = clients.submit_job(submit()).await.unwrap().into_inner().job_id;
        let mut clients = crate::common::perft_client(&url).await;
        let view = clients
            .get_job(pb::GetJobRequest { job_id: job })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(view.game, i32::from(pb::Game::Reversi));
        let mut workers = crate::common::worker_client(&url).await;
        workers.register(register()).await.unwrap();
    });
    // The CLI speaks this release's protocol.
    let listed = perft(&["list", "--coordinator", &url]);
    assert!(
        listed.status.success(),
        "{}",
        String::from_utf8_lossy(&listed.stderr)
    );
}

/// `perft ARGS` against `url` with no credential at all.
fn anonymous(url: &str, args: &[&str]) -> Output {
    let mut all = args.to_vec();
    all.extend(["--coordinator", url]);
    perft(&all)
}

/// Asserts a call with no credential is refused as unauthenticated: one
/// line, exit 2, nothing on stdout.
fn refused_unauthenticated(output: &Output) {
    let stderr = refused(output);
    assert!(stderr.contains("missing credential"), "{stderr}");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "", "nothing handed out");
}

#[test]
fn an_open_coordinator_closes_for_good_once_a_participant_is_added() {
    use crate::common::http::{agent, get};
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let secret = |name: &str| dir.path().join(format!("{name}.secret"));
    let (root, bob, token) = (secret("root"), secret("bob"), dir.path().join("token"));
    std::fs::write(&token, "operator-s3cret-1\n").unwrap();
    let http = agent();

    // Started open: no credential is the admin `anonymous`, which adds root.
    let (server, address, dashboard) = crate::common::serve_with_dashboard(&data, &[]);
    let url = format!("http://{address}");
    assert_eq!(get(&http, &format!("{dashboard}/api/jobs"), &[]).0, 200);
    crate::common::ok(anonymous(
        &url,
        &[
            "participant",
            "add",
            "root",
            "--role",
            "admin",
            "--secret-file",
            root.to_str().unwrap(),
        ],
    ));
    // Closed at once: no credential is refused on gRPC and the dashboard.
    refused_unauthenticated(&anonymous(&url, &["list"]));
    assert_eq!(get(&http, &format!("{dashboard}/api/jobs"), &[]).0, 401);
    // Root adds bob and revokes him.
    crate::common::ok(crate::common::perft_as(
        &url,
        &root,
        &[
            "participant",
            "add",
            "bob",
            "--secret-file",
            bob.to_str().unwrap(),
        ],
    ));
    crate::common::ok(crate::common::perft_as(
        &url,
        &root,
        &["participant", "revoke", "bob"],
    ));
    drop(server);

    // With the shared token, the operator revokes root, the last participant.
    let (server, url) = crate::common::serve(&data, &["--token-file", token.to_str().unwrap()]);
    crate::common::ok(crate::common::perft_as(
        &url,
        &token,
        &["participant", "revoke", "root"],
    ));
    drop(server);
    let listed = crate::common::ok(perft(&[
        "participant",
        "list",
        "--data-dir",
        data.to_str().unwrap(),
        "--format",
        "json",
    ]));
    let listed: serde_json::Value = serde_json::from_str(&listed).unwrap();
    let revoked: Vec<_> = listed
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["name"].as_str().unwrap(), p["revoked"].as_bool().unwrap()))
        .collect();
    assert_eq!(revoked, [("bob", true), ("root", true)]);

    // Started without a token again, every participant revoked: nothing is
    // open. No credential reads nothing, adds nobody, sees no dashboard.
    let (_server, address, dashboard) = crate::common::serve_with_dashboard(&data, &[]);
    let url = format!("http://{address}");
    refused_unauthenticated(&anonymous(&url, &["list"]));
    refused_unauthenticated(&anonymous(
        &url,
        &["participant", "add", "mallory", "--role", "admin"],
    ));
    for path in ["/", "/api/jobs", "/api/workers"] {
        let (status, body) = get(&http, &format!("{dashboard}{path}"), &[]);
        assert_eq!(status, 401, "{path}: {body}");
        assert!(body.contains("needs a credential"), "{path}: {body}");
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let config = crate::common::client_config(&url);
        let channel = config.endpoint().unwrap().connect().await.unwrap();
        let mut participants = pb::participant_service_client::ParticipantServiceClient::with_interceptor(
            channel,
            config.interceptor(),
        );
        let status = participants
            .add_participant(pb::AddParticipantRequest {
                name: "mallory".to_owned(),
                role: pb::Role::Admin.into(),
            })
            .await
            .unwrap_err();
        assert_eq!(status.code(), tonic::Code::Unauthenticated, "{status:?}");
        let status = crate::common::perft_client(&url)
            .await
            .list_jobs(pb::ListJobsRequest::default())
            .await
            .unwrap_err();
        assert_eq!(status.code(), tonic::Code::Unauthenticated, "{status:?}");
    });
    // The revoked secrets open nothing either.
    for secret in [&root, &bob] {
        let stderr = refused(&crate::common::perft_as(&url, secret, &["list"]));
        assert!(stderr.contains("revoked"), "{stderr}");
    }
}
