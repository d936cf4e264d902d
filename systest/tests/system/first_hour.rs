//! What a new user sees in the first hour: a worker's log says whom it
//! joined, what it counts and how fast, without being asked to.

use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::cluster::Cluster;
use crate::common::jobs::words;
use crate::common::ok;

/// A position rich in every special move, whose perft(6) is 8,031,647,685.
const KIWIPETE: &str = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";

/// A worker started without `RUST_LOG` logs, at `info`, its registration
/// (name, coordinator, threads, table, kernel) and each job's start and
/// end with its rate, in plain text when its stderr is a file.
#[test]
fn a_worker_log_holds_its_registration_and_job_lines() {
    let mut c = Cluster::start(&[]);
    let log_path = c.files().join("worker.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let worker = c.worker_with("volunteer", None, &[], |worker| {
        worker.env_remove("RUST_LOG").stderr(Stdio::from(log));
    });
    let id = ok(c.perft(&words("submit --game checkers --depth 9 --split-depth 3")))
        .trim()
        .to_owned();
    let watched = ok(c.perft(&["watch", &id]));
    assert!(watched.starts_with(&format!("job {id} done: ")), "{watched}");
    // The job's end is logged once the coordinator has nothing more for it.
    let deadline = Instant::now() + Duration::from_secs(30);
    let text = loop {
        let text = std::fs::read_to_string(&log_path).unwrap();
        if text.contains("done with the job's units") || Instant::now() > deadline {
            break text;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    c.worker_process(worker).terminate();
    // The table is made ready before the worker registers, and it says so.
    let lines: Vec<&str> = text.lines().collect();
    let at = |what: &str| lines.iter().position(|line| line.contains(what));
    let (preparing, ready, registering) = (
        at("preparing the table: touching its memory before asking for work"),
        at("table ready"),
        at("registering with the coordinator"),
    );
    assert!(
        preparing.is_some() && preparing < ready && ready < registering,
        "{text}"
    );
    assert!(lines[ready.unwrap_or(0)].contains("gib=\"0.02\""), "{text}");
    let registered = text
        .lines()
        .find(|line| line.contains(" registered"))
        .unwrap_or_else(|| panic!("no registration line in:\n{text}"));
    for field in [
        "INFO",
        "name=volunteer",
        &format!("url={}", c.url),
        "threads=1",
        "table_bytes=16777216",
        "reversi_kernel=",
        "checkers_kernel=",
        "chess_kernel=",
    ] {
        assert!(registered.contains(field), "{field} missing from: {registered}");
    }
    let started = text
        .lines()
        .find(|line| line.contains("counting units of a job"))
        .unwrap_or_else(|| panic!("no job line in:\n{text}"));
    assert!(
        started.contains(&format!("job={id}")) && started.contains("game=checkers"),
        "{started}"
    );
    let done = text
        .lines()
        .find(|line| line.contains("done with the job's units"))
        .unwrap_or_else(|| panic!("no job end in:\n{text}"));
    // Every unit of the job was counted here; the leaves are those this
    // worker enumerated (fewer than the job's published 24,571,284: the
    // coordinator credits merged transpositions by their weights).
    let units = crate::common::jobs::status(&c.url, &id).total;
    assert!(
        done.contains(&format!("job={id}")) && done.contains(&format!("units={units} ")),
        "{done}"
    );
    assert!(done.contains("leaves_per_second="), "{done}");
    assert!(!text.contains('\u{1b}'), "no colour codes in a file:\n{text}");
}

/// `perft verify` with only PERFT_COORDINATOR set counts on that
/// coordinator, and says so in its first line; `--local` counts here.
#[test]
fn verify_counts_where_perft_coordinator_points_unless_local() {
    let mut c = Cluster::start(&[]);
    c.worker("w1", &[]);
    let url = c.url.clone();
    let verify = words("verify --game checkers --depth 8");
    let out = ok(crate::common::perft(&url, &verify));
    assert_eq!(
        out.lines().next(),
        Some(format!("counting on the coordinator at {url}").as_str()),
        "{out}"
    );
    assert!(out.contains("match     total: 845931\n"), "{out}");
    let jobs = ok(crate::common::perft(&url, &["list"]));
    assert_eq!(
        jobs.lines().filter(|l| l.contains("checkers")).count(),
        1,
        "{jobs}"
    );

    let mut local = verify.clone();
    local.push("--local");
    let out = ok(crate::common::perft(&url, &local));
    assert!(out.starts_with("counting on this machine ("), "{out}");
    assert!(
        out.contains("checkers depth 8 matches the published table"),
        "{out}"
    );
    let jobs = ok(crate::common::perft(&url, &["list"]));
    assert_eq!(
        jobs.lines().filter(|l| l.contains("checkers")).count(),
        1,
        "no second job: {jobs}"
    );
}

/// Runs `perft args` with `env` set (and no inherited credential or
/// coordinator); its exit code and its stderr.
fn perft_env(args: &[&str], env: &[(&str, &str)]) -> (Option<i32>, String) {
    let mut command = std::process::Command::new(crate::common::PERFT);
    command
        .args(args)
        .env_remove("PERFT_TOKEN")
        .env_remove("PERFT_COORDINATOR")
        .env_remove("RUST_LOG");
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    assert!(output.stdout.is_empty(), "nothing on stdout for {args:?}");
    (output.status.code(), String::from_utf8(output.stderr).unwrap())
}

/// Each mistake of a first cluster session gets one line naming the cause
/// and the fix, exit code 2: the dashboard's port given as the
/// coordinator's, an empty PERFT_TOKEN or token file, a URL without a
/// scheme; a browser with a wrong dashboard secret gets a page to sign in.
#[test]
fn first_mistakes_get_one_line_naming_the_cause_and_the_fix() {
    let c = Cluster::builder()
        .participant("admin", "admin")
        .dashboard()
        .start();
    let dashboard = c.dashboard.clone().unwrap();
    let (code, line) = perft_env(&["list", "--coordinator", &dashboard], &[]);
    assert_eq!(code, Some(2), "{line}");
    assert_eq!(
        line,
        "error: the server broke the connection instead of answering: it does not speak gRPC. Is the coordinator's address (--coordinator or PERFT_COORDINATOR) the dashboard's or the metrics' port? Use the address `perft serve` printed after 'listening on'\n"
    );

    let (code, line) = perft_env(&["list"], &[("PERFT_COORDINATOR", &c.url), ("PERFT_TOKEN", "")]);
    assert_eq!(code, Some(2));
    assert_eq!(
        line,
        "error: PERFT_TOKEN is set but empty: unset it, or give your credential with --token-file FILE\n"
    );
    let empty = c.files().join("empty-secret");
    std::fs::write(&empty, "\n").unwrap();
    let (code, line) = perft_env(
        &["list", "--token-file", empty.to_str().unwrap()],
        &[("PERFT_COORDINATOR", &c.url)],
    );
    assert_eq!(code, Some(2));
    assert_eq!(
        line,
        format!(
            "error: the token file '{}' is empty: it should hold your participant secret (from `perft participant add`) or the coordinator's token\n",
            empty.display()
        )
    );

    let bare = c.url.strip_prefix("http://").unwrap();
    let (code, line) = perft_env(&["list", "--coordinator", bare], &[]);
    assert_eq!(code, Some(2));
    assert_eq!(
        line,
        format!(
            "error: invalid coordinator URL '{bare}': it names no scheme: write http://{bare} (or https:// with --tls-ca)\n"
        )
    );

    // A browser (it asks for HTML) gets a page with the reason and a form;
    // a script keeps its one plain line.
    let agent = crate::common::http::agent();
    let wrong = format!("{dashboard}/?token=wrong");
    let (status, page) = crate::common::http::get(&agent, &wrong, &[("Accept", "text/html,*/*")]);
    assert_eq!(status, 401);
    assert!(
        page.contains("<h1>This dashboard needs a credential</h1>"),
        "{page}"
    );
    assert!(page.contains("<p>unknown or revoked credential</p>"), "{page}");
    assert!(page.contains("<input type=\"password\" name=\"token\""), "{page}");
    let (status, line) = crate::common::http::get(
        &agent,
        &format!("{dashboard}/api/jobs?token=wrong"),
        &[("Accept", "text/html")],
    );
    assert_eq!((status, line.as_str()), (401, "unknown or revoked credential\n"));
}

/// `perft watch` with its output piped (a script, a Slurm log) prints a
/// plain progress line on stderr every `--progress-every` seconds, and
/// `--quiet` none; stdout keeps the result alone.
#[test]
fn watch_without_a_terminal_prints_progress_lines_at_the_interval() {
    let mut c = Cluster::start(&[]);
    // One thread and a 16 MiB table (the cluster's worker): checkers
    // perft(15) took 6 s on a Zen 5 host, so lines are due even on a host
    // a few times faster (Kiwipete perft(6), used before, fell to 1.9 s
    // there once chess counted two plies up from the parent's replies).
    c.worker("w1", &[]);
    let id = ok(c.perft(&["submit", "--game", "checkers", "--depth", "15"]))
        .trim()
        .to_owned();
    let started = Instant::now();
    let watched = c.perft(&["watch", &id, "--progress-every", "1"]);
    let seconds = started.elapsed().as_secs_f64();
    let stdout = String::from_utf8(watched.stdout).unwrap();
    let stderr = String::from_utf8(watched.stderr).unwrap();
    assert!(
        stdout.starts_with(&format!("job {id} done: 36263167175 leaves")),
        "{stdout}"
    );
    let lines: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with(&format!("job {id}: ")))
        .collect();
    assert!(
        seconds >= 2.0,
        "the job ran long enough to be watched: {seconds:.1} s"
    );
    assert!(!lines.is_empty(), "{stderr}");
    // One line a second, give or take the first and the polling.
    assert!(
        lines.len() + 2 >= seconds as usize && lines.len() <= seconds as usize + 1,
        "{} lines in {seconds:.1} s:\n{stderr}",
        lines.len()
    );
    assert!(
        lines.iter().all(|l| l.contains("% done") && l.contains(" units")),
        "{stderr}"
    );

    let quiet = c.perft(&["watch", &id, "--quiet"]);
    assert!(
        quiet.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&quiet.stderr)
    );
}

