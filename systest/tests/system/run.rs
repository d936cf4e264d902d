//! `perft run` as a user runs it: the real binary, its output formats, and
//! every bad input answered by one line on stderr and exit code 2.

use crate::common::jobs::words;
use crate::common::local::{perft, refused};
use crate::common::ok;

#[test]
fn text_output_is_divide_lines_blank_line_total_then_stats() {
    let out = ok(perft(&["run", "--game", "reversi", "--depth", "3"]));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[..8],
        [
            "d3: 14",
            "c4: 14",
            "f5: 14",
            "e6: 14",
            "",
            "total: 56",
            "full depth: 56",
            "higher: 0",
        ]
    );
    assert!(
        lines[8].starts_with("time: ") && lines[8].ends_with(" s"),
        "{}",
        lines[8]
    );
    assert!(
        lines[9].starts_with("speed: ") && lines[9].ends_with(" leaves/s"),
        "{}",
        lines[9]
    );
    assert!(lines[10].starts_with("threads: "), "{}", lines[10]);
    assert!(
        lines[11].starts_with("table: 64.0 KiB ("),
        "default table, the smallest for a count that stores nothing: {}",
        lines[11]
    );
    let out = ok(perft(&words(
        "run --game reversi --depth 3 --threads 3 --no-hash",
    )));
    assert!(out.contains("\nthreads: 3\ntable: none\n"), "{out}");
    // Checkers has no game-over leaves: no split is printed.
    let out = ok(perft(&["run", "--game", "checkers", "--depth", "2"]));
    assert!(out.contains("\n\ntotal: 49\ntime: "), "{out}");
}

fn json(args: &[&str]) -> serde_json::Value {
    serde_json::from_str(&ok(perft(args))).expect("one JSON object")
}

fn sum_divide(report: &serde_json::Value) -> u128 {
    report["divide"]
        .as_array()
        .expect("divide is an array")
        .iter()
        .map(|entry| {
            entry["leaves"]
                .as_str()
                .expect("counts are strings")
                .parse::<u128>()
                .unwrap()
        })
        .sum()
}

/// The default table follows the work: chess perft(6) planned at ply 2
/// (400 units) stores its nodes at depths 4, 3 and 2, which have 400, 5362
/// and 72,078 distinct table keys (positions without their clocks), so it
/// gets 77,840 entries of 32 bytes (2.5 MB), rounded to the nearer power of
/// two: 2 MiB, not a table for perft(14); perft(5) stores 400 + 5362,
/// 184 KB: 128 KiB; `--hash` overrides.
#[test]
fn default_table_is_sized_to_the_count() {
    for threads in ["1", "2"] {
        let report = json(&[
            "run",
            "--game",
            "chess",
            "--depth",
            "6",
            "--threads",
            threads,
            "--format",
            "json",
        ]);
        assert_eq!(report["leaves"], "119060324");
        assert_eq!(report["table"]["bytes"], 2 << 20, "{report}");
    }
    let report = json(&[
        "run",
        "--game",
        "chess",
        "--depth",
        "5",
        "--threads",
        "2",
        "--format",
        "json",
    ]);
    assert_eq!(report["table"]["bytes"], 128 << 10, "{report}");
    let report = json(&[
        "run", "--game", "chess", "--depth", "4", "--hash", "1M", "--format", "json",
    ]);
    assert_eq!(report["table"]["bytes"], 1_048_576, "{report}");
}

#[test]
fn json_reports_reversi_depth_11_with_the_higher_split() {
    let report = json(&["run", "--game", "reversi", "--depth", "11", "--format", "json"]);
    let published = perft_core::GameKind::Reversi.fns().published(11).unwrap();
    assert_eq!(report["game"], "reversi");
    assert_eq!(report["depth"], 11);
    assert_eq!(
        report["position"],
        "---------------------------OX------XO--------------------------- X"
    );
    assert_eq!(report["leaves"], published.total.leaves.to_string());
    assert_eq!(report["full_depth"], published.total.full_depth().to_string());
    assert_eq!(report["higher"], published.total.higher.to_string());
    assert_eq!(sum_divide(&report), published.total.leaves);
    assert_eq!(report["divide"][0]["move"], "d3");
    assert!(report["seconds"].as_f64().unwrap() > 0.0);
    assert!(report["leaves_per_second"].as_u64().unwrap() > 0);
}

