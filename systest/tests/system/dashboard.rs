//! The web dashboard of `perft serve --http-listen`, end to end: a real
//! coordinator and workers on loopback and a real HTTP client. Its pages
//! in a real browser: dashboard_browser.rs; its token, TLS and hostile
//! input: dashboard_security.rs.

use std::time::{Duration, Instant};

use crate::common::cluster::Cluster;
use crate::common::http::{agent, get, json};
use crate::common::jobs::words;
use crate::common::{divide_lines, ok, perft};

/// Submits a job to the coordinator at `grpc` and waits until it is done.
pub(crate) fn run_job(grpc: &str, args: &[&str]) -> String {
    let mut submit = vec!["submit"];
    submit.extend(args);
    let id = ok(perft(grpc, &submit)).trim().to_owned();
    let watched = ok(perft(grpc, &["watch", &id]));
    assert!(watched.starts_with(&format!("job {id} done: ")), "{watched}");
    id
}

/// The divide lines of `perft divide ID` as (move, leaves), sorted.
pub(crate) fn cli_divide(grpc: &str, id: &str) -> Vec<(String, String)> {
    divide_lines(&json(&ok(perft(grpc, &["divide", id, "--format", "json"]))))
}

#[test]
fn api_reports_jobs_divides_and_workers_and_pages_are_embedded() {
    let mut c = Cluster::builder().dashboard().start();
    let (grpc, dashboard) = (c.url.clone(), c.dashboard.clone().unwrap());
    assert!(dashboard.starts_with("http://127.0.0.1:"), "{dashboard}");
    c.worker("w1", &[]);
    let before = perft_coordinator::clock::unix_ms();
    let id = run_job(&grpc, &["--game", "checkers", "--depth", "8"]);
    let after = perft_coordinator::clock::unix_ms();
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
    assert_eq!(job["verify"], false);
    let submitted = job["submitted_unix_ms"].as_u64().unwrap();
    assert!((before..=after).contains(&submitted), "{job}");
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
    // An open coordinator has no participants: the budget table is empty.
    let (status, body) = get(&http, &format!("{dashboard}/api/participants"), &[]);
    assert_eq!(status, 200, "{body}");
    assert_eq!(json(&body)["participants"], serde_json::json!([]));

    // The pages and their assets come from the binary.
    for (path, kind, needle) in [
        ("/", "text/html", "data-page=\"jobs\""),
        (&format!("/jobs/{id}") as &str, "text/html", "id=\"divide\""),
        ("/workers", "text/html", "data-page=\"workers\""),
        ("/participants", "text/html", "data-page=\"participants\""),
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
    let mut c = Cluster::builder().dashboard().start();
    let (grpc, dashboard) = (c.url.clone(), c.dashboard.clone().unwrap());
    // Depth 14 on the one-thread worker: the job runs long enough (about
    // 20 s here) for the chart's samples, a second apart, to show while it
    // runs (depth 13 took 2-3 s, and could end before a second sample).
    c.worker("live-w1", &[]);
    let submitted = ok(perft(&grpc, &["submit", "--game", "reversi", "--depth", "14"]));
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
        serde_json::json!({"leaves": "184042084512", "higher": "23340"})
    );
    assert_eq!(detail["published_total"], detail["total"]);
    assert_eq!(detail["total_matches"], true);
    assert_eq!(detail["workers"], serde_json::json!([]));
    // The chart ends on the interval in which the last units were decided
    // (it once ended on the tail's empty interval, at 0).
    let chart = detail["chart"].as_array().unwrap();
    let last = chart.last().unwrap()[1].as_f64().unwrap();
    assert!(last > 0.0, "{chart:?}");
}

