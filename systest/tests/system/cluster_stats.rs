//! Statistics on the cluster, on real processes: a `--stats` job's leaves
//! by kind equal `perft run --stats` and the published table, survive a
//! coordinator restart, show in `divide` (JSON and CSV); and a worker that
//! sends kinds the job cannot have is refused whatever it forges.

use crate::common::cluster::Cluster;
use crate::common::jobs::words;
use crate::common::{ok, perft, published_stats_row, refused, register_worker, worker_client};
use perft_core::{GameKind, Leaves};
use perft_proto as pb;
use perft_proto::connect::AuthChannel;
use perft_proto::worker_service_client::WorkerServiceClient;
use tonic::Code;

type Workers = WorkerServiceClient<AuthChannel>;

/// Submits, follows the job to done; returns its id.
fn run_job(url: &str, args: &[&str]) -> String {
    let mut all = vec!["submit"];
    all.extend_from_slice(args);
    let id = ok(perft(url, &all)).trim().to_owned();
    let watched = ok(perft(url, &["watch", &id]));
    assert!(watched.starts_with(&format!("job {id} done: ")), "{watched}");
    id
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).expect("one JSON object")
}

/// What a report says of its count: leaves, statistics and the divide
/// with each move's statistics, sorted by move (a cluster's divide is in
/// plan order).
fn counted(report: &serde_json::Value) -> (serde_json::Value, serde_json::Value, Vec<String>) {
    let mut divide: Vec<String> = report["divide"]
        .as_array()
        .expect("a divide")
        .iter()
        .map(|line| format!("{} {} {}", line["move"], line["leaves"], line["stats"]))
        .collect();
    divide.sort();
    (report["leaves"].clone(), report["stats"].clone(), divide)
}

/// The shared cluster with `workers` tokenless workers, `w0`, `w1`, ...
fn start(workers: usize) -> Cluster {
    let mut cluster = Cluster::start(&[]);
    for i in 0..workers {
        cluster.worker(&format!("w{i}"), &[]);
    }
    cluster
}

fn divide(cluster: &Cluster, id: &str, format: &str) -> String {
    ok(perft(&cluster.url, &["divide", id, "--format", format]))
}

#[test]
fn cluster_statistics_equal_local_ones_and_the_published_table() {
    let mut cluster = start(2);
    // Checkers perft(12) and Reversi in A124004's convention, against the
    // same counts made by `perft run`.
    for (game, depth, extra) in [
        ("checkers", "12", &[][..]),
        (
            "reversi",
            "8",
            &["--convention", "oeis", "--split-depth", "3"][..],
        ),
    ] {
        let mut submit = vec!["--game", game, "--depth", depth, "--stats"];
        submit.extend_from_slice(extra);
        let id = run_job(&cluster.url, &submit);
        let remote = json(&divide(&cluster, &id, "json"));
        let mut local_args = vec![
            "run", "--game", game, "--depth", depth, "--stats", "--format", "json",
        ];
        local_args.extend(extra.iter().filter(|&&a| a == "--convention" || a == "oeis"));
        let local = json(&ok(perft(&cluster.url, &local_args)));
        assert_eq!(counted(&remote), counted(&local), "{game} {depth}");
        assert!(remote["stats"].as_object().is_some_and(|s| !s.is_empty()));
    }

    // Chess perft(7) against the Grand Chess Tree's row, column by column.
    let id = run_job(&cluster.url, &["--game", "chess", "--depth", "7", "--stats"]);
    let report = json(&divide(&cluster, &id, "json"));
    let row: Vec<(&str, String)> = published_stats_row(7)
        .into_iter()
        .map(|(column, value)| (column, value.to_string()))
        .collect();
    assert_eq!(report["leaves"], row[0].1.as_str());
    for (column, value) in &row[1..] {
        assert_eq!(report["stats"][column], value.as_str(), "{column}");
    }
    let csv = divide(&cluster, &id, "csv");
    let header = csv.lines().next().unwrap();
    let columns: Vec<&str> = row[1..].iter().map(|&(c, _)| c).collect();
    assert!(header.ends_with(&columns.join(",")), "{header}");
    let total = csv.lines().last().unwrap();
    let values: Vec<&str> = row[1..].iter().map(|(_, v)| v.as_str()).collect();
    assert!(total.ends_with(&values.join(",")), "{total}");

    // Its certificate carries every count's kinds: they total the
    // published row, and the audit passes with its sample recounted by
    // kind here and on the cluster itself.
    certificate_holds_the_kinds(&cluster, &id, &row);

    // A restart reads the kinds back from the journal.
    cluster.server().0.kill().unwrap();
    cluster.server().0.wait().unwrap();
    cluster.restart_elsewhere();
    let restored = json(&divide(&cluster, &id, "json"));
    assert_eq!(counted(&restored), counted(&report));

    // A statistics job needs a ply below its units.
    let depth_one = refused(&perft(
        &cluster.url,
        &["submit", "--game", "chess", "--depth", "1", "--stats"],
    ));
    assert!(
        depth_one.contains("a statistics job needs depth 2 or more"),
        "{depth_one}"
    );
}

