//! The admission layer against its attackers (issue 40), on real
//! processes: a `perft serve` on loopback, attackers and honest callers
//! from the same address, 127.0.0.1. Each attack asserts the attacker
//! loses, and that during it an authenticated `perft list` answers and an
//! honest worker's session leases a unit and reports its true count.

use std::path::Path;
use std::process::Output;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::common::cluster::{Cluster, ClusterBuilder};
use crate::common::http::{agent, get};
use crate::common::jobs::words;
use crate::common::{join_all, ok, perft_as, wait_for, wait_for_async, worker_client_as};
use perft_core::{Checkers, Game, GameKind};
use perft_proto as pb;
use tonic::Code;

/// The resident memory of process `pid`, in KiB.
pub(super) fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
        .unwrap_or_else(|| panic!("no VmRSS in {status}"))
}

/// Bytes of every file under `dir`.
fn dir_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            let meta = entry.metadata().unwrap();
            if meta.is_dir() {
                dir_bytes(&entry.path())
            } else {
                meta.len()
            }
        })
        .sum()
}

/// The shared cluster with participants `root` (admin), `honest` (worker)
/// and the attackers a test names; its coordinator logs JSON warnings to a
/// file and serves metrics, unless it serves a dashboard.
pub(super) struct Attacked {
    cluster: Cluster,
}

impl std::ops::Deref for Attacked {
    type Target = Cluster;
    fn deref(&self) -> &Cluster {
        &self.cluster
    }
}

impl std::ops::DerefMut for Attacked {
    fn deref_mut(&mut self) -> &mut Cluster {
        &mut self.cluster
    }
}

/// The participants of every attack: `root` (admin), `honest` (worker) and
/// `others` (name, role).
fn participants(others: &[(&str, &str)]) -> ClusterBuilder {
    Cluster::builder()
        .participants(&[("root", "admin"), ("honest", "worker")])
        .participants(others)
}

impl Attacked {
    pub(super) fn start(attackers: &[(&str, &str)], extra: &[&str]) -> Attacked {
        let cluster = participants(attackers)
            .serve_args(extra)
            .log_to_file("warn")
            .metrics()
            .start();
        Attacked { cluster }
    }

    /// As [`Attacked::start`], with the web dashboard (its log is not kept,
    /// nor its metrics served).
    pub(super) fn with_dashboard(attackers: &[(&str, &str)], extra: &[&str]) -> Attacked {
        let cluster = participants(attackers).serve_args(extra).dashboard().start();
        Attacked { cluster }
    }

    pub(super) fn as_(&self, name: &str, args: &[&str]) -> Output {
        self.perft_as(name, args)
    }

    /// A checkers job of `root`'s for the honest worker: hundreds of units
    /// of 5 plies each, quick to count in the test.
    pub(super) fn honest_job(&self) -> String {
        let args = words("submit --game checkers --depth 8 --split-depth 3");
        ok(self.as_("root", &args)).trim().to_owned()
    }

    /// `name`'s row of `perft participant list --format json`.
    pub(super) fn participant(&self, name: &str) -> serde_json::Value {
        self.participant_row("root", name)
    }

    /// `name`'s budget line of `resource`: (used, limit, overridden).
    pub(super) fn budget(&self, name: &str, resource: &str) -> (u64, Option<u64>, bool) {
        let row = self.participant(name);
        let line = &row["budget"][resource];
        let number = |v: &serde_json::Value| v.as_str().map(|s| s.parse::<u64>().unwrap());
        (
            number(&line["used"]).unwrap_or_else(|| panic!("no {resource} in {row}")),
            number(&line["limit"]),
            line["overridden"].as_bool().unwrap(),
        )
    }

    /// The value of the unlabelled metric `name`, if exported yet.
    pub(super) fn metric(&self, name: &str) -> Option<f64> {
        let text = ureq::get(&format!("http://127.0.0.1:{}/metrics", self.metrics_port()))
            .call()
            .ok()?
            .into_body()
            .read_to_string()
            .ok()?;
        text.lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
    }

    /// The coordinator's log lines (JSON) whose message contains `words`.
    pub(super) fn log_lines(&self, words: &str) -> Vec<serde_json::Value> {
        std::fs::read_to_string(self.log())
            .unwrap_or_default()
            .lines()
            .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
            .filter(|line| {
                line["fields"]["message"]
                    .as_str()
                    .is_some_and(|m| m.contains(words))
            })
            .collect()
    }
}

