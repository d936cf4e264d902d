//! The web dashboard of `perft serve --http-listen`, end to end: a real
//! coordinator and worker on loopback, real HTTP(S) clients, and a real
//! headless Chromium reading the job page's divide table.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{Running, divide_lines, ok, perft, serve_with_dashboard, worker};

/// An HTTP client that shows every status (no error for 4xx) and follows
/// no redirects, so the tests see exactly what the dashboard answers.
fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into()
}

/// [`agent`] trusting only the PEM certificate `ca`.
fn tls_agent(ca: &[u8]) -> ureq::Agent {
    let cert = ureq::tls::Certificate::from_pem(ca).unwrap();
    let tls = ureq::tls::TlsConfig::builder()
        .root_certs(ureq::tls::RootCerts::Specific(Arc::new(vec![cert])))
        .build();
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .tls_config(tls)
        .build()
        .into()
}

/// The status, a header's value (if asked) and the body of a GET.
fn get(agent: &ureq::Agent, url: &str, headers: &[(&str, &str)]) -> (u16, String) {
    let mut request = agent.get(url);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let mut response = request.call().unwrap_or_else(|e| panic!("GET {url}: {e}"));
    let status = response.status().as_u16();
    (status, response.body_mut().read_to_string().unwrap())
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// Submits a job to the coordinator at `grpc` and waits until it is done.
fn run_job(grpc: &str, args: &[&str]) -> String {
    let mut submit = vec!["submit"];
    submit.extend(args);
    let id = ok(perft(grpc, &submit)).trim().to_owned();
    let watched = ok(perft(grpc, &["watch", &id]));
    assert!(watched.starts_with(&format!("job {id} done: ")), "{watched}");
    id
}

/// The divide lines of `perft divide ID` as (move, leaves), sorted.
fn cli_divide(grpc: &str, id: &str) -> Vec<(String, String)> {
    divide_lines(&json(&ok(perft(grpc, &["divide", id, "--format", "json"]))))
}

#[test]
fn api_reports_jobs_divides_and_workers_and_pages_are_embedded() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, address, dashboard) = serve_with_dashboard(&dir.path().join("data"), &[]);
    assert!(dashboard.starts_with("http://127.0.0.1:"), "{dashboard}");
    let grpc = format!("http://{address}");
    let _worker = worker(&grpc, "w1", &[]);
    let id = run_job(&grpc, &["--game", "checkers", "--depth", "8"]);
    let http = agent();

    let (status, body) = get(&http, &format!("{dashboard}/api/jobs"), &[]);
    assert_eq!(status, 200, "{body}");
    let jobs = json(&body);
    assert_eq!(jobs["next"], serde_json::Value::Null);
    let job = &jobs["jobs"][0];
    assert_eq!(job["id"], id.as_str());
    assert_eq!(job["state"], "done");
    assert_eq!(job["game"], "checkers");
    assert_eq!(job["depth"], 8);
    assert_eq!(job["leaves_done"], "845931");
    assert_eq!(job["work_done"], 1.0);
    assert_eq!(job["eta_seconds"], 0.0);

    let (status, body) = get(&http, &format!("{dashboard}/api/jobs/{id}"), &[]);
    assert_eq!(status, 200, "{body}");
    let detail = json(&body);
    assert_eq!(detail["total"]["leaves"], "845931");
    assert_eq!(detail["published_total"]["leaves"], "845931");
    assert_eq!(detail["total_matches"], true);
    let mut lines: Vec<(String, String)> = detail["divide"]
        .as_array()
        .unwrap()
        .iter()
        .map(|line| {
            assert_eq!(line["units_done"], line["units_total"], "{line}");
            (
                line["move"].as_str().unwrap().to_owned(),
                line["leaves"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    lines.sort();
    assert_eq!(lines.len(), 7);
    assert_eq!(lines, cli_divide(&grpc, &id));
    assert_eq!(detail["disagreements"], serde_json::json!([]));

    let (status, body) = get(&http, &format!("{dashboard}/api/workers"), &[]);
    assert_eq!(status, 200, "{body}");
    let workers = json(&body);
    let w1 = &workers["workers"][0];
    assert_eq!(w1["name"], "w1");
    assert_eq!(w1["threads"], 1);
    assert_eq!(w1["status"], "active");

    // The pages and their assets come from the binary.
    for (path, kind, needle) in [
        ("/", "text/html", "data-page=\"jobs\""),
        (&format!("/jobs/{id}") as &str, "text/html", "id=\"divide\""),
        ("/workers", "text/html", "data-page=\"workers\""),
        ("/assets/dashboard.js", "text/javascript", "POLL_MS"),
        ("/assets/dashboard.css", "text/css", ".progress"),
    ] {
        let mut response = http.get(&format!("{dashboard}{path}")).call().unwrap();
        assert_eq!(response.status().as_u16(), 200, "{path}");
        let content_type = response.headers()["content-type"].to_str().unwrap().to_owned();
        assert!(content_type.starts_with(kind), "{path}: {content_type}");
        let csp = response.headers()["content-security-policy"]
            .to_str()
            .unwrap()
            .to_owned();
        assert!(csp.contains("default-src 'none'"), "{csp}");
        assert!(
            response.body_mut().read_to_string().unwrap().contains(needle),
            "{path}"
        );
    }
}

#[test]
fn a_running_job_shows_its_workers_rate_chart_and_eta_live() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, address, dashboard) = serve_with_dashboard(&dir.path().join("data"), &[]);
    let grpc = format!("http://{address}");
    let _worker = worker(&grpc, "live-w1", &[]);
    let submitted = ok(perft(&grpc, &["submit", "--game", "reversi", "--depth", "13"]));
    let id = submitted.trim();
    let http = agent();
    let (mut saw_worker, mut saw_chart, mut saw_eta) = (false, false, false);
    let deadline = Instant::now() + Duration::from_secs(300);
    let detail = loop {
        let (status, body) = get(&http, &format!("{dashboard}/api/jobs/{id}"), &[]);
        assert_eq!(status, 200, "{body}");
        let detail = json(&body);
        if detail["job"]["state"] == "done" {
            break detail;
        }
        if detail["job"]["state"] == "running" {
            saw_worker |= detail["workers"][0]["name"] == "live-w1";
            saw_chart |= !detail["chart"].as_array().unwrap().is_empty();
            saw_eta |= detail["job"]["eta_seconds"].as_f64().is_some_and(|s| s > 0.0);
        }
        assert!(Instant::now() < deadline, "not done in 300 s: {detail}");
        std::thread::sleep(Duration::from_millis(250));
    };
    assert!(saw_worker, "the worker serving the job was shown");
    assert!(saw_chart, "the chart had samples while the job ran");
    assert!(saw_eta, "an ETA was shown while the job ran");
    // Reversi's published total carries the game-over split, and matches.
    assert_eq!(
        detail["total"],
        serde_json::json!({"leaves": "18429641748", "higher": "6968"})
    );
    assert_eq!(detail["published_total"], detail["total"]);
    assert_eq!(detail["total_matches"], true);
    assert_eq!(detail["workers"], serde_json::json!([]));
}

/// Polls `/api/workers` until the worker `name` has `status`.
fn wait_for_status(http: &ureq::Agent, dashboard: &str, name: &str, status: &str) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (code, body) = get(http, &format!("{dashboard}/api/workers"), &[]);
        assert_eq!(code, 200, "{body}");
        let workers = json(&body);
        let found = workers["workers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["name"] == name && w["status"] == status)
            .cloned();
        if let Some(worker) = found {
            return worker;
        }
        assert!(Instant::now() < deadline, "{name} never {status}: {workers}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn workers_page_tells_lost_workers_from_those_that_left() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, address, dashboard) =
        serve_with_dashboard(&dir.path().join("data"), &["--lease-seconds", "2"]);
    let grpc = format!("http://{address}");
    let http = agent();
    let mut killed = worker(&grpc, "killed-w", &[]);
    let mut stopped = worker(&grpc, "stopped-w", &[]);
    wait_for_status(&http, &dashboard, "killed-w", "active");
    let active = wait_for_status(&http, &dashboard, "stopped-w", "active");
    assert_eq!(active["threads"], 1);
    assert_eq!(active["gone_unix_ms"], serde_json::Value::Null);

    // SIGKILL: no goodbye; the lease time passes and it is lost.
    killed.kill();
    let lost = wait_for_status(&http, &dashboard, "killed-w", "lost");
    assert_eq!(lost["last_seen_seconds"], serde_json::Value::Null);
    assert!(lost["gone_unix_ms"].as_u64().is_some(), "{lost}");
    // SIGTERM: it drains, says so, and leaves.
    let pid = stopped.0.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    let _ = stopped.0.wait();
    wait_for_status(&http, &dashboard, "stopped-w", "left");
}

/// Asserts a refusal: the status and a single line naming the problem.
fn refused(http: &ureq::Agent, url: &str, status: u16, words: &str) {
    let (got, body) = get(http, url, &[]);
    assert_eq!(got, status, "{url}: {body}");
    assert_eq!(body.lines().count(), 1, "{url}: {body}");
    assert!(body.contains(words), "{url}: {body}");
}

#[test]
fn hostile_urls_get_one_line_refusals() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, _address, dashboard) = serve_with_dashboard(&dir.path().join("data"), &[]);
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
        let output = Command::new(common::PERFT)
            .args(["serve", "--listen", "127.0.0.1:0", "--http-listen", address])
            .arg("--data-dir")
            .arg(dir.path().join("data"))
            .env_remove("PERFT_TOKEN")
            .output()
            .unwrap();
        let stderr = common::refused(&output);
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
    let (_server, _address, dashboard) = serve_with_dashboard(
        &dir.path().join("data"),
        &["--token-file", token_file.to_str().unwrap()],
    );
    let http = agent();
    for path in [
        "/",
        "/workers",
        "/jobs/abc",
        "/api/jobs",
        "/api/workers",
        "/assets/dashboard.js",
        "/x",
    ] {
        let (status, body) = get(&http, &format!("{dashboard}{path}"), &[]);
        assert_eq!(status, 401, "{path}: {body}");
        assert!(body.contains("needs the coordinator's token"), "{body}");
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
    for attribute in ["HttpOnly", "SameSite=Strict", "Path=/"] {
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
}

/// A self-signed certificate for 127.0.0.1 written as PEM files in `dir`.
fn certificate(dir: &Path) -> (PathBuf, PathBuf, String) {
    let cert = rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned()]).unwrap();
    let (cert_pem, key_pem) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&cert_pem, cert.cert.pem()).unwrap();
    std::fs::write(&key_pem, cert.signing_key.serialize_pem()).unwrap();
    (cert_pem, key_pem, cert.cert.pem())
}

