//! Cluster jobs end to end on real processes: Reversi counted in either
//! convention, and a done job's certificate (from the coordinator, the
//! dashboard or a stopped coordinator's data dir) that audits clean at
//! 100% and fails every kind of tampering.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::cluster::Cluster;
use crate::common::http::{agent, get, get_bytes, json};
use crate::common::jobs::words;
use crate::common::tamper::{audit_all, audit_with, every_tampering_fails, resealed};
use crate::common::{ok, perft_as, refused};
use perft_certificate::{Certificate, DeciderName};
use perft_core::{Convention, GameKind, Leaves};
use perft_proto as pb;

/// The shared cluster with its dashboard and participants: an admin
/// `root`, a reader `auditor` and the given workers (not started).
fn certifying(workers: &[&str]) -> Cluster {
    Cluster::builder()
        .participants(&[("root", "admin"), ("auditor", "reader")])
        .workers(workers)
        .dashboard()
        .start()
}

/// One counting process per worker participant, named after it.
fn run_workers(c: &mut Cluster) {
    for name in c.worker_names().to_vec() {
        c.worker_as(&name, &name, &[]);
    }
}

/// `perft certificate ID --output FILE` as the reader; returns the file.
fn certificate(c: &Cluster, id: &str) -> PathBuf {
    let path = c.files().join(format!("{id}.cert"));
    let out = ok(c.perft_as(
        "auditor",
        &["certificate", id, "--output", path.to_str().unwrap()],
    ));
    assert!(
        out.starts_with(&format!("certificate of job {id}: ")) && out.contains("written to"),
        "{out}"
    );
    path
}

fn bearer(secret: &Path) -> String {
    format!("Bearer {}", std::fs::read_to_string(secret).unwrap().trim())
}

fn published(game: GameKind, convention: Option<Convention>, depth: u32) -> Leaves {
    game.fns_in(convention)
        .unwrap()
        .published(depth)
        .expect("a published count")
        .total
}

#[test]
fn reversi_jobs_count_in_either_convention() {
    let mut c = certifying(&["alice", "bob"]);
    run_workers(&mut c);
    let oeis = published(GameKind::Reversi, Some(Convention::Oeis), 10);
    let bik = published(GameKind::Reversi, None, 10);
    assert_ne!(oeis.leaves, bik.leaves, "depth 10 tells the conventions apart");

    let oeis_job = c.run_job_as(
        "root",
        &["--game", "reversi", "--depth", "10", "--convention", "oeis"],
    );
    let report = c.divide_as("auditor", &oeis_job);
    assert_eq!(report["leaves"], oeis.leaves.to_string().as_str());
    assert_eq!(report["convention"], "oeis");
    // Bik's is the default.
    let bik_job = c.run_job_as("root", &["--game", "reversi", "--depth", "10"]);
    let report = c.divide_as("auditor", &bik_job);
    assert_eq!(report["leaves"], bik.leaves.to_string().as_str());
    assert_eq!(report["higher"], bik.higher.to_string().as_str());
    assert_eq!(report["convention"], "bik");

    let status = ok(perft_as(&c.url, &c.secret("auditor"), &["status", &oeis_job]));
    assert!(status.contains("game: reversi\nconvention: oeis\n"), "{status}");
    let status = ok(perft_as(&c.url, &c.secret("auditor"), &["status", &bik_job]));
    assert!(status.contains("convention: bik\n"), "{status}");
    let list = ok(perft_as(&c.url, &c.secret("auditor"), &["list"]));
    assert!(
        list.contains("reversi (oeis)") && list.contains("reversi (bik)"),
        "{list}"
    );
    let text = ok(perft_as(&c.url, &c.secret("auditor"), &["divide", &oeis_job]));
    assert!(text.contains("convention: oeis"), "{text}");
    // `perft verify` compares a cluster's count with the convention's table.
    let out = ok(perft_as(
        &c.url,
        &c.secret("root"),
        &[
            "verify",
            "--game",
            "reversi",
            "--depth",
            "9",
            "--convention",
            "oeis",
            "--coordinator",
            &c.url,
        ],
    ));
    let term = published(GameKind::Reversi, Some(Convention::Oeis), 9).leaves;
    assert!(out.contains(&format!("match     total: {term}")), "{out}");

    // The dashboard shows it, and compares with the convention's table.
    let bearer = bearer(&c.secret("auditor"));
    let (status, body) = get(
        &agent(),
        &format!("{}/api/jobs/{oeis_job}", c.dashboard.as_deref().unwrap()),
        &[("Authorization", &bearer)],
    );
    assert_eq!(status, 200, "{body}");
    let detail = json(&body);
    assert_eq!(detail["job"]["convention"], "oeis");
    assert_eq!(
        detail["published_total"]["leaves"],
        oeis.leaves.to_string().as_str()
    );
    assert_eq!(detail["total_matches"], true);

    // Games without a choice refuse one, in one line, before and at the
    // coordinator.
    let out = perft_as(
        &c.url,
        &c.secret("root"),
        &words("submit --game checkers --depth 5 --convention oeis"),
    );
    assert!(
        refused(&out)
            .contains("checkers has one way of counting: a convention (oeis) applies to reversi only"),
        "{out:?}"
    );
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let mut client = crate::common::perft_client_as(&c.url, &c.secret("root")).await;
        for (game, convention, expected) in [
            (
                pb::Game::Chess,
                pb::Convention::Bik as i32,
                "chess has one way of counting",
            ),
            (pb::Game::Reversi, 9, "unknown convention 9: expected bik or oeis"),
        ] {
            let status = client
                .submit_job(pb::SubmitJobRequest {
                    game: game.into(),
                    depth: 3,
                    convention,
                    ..Default::default()
                })
                .await
                .unwrap_err();
            assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
            assert!(status.message().contains(expected), "{status:?}");
        }
    });
}

