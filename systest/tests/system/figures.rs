//! Figures agree between views: one job's perft leaves, units, time and
//! rate, the leaves its workers counted and the credit its participants
//! got, read from `perft status`, `perft divide`, the dashboard's API,
//! `perft participant list` and the coordinator's and workers' /metrics,
//! each relation checked as docs/dashboard-api.md and docs/operations.md
//! state it. Three kinds of leaves differ by design: a job's are weighted
//! by paths, a worker's and a participant's are each unit's count once,
//! and a verified job's units are counted, and credited, twice.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::cluster::Cluster;
use crate::common::http::{agent, get, json};
use crate::common::jobs::words;
use crate::common::{free_port, ok, published_checkers};

/// The two participants whose machines count, one machine each.
const PARTICIPANTS: [&str; 2] = ["alice", "bob"];
/// Checkers perft(10) at a fixed split depth: both jobs have the same
/// plan, so the same units with the same counts.
const JOB: &str = "--game checkers --depth 10 --split-depth 4";

/// One Prometheus scrape.
struct Scrape(String);

impl Scrape {
    fn of(port: u16) -> Scrape {
        let text = ureq::get(&format!("http://127.0.0.1:{port}/metrics"))
            .call()
            .unwrap()
            .into_body()
            .read_to_string()
            .unwrap();
        Scrape(text)
    }

    /// The value of `series` (name and labels as exported), if present.
    fn get(&self, series: &str) -> Option<f64> {
        self.0
            .lines()
            .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
    }

    /// [`Scrape::get`] of a participant's gauge `name`.
    fn of_participant(&self, name: &str, participant: &str) -> Option<f64> {
        self.get(&format!("{name}{{participant=\"{participant}\"}}"))
    }
}

/// Units and their leaves, each unit's count once: what a machine counted
/// or a participant was credited with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Tally {
    units: u64,
    leaves: u128,
}

impl Tally {
    fn minus(self, before: Tally) -> Tally {
        Tally {
            units: self.units - before.units,
            leaves: self.leaves - before.leaves,
        }
    }
}

/// A count string of the JSON (counts are decimal strings).
fn count(v: &Value) -> u128 {
    v.as_str()
        .unwrap_or_else(|| panic!("not a count string: {v}"))
        .parse()
        .unwrap()
}

/// Every view read at one moment (as near as separate reads get).
struct Views {
    /// `perft status JOB` text.
    status: String,
    /// `perft divide JOB --format json`.
    divide: Value,
    /// `/api/jobs/ID`, and the job's entry in `/api/jobs`.
    detail: Value,
    listed: Value,
    /// `/api/workers` and `/api/participants` arrays.
    workers: Vec<Value>,
    participants_api: Vec<Value>,
    /// `perft participant list --format json`.
    participants_cli: Vec<Value>,
    coordinator: Scrape,
    /// Each participant's machine's own /metrics.
    machines: BTreeMap<&'static str, Scrape>,
}

/// Reads the views: the CLI as `admin`, the dashboard with its bearer.
struct Reader<'a> {
    c: &'a Cluster,
    dashboard: String,
    bearer: String,
    worker_ports: BTreeMap<&'static str, u16>,
}

impl Reader<'_> {
    fn api(&self, path: &str) -> Value {
        let (status, body) = get(
            &agent(),
            &format!("{}{path}", self.dashboard),
            &[("Authorization", &self.bearer)],
        );
        assert_eq!(status, 200, "{path}: {body}");
        json(&body)
    }

    fn read(&self, job: &str) -> Views {
        let cli = |args: &[&str]| ok(self.c.perft_as("root", args));
        let list = self.api("/api/jobs");
        let listed = list["jobs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|j| j["id"] == job)
            .unwrap_or_else(|| panic!("{job} not in {list}"))
            .clone();
        Views {
            status: cli(&["status", job]),
            divide: json(&cli(&["divide", job, "--format", "json"])),
            detail: self.api(&format!("/api/jobs/{job}")),
            listed,
            workers: self.api("/api/workers")["workers"].as_array().unwrap().clone(),
            participants_api: self.api("/api/participants")["participants"]
                .as_array()
                .unwrap()
                .clone(),
            participants_cli: json(&cli(&["participant", "list", "--format", "json"]))
                .as_array()
                .unwrap()
                .clone(),
            coordinator: Scrape::of(self.c.metrics_port()),
            machines: self
                .worker_ports
                .iter()
                .map(|(p, port)| (*p, Scrape::of(*port)))
                .collect(),
        }
    }
}

