//! The dashboard's pages in a real headless Chromium: the job page's
//! divide table as `perft divide` gives it, and the participants, workers
//! and job pages with every figure named for what it counts. Screenshots
//! are the tests' artifacts (see `shot`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::dashboard::{cli_divide, run_job};
use crate::common::cluster::Cluster;
use crate::common::http::{agent, get, json};
use crate::common::{Running, divide_lines, ok, perft};

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
            // Times are shown in the browser's zone: UTC, to check them.
            .env("TZ", "UTC")
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
    let Some(browser) = browser_or_skip("headless_chromium_shows_the_divide_table_that_perft_divide_gives")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut c = Cluster::builder().dashboard().start();
    let (grpc, dashboard) = (c.url.clone(), c.dashboard.clone().unwrap());
    c.worker("browser-w1", &[]);
    let id = run_job(&grpc, &["--game", "checkers", "--depth", "8"]);
    let url = format!("{dashboard}/jobs/{id}");

    let dom = dom_of(&browser, dir.path(), &url, "profile-dom");
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

    shot(&browser, dir.path(), &url, "dashboard-job.png");
}

/// The browser, or `None` after saying loudly that `test` skipped: without
/// a browser the test cannot run; in CI that is a broken setup, not a pass.
fn browser_or_skip(test: &str) -> Option<PathBuf> {
    let browser = chromium();
    if browser.is_none() {
        let why = "no chromium, chromium-browser or google-chrome on PATH (the Debian package 'chromium')";
        assert!(std::env::var_os("CI").is_none(), "CI is set but there is {why}");
        eprintln!("SKIPPED {test}: {why}");
    }
    browser
}

/// A 1280-wide screenshot of `url` as `name` in the tests' scratch dir
/// (`CARGO_TARGET_TMPDIR`): a test's artifact, its path printed.
fn shot(browser: &Path, scratch: &Path, url: &str, name: &str) -> PathBuf {
    let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_file(&shot);
    headless(
        browser,
        &scratch.join(format!("profile-{name}")),
        &[
            "--virtual-time-budget=5000",
            "--window-size=1280,1000",
            &format!("--screenshot={}", shot.display()),
            url,
        ],
    );
    let png = std::fs::read(&shot).expect("chromium wrote the screenshot");
    assert!(
        png.starts_with(b"\x89PNG\r\n\x1a\n") && png.len() > 10_000,
        "{}",
        shot.display()
    );
    eprintln!("screenshot: {}", shot.display());
    shot
}

/// The page at `url`, loaded with its JSON, as Chromium's DOM.
fn dom_of(browser: &Path, scratch: &Path, url: &str, profile: &str) -> String {
    let dom = headless(
        browser,
        &scratch.join(profile),
        &["--virtual-time-budget=5000", "--dump-dom", url],
    );
    assert!(
        dom.contains("data-loaded=\"yes\""),
        "{url} never loaded its JSON:\n{dom}"
    );
    dom
}