/// Checks a cluster job's certificate: what it says of the job, its
/// deciders, and a clean audit at 100%.
fn check_certificate(
    path: &Path,
    game: GameKind,
    convention: Option<Convention>,
    depth: u32,
    deciders: usize,
) {
    let cert = Certificate::decode(&std::fs::read(path).unwrap()).unwrap();
    let total = published(game, convention, depth);
    assert_eq!(cert.header.game, game);
    assert_eq!(
        cert.header.convention,
        game.resolve_convention(convention).unwrap()
    );
    assert_eq!(cert.header.depth, depth);
    assert_eq!(cert.total, total);
    let mut names: Vec<&str> = cert.participants.iter().map(DeciderName::as_str).collect();
    names.sort_unstable();
    assert!(names.iter().all(|n| ["alice", "bob"].contains(n)), "{names:?}");
    assert!(cert.units.iter().all(|u| u.deciders.len() == deciders));
    if deciders == 2 {
        assert_eq!(names, ["alice", "bob"]);
    }
    let out = ok(audit_all(path));
    assert!(out.contains("audit passed"), "{out}");
    let units = cert.units.len();
    assert!(
        out.contains(&format!("recount: {units} of {units} units (100.00%)")),
        "{out}"
    );
    assert!(out.contains(&format!("total {}", total.leaves)), "{out}");
}

/// Now, in Unix seconds.
fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Checks that a cluster job's certificate names job `id`, a finish time
/// within `window` (Unix seconds: the job was submitted after its start
/// and was done by its end) and the perft that served it, and that the
/// audit prints them.
fn check_provenance(path: &Path, id: &str, window: std::ops::RangeInclusive<u64>) {
    let cert = Certificate::decode(&std::fs::read(path).unwrap()).unwrap();
    assert_eq!(cert.version(), perft_certificate::VERSION_LEAVES_PROVENANCE);
    let made = cert.provenance.expect("a coordinator names the job");
    assert_eq!(made.job, id);
    assert!(window.contains(&made.finished), "{made:?} not in {window:?}");
    let program = format!("perft {}", env!("CARGO_PKG_VERSION"));
    assert_eq!(made.program, program);
    let out = ok(audit_with(path, &["--sample", "0"]));
    let expected = format!(
        "made by: job {id}, finished {}, by {program}",
        perft_certificate::rfc3339(made.finished)
    );
    assert_eq!(out.lines().nth(1), Some(expected.as_str()), "{out}");
}