impl Views {
    /// A line `NAME: VALUE` of `perft status`.
    fn status_field(&self, name: &str) -> &str {
        self.status
            .lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(": "))
            .unwrap_or_else(|| panic!("no {name} in {}", self.status))
    }

    /// What `participant`'s machine counted, as the dashboard shows it
    /// (from its heartbeats; nothing before the first).
    fn worker_api(&self, participant: &str) -> Tally {
        let w = self
            .workers
            .iter()
            .find(|w| w["participant"] == participant)
            .unwrap_or_else(|| panic!("no worker of {participant} in {:?}", self.workers));
        Tally {
            units: w["units_done"].as_u64().unwrap(),
            leaves: if w["leaves_done"].is_null() {
                0
            } else {
                count(&w["leaves_done"])
            },
        }
    }

    /// What `participant`'s machine counted, from its own /metrics.
    fn worker_own(&self, participant: &str) -> Tally {
        let m = &self.machines[participant];
        Tally {
            units: m.get("perft_worker_units_total").unwrap_or(0.0) as u64,
            leaves: m.get("perft_worker_leaves_total").unwrap_or(0.0) as u128,
        }
    }

    /// What `participant`'s machines counted, as the coordinator's
    /// /metrics sums their heartbeats.
    fn worker_coordinator(&self, participant: &str) -> Tally {
        let m = &self.coordinator;
        Tally {
            units: m
                .of_participant("perft_workers_units_done", participant)
                .unwrap_or(0.0) as u64,
            leaves: m
                .of_participant("perft_workers_leaves_done", participant)
                .unwrap_or(0.0) as u128,
        }
    }

    fn participant_row<'v>(rows: &'v [Value], name: &str) -> &'v Value {
        rows.iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("no participant {name} in {rows:?}"))
    }

    /// `name`'s credit in `perft participant list`.
    fn credit_cli(&self, name: &str) -> Tally {
        let row = Self::participant_row(&self.participants_cli, name);
        Tally {
            units: count(&row["units"]) as u64,
            leaves: count(&row["leaves"]),
        }
    }

    /// `name`'s credit in the coordinator's /metrics, once published.
    fn credit_metrics(&self, name: &str) -> Option<Tally> {
        let m = &self.coordinator;
        Some(Tally {
            units: m.of_participant("perft_participant_units", name)? as u64,
            leaves: m.of_participant("perft_participant_leaves", name)? as u128,
        })
    }

    /// Whether the slower views (heartbeats every 2 s, gauges every
    /// second) have caught up with what the machines counted and the
    /// journal holds: `done_jobs` done, `leaves_total` their leaves.
    fn settled(&self, done_jobs: u64, leaves_total: u128) -> bool {
        let coordinator = &self.coordinator;
        coordinator.get("perft_jobs{state=\"done\"}") == Some(done_jobs as f64)
            && coordinator.get("perft_leaves_total") == Some(leaves_total as f64)
            && PARTICIPANTS.iter().all(|p| {
                let own = self.worker_own(p);
                self.worker_api(p) == own
                    && self.worker_coordinator(p) == own
                    && self.credit_metrics(p) == Some(self.credit_cli(p))
            })
    }
}

