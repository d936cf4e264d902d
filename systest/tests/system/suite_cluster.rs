//! `perft suite --on`: a suite counted on a cluster of real processes (a
//! coordinator and a worker with credentials of their own) gives the same
//! table as on this machine, and a wrong count still exits 1.

use crate::common::cluster::Cluster;
use crate::common::{core_data as data, perft_as};

/// The result rows of a suite table, without the timing line.
fn rows(stdout: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(stdout);
    let mut rows: Vec<String> = text.lines().map(str::to_owned).collect();
    let summary = rows.pop().expect("a summary line");
    rows.push(summary.split(" (").next().unwrap_or_default().to_owned());
    rows
}

#[test]
fn a_suite_on_the_cluster_equals_the_local_table_and_mismatches_exit_1() {
    let mut c = Cluster::builder()
        .participants(&[("author", "submitter"), ("box", "worker")])
        .start();
    let (url, submitter, worker_secret) = (c.url.clone(), c.secret("author"), c.secret("box"));
    c.worker_as("box-1", "box", &[]);

    for (game, file, depth) in [
        ("checkers", "checkers-suite.epd", "6"),
        ("chess", "chess-suite.epd", "2"),
    ] {
        let local = perft_as(
            &url,
            &submitter,
            &["suite", &data(file), "--game", game, "--max-depth", depth],
        );
        assert_eq!(
            local.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&local.stderr)
        );
        let cluster = perft_as(
            &url,
            &submitter,
            &[
                "suite",
                &data(file),
                "--game",
                game,
                "--max-depth",
                depth,
                "--on",
                &url,
            ],
        );
        assert_eq!(
            cluster.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&cluster.stderr)
        );
        assert_eq!(rows(&cluster.stdout), rows(&local.stdout), "{game}");
        assert!(rows(&cluster.stdout).last().unwrap().ends_with(", 0 mismatches"));
    }

    let wrong = c.files().join("wrong.epd");
    std::fs::write(
        &wrong,
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 ;D1 20 ;D2 401\n",
    )
    .unwrap();
    let output = perft_as(
        &url,
        &submitter,
        &["suite", wrong.to_str().unwrap(), "--on", &url],
    );
    assert_eq!(output.status.code(), Some(1));
    let table = rows(&output.stdout);
    assert!(
        table[1].starts_with("MISMATCH  1     2      401                   400"),
        "{table:?}"
    );

    // A worker's credential may not submit: refused, exit 2 or 1 with a line naming why.
    let output = perft_as(
        &url,
        &worker_secret,
        &["suite", wrong.to_str().unwrap(), "--on", &url],
    );
    assert_ne!(output.status.code(), Some(0));
    let error = String::from_utf8_lossy(&output.stderr);
    assert_eq!(error.trim().lines().count(), 1, "{error}");
}