/// `perft run` with its output piped prints a plain progress line on
/// stderr every `--progress-every` seconds while it counts; stdout keeps
/// the result alone, and `--quiet` shows nothing.
#[test]
fn a_local_run_without_a_terminal_prints_progress_lines_at_the_interval() {
    // One thread and no table: Kiwipete perft(6) takes seconds even on a
    // host several times faster than this one, so lines are due.
    let mut args = words("run --game chess --depth 6 --threads 1 --no-hash --progress-every 1");
    args.extend(["--position", KIWIPETE]);
    let started = Instant::now();
    let output = crate::common::local::perft(&args);
    let seconds = started.elapsed().as_secs_f64();
    let stdout = String::from_utf8(output.stdout).unwrap();
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert!(stdout.contains("\ntotal: 8031647685\n"), "{stdout}");
    let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("counting: ")).collect();
    assert!(seconds >= 1.5, "long enough to show progress: {seconds:.1} s");
    assert!(
        !lines.is_empty() && lines.len() <= seconds as usize + 1,
        "{} lines in {seconds:.1} s:\n{stderr}",
        lines.len()
    );
    assert!(lines.iter().all(|l| l.contains(" units done in ")), "{stderr}");

    let mut quiet = args.clone();
    quiet.push("--quiet");
    let output = crate::common::local::perft(&quiet);
    assert!(
        output.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}