#[test]
fn with_tls_the_dashboard_speaks_only_https() {
    let dir = tempfile::tempdir().unwrap();
    let (cert, key, ca) = certificate(dir.path());
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "tls-token-9").unwrap();
    let (_server, _address, dashboard) = serve_with_dashboard(
        &dir.path().join("data"),
        &[
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
            "--token-file",
            token_file.to_str().unwrap(),
        ],
    );
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

/// The Chromium binary on PATH, if any.
fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ]
    .iter()
    .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
    .find(|candidate| candidate.is_file())
}

/// Runs headless Chromium with `args` and a fresh profile; its stdout.
fn headless(browser: &Path, profile: &Path, args: &[&str]) -> String {
    let mut child = Running(
        Command::new(browser)
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-dev-shm-usage",
                "--no-first-run",
                "--hide-scrollbars",
            ])
            .arg(format!("--user-data-dir={}", profile.display()))
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromium starts"),
    );
    let mut stdout = child.0.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut text).unwrap();
        text
    });
    let deadline = Instant::now() + Duration::from_secs(120);
    while child.0.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "chromium did not finish in 120 s");
        std::thread::sleep(Duration::from_millis(100));
    }
    reader.join().unwrap()
}

/// The text of every `<td class="CLASS">` cell in `dom`, in order.
fn cells(dom: &str, class: &str) -> Vec<String> {
    let open = format!("<td class=\"{class}\">");
    dom.match_indices(&open)
        .map(|(at, _)| {
            let rest = &dom[at + open.len()..];
            rest[..rest.find("</td>").unwrap()].to_owned()
        })
        .collect()
}