/// "1234567" -> "1,234,567", as the pages show counts.
fn grouped(digits: &str) -> String {
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Unix ms as the pages show a moment in UTC: "YYYY-MM-DD HH:MM:SS".
fn utc(unix_ms: u64) -> String {
    let secs = unix_ms / 1000;
    let (days, rest) = ((secs / 86_400) as i64, secs % 86_400);
    // Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

/// Copies a screenshot to `$PERFT_SHOTS_DIR`, when set, to keep past the
/// run (the scratch dir is rebuilt).
fn keep(shot: &Path) {
    if let Some(dir) = std::env::var_os("PERFT_SHOTS_DIR") {
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::copy(shot, Path::new(&dir).join(shot.file_name().unwrap())).unwrap();
    }
}

#[test]
fn headless_chromium_shows_participants_workers_and_jobs_by_what_they_count() {
    let Some(browser) =
        browser_or_skip("headless_chromium_shows_participants_workers_and_jobs_by_what_they_count")
    else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut c = Cluster::builder()
        .participant("root", "admin")
        .participant("viewer", "reader")
        .workers(&["alice", "bob"])
        .dashboard()
        .start();
    let dashboard = c.dashboard.clone().unwrap();
    // A worker's name is a label it chooses, and hostile: shown as text.
    let hostile = "<i>alice-box</i>";
    c.worker_as(hostile, "alice", &[]);
    c.worker_as("bob-box", "bob", &[]);
    // A job from a set-up position has nothing published; a verified one
    // from the start is counted by both participants, unit by unit.
    let unpublished = c.run_job_as(
        "root",
        &[
            "--game",
            "chess",
            "--depth",
            "3",
            "--position",
            "4kr2/8/8/8/8/8/8/R3K2R w KQ - 0 1",
        ],
    );
    let verified = c.run_job_as(
        "root",
        &[
            "--game",
            "checkers",
            "--depth",
            "8",
            "--split-depth",
            "4",
            "--verify",
        ],
    );
    let http = agent();
    let viewer_secret = std::fs::read_to_string(c.secret("viewer")).unwrap();
    let viewer = format!("Bearer {}", viewer_secret.trim());
    let as_viewer = [("Authorization", viewer.as_str())];
    let api = |path: &str| {
        let (status, body) = get(&http, &format!("{dashboard}{path}"), &as_viewer);
        assert_eq!(status, 200, "{path}: {body}");
        json(&body)
    };
    // Every role that may read reads the participants; a worker's may not.
    let worker_secret = std::fs::read_to_string(c.worker_secret(0)).unwrap();
    let as_worker = format!("Bearer {}", worker_secret.trim());
    for path in ["/participants", "/api/participants"] {
        let (status, body) = get(
            &http,
            &format!("{dashboard}{path}"),
            &[("Authorization", &as_worker)],
        );
        assert_eq!(status, 401, "{path}: {body}");
    }
    let units_total = api(&format!("/api/jobs/{verified}"))["job"]["units_total"]
        .as_u64()
        .unwrap();
    let unpublished_units = api(&format!("/api/jobs/{unpublished}"))["job"]["units_total"]
        .as_u64()
        .unwrap();
    // Heartbeats bring each machine's figures: wait until both reported
    // every unit they counted (each counted the verified job's all).
    let deadline = Instant::now() + Duration::from_secs(30);
    let workers = loop {
        let workers = api("/api/workers");
        let counted: u64 = workers["workers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w["units_done"].as_u64().unwrap())
            .sum();
        if counted == 2 * units_total + unpublished_units {
            break workers;
        }
        assert!(Instant::now() < deadline, "heartbeats never caught up: {workers}");
        std::thread::sleep(Duration::from_millis(200));
    };
    let token = |url: String| format!("{url}?token={}", viewer_secret.trim());

    // The participants page: each figure as `perft participant list` has it.
    let dom = dom_of(
        &browser,
        dir.path(),
        &token(format!("{dashboard}/participants")),
        "p1",
    );
    let rows = |class: &str| cells(&dom, class);
    let names = rows("name");
    let listed = json(&ok(
        c.perft_as("root", &["participant", "list", "--format", "json"])
    ));
    let listed = listed.as_array().unwrap();
    assert_eq!(
        names,
        listed
            .iter()
            .map(|p| p["name"].as_str().unwrap().to_owned())
            .collect::<Vec<_>>()
    );
    for (i, p) in listed.iter().enumerate() {
        let name = p["name"].as_str().unwrap();
        assert_eq!(rows("role")[i], p["role"].as_str().unwrap(), "{name}");
        assert_eq!(
            rows("num units")[i],
            grouped(p["units"].as_str().unwrap()),
            "{name}"
        );
        assert_eq!(
            rows("num leaves")[i],
            grouped(p["leaves"].as_str().unwrap()),
            "{name}"
        );
        assert_eq!(rows("num lost")[i], "0", "{name}");
        assert_eq!(rows("num lapses")[i], "0", "{name}");
        let machines = u32::from(name == "alice" || name == "bob");
        assert_eq!(
            rows("num machines")[i],
            format!("{machines} ({machines})"),
            "{name}"
        );
        let cpu: f64 = rows("num cpu")[i].parse().unwrap();
        assert!(
            (cpu - p["cpu_seconds"].as_f64().unwrap()).abs() <= 0.051,
            "{name}: {cpu}"
        );
    }
    assert_eq!(
        dom.matches("<span class=\"state active\">active</span>").count(),
        4,
        "{dom}"
    );
    let credited = |name: &str| {
        let p = listed.iter().find(|p| p["name"] == name).unwrap();
        (
            p["units"].as_str().unwrap().to_owned(),
            p["leaves"].as_str().unwrap().to_owned(),
        )
    };
    let (alice_units, alice_leaves) = credited("alice");
    let (bob_units, bob_leaves) = credited("bob");
    assert_eq!(
        alice_units.parse::<u64>().unwrap() + bob_units.parse::<u64>().unwrap(),
        2 * units_total + unpublished_units,
        "each count was taken once"
    );
    // Credited leaves are each unit's count once; the job's perft leaves
    // weigh each by its paths, so they are more than either participant's
    // share of the verified job.
    assert!(alice_leaves.parse::<u128>().unwrap() < 845_931, "{alice_leaves}");
    assert!(
        dom.contains("leaves counted are the leaves of those counts, each unit once"),
        "{dom}"
    );
    keep(&shot(
        &browser,
        dir.path(),
        &token(format!("{dashboard}/participants")),
        "dashboard-participants.png",
    ));

    // The workers page: each machine with its participant; its name as text.
    let dom = dom_of(&browser, dir.path(), &token(format!("{dashboard}/workers")), "w1");
    assert_eq!(
        cells(&dom, "name"),
        ["&lt;i&gt;alice-box&lt;/i&gt;", "bob-box"],
        "{dom}"
    );
    assert!(!dom.contains(hostile), "a worker's name is never markup: {dom}");
    assert_eq!(cells(&dom, "participant"), ["alice", "bob"]);
    let by_name = |name: &str| {
        workers["workers"]
            .as_array()
            .unwrap()
            .iter()
            .find(|w| w["name"] == name)
            .unwrap()
            .clone()
    };
    let (alice_box, bob_box) = (by_name(hostile), by_name("bob-box"));
    assert_eq!(
        cells(&dom, "num units"),
        [
            grouped(&alice_box["units_done"].to_string()),
            grouped(&bob_box["units_done"].to_string())
        ]
    );
    // With every count taken, a machine counted what its participant was
    // credited.
    assert_eq!(
        cells(&dom, "num leaves"),
        [grouped(&alice_leaves), grouped(&bob_leaves)]
    );
    assert_eq!(alice_box["leaves_done"], alice_leaves.as_str());
    keep(&shot(
        &browser,
        dir.path(),
        &token(format!("{dashboard}/workers")),
        "dashboard-workers.png",
    ));

    // The job list: when each job was submitted, and whether it is verified.
    let jobs = api("/api/jobs");
    let submitted: Vec<String> = jobs["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .map(|job| utc(job["submitted_unix_ms"].as_u64().unwrap()))
        .collect();
    let list = token(format!("{dashboard}/"));
    let dom = dom_of(&browser, dir.path(), &list, "j1");
    assert_eq!(cells(&dom, "submitted"), submitted, "newest first");
    assert_eq!(cells(&dom, "verified"), ["yes", "no"]);
    assert!(
        dom.contains("<th class=\"num\">Perft leaves so far</th>"),
        "{dom}"
    );
    keep(&shot(&browser, dir.path(), &list, "dashboard-jobs.png"));

    // The job page: the label readable on the fill, "not published" where
    // nothing was.
    let url = token(format!("{dashboard}/jobs/{unpublished}"));
    let dom = dom_of(&browser, dir.path(), &url, "d1");
    assert!(
        dom.contains("<span id=\"job-percent-on-fill\" class=\"percent on-fill\">100.0%</span>"),
        "{dom}"
    );
    let published = cells(&dom, "num published");
    assert!(!published.is_empty(), "{dom}");
    assert!(published.iter().all(|p| p == "not published"), "{published:?}");
    assert!(
        dom.contains("<dd id=\"job-published\">not published</dd>"),
        "{dom}"
    );
    assert!(
        dom.contains("<th id=\"divide-published\" class=\"num\">not published</th>"),
        "{dom}"
    );
    let (_, style) = get(&http, &format!("{dashboard}/assets/dashboard.css"), &as_viewer);
    assert!(style.contains(".percent.on-fill { color: #fff; }"), "{style}");
    let url = token(format!("{dashboard}/jobs/{verified}"));
    let dom = dom_of(&browser, dir.path(), &url, "d2");
    let detail = api(&format!("/api/jobs/{verified}"));
    assert!(
        dom.contains(&format!(
            "<dd id=\"job-submitted\">{}</dd>",
            utc(detail["job"]["submitted_unix_ms"].as_u64().unwrap())
        )),
        "{dom}"
    );
    let expected: Vec<String> = detail["divide"]
        .as_array()
        .unwrap()
        .iter()
        .map(|line| {
            line["published"]
                .as_str()
                .map_or("not published".to_owned(), grouped)
        })
        .collect();
    assert_eq!(cells(&dom, "num published"), expected);
    keep(&shot(&browser, dir.path(), &url, "dashboard-job-details.png"));
}