#[test]
fn a_cluster_certificate_audits_clean_and_fails_every_tampering() {
    let mut c = certifying(&["alice", "bob"]);
    run_workers(&mut c);
    // Verified: every unit decided by both participants.
    let before = unix_now();
    let checkers = c.run_job_as(
        "root",
        &words("--game checkers --depth 11 --split-depth 5 --verify"),
    );
    let between = unix_now();
    let reversi = c.run_job_as(
        "root",
        &words("--game reversi --depth 10 --split-depth 5 --convention oeis"),
    );
    let after = unix_now();
    let checkers_file = certificate(&c, &checkers);
    check_certificate(&checkers_file, GameKind::Checkers, None, 11, 2);
    check_provenance(&checkers_file, &checkers, before..=between);
    let reversi_file = certificate(&c, &reversi);
    check_certificate(&reversi_file, GameKind::Reversi, Some(Convention::Oeis), 10, 1);
    check_provenance(&reversi_file, &reversi, between..=after);

    // The recount spread over the cluster, as jobs of the sampled units:
    // clean for the honest files, and a forged count is found there.
    let audit_on = |file: &Path| {
        perft_as(
            &c.url,
            &c.secret("root"),
            &[
                "audit",
                file.to_str().unwrap(),
                "--fraction",
                "1",
                "--seed",
                "7",
                "--on",
                &c.url,
            ],
        )
    };
    for file in [&checkers_file, &reversi_file] {
        let out = ok(audit_on(file));
        assert!(out.contains("audit passed"), "{out}");
        assert!(out.contains(&format!("recounted on {} (job ", c.url)), "{out}");
    }
    let mut forged = Certificate::decode(&std::fs::read(&reversi_file).unwrap()).unwrap();
    forged.units[17].count.leaves.leaves += 1;
    let forged_file = c.files().join("forged.cert");
    std::fs::write(&forged_file, resealed(&forged).encode()).unwrap();
    let out = audit_on(&forged_file);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("MISMATCH  unit 17 ("), "{stdout}");
    c.kill_workers();

    // The dashboard's download is the same file, behind the same door.
    let url = format!(
        "{}/api/jobs/{checkers}/certificate",
        c.dashboard.as_deref().unwrap()
    );
    let (status, disposition, body) = get_bytes(
        &agent(),
        &url,
        &[("Authorization", &bearer(&c.secret("auditor")))],
    );
    assert_eq!(status, 200);
    assert_eq!(
        disposition,
        format!("attachment; filename=\"job-{checkers}.cert\"")
    );
    assert_eq!(body, std::fs::read(&checkers_file).unwrap());
    let (status, _, _) = get_bytes(&agent(), &url, &[]);
    assert_eq!(status, 401);

    let tampering = c.files().join("tampering");
    std::fs::create_dir(&tampering).unwrap();
    every_tampering_fails(&tampering, &checkers_file);
    every_tampering_fails(&tampering, &reversi_file);

    // A stopped coordinator's data dir gives the same file.
    c.kill();
    for (id, file) in [(&checkers, &checkers_file), (&reversi, &reversi_file)] {
        let offline = c.files().join(format!("{id}-offline.cert"));
        ok(perft_as(
            &c.url,
            &c.secret("auditor"),
            &[
                "certificate",
                id,
                "--data-dir",
                c.data().to_str().unwrap(),
                "--output",
                offline.to_str().unwrap(),
            ],
        ));
        assert_eq!(std::fs::read(&offline).unwrap(), std::fs::read(file).unwrap());
    }
}