#[test]
fn headless_chromium_shows_the_divide_table_that_perft_divide_gives() {
    let Some(browser) = chromium() else {
        eprintln!("SKIPPED: no chromium: install the Debian package 'chromium' to run the browser test");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (_server, address, dashboard) = serve_with_dashboard(&dir.path().join("data"), &[]);
    let grpc = format!("http://{address}");
    let _worker = worker(&grpc, "browser-w1", &[]);
    let id = run_job(&grpc, &["--game", "checkers", "--depth", "8"]);
    let url = format!("{dashboard}/jobs/{id}");

    let dom = headless(
        &browser,
        &dir.path().join("profile-dom"),
        &["--virtual-time-budget=5000", "--dump-dom", &url],
    );
    assert!(
        dom.contains("data-loaded=\"yes\""),
        "the page never loaded its JSON:\n{dom}"
    );
    assert!(
        dom.contains("<span id=\"job-state\" class=\"state done\">done</span>"),
        "{dom}"
    );
    let moves = cells(&dom, "move");
    let leaves: Vec<String> = cells(&dom, "num leaves")
        .iter()
        .map(|c| c.replace(',', ""))
        .collect();
    assert_eq!(moves.len(), 7, "{dom}");
    let mut shown: Vec<(String, String)> = moves.into_iter().zip(leaves).collect();
    shown.sort();
    assert_eq!(shown, cli_divide(&grpc, &id));
    let local = json(&ok(perft(
        &grpc,
        &["run", "--game", "checkers", "--depth", "8", "--format", "json"],
    )));
    assert_eq!(shown, divide_lines(&local));
    assert!(
        dom.contains("<th id=\"divide-total\" class=\"num\">845,931</th>"),
        "{dom}"
    );
    assert!(dom.contains("\u{2713} match"), "the total's match mark: {dom}");

    // The screenshot is the test's artifact.
    let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("dashboard-job.png");
    let _ = std::fs::remove_file(&shot);
    headless(
        &browser,
        &dir.path().join("profile-shot"),
        &[
            "--virtual-time-budget=5000",
            "--window-size=1280,1000",
            &format!("--screenshot={}", shot.display()),
            &url,
        ],
    );
    let png = std::fs::read(&shot).expect("chromium wrote the screenshot");
    assert!(
        png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 10_000,
        "{}",
        shot.display()
    );
    eprintln!("screenshot: {}", shot.display());
}
