//! Chaos, bounded in time: a coordinator and three workers on 127.0.0.1
//! count a job while a driver SIGKILLs a random worker every few seconds
//! (and restarts it under its name), and SIGKILLs the coordinator mid-job
//! (and restarts it on the same data dir). The final divide table must be
//! exact and the job must show the units that were handed out again. The
//! `--verify` run must have every unit decided by two machines.

use std::time::{Duration, Instant};

use crate::common::{Running, add_participant, divide_lines, perft, perft_as, try_serve, worker_as};
use perft_core::GameKind;

const DEADLINE: Duration = Duration::from_secs(420);

fn serve(listen: &str, data: &std::path::Path) -> Option<(Running, String)> {
    try_serve(listen, data, &["--lease-seconds", "2"], "error")
}

/// `units: done/total (released handed out again)` from `perft status`.
fn progress(url: &str, admin: &std::path::Path, job: &str) -> Option<(u64, u64, u64, String)> {
    let out = perft_as(url, admin, &["status", job]);
    let text = String::from_utf8(out.stdout).ok()?;
    let state = text.lines().find_map(|l| l.strip_prefix("state: "))?.to_owned();
    let units = text.lines().find_map(|l| l.strip_prefix("units: "))?;
    let (done, rest) = units.split_once('/')?;
    let (total, rest) = rest.split_once(" (")?;
    let released = rest.split_whitespace().next()?;
    Some((
        done.parse().ok()?,
        total.parse().ok()?,
        released.parse().ok()?,
        state,
    ))
}

/// What one chaos run counts and how it is checked.
struct Chaos {
    name: &'static str,
    depth: &'static str,
    split: &'static str,
    verify: bool,
    /// Progress fractions (in tenths) at which the coordinator is killed.
    coordinator_kills: &'static [u64],
}

