//! The web dashboard's security, end to end: its token and session cookie,
//! TLS, and hostile URLs and addresses, against real `perft serve`
//! processes on loopback.

use std::process::Command;

use crate::common::cluster::Cluster;
use crate::common::http::{agent, get, json, tls_agent};

/// Asserts a refusal: the status and a single line naming the problem.
fn refused(http: &ureq::Agent, url: &str, status: u16, words: &str) {
    let (got, body) = get(http, url, &[]);
    assert_eq!(got, status, "{url}: {body}");
    assert_eq!(body.lines().count(), 1, "{url}: {body}");
    assert!(body.contains(words), "{url}: {body}");
}

#[test]
fn hostile_urls_get_one_line_refusals() {
    let c = Cluster::builder().dashboard().start();
    let dashboard = c.dashboard.clone().unwrap();
    let http = agent();
    refused(
        &http,
        &format!("{dashboard}/api/jobs/nosuchjob"),
        404,
        "no job 'nosuchjob'",
    );
    refused(
        &http,
        &format!("{dashboard}/jobs/nosuchjob"),
        404,
        "no job 'nosuchjob'",
    );
    refused(
        &http,
        &format!("{dashboard}/api/jobs/a.b"),
        400,
        "'a.b' is not a job id",
    );
    refused(
        &http,
        &format!("{dashboard}/jobs/%0a%1b"),
        400,
        "'\\n\\u{1b}' is not a job id",
    );
    refused(&http, &format!("{dashboard}/jobs/%ff"), 400, "is not a job id");
    let long = "x".repeat(65);
    refused(
        &http,
        &format!("{dashboard}/api/jobs/{long}"),
        400,
        "is not a job id",
    );
    refused(&http, &format!("{dashboard}/api/jobs?start=-1"), 400, "bad query");
    refused(
        &http,
        &format!("{dashboard}/api/jobs?limit=lots"),
        400,
        "bad query",
    );
    refused(&http, &format!("{dashboard}/nowhere"), 404, "no page '/nowhere'");
    let query = "a".repeat(3000);
    refused(
        &http,
        &format!("{dashboard}/api/jobs?{query}"),
        414,
        "at most 2048",
    );
    // Past the request-head limit hyper itself refuses, before routing.
    let (status, _) = get(&http, &format!("{dashboard}/?{}", "a".repeat(40_000)), &[]);
    assert_eq!(status, 431);
    // Read-only: anything but GET and HEAD is refused.
    let mut response = http.post(&format!("{dashboard}/api/jobs")).send("{}").unwrap();
    assert_eq!(response.status().as_u16(), 405);
    let body = response.body_mut().read_to_string().unwrap();
    assert!(body.contains("read-only"), "{body}");
    // An empty page of a large start is an answer, not an error. (A new
    // client: the server closes a connection whose request body it did not
    // read.)
    let (status, body) = get(&agent(), &format!("{dashboard}/api/jobs?start=99999999999"), &[]);
    assert_eq!(
        (status, json(&body)["jobs"].clone()),
        (200, serde_json::json!([]))
    );
}

#[test]
fn a_bad_dashboard_address_is_refused_before_anything_is_announced() {
    let dir = tempfile::tempdir().unwrap();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let taken = taken.local_addr().unwrap().to_string();
    for (address, words) in [
        (
            "nonsense\u{1b}",
            "cannot serve the dashboard on 'nonsense\\u{1b}'",
        ),
        (taken.as_str(), "cannot serve the dashboard on '127.0.0.1:"),
    ] {
        let output = Command::new(crate::common::PERFT)
            .args(["serve", "--listen", "127.0.0.1:0", "--http-listen", address])
            .arg("--data-dir")
            .arg(dir.path().join("data"))
            .env_remove("PERFT_TOKEN")
            .output()
            .unwrap();
        let stderr = crate::common::refused(&output);
        assert!(stderr.contains(words), "{stderr}");
        assert_eq!(String::from_utf8_lossy(&output.stdout), "", "nothing announced");
    }
}

/// The `Set-Cookie` header of a response, and its `Location`.
fn redirect(http: &ureq::Agent, url: &str) -> (u16, String, String) {
    let response = http.get(url).call().unwrap();
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
            .unwrap_or_default()
    };
    (
        response.status().as_u16(),
        header("set-cookie"),
        header("location"),
    )
}

