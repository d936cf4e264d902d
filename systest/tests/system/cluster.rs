//! The service end to end: a real coordinator and two real worker processes
//! on 127.0.0.1 (ephemeral port), driven through the `perft` CLI.

use crate::common::cluster::Cluster;
use crate::common::jobs::words;
use crate::common::{divide_lines, ok, perft};

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).expect("one JSON object")
}

fn run_job(url: &str, game: &str, depth: &str) -> serde_json::Value {
    let id = ok(perft(url, &["submit", "--game", game, "--depth", depth]))
        .trim()
        .to_owned();
    assert_eq!(id.len(), 12, "the job id alone: {id}");
    let watched = ok(perft(url, &["watch", &id]));
    assert!(watched.starts_with(&format!("job {id} done: ")), "{watched}");
    let report = json(&ok(perft(url, &["divide", &id, "--format", "json"])));
    assert_eq!(report["job"], id.as_str());
    assert_eq!(report["state"], "done");
    report
}

#[test]
fn two_workers_reproduce_the_published_tables_and_perft_run() {
    let mut c = Cluster::start(&[]);
    let url = c.url.clone();
    for name in ["w1", "w2"] {
        c.worker(name, &[]);
    }

    let reversi = run_job(&url, "reversi", "11");
    assert_eq!(reversi["leaves"], "212258800");
    assert_eq!(reversi["full_depth"], "212258572");
    assert_eq!(reversi["higher"], "228");
    let local = json(&ok(perft(
        &url,
        &["run", "--game", "reversi", "--depth", "11", "--format", "json"],
    )));
    assert_eq!(divide_lines(&reversi), divide_lines(&local));
    assert_eq!(reversi["position"], local["position"]);

    let checkers = run_job(&url, "checkers", "12");
    assert_eq!(checkers["leaves"], "388623673");
    assert_eq!(checkers["higher"], "0");
    let local = json(&ok(perft(
        &url,
        &["run", "--game", "checkers", "--depth", "12", "--format", "json"],
    )));
    assert_eq!(divide_lines(&checkers), divide_lines(&local));

    // Chess reaches the cluster through the game registry alone.
    let chess = run_job(&url, "chess", "5");
    assert_eq!(chess["leaves"], "4865609");
    let local = json(&ok(perft(
        &url,
        &["run", "--game", "chess", "--depth", "5", "--format", "json"],
    )));
    assert_eq!(divide_lines(&chess), divide_lines(&local));
    let moves: Vec<&str> = chess["divide"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["move"].as_str().unwrap())
        .collect();
    assert!(moves.is_sorted(), "chess divide sorted by UCI: {moves:?}");

    // A split depth given by hand plans the same count.
    let id = ok(perft(
        &url,
        &words("submit --game checkers --depth 9 --split-depth 3"),
    ))
    .trim()
    .to_owned();
    ok(perft(&url, &["watch", &id]));
    let status = ok(perft(&url, &["status", &id]));
    assert!(
        status.contains("split depth: 3\n") && status.contains("state: done\n"),
        "{status}"
    );
    assert!(status.contains("leaves so far: 3963680\n"), "{status}");
    let list = ok(perft(&url, &["list"]));
    assert_eq!(list.matches("done").count(), 4, "{list}");

    // Bad requests: one line, exit code 2.
    for (args, message) in [
        (
            vec!["submit", "--game", "go", "--depth", "3"],
            "invalid value 'go' for '--game <GAME>'",
        ),
        (
            words("submit --game checkers --depth 3 --position B:W14:B14"),
            "square 14 is given more than once",
        ),
        (
            vec!["submit", "--game", "reversi", "--depth", "31"],
            "depth 31 is above the reversi limit of 30",
        ),
        (
            words("submit --game checkers --depth 5 --split-depth 5"),
            "split depth 5 must be at least 1 and below the depth 5",
        ),
        (vec!["status", "nosuchjob"], "no job 'nosuchjob'"),
        (vec!["divide", "nosuchjob"], "no job 'nosuchjob'"),
        (vec!["cancel", "nosuchjob"], "no job 'nosuchjob'"),
    ] {
        let output = perft(&url, &args);
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
}

/// `run_job` from a set-up position.
fn run_position(url: &str, game: &str, depth: &str, position: &str) -> serde_json::Value {
    let args = ["submit", "--game", game, "--depth", depth, "--position", position];
    let id = ok(perft(url, &args)).trim().to_owned();
    ok(perft(url, &["watch", &id]));
    json(&ok(perft(url, &["divide", &id, "--format", "json"])))
}

#[test]
fn reversi_boards_with_empty_centres_count_on_the_cluster() {
    let mut c = Cluster::start(&[]);
    let url = c.url.clone();
    c.worker("w1", &[]);

    // The start's block moved to c3..d4: e4, d5 and e5 empty.
    let mut cells = ['-'; 64];
    for (square, disc) in [(18, 'O'), (19, 'X'), (26, 'X'), (27, 'O')] {
        cells[square] = disc;
    }
    let off_centre = format!("{} X", cells.iter().collect::<String>());
    let off_centre = off_centre.as_str();
    let cluster = run_position(&url, "reversi", "7", off_centre);
    assert_eq!(cluster["leaves"], "51410");
    let local = json(&ok(perft(
        &url,
        &[
            "run",
            "--game",
            "reversi",
            "--depth",
            "7",
            "--position",
            off_centre,
            "--format",
            "json",
        ],
    )));
    assert_eq!(divide_lines(&cluster), divide_lines(&local));

    // The original game's empty board: nobody moves, one game-over leaf.
    let empty = format!("{} X", "-".repeat(64));
    let cluster = run_position(&url, "reversi", "5", &empty);
    assert_eq!(
        (&cluster["leaves"], &cluster["higher"], &cluster["divide"]),
        (&"1".into(), &"1".into(), &serde_json::json!([]))
    );
}

#[test]
fn cancel_stops_a_job_and_watch_exits_non_zero() {
    let c = Cluster::start(&[]);
    let url = c.url.clone();
    // No worker: the job stays queued until cancelled.
    let id = ok(perft(&url, &["submit", "--game", "checkers", "--depth", "14"]))
        .trim()
        .to_owned();
    assert!(ok(perft(&url, &["status", &id])).contains("state: queued\n"));
    assert_eq!(
        ok(perft(&url, &["cancel", &id])).trim(),
        format!("job {id} cancelled")
    );
    let watched = perft(&url, &["watch", &id]);
    assert_eq!(watched.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&watched.stderr).contains("cancelled"));
}