/// What the honest side did during an attack.
#[derive(Debug, Default)]
pub(super) struct Honest {
    pub(super) lists: u32,
    pub(super) slowest_list: Duration,
    pub(super) reports: u32,
}

impl Honest {
    /// An authenticated `perft list` that must answer and show `job`, and
    /// an honest worker session that leases one unit of `job` and reports
    /// its true count, which must be accepted.
    pub(super) async fn work(&mut self, c: &Cluster, job: &str) {
        let (url, admin) = (c.url.clone(), c.secret("root"));
        let start = Instant::now();
        let listed = tokio::task::spawn_blocking(move || perft_as(&url, &admin, &["list"]))
            .await
            .unwrap();
        let took = start.elapsed();
        assert!(
            listed.status.success(),
            "perft list failed during the attack: {}",
            String::from_utf8_lossy(&listed.stderr)
        );
        assert!(String::from_utf8_lossy(&listed.stdout).contains(job));
        self.lists += 1;
        self.slowest_list = self.slowest_list.max(took);
        honest_report(&c.url, &c.secret("honest"), job, self.reports).await;
        self.reports += 1;
    }
}

/// A fresh worker session of `secret` (from a new connection) that leases
/// one unit of `job`, counts it and reports it: the count is accepted.
async fn honest_report(url: &str, secret: &Path, job: &str, round: u32) {
    let mut client = worker_client_as(url, secret).await;
    let session = client
        .register(pb::RegisterRequest {
            name: format!("honest-{round}"),
            threads: 1,
            only_job: job.to_owned(),
        })
        .await
        .expect("the honest worker registers during the attack")
        .into_inner()
        .worker_id;
    let start = Instant::now();
    let leased = loop {
        let jobs = client
            .lease_units(pb::LeaseUnitsRequest {
                worker_id: session.clone(),
                max_units: 1,
            })
            .await
            .expect("the honest worker leases during the attack")
            .into_inner()
            .jobs;
        if let Some(leased) = jobs.into_iter().next() {
            break leased;
        }
        assert!(start.elapsed() < Duration::from_secs(20), "no unit leased");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(leased.job_id, job);
    let lease = leased.units[0].clone();
    let position = Checkers::unpack(&lease.position).expect("a packed checkers position");
    let leaves = perft_core::perft(&position, leased.depth);
    let reply = client
        .report_results(one_result(session, job, &lease, leaves, lease.lease_tag.clone()))
        .await
        .expect("the honest report is answered during the attack")
        .into_inner();
    assert_eq!(
        (reply.accepted, reply.refused),
        (1, 0),
        "the honest count was not taken"
    );
}

/// A report by worker `session` of one result: `leaves` for `lease` of
/// `job`, carrying `lease_tag` (the lease's own, or a forged one).
fn one_result(
    session: String,
    job: &str,
    lease: &pb::UnitLease,
    leaves: perft_core::Leaves,
    lease_tag: Vec<u8>,
) -> pb::ReportResultsRequest {
    pb::ReportResultsRequest {
        worker_id: session,
        jobs: vec![pb::JobReport {
            job_id: job.to_owned(),
            results: vec![pb::UnitResult {
                unit_id: lease.unit_id,
                epoch: lease.epoch,
                leaves: Some(leaves.into()),
                lease_tag,
                cpu_seconds: 0.0,
            }],
            released: Vec::new(),
        }],
    }
}

/// Attack 1: a submitter submits until refused. Past its open-jobs budget
/// it gets RESOURCE_EXHAUSTED naming the figures; within an open-units
/// budget an automatic split shrinks to what is left and an explicit one
/// that does not fit is refused; the journal stays small, and the
/// overrides (journaled) hold after a crash and restart.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_greedy_submitter_is_held_to_its_budget() {
    let started = Instant::now();
    let mut c = Attacked::start(&[("greedy", "submitter")], &[]);
    let job = c.honest_job();
    let set = ok(c.as_("root", &["participant", "budget", "greedy", "--open-jobs", "4"]));
    assert!(set.contains("open_jobs 0/4*"), "{set}");
    let small = words("submit --game checkers --depth 12 --split-depth 2");
    let mut accepted = Vec::new();
    let refusal = loop {
        let output = c.as_("greedy", &small);
        if !output.status.success() {
            break output;
        }
        accepted.push(String::from_utf8(output.stdout).unwrap().trim().to_owned());
        assert!(accepted.len() <= 4, "a fifth job was accepted");
    };
    assert_eq!(accepted.len(), 4);
    let stderr = crate::common::refused(&refusal);
    assert!(
        stderr.contains("participant 'greedy' holds 4 open jobs, its budget of 4"),
        "{stderr}"
    );
    assert_eq!(c.budget("greedy", "open_jobs"), (4, Some(4), true));
    // The status under the exit code.
    let mut greedy = crate::common::perft_client_as(&c.url, &c.secret("greedy")).await;
    let status = greedy
        .submit_job(pb::SubmitJobRequest {
            game: pb::Game::from_kind(GameKind::Checkers).into(),
            depth: 12,
            split_depth: 2,
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");
    // A refused submit writes nothing.
    let journal_before_refusals = dir_bytes(c.data());
    for _ in 0..10 {
        crate::common::refused(&c.as_("greedy", &small));
    }
    let refusals_growth = dir_bytes(c.data()).saturating_sub(journal_before_refusals);
    let journal_before_flood = dir_bytes(c.data());

    // The attack goes on while the honest side works.
    let stop = Arc::new(AtomicBool::new(false));
    let flood = {
        let (stop, url, greedy) = (Arc::clone(&stop), c.url.clone(), c.secret("greedy"));
        tokio::task::spawn_blocking(move || {
            let mut refused = 0u32;
            while !stop.load(Ordering::Relaxed) || refused < 10 {
                let output = perft_as(&url, &greedy, &small);
                let stderr = crate::common::refused(&output);
                assert!(stderr.contains("holds 4 open jobs, its budget of 4"), "{stderr}");
                refused += 1;
            }
            refused
        })
    };
    let mut honest = Honest::default();
    for _ in 0..3 {
        honest.work(&c, &job).await;
    }
    stop.store(true, Ordering::Relaxed);
    let refused = flood.await.unwrap();
    let flood_growth = dir_bytes(c.data()).saturating_sub(journal_before_flood);

    // Units: the jobs cancelled, a budget of 3000 units.
    for id in &accepted {
        ok(c.as_("greedy", &["cancel", id]));
    }
    ok(c.as_(
        "root",
        &words("participant budget greedy --open-jobs 100 --open-units 3000"),
    ));
    let deep = ["submit", "--game", "checkers", "--depth", "20"];
    let mut sizes = Vec::new();
    let refusal = loop {
        let output = c.as_("greedy", &deep);
        if !output.status.success() {
            break output;
        }
        let id = String::from_utf8(output.stdout).unwrap().trim().to_owned();
        let status = ok(c.as_("greedy", &["status", &id]));
        // "units: 0/1234 (0 handed out again)"
        let units = status
            .lines()
            .find_map(|l| l.strip_prefix("units: "))
            .and_then(|u| u.split_once('/'))
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .and_then(|total| total.parse::<u64>().ok())
            .unwrap_or_else(|| panic!("no units in {status}"));
        sizes.push(units);
        assert!(sizes.len() < 30, "automatic splits never ran out: {sizes:?}");
    };
    let stderr = crate::common::refused(&refusal);
    assert!(stderr.contains("may hold 3000 open units"), "{stderr}");
    assert!(
        !sizes.is_empty(),
        "no automatic split fitted a budget of 3000 units"
    );
    assert!(
        sizes[0] <= 3000 && sizes[0] >= 100,
        "the first automatic split of depth 20 has {} units",
        sizes[0]
    );
    assert!(sizes.iter().sum::<u64>() <= 3000, "{sizes:?}");
    let (used, limit, overridden) = c.budget("greedy", "open_units");
    assert_eq!((used, limit, overridden), (sizes.iter().sum(), Some(3000), true));
    let explicit = c.as_(
        "greedy",
        &words("submit --game checkers --depth 20 --split-depth 6"),
    );
    let stderr = crate::common::refused(&explicit);
    assert!(
        stderr.contains("may hold 3000 open units") && stderr.contains("does not fit"),
        "{stderr}"
    );
    let journal = dir_bytes(c.data());

    // A crash and a restart: the overrides were journaled.
    c.restart_elsewhere();
    assert_eq!(c.budget("greedy", "open_units"), (used, Some(3000), true));
    assert_eq!(c.budget("greedy", "open_jobs").1, Some(100));
    let again = c.as_("greedy", &deep);
    let stderr = crate::common::refused(&again);
    assert!(stderr.contains("may hold 3000 open units"), "{stderr}");
    let job = c.honest_job();
    honest.work(&c, &job).await;
    eprintln!(
        "greedy: {refused} submits refused during the attack; journal {journal} bytes (+{refusals_growth} for 10 refused \
         submits alone, +{flood_growth} during the flood and the honest work); \
         automatic splits {sizes:?}; honest {honest:?}; {:?} in all",
        started.elapsed()
    );
    assert!(
        journal < 4 << 20,
        "the journal holds {journal} bytes after the attack"
    );
    assert!(
        refusals_growth < 8 << 10,
        "10 refused submits grew the journal by {refusals_growth} bytes"
    );
    assert!(
        flood_growth < 256 << 10,
        "{refused} refused submits and the honest work grew the journal by {flood_growth} bytes"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn forged_reports_are_counted_but_not_logged_one_a_line() {
    let c = Attacked::start(&[("evil", "worker")], &["--log-refusals-seconds", "2"]);
    let job = c.honest_job();
    let mut evil = worker_client_as(&c.url, &c.secret("evil")).await;
    let session = evil
        .register(pb::RegisterRequest {
            name: "evil".to_owned(),
            threads: 1,
            only_job: job.clone(),
        })
        .await
        .unwrap()
        .into_inner()
        .worker_id;
    let leased = evil
        .lease_units(pb::LeaseUnitsRequest {
            worker_id: session.clone(),
            max_units: 1,
        })
        .await
        .unwrap()
        .into_inner()
        .jobs;
    let lease = leased[0].units[0].clone();
    let forged_count = perft_core::Leaves {
        leaves: 1000,
        higher: 0,
    };
    let forged = one_result(
        session,
        &job,
        &lease,
        forged_count,
        vec![0; lease.lease_tag.len()],
    );
    // Four callers on one connection report again and again until the
    // honest side is done (and at least 10,000 times in all).
    const REPORTS: usize = 10_000;
    let stop = Arc::new(AtomicBool::new(false));
    let sent = Arc::new(AtomicUsize::new(0));
    let started = Instant::now();
    let flood: Vec<_> = (0..4)
        .map(|_| {
            let (mut evil, forged) = (evil.clone(), forged.clone());
            let (stop, sent) = (Arc::clone(&stop), Arc::clone(&sent));
            tokio::spawn(async move {
                while !stop.load(Ordering::Relaxed) || sent.load(Ordering::Relaxed) < REPORTS {
                    let reply = evil.report_results(forged.clone()).await.unwrap().into_inner();
                    assert_eq!((reply.accepted, reply.refused), (0, 1), "{reply:?}");
                    sent.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    assert!(
        wait_for_async(Duration::from_secs(20), || sent.load(Ordering::Relaxed) >= 1000).await,
        "the flood did not start"
    );
    let mut honest = Honest::default();
    honest.work(&c, &job).await;
    stop.store(true, Ordering::Relaxed);
    join_all(flood).await;
    let reports = sent.load(Ordering::Relaxed);
    let took = started.elapsed();
    assert!(
        wait_for(Duration::from_secs(10), || c
            .metric("perft_results_refused_total")
            == Some(reports as f64)),
        "perft_results_refused_total: {:?}",
        c.metric("perft_results_refused_total")
    );
    let lines = c.log_lines("results refused");
    let message = lines
        .first()
        .map(|line| line["fields"]["message"].to_string())
        .unwrap_or_default();
    assert!(message.contains("logged at most once every 2 s"), "{message}");
    let most = 1 + took.as_secs() as usize / 2 + 1;
    assert!(
        !lines.is_empty() && lines.len() <= most,
        "{} lines for {reports} forged reports in {took:?}",
        lines.len()
    );
    // Once the interval passed, the next refusal writes a line that sums
    // every report not logged.
    let mut more = 0;
    let start = Instant::now();
    while c.log_lines("results refused").len() == lines.len() {
        let reply = evil.report_results(forged.clone()).await.unwrap().into_inner();
        assert_eq!(reply.refused, 1);
        more += 1;
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "no line after the interval"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let lines = c.log_lines("results refused");
    let summed: u64 = lines
        .iter()
        .map(|line| line["fields"]["reports"].as_u64().expect("a reports field"))
        .sum();
    assert_eq!(summed, (reports + more) as u64, "{lines:?}");
    let log_bytes = std::fs::metadata(c.log()).unwrap().len();
    let all_lines = std::fs::read_to_string(c.log()).unwrap().lines().count();
    honest.work(&c, &job).await;
    eprintln!(
        "log flood: {reports} forged reports in {took:?}; {} 'results refused' lines ({all_lines} lines, {log_bytes} bytes in all); honest {honest:?}",
        lines.len()
    );
    assert!(log_bytes < 16 << 10, "the log grew to {log_bytes} bytes");
}

/// The session key of a `?token=` login's answer, as a `Cookie` header.
fn login(http: &ureq::Agent, dashboard: &str, secret: &Path) -> String {
    let token = std::fs::read_to_string(secret).unwrap();
    let response = http
        .get(format!("{dashboard}/?token={}", token.trim()))
        .call()
        .unwrap();
    assert_eq!(response.status().as_u16(), 303);
    let cookie = response
        .headers()
        .get("set-cookie")
        .expect("a session cookie")
        .to_str()
        .unwrap();
    cookie.split(';').next().unwrap().to_owned()
}

/// Attack 4: a reader logs in with `?token=` 1,100 times. Only its own
/// oldest sessions end (it holds its budget of 16); the admin's session,
/// opened first, still works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_logging_in_again_and_again_ends_only_its_own_sessions() {
    let c = Attacked::with_dashboard(&[("peek", "reader")], &[]);
    let dashboard = c.dashboard.clone().unwrap();
    let job = c.honest_job();
    let http = agent();
    let admin = login(&http, &dashboard, &c.secret("root"));
    let jobs = format!("{dashboard}/api/jobs");
    assert_eq!(get(&http, &jobs, &[("Cookie", &admin)]).0, 200);
    const LOGINS: usize = 1100;
    let started = Instant::now();
    // The reader logs in again and again until the honest side is done
    // (and at least 1,100 times).
    let stop = Arc::new(AtomicBool::new(false));
    let logins = Arc::new(AtomicUsize::new(0));
    let flood = {
        let (dashboard, secret) = (dashboard.clone(), c.secret("peek"));
        let (stop, logins) = (Arc::clone(&stop), Arc::clone(&logins));
        tokio::task::spawn_blocking(move || {
            let http = agent();
            let mut cookies = Vec::new();
            while !stop.load(Ordering::Relaxed) || cookies.len() < LOGINS {
                cookies.push(login(&http, &dashboard, &secret));
                logins.fetch_add(1, Ordering::Relaxed);
            }
            cookies
        })
    };
    assert!(
        wait_for_async(Duration::from_secs(20), || logins.load(Ordering::Relaxed) >= 100).await,
        "the flood did not start"
    );
    let mut honest = Honest::default();
    honest.work(&c, &job).await;
    let (admin_during, _) = {
        let (jobs, admin) = (jobs.clone(), admin.clone());
        tokio::task::spawn_blocking(move || get(&agent(), &jobs, &[("Cookie", &admin)]))
            .await
            .unwrap()
    };
    assert_eq!(admin_during, 200, "the admin's session ended during the flood");
    stop.store(true, Ordering::Relaxed);
    let cookies = flood.await.unwrap();
    let n = cookies.len();
    let took = started.elapsed();
    honest.work(&c, &job).await;
    assert_eq!(
        get(&http, &jobs, &[("Cookie", &admin)]).0,
        200,
        "the admin's session ended"
    );
    let (first, last) = (
        get(&http, &jobs, &[("Cookie", &cookies[0])]).0,
        get(&http, &jobs, &[("Cookie", &cookies[n - 17])]).0,
    );
    assert_eq!(
        (first, last),
        (401, 401),
        "the reader's older sessions still work"
    );
    for cookie in &cookies[n - 16..] {
        assert_eq!(get(&http, &jobs, &[("Cookie", cookie)]).0, 200);
    }
    assert_eq!(c.budget("peek", "dashboard_sessions"), (16, Some(16), false));
    assert_eq!(c.budget("root", "dashboard_sessions").0, 1);
    eprintln!("dashboard: {n} logins in {took:?}; honest {honest:?}");
}