#[test]
fn the_token_guards_every_page_and_a_first_visit_trades_it_for_a_cookie() {
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "dash-s3cret-77\n").unwrap();
    let c = Cluster::builder()
        .dashboard()
        .serve_args(&["--token-file", token_file.to_str().unwrap()])
        .start();
    let dashboard = c.dashboard.clone().unwrap();
    let http = agent();
    for path in [
        "/",
        "/workers",
        "/participants",
        "/jobs/abc",
        "/api/jobs",
        "/api/workers",
        "/api/participants",
        "/assets/dashboard.js",
        "/x",
    ] {
        let (status, body) = get(&http, &format!("{dashboard}{path}"), &[]);
        assert_eq!(status, 401, "{path}: {body}");
        assert!(body.contains("needs a credential"), "{body}");
    }
    let bearer = [("Authorization", "Bearer dash-s3cret-77")];
    let (status, body) = get(&http, &format!("{dashboard}/api/jobs"), &bearer);
    assert_eq!(
        (status, json(&body)["jobs"].clone()),
        (200, serde_json::json!([]))
    );
    let wrong = [("Authorization", "Bearer dash-s3cret-78")];
    assert_eq!(get(&http, &format!("{dashboard}/api/jobs"), &wrong).0, 401);
    assert_eq!(get(&http, &format!("{dashboard}/workers?token=nope"), &[]).0, 401);

    // A first visit with ?token= gets a session cookie and the URL without it.
    let (status, cookie, location) =
        redirect(&http, &format!("{dashboard}/workers?token=dash-s3cret-77&x=1"));
    assert_eq!(status, 303);
    assert_eq!(location, "/workers?x=1");
    assert!(cookie.starts_with("perft_session="), "{cookie}");
    for attribute in ["HttpOnly", "SameSite=Lax", "Path=/"] {
        assert!(cookie.contains(attribute), "{cookie}");
    }
    assert!(
        !cookie.contains("dash-s3cret"),
        "the cookie holds a session key, not the token"
    );
    assert!(!cookie.contains("Secure"), "plain HTTP: {cookie}");
    let session = cookie.split(';').next().unwrap().to_owned();
    assert_eq!(session.len(), "perft_session=".len() + 64, "{session}");
    let (status, body) = get(
        &http,
        &format!("{dashboard}/api/workers"),
        &[("Cookie", &session)],
    );
    assert_eq!(
        (status, json(&body)["workers"].clone()),
        (200, serde_json::json!([]))
    );
    let forged = format!("perft_session={}", "0".repeat(64));
    assert_eq!(
        get(&http, &format!("{dashboard}/api/workers"), &[("Cookie", &forged)]).0,
        401
    );

    // The redirect never leaves the dashboard.
    let (status, _, location) = redirect(&http, &format!("{dashboard}//evil.example/?token=dash-s3cret-77"));
    assert_eq!((status, location.as_str()), (303, "/"));
    // Browsers read "/\\host" as "//host"; URL parsers would rewrite it, so
    // the request goes out raw.
    let address = dashboard.trim_start_matches("http://");
    let mut raw = std::net::TcpStream::connect(address).unwrap();
    std::io::Write::write_all(
        &mut raw,
        b"GET /\\evil.example/?token=dash-s3cret-77 HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    let mut answer = String::new();
    std::io::Read::read_to_string(&mut raw, &mut answer).unwrap();
    assert!(answer.starts_with("HTTP/1.1 303"), "{answer}");
    assert!(
        answer.to_ascii_lowercase().contains("\r\nlocation: /\r\n"),
        "{answer}"
    );
}

#[test]
fn with_tls_the_dashboard_speaks_only_https() {
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "tls-token-9").unwrap();
    let c = Cluster::builder()
        .tls()
        .dashboard()
        .serve_args(&["--token-file", token_file.to_str().unwrap()])
        .start();
    let (dashboard, ca) = (c.dashboard.clone().unwrap(), c.tls().ca_pem.clone());
    assert!(dashboard.starts_with("https://127.0.0.1:"), "{dashboard}");
    let https = tls_agent(ca.as_bytes());
    let (status, body) = get(
        &https,
        &format!("{dashboard}/api/jobs"),
        &[("Authorization", "Bearer tls-token-9")],
    );
    assert_eq!(status, 200, "{body}");
    assert_eq!(get(&https, &format!("{dashboard}/api/jobs"), &[]).0, 401);
    let (status, cookie, _) = redirect(&https, &format!("{dashboard}/?token=tls-token-9"));
    assert_eq!(status, 303);
    assert!(cookie.contains("Secure"), "{cookie}");

    // Plain HTTP to the TLS port gets no answer.
    let plain = dashboard.replacen("https://", "http://", 1);
    assert!(agent().get(&format!("{plain}/api/jobs")).call().is_err());
    // A client that does not trust the certificate is refused too.
    assert!(agent().get(&format!("{dashboard}/api/jobs")).call().is_err());
}

/// Seconds until a dashboard started with `extra` closes a connection that
/// sent half a request head and then nothing (a slow-loris).
fn slow_loris_closed_after(extra: &[&str]) -> u64 {
    use std::io::{Read, Write};
    let c = Cluster::builder().dashboard().serve_args(extra).start();
    let dashboard = c.dashboard.clone().unwrap();
    let address = dashboard.strip_prefix("http://").unwrap();
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n").unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    let started = std::time::Instant::now();
    let mut buffer = [0u8; 256];
    let read = stream.read(&mut buffer).expect("closed, not timed out");
    assert_eq!(read, 0, "closed without an answer");
    started.elapsed().as_secs()
}

#[test]
fn a_connection_that_never_finishes_its_request_is_closed() {
    // Half a head is no request: the first-request timeout (5 s here)
    // closes it; given longer, the 10 s head timeout does.
    let (first_request, head) = std::thread::scope(|scope| {
        let first_request = scope.spawn(|| slow_loris_closed_after(&["--first-request-seconds", "5"]));
        let head = scope.spawn(|| slow_loris_closed_after(&["--first-request-seconds", "30"]));
        (first_request.join().unwrap(), head.join().unwrap())
    });
    assert!(
        (4..=8).contains(&first_request),
        "closed after {first_request} s, not the 5 s first-request timeout"
    );
    assert!(
        (9..=20).contains(&head),
        "closed after {head} s, not the 10 s head timeout"
    );
}