/// Reads the views until they have settled (or 20 s passed: the
/// assertions then show what disagrees).
fn read_settled(reader: &Reader<'_>, job: &str, done_jobs: u64, leaves_total: u128) -> Views {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let views = reader.read(job);
        if views.settled(done_jobs, leaves_total) || Instant::now() > deadline {
            return views;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// The relations of one done job's own figures, in every view that shows
/// them; returns its perft leaves and its units.
fn check_job(v: &Views, job: &str, verify: bool) -> (u128, u64) {
    let j = &v.detail["job"];
    assert_eq!(j["state"], "done", "{job}: {j}");
    assert_eq!(v.status_field("state"), "done");
    assert_eq!(j["verify"], verify);
    assert_eq!(v.status.contains("\nverified: "), verify, "{}", v.status);
    assert_eq!(j["disagreements"], 0, "{j}");
    // The list and the job page show the same JOB.
    assert_eq!(&v.listed, j, "/api/jobs and /api/jobs/{job} differ");

    // Its perft leaves: the same figure in every view, and the published one.
    let leaves = count(&j["leaves_done"]);
    let published: u128 = published_checkers(10).parse().unwrap();
    assert_eq!(leaves, published, "{job}: leaves_done is the published perft(10)");
    assert_eq!(v.status_field("leaves so far").parse::<u128>().unwrap(), leaves);
    assert_eq!(count(&v.detail["total"]["leaves"]), leaves);
    assert_eq!(count(&v.detail["published_total"]["leaves"]), leaves);
    assert_eq!(v.detail["total_matches"], true);
    assert_eq!(count(&v.divide["leaves"]), leaves, "perft divide's total");

    // Units: all decided, none waiting, held or handed out again.
    let units = j["units_total"].as_u64().unwrap();
    assert_eq!(j["units_done"].as_u64().unwrap(), units);
    assert_eq!(
        (j["units_queued"].as_u64(), j["units_leased"].as_u64()),
        (Some(0), Some(0))
    );
    assert_eq!(j["units_released"].as_u64(), Some(0), "no lease lapsed here");
    assert_eq!(
        v.status_field("units"),
        format!("{units}/{units} (0 handed out again)")
    );
    assert_eq!(j["work_done"], 1.0);

    // The divide table: per first move, leaves sum to the total; units are
    // all decided, and a unit below several first moves (a transposed
    // position) is under each, so they sum to at least the job's.
    let lines = v.detail["divide"].as_array().unwrap();
    let line_leaves: u128 = lines.iter().map(|l| count(&l["leaves"])).sum();
    assert_eq!(line_leaves, leaves, "the divide lines add up to the total");
    let cli_lines: u128 = v.divide["divide"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| count(&l["leaves"]))
        .sum();
    assert_eq!(cli_lines, leaves, "perft divide's lines add up to its total");
    let line_units: u64 = lines.iter().map(|l| l["units_total"].as_u64().unwrap()).sum();
    for l in lines {
        assert_eq!(l["units_done"], l["units_total"], "{l}");
    }
    assert!(
        line_units >= units,
        "{line_units} units below first moves, {units} in all"
    );

    // Time and rate: `perft status` shows the same seconds (to the ms);
    // a finished job's rate is its perft leaves over them.
    let seconds = j["seconds"].as_f64().unwrap();
    assert!(seconds > 0.0, "{j}");
    assert_eq!(v.status_field("time"), format!("{seconds:.3} s"));
    let rate = j["leaves_per_second"].as_f64().unwrap();
    let average = leaves as f64 / seconds;
    assert!(
        (rate - average).abs() <= average * 1e-12,
        "a finished job's rate {rate} is its leaves over its seconds, {average}"
    );
    eprintln!(
        "figures: job {job} (verify {verify}): {leaves} perft leaves, {units} units \
         ({line_units} below first moves), {seconds} s, {rate:.0} leaves/s"
    );
    (leaves, units)
}

/// The relations of the figures that add up over the coordinator's life:
/// every machine's and participant's in each view, and the coordinator's
/// totals over the `jobs` done so far (their leaves and units).
fn check_running_totals(v: &Views, jobs: &[(u128, u64)]) {
    let m = &v.coordinator;
    let leaves: u128 = jobs.iter().map(|j| j.0).sum();
    let units: u64 = jobs.iter().map(|j| j.1).sum();
    assert_eq!(m.get("perft_jobs{state=\"done\"}"), Some(jobs.len() as f64));
    assert_eq!(
        m.get("perft_leaves_total"),
        Some(leaves as f64),
        "perft_leaves_total sums the jobs' perft leaves"
    );
    assert_eq!(m.get("perft_units{state=\"done\"}"), Some(units as f64));
    for p in PARTICIPANTS {
        // A machine's count: its own metrics, its row on the dashboard and
        // its participant's gauge (one machine each) agree.
        let own = v.worker_own(p);
        assert_eq!(
            v.worker_api(p),
            own,
            "{p}'s machine: /api/workers vs its /metrics"
        );
        assert_eq!(
            v.worker_coordinator(p),
            own,
            "{p}'s machine: the coordinator's perft_workers_* vs its /metrics"
        );
        // A participant's credit: `participant list`, the dashboard's
        // participants and the coordinator's gauges agree.
        let cli = Views::participant_row(&v.participants_cli, p);
        let api = Views::participant_row(&v.participants_api, p);
        for field in [
            "role",
            "units",
            "leaves",
            "lost_votes",
            "lapses",
            "revoked",
            "quarantined",
        ] {
            assert_eq!(
                cli[field], api[field],
                "{p}'s {field}: participant list vs /api/participants"
            );
        }
        let cpu = cli["cpu_seconds"].as_f64().unwrap();
        assert!(
            (cpu - api["cpu_seconds"].as_f64().unwrap()).abs() < 1e-9,
            "{cli} {api}"
        );
        assert!(
            (cpu - m.of_participant("perft_participant_cpu_seconds", p).unwrap()).abs() < 1e-9,
            "{p}'s cpu seconds in /metrics"
        );
        assert_eq!(
            v.credit_metrics(p),
            Some(v.credit_cli(p)),
            "{p}: /metrics vs participant list"
        );
        assert_eq!(cli["lost_votes"], "0");
        assert_eq!(cli["lapses"], "0");
    }
}

fn sum<'a>(tallies: impl IntoIterator<Item = &'a Tally>) -> Tally {
    tallies.into_iter().fold(Tally::default(), |a, t| Tally {
        units: a.units + t.units,
        leaves: a.leaves + t.leaves,
    })
}

/// What one done job's views settled on: its perft leaves and units, and
/// what each participant's machine had counted and each participant had
/// been credited with by then (over the coordinator's life).
struct Settled {
    job: (u128, u64),
    machines: BTreeMap<&'static str, Tally>,
    credit: BTreeMap<&'static str, Tally>,
}

/// Reads one done job's views once settled and checks the job's and the
/// running totals' relations (`before`: the jobs done earlier).
fn check_job_views(reader: &Reader<'_>, job: &str, verify: bool, before: &[(u128, u64)]) -> Settled {
    let published: u128 = published_checkers(10).parse().unwrap();
    let leaves_total = published * (before.len() as u128 + 1);
    let views = read_settled(reader, job, before.len() as u64 + 1, leaves_total);
    let this = check_job(&views, job, verify);
    let mut all = before.to_vec();
    all.push(this);
    check_running_totals(&views, &all);
    Settled {
        job: this,
        machines: PARTICIPANTS.iter().map(|p| (*p, views.worker_own(p))).collect(),
        credit: PARTICIPANTS.iter().map(|p| (*p, views.credit_cli(p))).collect(),
    }
}

#[test]
fn figures_agree_between_status_dashboard_participant_list_and_metrics() {
    let started = Instant::now();
    let mut c = Cluster::builder()
        .participant("root", "admin")
        .workers(&PARTICIPANTS)
        .dashboard()
        .metrics()
        // Heartbeats (a third of this) every 2 s: the dashboard's worker
        // figures catch up within a few seconds of the end.
        .serve_args(&["--lease-seconds", "6"])
        .start();
    let mut worker_ports = BTreeMap::new();
    for p in PARTICIPANTS {
        let port = free_port();
        let listen = format!("127.0.0.1:{port}");
        c.worker_as(&format!("{p}-box"), p, &["--metrics-listen", &listen]);
        worker_ports.insert(p, port);
    }
    let bearer = format!(
        "Bearer {}",
        std::fs::read_to_string(c.secret("root")).unwrap().trim()
    );
    let reader = Reader {
        c: &c,
        dashboard: c.dashboard.clone().unwrap(),
        bearer,
        worker_ports,
    };

    // Not verified: each unit counted once, by either machine, and
    // credited to its participant.
    let plain = c.run_job_as("root", &words(JOB));
    let first = check_job_views(&reader, &plain, false, &[]);
    let (leaves, units) = first.job;
    let counted = sum(first.machines.values());
    assert_eq!(counted.units, units, "each unit counted once, over the machines");
    assert_eq!(
        sum(first.credit.values()),
        counted,
        "what was credited is what was counted, each unit's count once"
    );
    // Each unit's count once is at most the job's perft leaves, which
    // weigh it by its paths.
    assert!(counted.leaves <= leaves, "{counted:?} vs {leaves} perft leaves");

    // Verified: every unit counted for both participants and credited to
    // each, the same units with the same counts as the plain job's.
    let mut args = words(JOB);
    args.push("--verify");
    let verified = c.run_job_as("root", &args);
    let second = check_job_views(&reader, &verified, true, &[first.job]);
    assert_eq!(second.job, first.job, "the same plan: the same leaves and units");
    for p in PARTICIPANTS {
        let machine = second.machines[p].minus(first.machines[p]);
        let credit = second.credit[p].minus(first.credit[p]);
        let every_unit = Tally {
            units,
            leaves: counted.leaves,
        };
        assert_eq!(machine, every_unit, "{p}'s machine counted every unit once");
        assert_eq!(credit, every_unit, "{p} was credited with every unit once");
    }
    // The CLI's help says which leaves each verb shows (however wrapped).
    let help = |args: &[&str]| ok(c.perft(args)).split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        help(&["status", "--help"]).contains("are the job's perft leaves"),
        "status --help names perft leaves"
    );
    assert!(
        help(&["participant", "list", "--help"]).contains("each unit's count once"),
        "participant list --help says how credit counts leaves"
    );
    eprintln!(
        "figures: each unit's count once {} leaves, perft leaves {leaves}; checked in {:?}",
        counted.leaves,
        started.elapsed()
    );
}