#[test]
fn json_reports_checkers_from_a_given_position() {
    // After 11-15 the light side has 7 replies; perft 10 below it is the
    // 11-15 line of the depth-11 divide.
    let after = "W:W21-32:B1-10,12,15";
    let report = json(&[
        "run",
        "--game",
        "checkers",
        "--depth",
        "10",
        "--position",
        after,
        "--format",
        "json",
    ]);
    assert_eq!(report["leaves"], "9670066");
    assert_eq!(report["higher"], "0");
    assert_eq!(report["full_depth"], "9670066");
    assert_eq!(sum_divide(&report), 9_670_066);
    assert_eq!(
        report["position"],
        "W:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,12,15"
    );
}

#[test]
fn csv_has_a_row_per_move_and_a_total_row() {
    let out = ok(perft(&[
        "run", "--game", "checkers", "--depth", "3", "--format", "csv",
    ]));
    assert_eq!(
        out,
        "move,leaves,full_depth,higher\n9-13,48,48,0\n10-14,40,40,0\n11-15,40,40,0\n12-16,47,47,0\n\
         9-14,40,40,0\n10-15,40,40,0\n11-16,47,47,0\ntotal,302,302,0\n"
    );
}

#[test]
fn game_over_root_is_one_higher_leaf() {
    // Dark everywhere but one corner: nobody can move.
    let board = format!("{}-", "X".repeat(63));
    let report = json(&[
        "run",
        "--game",
        "reversi",
        "--depth",
        "4",
        "--position",
        &format!("{board} O"),
        "--format",
        "json",
    ]);
    assert_eq!(report["leaves"], "1");
    assert_eq!(report["higher"], "1");
    assert_eq!(report["divide"], serde_json::json!([]));
}

#[test]
fn bad_input_exits_2_with_one_clear_line() {
    let unknown = refused(&["run", "--game", "go", "--depth", "3"]);
    assert!(
        unknown.contains("'go'") && unknown.contains("reversi, checkers, chess"),
        "{unknown}"
    );

    let start = "---------------------------OX------XO--------------------------- X";
    let bad_char = refused(&[
        "run",
        "--game",
        "reversi",
        "--depth",
        "3",
        "--position",
        &start.replacen('O', "Z", 1),
    ]);
    assert!(
        bad_char.contains("invalid character 'Z' at square d4"),
        "{bad_char}"
    );

    let overlap = refused(&words("run --game checkers --depth 3 --position B:W14,21:B14"));
    assert!(overlap.contains("square 14 is given more than once"), "{overlap}");

    let crowned = refused(&words("run --game checkers --depth 3 --position B:W21:B30"));
    assert!(
        crowned.contains("dark (B) man on square 30 cannot exist"),
        "{crowned}"
    );

    let too_deep = refused(&["run", "--game", "reversi", "--depth", "31"]);
    assert_eq!(too_deep, "error: depth 31 is above the reversi limit of 30\n");
    let too_deep = refused(&["run", "--game", "checkers", "--depth", "41"]);
    assert_eq!(too_deep, "error: depth 41 is above the checkers limit of 40\n");

    let negative = refused(&["run", "--game", "checkers", "--depth", "-1"]);
    assert!(negative.contains("'-1' for '--depth"), "{negative}");
    let missing = refused(&["run", "--game", "checkers"]);
    assert!(missing.contains("--depth"), "{missing}");
    let format = refused(&["run", "--game", "checkers", "--depth", "1", "--format", "xml"]);
    assert!(format.contains("'xml'"), "{format}");
}