/// Polls `/api/workers` until the worker `name` has `status`.
fn wait_for_status(http: &ureq::Agent, dashboard: &str, name: &str, status: &str) -> serde_json::Value {
    let deadline = Instant::now() + Duration::from_secs(90);
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
    let mut c = Cluster::builder()
        .dashboard()
        .serve_args(&["--lease-seconds", "2"])
        .start();
    let dashboard = c.dashboard.clone().unwrap();
    let http = agent();
    let killed = c.worker("killed-w", &[]);
    let stopped = c.worker("stopped-w", &[]);
    wait_for_status(&http, &dashboard, "killed-w", "active");
    let active = wait_for_status(&http, &dashboard, "stopped-w", "active");
    assert_eq!(active["threads"], 1);
    assert_eq!(active["gone_unix_ms"], serde_json::Value::Null);

    // SIGKILL: no goodbye; the lease time passes and it is lost.
    c.kill_worker(killed);
    let lost = wait_for_status(&http, &dashboard, "killed-w", "lost");
    assert_eq!(lost["last_seen_seconds"], serde_json::Value::Null);
    assert!(lost["gone_unix_ms"].as_u64().is_some(), "{lost}");
    // SIGTERM: it drains, says so, and leaves.
    let stopped = c.worker_process(stopped);
    stopped.terminate();
    let _ = stopped.0.wait();
    wait_for_status(&http, &dashboard, "stopped-w", "left");
}

#[test]
fn disagreements_of_a_verified_job_are_listed_with_their_votes() {
    // Verification counts participants: each machine is one.
    let mut c = Cluster::builder()
        .participant("root", "admin")
        .workers(&["faulty", "good1", "good2"])
        .dashboard()
        .start();
    let (grpc, dashboard, admin) = (c.url.clone(), c.dashboard.clone().unwrap(), c.secret("root"));
    let bearer = format!("Bearer {}", std::fs::read_to_string(&admin).unwrap().trim());
    let auth = [("Authorization", bearer.as_str())];
    // The test-only fault injector: every third count it sends is wrong.
    c.worker_with("faulty", Some("faulty"), &[], |worker| {
        worker.env("PERFT_FAULT_EVERY", "3");
    });
    c.worker_as("good1", "good1", &[]);
    let submit = words("submit --game reversi --depth 10 --split-depth 4 --verify");
    let id = ok(crate::common::perft_as(&grpc, &admin, &submit))
        .trim()
        .to_owned();
    let http = agent();
    let url = format!("{dashboard}/api/jobs/{id}");
    // Two machines, so every decided unit has a faulty vote; once six are
    // decided one was wrong, and only a third machine settles it.
    let deadline = Instant::now() + Duration::from_secs(120);
    while json(&get(&http, &url, &auth).1)["job"]["units_done"]
        .as_u64()
        .unwrap()
        < 6
    {
        assert!(Instant::now() < deadline, "six units decided in time");
        std::thread::sleep(Duration::from_millis(50));
    }
    c.worker_as("good2", "good2", &[]);
    ok(crate::common::perft_as(&grpc, &admin, &["watch", &id]));

    let detail = json(&get(&http, &url, &auth).1);
    assert_eq!(detail["job"]["verify"], true);
    assert_eq!(detail["total"]["leaves"], "24571284");
    assert_eq!(detail["total_matches"], true, "the majority kept the table exact");
    let disagreements = detail["disagreements"].as_array().unwrap();
    assert!(!disagreements.is_empty(), "{detail}");
    assert_eq!(detail["job"]["disagreements"], disagreements.len() as u64);
    assert_eq!(detail["more_disagreements"], false);
    for d in disagreements {
        let votes = d["votes"].as_array().unwrap();
        assert!(votes.len() >= 3, "{d}");
        assert!(
            votes
                .iter()
                .any(|v| v["worker"].as_str().unwrap().starts_with("faulty/faulty (")),
            "{d}"
        );
        let decided = d["decided"].as_str().unwrap();
        let agreeing = votes.iter().filter(|v| v["leaves"] == decided).count();
        assert!(agreeing >= 2, "the decided count is a majority's: {d}");
        assert!(votes.iter().any(|v| v["leaves"] != decided), "{d}");
    }
}
