//! `perft run --stats` as a user runs it: the real binary's table of kinds,
//! JSON and CSV, checked against the published statistics in `core/data`,
//! per first move as well as in total; bad combinations refused with one
//! line and exit code 2.

use crate::common::jobs::words;
use crate::common::local::{perft, refused};
use crate::common::published_stats_row as published_row;

fn stdout(args: &[&str]) -> String {
    let output = perft(args);
    assert!(
        output.status.success(),
        "perft {args:?} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).expect("utf-8 output")
}

fn json(args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&stdout(args)).expect("one JSON object")
}

fn count(value: &serde_json::Value) -> u128 {
    value
        .as_str()
        .expect("counts are decimal strings")
        .parse()
        .expect("a number")
}

#[test]
fn text_prints_a_table_of_kinds_after_the_total() {
    let out = stdout(&["run", "--game", "chess", "--depth", "4", "--stats"]);
    let expected = published_row(4);
    assert!(out.contains("\n\ntotal: 197281\n\nkind "), "{out}");
    for (column, value) in expected.iter().skip(1) {
        let line = out
            .lines()
            .find(|line| line.split_whitespace().next() == Some(column))
            .unwrap_or_else(|| panic!("a line for {column}: {out}"));
        assert_eq!(
            line.split_whitespace().nth(1),
            Some(value.to_string().as_str()),
            "{line}"
        );
    }
    // The counts are right-aligned under "leaves".
    let header = out.lines().find(|line| line.starts_with("kind ")).unwrap();
    let captures = out.lines().find(|line| line.starts_with("captures ")).unwrap();
    assert_eq!(header.len(), captures.len(), "{header}\n{captures}");
    // The divide lines are the plain run's.
    let plain = stdout(&["run", "--game", "chess", "--depth", "4"]);
    let divide = |text: &str| text.split("\n\n").next().unwrap().to_owned();
    assert_eq!(divide(&out), divide(&plain));
}

#[test]
fn json_has_the_published_counts_and_per_move_counts_that_sum_to_them() {
    for extra in [&[][..], &["--raw"][..], &["--threads", "1", "--no-hash"][..]] {
        let mut args = vec![
            "run", "--game", "chess", "--depth", "5", "--stats", "--format", "json",
        ];
        args.extend_from_slice(extra);
        let report = json(&args);
        let expected = published_row(5);
        assert_eq!(count(&report["leaves"]), expected[0].1, "{extra:?}");
        // One entry per kind (the order is checked on CSV: a parsed map
        // here sorts its keys).
        let kinds = report["stats"].as_object().expect("stats is an object");
        assert_eq!(kinds.len(), expected.len() - 1);
        let divide = report["divide"].as_array().expect("divide is an array");
        assert_eq!(divide.len(), 20);
        for &(column, value) in expected.iter().skip(1) {
            assert_eq!(count(&report["stats"][column]), value, "{extra:?} {column}");
            let per_move: u128 = divide.iter().map(|entry| count(&entry["stats"][column])).sum();
            assert_eq!(per_move, value, "{extra:?} {column} summed over the divide");
        }
    }
}

#[test]
fn csv_has_a_column_per_kind_in_order_and_a_total_row() {
    let out = stdout(&[
        "run", "--game", "chess", "--depth", "3", "--stats", "--format", "csv",
    ]);
    let lines: Vec<&str> = out.lines().collect();
    let expected = published_row(3);
    let columns: Vec<&str> = expected.iter().skip(1).map(|&(c, _)| c).collect();
    assert_eq!(
        lines[0],
        format!("move,leaves,full_depth,higher,{}", columns.join(","))
    );
    assert_eq!(lines.len(), 1 + 20 + 1);
    let values: Vec<String> = expected.iter().skip(1).map(|(_, v)| v.to_string()).collect();
    assert_eq!(lines[21], format!("total,8902,8902,0,{}", values.join(",")));
    // The move rows sum to the total in every column.
    for (i, column) in columns.iter().enumerate() {
        let sum: u128 = lines[1..21]
            .iter()
            .map(|row| row.split(',').nth(4 + i).unwrap().parse::<u128>().unwrap())
            .sum();
        assert_eq!(sum.to_string(), values[i], "{column}");
    }
}