#[test]
fn chess_runs_from_fen_and_moves_and_refuses_bad_fens() {
    let kiwipete = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
    let out = ok(perft(&[
        "run",
        "--game",
        "chess",
        "--depth",
        "3",
        "--position",
        kiwipete,
    ]));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "a1b1: 1969", "sorted by UCI: {out}");
    assert_eq!(lines[48], "", "{out}");
    assert_eq!(lines[49], "total: 97862");
    assert!(!out.contains("higher"), "chess has no game-over split: {out}");

    // --moves for every game: played before counting.
    let out = ok(perft(&[
        "run", "--game", "chess", "--depth", "1", "--moves", "e2e4", "e7e5", "g1f3",
    ]));
    assert!(out.contains("total: 29\n") && out.contains("b8c6: 1\n"), "{out}");
    let out = ok(perft(&[
        "run", "--game", "reversi", "--depth", "1", "--moves", "d3",
    ]));
    assert!(out.contains("total: 3\n"), "{out}");
    let out = ok(perft(&[
        "run", "--game", "checkers", "--depth", "1", "--moves", "11-15",
    ]));
    assert!(out.contains("total: 7\n"), "{out}");
    let illegal = refused(&["run", "--game", "chess", "--depth", "1", "--moves", "e2e5"]);
    assert!(illegal.contains("'e2e5' is not a legal move"), "{illegal}");

    for (fen, message) in [
        (
            "8/8/8/8/8/8/8/8 w - - 0 1",
            "white has 0 kings, a side needs exactly one",
        ),
        (
            "4k3/8/8/8/8/8/8/4K2r b - - 0 1",
            "white is in check but it is black's move",
        ),
        (
            "4k3/8/8/8/8/8/8/4K3 w K - 0 1",
            "castling right 'K' needs a white rook on rank 1 on the h-side of its king",
        ),
        (
            "4k3/8/8/8/8/8/8/4K3 x - - 0 1",
            "the side to move must be 'w' or 'b'",
        ),
    ] {
        let line = refused(&["run", "--game", "chess", "--depth", "1", "--position", fen]);
        assert!(
            line.starts_with("error: invalid chess position '") && line.contains(message),
            "{line}"
        );
    }
    let too_deep = refused(&["run", "--game", "chess", "--depth", "17"]);
    assert_eq!(too_deep, "error: depth 17 is above the chess limit of 16\n");
}

#[test]
fn verify_checks_chess_against_the_published_table() {
    let out = ok(perft(&["verify", "--game", "chess", "--depth", "5"]));
    assert!(out.contains("match     total: 4865609\n"), "{out}");
    assert!(out.contains("chess depth 5 matches the published table"), "{out}");
    let missing = refused(&["verify", "--game", "chess", "--depth", "16"]);
    assert!(
        missing.contains("no published value for chess depth 16"),
        "{missing}"
    );
}

/// `--raw` is the bare generator: every leaf enumerated on one thread with
/// no table, the same totals, and it says so; it takes no engine options.
#[test]
fn raw_counts_the_same_on_one_thread_without_table() {
    let out = ok(perft(&["run", "--game", "checkers", "--depth", "9", "--raw"]));
    assert!(out.contains("\ntotal: 3963680\n"), "{out}");
    assert!(out.contains("\nthreads: 1\ntable: none\nkernel: "), "{out}");
    assert!(
        out.contains("\nmode: raw (one thread, no table, no merging)\n"),
        "{out}"
    );
    let report = json(&[
        "run", "--game", "reversi", "--depth", "9", "--raw", "--format", "json",
    ]);
    assert_eq!(report["leaves"], "3005288");
    assert_eq!(sum_divide(&report), 3_005_288);
    assert_eq!(report["raw"], true);
    assert!(report["kernel"].is_string(), "{report}");
    let planned = json(&["run", "--game", "reversi", "--depth", "9", "--format", "json"]);
    assert_eq!(planned["raw"], false);
    assert_eq!(planned["kernel"], report["kernel"]);
    for engine in [["--threads", "2"], ["--hash", "16M"]] {
        let args = [
            "run", "--game", "reversi", "--depth", "3", "--raw", engine[0], engine[1],
        ];
        assert!(refused(&args).contains("--raw"));
    }
    assert!(refused(&["run", "--game", "reversi", "--depth", "3", "--raw", "--no-hash"]).contains("--raw"));
}

/// `--convention oeis` counts A124004's terms on `run` (raw and planned)
/// and `verify` compares with that table; the default is Bik's.
#[test]
fn the_oeis_convention_counts_a124004() {
    for extra in [&[][..], &["--raw"][..]] {
        let mut args = words("run --game reversi --depth 10 --format json --convention oeis");
        args.extend_from_slice(extra);
        let report: serde_json::Value = serde_json::from_str(&ok(perft(&args))).unwrap();
        assert_eq!(report["leaves"], "24571056");
        assert_eq!(report["convention"], "oeis");
    }
    let out = ok(perft(&["run", "--game", "reversi", "--depth", "10"]));
    assert!(
        out.contains("total: 24571284") && out.contains("convention: bik"),
        "{out}"
    );
    let out = ok(perft(&words(
        "verify --game reversi --depth 11 --convention oeis",
    )));
    assert!(out.contains("match     total: 212258216"), "{out}");
    let checkers = perft(&words("verify --game checkers --depth 3 --convention oeis"));
    assert_eq!(checkers.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&checkers.stderr).trim(),
        "error: checkers has one way of counting: a convention (oeis) applies to reversi only"
    );
}