#[test]
fn a_job_that_is_not_done_has_no_certificate() {
    let mut c = certifying(&["alice"]);
    let id = ok(perft_as(
        &c.url,
        &c.secret("root"),
        &words("submit --game checkers --depth 9 --split-depth 3"),
    ))
    .trim()
    .to_owned();
    // A worker leases a unit and keeps it: the job runs.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let _held = runtime.block_on(async {
        let mut worker = crate::common::worker_client_as(&c.url, &c.worker_secret(0)).await;
        let session = worker
            .register(pb::RegisterRequest {
                name: "holder".to_owned(),
                threads: 1,
                only_job: String::new(),
            })
            .await
            .unwrap()
            .into_inner()
            .worker_id;
        let leased = worker
            .lease_units(pb::LeaseUnitsRequest {
                worker_id: session,
                max_units: 1,
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(leased.jobs.len(), 1);
        worker
    });
    let status = ok(perft_as(&c.url, &c.secret("auditor"), &["status", &id]));
    assert!(status.contains("state: running"), "{status}");

    let out = perft_as(&c.url, &c.secret("auditor"), &["certificate", &id]);
    let stderr = refused(&out);
    assert!(
        stderr.contains(&format!(
            "job {id} is running, not done: its certificate and unit counts exist once it is done"
        )),
        "{stderr}"
    );
    assert!(!Path::new(&format!("{id}.cert")).exists());
    let stderr = refused(&perft_as(
        &c.url,
        &c.secret("auditor"),
        &["certificate", "nosuchjob"],
    ));
    assert!(stderr.contains("no job 'nosuchjob'"), "{stderr}");
    let stderr = refused(&perft_as(
        &c.url,
        &c.secret("auditor"),
        &["certificate", "../etc"],
    ));
    assert!(stderr.contains("is not a job id"), "{stderr}");
    let (status, body) = get(
        &agent(),
        &format!("{}/api/jobs/{id}/certificate", c.dashboard.as_deref().unwrap()),
        &[("Authorization", &bearer(&c.secret("auditor")))],
    );
    assert_eq!(status, 409, "{body}");
    assert!(body.contains("is running, not done"), "{body}");

    // Offline: refused while the coordinator holds the data dir, and for
    // a job that is not done once it stopped.
    let data = c.data().to_str().unwrap().to_owned();
    let offline = ["certificate", &id, "--data-dir", &data, "--output", "x.cert"];
    let stderr = refused(&perft_as(&c.url, &c.secret("auditor"), &offline));
    assert!(stderr.contains("in use by another coordinator"), "{stderr}");
    c.kill();
    std::thread::sleep(Duration::from_millis(100));
    let stderr = refused(&perft_as(&c.url, &c.secret("auditor"), &offline));
    assert!(stderr.contains("is running, not done"), "{stderr}");
}

#[test]
fn a_job_of_units_is_checked_counted_and_read_back() {
    let mut c = certifying(&["alice"]);
    run_workers(&mut c);
    let start = GameKind::Checkers.fns().pack_text("").unwrap();
    let per_unit = published(GameKind::Checkers, None, 5);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let mut client = crate::common::perft_client_as(&c.url, &c.secret("root")).await;
        let units = |units: Vec<Vec<u8>>, depth| pb::SubmitJobRequest {
            game: pb::Game::Checkers.into(),
            depth,
            units,
            ..Default::default()
        };
        for (request, expected) in [
            (
                units(vec![start.clone(), vec![0xff; 13]], 5),
                "unit 1 is no packed checkers position",
            ),
            (
                units(vec![start.clone(), vec![1, 2, 3]], 5),
                "unit 1 is no packed checkers position",
            ),
            (units(vec![start.clone()], 0), "depth must be at least 1"),
            (
                pb::SubmitJobRequest {
                    split_depth: 2,
                    ..units(vec![start.clone()], 5)
                },
                "a job of units has no root position and no split depth",
            ),
        ] {
            let status = client.submit_job(request).await.unwrap_err();
            assert_eq!(status.code(), tonic::Code::InvalidArgument, "{status:?}");
            assert!(status.message().contains(expected), "{status:?}");
        }
        let id = client
            .submit_job(units(vec![start.clone(); 3], 5))
            .await
            .unwrap()
            .into_inner()
            .job_id;
        assert!(crate::common::wait_for(Duration::from_secs(30), || {
            ok(perft_as(&c.url, &c.secret("auditor"), &["status", &id])).contains("state: done")
        }));
        let mut counts = Vec::new();
        while counts.len() < 3 {
            let page = client
                .get_unit_counts(pb::GetUnitCountsRequest {
                    job_id: id.clone(),
                    start: counts.len() as u64,
                    page_size: 2,
                })
                .await
                .unwrap()
                .into_inner();
            assert_eq!(page.units_total, 3);
            counts.extend(page.counts.iter().map(pb::Leaves::to_core));
        }
        assert_eq!(counts, vec![per_unit; 3]);
        let past = client
            .get_unit_counts(pb::GetUnitCountsRequest {
                job_id: id.clone(),
                start: u64::MAX,
                page_size: u32::MAX,
            })
            .await
            .unwrap()
            .into_inner();
        assert!(past.counts.is_empty());
        let divide = c.divide_as("auditor", &id);
        assert_eq!(divide["leaves"], (3 * per_unit.leaves).to_string().as_str());
        assert_eq!(divide["position"], "3 units");
        let status = client
            .get_certificate(pb::GetCertificateRequest { job_id: id.clone() })
            .await
            .unwrap_err();
        assert_eq!(status.code(), tonic::Code::FailedPrecondition, "{status:?}");
        assert!(status.message().contains("counts a list of units"), "{status:?}");
    });
}