#[test]
fn reversi_and_checkers_print_their_own_kinds() {
    // Every game over at ply 10 or before is a leaf of Bik's perft(10),
    // and exactly the "higher" leaves of perft(12): 584 in Bik's table.
    let reversi = json(&[
        "run", "--game", "reversi", "--depth", "10", "--stats", "--format", "json",
    ]);
    assert_eq!(reversi["stats"]["game_overs"], "584");
    assert_eq!(reversi["stats"]["passes"], "0");
    assert_eq!(reversi["leaves"], "24571284");
    // A124004's convention counts the games over at ply 9 for nothing.
    let oeis = json(&words(
        "run --game reversi --depth 10 --stats --convention oeis --format json",
    ));
    assert_eq!(oeis["leaves"], "24571056");
    assert_eq!(oeis["stats"]["game_overs"], (584 - 228).to_string());
    // JSON keeps the kinds in column order.
    let text = stdout(&[
        "run", "--game", "checkers", "--depth", "3", "--stats", "--format", "json",
    ]);
    assert!(
        text.contains(r#""stats":{"captures":"11","multi_jumps":"0","crownings":"0"},"divide""#),
        "{text}"
    );
    let checkers = stdout(&["run", "--game", "checkers", "--depth", "3", "--stats"]);
    assert!(
        checkers.contains(
            "\nkind         leaves\ncaptures         11\nmulti_jumps       0\ncrownings         0\n"
        ),
        "{checkers}"
    );
}

#[test]
fn depth_0_and_1_count_without_a_plan() {
    let report = json(&[
        "run", "--game", "chess", "--depth", "1", "--stats", "--format", "json",
    ]);
    assert_eq!(report["leaves"], "20");
    assert_eq!(report["stats"]["captures"], "0");
    let kiwipete = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
    let report = json(&[
        "run",
        "--game",
        "chess",
        "--depth",
        "1",
        "--stats",
        "--position",
        kiwipete,
        "--format",
        "json",
    ]);
    assert_eq!(report["stats"]["captures"], "8");
    assert_eq!(report["stats"]["castles"], "2");
    let castle = report["divide"]
        .as_array()
        .unwrap()
        .iter()
        .find(|entry| entry["move"] == "e1g1")
        .expect("O-O is a first move");
    assert_eq!(castle["stats"]["castles"], "1");
    let report = json(&[
        "run", "--game", "chess", "--depth", "0", "--stats", "--format", "json",
    ]);
    assert_eq!(report["leaves"], "1");
    assert_eq!(report["stats"]["total_checks"], "0");
}

#[test]
fn bad_combinations_are_refused() {
    let split = refused(&words("run --game chess --depth 3 --stats --split-depth 3"));
    assert!(
        split.contains("--stats needs a split depth below the depth 3"),
        "{split}"
    );
    let certificate = refused(&words(
        "run --game chess --depth 3 --stats --split-depth 3 --certificate never-written.cert",
    ));
    assert!(
        certificate.contains("--stats needs a split depth below the depth 3"),
        "{certificate}"
    );
    let deep = refused(&["run", "--game", "chess", "--depth", "17", "--stats"]);
    assert!(deep.contains("depth 17 is above the chess limit of 16"), "{deep}");
    let convention = refused(&words("run --game checkers --depth 2 --stats --convention oeis"));
    assert!(convention.contains("applies to reversi only"), "{convention}");
    // A split above the depth is the plan's own refusal.
    let above = refused(&words("run --game chess --depth 3 --stats --split-depth 0"));
    assert!(above.contains("split depth 0"), "{above}");
}