/// Job `id`'s certificate (chess perft(7) by kind) holds `row` as its
/// total's kinds and audits clean, recounted locally and on the cluster.
fn certificate_holds_the_kinds(cluster: &Cluster, id: &str, row: &[(&str, String)]) {
    let path = cluster.data().join("stats.cert");
    let file = path.to_str().unwrap();
    let out = ok(perft(&cluster.url, &["certificate", id, "--output", file]));
    assert!(out.contains("written to"), "{out}");
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(
        bytes[8..10],
        4u16.to_le_bytes(),
        "a statistics certificate is version 4"
    );
    let cert = perft_certificate::Certificate::decode(&bytes).unwrap();
    let columns: Vec<&str> = row[1..].iter().map(|&(c, _)| c).collect();
    assert_eq!(cert.header.kinds, columns);
    let totals: Vec<String> = cert.total_kinds.iter().map(u128::to_string).collect();
    let published: Vec<&String> = row[1..].iter().map(|(_, v)| v).collect();
    assert_eq!(totals.iter().collect::<Vec<_>>(), published);
    for place in [&["--local"][..], &["--on", cluster.url.as_str()][..]] {
        let mut args = vec!["audit", file, "--sample", "12", "--seed", "5"];
        args.extend_from_slice(place);
        let out = ok(perft(&cluster.url, &args));
        assert!(out.contains("14 kinds of leaves"), "{out}");
        assert!(out.contains("leaves and each kind (captures enpassants"), "{out}");
        assert!(out.contains("recount: 12 of "), "{out}");
        assert!(out.ends_with("audit passed\n"), "{out}");
    }
}

async fn report(
    workers: &mut Workers,
    worker_id: &str,
    job_id: &str,
    lease: &pb::UnitLease,
    leaves: pb::Leaves,
) -> Result<pb::ReportResultsResponse, tonic::Status> {
    workers
        .report_results(pb::ReportResultsRequest {
            worker_id: worker_id.to_owned(),
            jobs: vec![pb::JobReport {
                job_id: job_id.to_owned(),
                results: vec![pb::UnitResult {
                    unit_id: lease.unit_id,
                    epoch: lease.epoch,
                    leaves: Some(leaves),
                    lease_tag: lease.lease_tag.clone(),
                    cpu_seconds: 0.0,
                }],
                released: Vec::new(),
            }],
        })
        .await
        .map(tonic::Response::into_inner)
}

/// Leases every unit of the one job queued, as worker `worker_id`.
async fn lease_all(workers: &mut Workers, worker_id: &str) -> pb::LeasedJob {
    let mut leased = workers
        .lease_units(pb::LeaseUnitsRequest {
            worker_id: worker_id.to_owned(),
            max_units: 1000,
        })
        .await
        .unwrap()
        .into_inner()
        .jobs;
    assert_eq!(leased.len(), 1, "{leased:?}");
    leased.remove(0)
}

#[tokio::test]
async fn forged_kinds_are_refused_and_the_true_ones_accepted() {
    let cluster = Cluster::start(&[]);
    let url = cluster.url.clone();
    let id = ok(perft(
        &url,
        &words("submit --game chess --depth 3 --split-depth 1 --stats"),
    ))
    .trim()
    .to_owned();
    let mut workers = worker_client(&url).await;
    let me = register_worker(&mut workers, "forger").await;
    let job = lease_all(&mut workers, &me).await;
    assert!(job.stats, "the lease says to count kinds");
    let lease = &job.units[0];
    let chess = GameKind::Chess.fns();
    let truth = chess.count_packed_stats(&lease.position, job.depth).unwrap();
    let kinds = |counts: &[u128]| pb::Leaves::with_kinds(truth.leaves, counts);
    let checks = truth.kinds.iter().position(|&k| k == "total_checks").unwrap();
    let mut above = truth.counts.clone();
    above[0] = truth.leaves.leaves + 1;
    let mut unsummed = truth.counts.clone();
    unsummed[checks] += 1;
    let forged = [
        ("no kinds", pb::Leaves::from(truth.leaves)),
        ("too few", kinds(&truth.counts[1..])),
        ("too many", kinds(&[truth.counts.as_slice(), &[0]].concat())),
        ("a kind above the leaves", kinds(&above)),
        ("a total not its parts' sum", kinds(&unsummed)),
        ("a thousand kinds", kinds(&[0; 1000])),
    ];
    for (what, count) in forged {
        let status = report(&mut workers, &me, &job.job_id, lease, count)
            .await
            .expect_err(what);
        assert_eq!(status.code(), Code::InvalidArgument, "{what}: {status:?}");
        assert_eq!(status.message().lines().count(), 1, "{what}: {status:?}");
    }
    let truthful = kinds(&truth.counts);
    let reply = report(&mut workers, &me, &job.job_id, lease, truthful)
        .await
        .unwrap();
    assert_eq!(reply.accepted, 1);

    // Kinds for a job that counts none are refused too.
    ok(perft(&url, &["cancel", &id]));
    ok(perft(
        &url,
        &words("submit --game checkers --depth 4 --split-depth 1"),
    ));
    let plain = lease_all(&mut workers, &me).await;
    assert!(!plain.stats);
    let lease = &plain.units[0];
    let status = report(
        &mut workers,
        &me,
        &plain.job_id,
        lease,
        pb::Leaves::with_kinds(Leaves::full(1), &[0, 0, 0]),
    )
    .await
    .expect_err("kinds for a plain job");
    assert!(status.message().contains("counts no statistics"), "{status:?}");
}