/// Runs the chaos and returns the data dir (the journal) and job id.
fn chaos(plan: &Chaos) -> (std::path::PathBuf, String) {
    let data = std::env::temp_dir().join(format!("perft-chaos-{}-{}", plan.name, std::process::id()));
    let _ = std::fs::remove_dir_all(&data);
    let started = Instant::now();
    let mut seed = started.elapsed().as_nanos() as u64 ^ u64::from(std::process::id()) | 1;
    eprintln!("chaos {} seed {seed}", plan.name);
    let mut random = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };

    // Each machine is its own participant: verification needs two owners.
    let keys = tempfile::tempdir().unwrap();
    let admin = add_participant(&data, keys.path(), "root", "admin");
    let names = ["w1", "w2", "w3"];
    let secrets: Vec<_> = names
        .iter()
        .map(|n| add_participant(&data, keys.path(), n, "worker"))
        .collect();
    let (mut server, address) = serve("127.0.0.1:0", &data).expect("coordinator starts");
    let url = format!("http://{address}");
    let mut workers: Vec<Running> = names
        .iter()
        .zip(&secrets)
        .map(|(n, s)| worker_as(&url, n, s, &[]))
        .collect();
    let mut submit = vec![
        "submit",
        "--game",
        "checkers",
        "--depth",
        plan.depth,
        "--split-depth",
        plan.split,
    ];
    if plan.verify {
        submit.push("--verify");
    }
    let submitted = perft_as(&url, &admin, &submit);
    assert!(
        submitted.status.success(),
        "{}",
        String::from_utf8_lossy(&submitted.stderr)
    );
    let job = String::from_utf8(submitted.stdout).unwrap().trim().to_owned();

    let (mut worker_kills, mut coordinator_kills, mut downtime) = (0, 0, Duration::ZERO);
    let mut last_kill = Instant::now();
    loop {
        assert!(
            started.elapsed() < DEADLINE,
            "the job did not finish within {DEADLINE:?}"
        );
        std::thread::sleep(Duration::from_millis(500));
        let Some((done, total, _, state)) = progress(&url, &admin, &job) else {
            continue;
        };
        if state == "done" {
            break;
        }
        if state != "running" {
            let status = perft_as(&url, &admin, &["status", &job]);
            panic!(
                "the job must keep running, but it is {state}: {}",
                String::from_utf8_lossy(&status.stdout)
            );
        }
        let next_kill = plan.coordinator_kills.get(coordinator_kills);
        if next_kill.is_some_and(|&tenths| done * 10 >= total * tenths) {
            // The coordinator dies and comes back on the same port and data
            // dir; the workers find it again by themselves.
            server.kill();
            let down = Instant::now();
            server = loop {
                if let Some((s, _)) = serve(&address, &data) {
                    break s;
                }
                std::thread::sleep(Duration::from_millis(200));
            };
            downtime += down.elapsed();
            coordinator_kills += 1;
            eprintln!("coordinator killed at {done}/{total} units and restarted");
        } else if last_kill.elapsed() >= Duration::from_secs(3) {
            let victim = (random() % names.len() as u64) as usize;
            workers[victim].kill();
            workers[victim] = worker_as(&url, names[victim], &secrets[victim], &[]);
            worker_kills += 1;
            last_kill = Instant::now();
        }
    }
    let elapsed = started.elapsed();
    let (_, total, released, _) = progress(&url, &admin, &job).unwrap();
    assert_eq!(
        coordinator_kills,
        plan.coordinator_kills.len(),
        "every coordinator kill happened"
    );
    assert!(worker_kills >= 3, "workers were killed {worker_kills} times");
    assert!(
        released > 0,
        "killed workers' units must have been handed out again"
    );

    let divide = perft_as(&url, &admin, &["divide", &job, "--format", "json"]);
    assert!(divide.status.success());
    let divide = String::from_utf8(divide.stdout).unwrap();
    let report: serde_json::Value = serde_json::from_str(&divide).unwrap();
    let depth: u32 = plan.depth.parse().unwrap();
    let published = GameKind::Checkers
        .fns()
        .published(depth)
        .expect("a published total");
    assert_eq!(
        report["leaves"],
        published.total.leaves.to_string(),
        "published checkers perft({depth})"
    );
    let local = perft(
        &url,
        &[
            "run", "--game", "checkers", "--depth", plan.depth, "--format", "json", "--hash", "1G",
        ],
    );
    assert_eq!(
        divide_lines(&report),
        divide_lines(&serde_json::from_str(&String::from_utf8(local.stdout).unwrap()).unwrap())
    );

    let journal_bytes: u64 = std::fs::read_dir(&data)
        .unwrap()
        .map(|e| e.unwrap().metadata().unwrap().len())
        .sum();
    eprintln!(
        "chaos {}: {total} units, {released} handed out again, {worker_kills} worker kills, \
         {coordinator_kills} coordinator kills (down {downtime:?}), job done in {elapsed:?}, journal {journal_bytes} bytes",
        plan.name
    );
    drop(workers);
    drop(server);
    (data, job)
}

#[test]
fn killed_workers_and_a_killed_coordinator_lose_nothing() {
    let (data, _) = chaos(&Chaos {
        name: "plain",
        depth: "16",
        split: "5",
        verify: false,
        coordinator_kills: &[4],
    });
    let _ = std::fs::remove_dir_all(&data);
}

#[test]
fn verified_under_chaos_every_unit_is_decided_by_two_machines() {
    let (data, job) = chaos(&Chaos {
        name: "verify",
        depth: "15",
        split: "4",
        verify: true,
        coordinator_kills: &[3, 7],
    });
    // The journal names the machines whose counts decided each unit.
    let db = rusqlite::Connection::open(data.join("journal.sqlite")).unwrap();
    let units: i64 = db
        .query_row("SELECT units_total FROM jobs WHERE id = ?1", [&job], |r| r.get(0))
        .unwrap();
    let mut rows = db
        .prepare("SELECT machines FROM results WHERE job_id = ?1")
        .unwrap();
    let deciders: Vec<String> = rows
        .query_map([&job], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(deciders.len() as i64, units, "every unit decided");
    for machines in &deciders {
        let mut names: Vec<&str> = machines.lines().collect();
        names.sort_unstable();
        names.dedup();
        assert!(names.len() >= 2, "decided by {machines}");
    }
    drop(rows);
    drop(db);
    let _ = std::fs::remove_dir_all(&data);
}
