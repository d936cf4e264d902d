//! `perft estimate` against counts we know: the published totals of
//! Reversi perft(14) and checkers perft(18) (from `core/data`) fall inside
//! the printed 99% interval. Fixed seeds, so the draw is the same each run.

use std::process::Command;

use crate::common::{PERFT, ok, refused};
use perft_core::GameKind;

fn estimate(args: &[&str]) -> serde_json::Value {
    let mut all = vec![
        "estimate",
        "--format",
        "json",
        "--no-hash",
        "--time-budget",
        "0.2",
        "--seed",
        "1",
    ];
    all.extend_from_slice(args);
    let out = ok(Command::new(PERFT).args(&all).output().expect("perft runs"));
    serde_json::from_str(&out).expect("one JSON object")
}

fn assert_within(game: GameKind, depth: u32) {
    let d = depth.to_string();
    let p = estimate(&["--game", game.name(), "--depth", &d]);
    let truth = game.fns().published(depth).unwrap().total.leaves as f64;
    let (low, high) = (
        p["leaves"]["low"].as_f64().unwrap(),
        p["leaves"]["high"].as_f64().unwrap(),
    );
    assert!(
        low <= truth && truth <= high,
        "{game} {depth}: {truth} outside {low} .. {high}"
    );
    // The interval says something: within 25% either side.
    assert!(high < 1.25 * truth && low > 0.75 * truth, "{p}");
    let cpu = &p["cpu_seconds"];
    assert!(cpu["low"].as_f64().unwrap() <= cpu["estimate"].as_f64().unwrap());
    assert!(cpu["estimate"].as_f64().unwrap() > 0.0, "{p}");
    assert!(p["core_days"]["estimate"].as_f64().unwrap() > 0.0);
    assert!(p["journal_bytes"].as_u64().unwrap() > p["units"].as_u64().unwrap());
}

#[test]
fn reversi_14_lies_within_the_interval() {
    assert_within(GameKind::Reversi, 14);
}

#[test]
fn checkers_18_lies_within_the_interval() {
    assert_within(GameKind::Checkers, 18);
}

#[test]
fn bad_requests_are_refused() {
    let out = Command::new(PERFT)
        .args([
            "estimate",
            "--game",
            "checkers",
            "--depth",
            "9",
            "--convention",
            "oeis",
        ])
        .output()
        .unwrap();
    assert!(refused(&out).contains("applies to reversi only"));
    let out = Command::new(PERFT)
        .args([
            "estimate",
            "--game",
            "reversi",
            "--depth",
            "9",
            "--split-depth",
            "10",
        ])
        .output()
        .unwrap();
    assert!(refused(&out).contains("split depth 10"));
}
