//! `perft suite` and `perft check` with real processes: the shipped suites,
//! exit codes, and deliberately broken engines (systest/src/bin/broken_engine.rs,
//! built with these tests) that the checker must catch and name, over each
//! protocol.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::core_data as data;
use crate::common::local::perft;

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The broken engine, this package's bin.
fn broken_engine() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_broken_engine"))
}

fn engine(bug: &str, protocol: &str) -> String {
    format!("'{}' {bug} {protocol}", broken_engine().display())
}

#[test]
fn suite_counts_the_shipped_suites() {
    for (game, file, depth) in [
        ("chess", "chess-suite.epd", "3"),
        ("reversi", "reversi-suite.epd", "8"),
        ("checkers", "checkers-suite.epd", "9"),
    ] {
        let output = perft(&["suite", &data(file), "--game", game, "--max-depth", depth]);
        let text = stdout(&output);
        assert_eq!(output.status.code(), Some(0), "{game}: {text}");
        assert!(text.starts_with("result    line  depth  expected"), "{text}");
        assert!(text.lines().last().unwrap().contains(", 0 mismatches"), "{text}");
    }
}

#[test]
fn suite_puts_mismatches_first_and_exits_1() {
    let dir = tempfile_dir();
    let file = dir.join("wrong.epd");
    std::fs::write(
        &file,
        "# one wrong count\nrnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1 ;D1 20 ;D2 401\n\
         4k3/8/8/8/8/8/8/4K2R w K - 0 1 ;D1 15\n",
    )
    .unwrap();
    let output = perft(&["suite", file.to_str().unwrap()]);
    let text = stdout(&output);
    assert_eq!(output.status.code(), Some(1), "{text}");
    let rows: Vec<&str> = text.lines().collect();
    assert!(
        rows[1].starts_with("MISMATCH  2     2      401                   400"),
        "{text}"
    );
    assert!(rows[2].starts_with("ok        2     1"), "{text}");
    assert_eq!(
        rows.last().unwrap().split(" (").next(),
        Some("2 positions, 3 counts, 1 mismatches")
    );
    std::fs::write(&file, "8/8/8/8/8/8/8/8 w - - 0 1 ;D1 1\n").unwrap();
    let output = perft(&["suite", file.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(
        error.contains("wrong.epd line 1: invalid chess position"),
        "{error}"
    );
    std::fs::write(&file, "4k3/8/8/8/8/8/8/4K2R w K - 0 1 ;D1 x\n").unwrap();
    let output = perft(&["suite", file.to_str().unwrap()]);
    assert_eq!(output.status.code(), Some(2));
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(
        error.contains("line 1: 'D1 x' is not 'D<depth> <count>'"),
        "{error}"
    );
}

fn tempfile_dir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("perft-engine-authors-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `perft check` and returns its exit code and stdout.
fn check(args: &[&str]) -> (Option<i32>, String) {
    let output = perft(&[&["check"], args].concat());
    let text = stdout(&output);
    (
        output.status.code(),
        text + &String::from_utf8_lossy(&output.stderr),
    )
}

#[test]
fn a_correct_engine_agrees_over_every_protocol() {
    for protocol in ["perftree", "uci", "plain"] {
        let (code, text) = check(&[
            "--engine",
            &engine("none-chess", protocol),
            "--protocol",
            protocol,
            "--depth",
            "3",
        ]);
        assert_eq!(code, Some(0), "{protocol}: {text}");
        assert!(
            text.contains("the engine agrees with perft on 6 positions: the start to depth 3 and 5 built-in ones to depth 3 (en passant at once; castling both ways"),
            "{text}"
        );
    }
    // Our own perftree adapter, as perftree runs it.
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cli/perftree.sh");
    let output = Command::new(crate::common::PERFT)
        .args([
            "check",
            "--engine",
            script.to_str().unwrap(),
            "--suite",
            &data("chess-suite.epd"),
            "--depth",
            "2",
        ])
        .env("PERFT", crate::common::PERFT)
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0), "{}", stdout(&output));
}

/// With no options but the engine, the check walks the built-in
/// positions too, so an engine that never takes en passant (whose start
/// position agrees to any shallow depth) is found.
#[test]
fn an_engine_without_en_passant_is_found_with_default_options() {
    let (code, text) = check(&[
        "--engine",
        &engine("no-en-passant", "perftree"),
        "--protocol",
        "perftree",
    ]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("DIFFERS  built-in 1 (en passant at once): rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3 depth 3"),
        "{text}"
    );
    assert!(text.contains("  move path:   (the position itself)\n"), "{text}");
    assert!(text.contains("  missing:     e5f6 "), "{text}");
    assert!(!text.contains("DIFFERS  position"), "the start agrees: {text}");
}

#[test]
fn en_passant_that_uncovers_check_is_found_and_named() {
    // Position 3 of the Chess Programming Wiki: rook b4 and king h4 share
    // a rank with the f4 pawn.
    let (code, text) = check(&[
        "--engine",
        &engine("ep-discovered-check", "perftree"),
        "--position",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        "--depth",
        "3",
    ]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("move path:   b4a4 c7c5"), "{text}");
    assert!(text.contains("extra:       b5c6"), "{text}");
    assert!(text.contains("missing:     (none)"), "{text}");
}

#[test]
fn castling_through_check_is_found_over_uci() {
    let (code, text) = check(&[
        "--engine",
        &engine("castle-through-check", "uci"),
        "--protocol",
        "uci",
        "--position",
        "4kr2/8/8/8/8/8/8/R3K2R w KQ - 0 1",
        "--depth",
        "2",
    ]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("move path:   (the position itself)"), "{text}");
    assert!(text.contains("extra:       e1g1"), "{text}");
    // Found from the start too, by random playouts biased toward castling.
    let (code, text) = check(&[
        "--engine",
        &engine("castle-through-check", "uci"),
        "--protocol",
        "uci",
        "--random",
        "50",
        "--seed",
        "2",
        "--plies",
        "20",
        "--depth",
        "3",
    ]);
    assert_eq!(code, Some(1), "{text}");
    assert!(
        text.contains("extra:       e1g1")
            || text.contains("extra:       e1c1")
            || text.contains("extra:       e8g8")
            || text.contains("extra:       e8c8"),
        "{text}"
    );
}

#[test]
fn removed_duplicate_captures_are_found_in_checkers() {
    // A king on 22 takes the four pieces round it either way about.
    let (code, text) = check(&[
        "--game",
        "checkers",
        "--engine",
        &engine("dedup-captures", "plain"),
        "--protocol",
        "plain",
        "--position",
        "B:W18,19,26,27,29,32:BK22",
        "--depth",
        "2",
    ]);
    assert_eq!(code, Some(1), "{text}");
    // The engine keeps the first of the two sequences it generates.
    assert!(text.contains("missing:     22x15x24x31x22"), "{text}");
}

#[test]
fn a_reversi_engine_that_never_passes_is_found() {
    let (code, text) = check(&[
        "--game",
        "reversi",
        "--engine",
        &engine("no-pass", "perftree"),
        "--random",
        "40",
        "--seed",
        "3",
        "--plies",
        "60",
        "--depth",
        "3",
    ]);
    assert_eq!(code, Some(1), "{text}");
    assert!(text.contains("missing:     pass"), "{text}");
}

#[test]
fn check_refuses_bad_input_with_exit_2() {
    let (code, text) = check(&["--engine", "", "--depth", "2"]);
    assert_eq!(code, Some(2), "{text}");
    assert!(text.contains("error: --engine '' is no command line"), "{text}");
    let (code, text) = check(&["--engine", "true", "--depth", "0"]);
    assert_eq!(code, Some(2), "{text}");
}
