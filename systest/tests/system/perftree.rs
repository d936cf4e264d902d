//! perftree compatibility: the script in `cli/perftree.sh`, run exactly as
//! perftree runs it (`./script "$depth" "$fen" "$moves"`), answers in
//! Stockfish's format.

use std::path::Path;
use std::process::{Command, Output};

const START: &str = "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1";

fn perftree(depth: &str, fen: &str, moves: &str) -> Output {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../cli/perftree.sh");
    Command::new(script)
        .args([depth, fen, moves])
        .env("PERFT", crate::common::PERFT)
        .env_remove("RUST_LOG")
        .output()
        .expect("the perftree script runs")
}

/// Checks Stockfish's format and returns the lines and the total.
fn parse(output: &Output) -> (Vec<(String, u128)>, u128) {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let text = String::from_utf8(output.stdout.clone()).unwrap();
    let (lines, total) = text.split_once("\n\n").expect("a blank line before the total");
    assert!(
        total.ends_with('\n') && !total.trim_end().contains('\n'),
        "{text:?}"
    );
    let total: u128 = total.trim_end().parse().expect("the total is a number");
    let lines: Vec<(String, u128)> = lines
        .lines()
        .map(|line| {
            let (mv, count) = line.split_once(' ').expect("'move count'");
            let b = mv.as_bytes();
            assert!(
                (4..=5).contains(&b.len())
                    && b[0].is_ascii_lowercase()
                    && b[1].is_ascii_digit()
                    && b[2].is_ascii_lowercase()
                    && b[3].is_ascii_digit(),
                "UCI move: {line}"
            );
            (mv.to_owned(), count.parse().expect("a count"))
        })
        .collect();
    let mut sorted = lines.clone();
    sorted.sort();
    assert_eq!(lines, sorted, "moves are sorted");
    assert_eq!(lines.iter().map(|(_, n)| n).sum::<u128>(), total);
    (lines, total)
}

#[test]
fn start_position_without_moves() {
    let (lines, total) = parse(&perftree("3", START, ""));
    assert_eq!(lines.len(), 20);
    assert_eq!(total, 8902);
    assert_eq!(lines[0], ("a2a3".to_owned(), 380));
}

#[test]
fn moves_are_played_first() {
    let (lines, total) = parse(&perftree("2", START, "e2e4 e7e5"));
    assert_eq!(lines.len(), 29);
    // Part of start perft(4), which the core tests reproduce.
    assert_eq!(total, 835);
    let kiwipete = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
    let (lines, total) = parse(&perftree("1", kiwipete, "e1g1 a6e2"));
    assert_eq!(total, lines.len() as u128);
    assert!(lines.iter().any(|(mv, _)| mv == "d1e2" || mv == "f3e2"));
}

#[test]
fn bad_input_exits_2_with_one_line() {
    for (fen, moves, message) in [
        ("8/8/8 w - - 0 1", "", "the board has 3 ranks"),
        (START, "e2e5", "'e2e5' is not a legal move"),
    ] {
        let output = perftree("2", fen, moves);
        assert_eq!(output.status.code(), Some(2));
        let stderr = String::from_utf8(output.stderr).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(message), "{stderr}");
    }
}

/// A Chess960 position (Shredder-FEN) answers with castling as the king
/// taking its rook; `--chess960` asks for that notation in any position.
#[test]
fn chess960_castling_is_king_takes_rook() {
    // Line 1 of Ethereal's suite: D2 528.
    let fen = "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9";
    let (lines, total) = parse(&perftree("2", fen, ""));
    assert_eq!(total, 528);
    assert_eq!(lines.len(), 21);
    // King b1 between rooks a1 and h1: both castlings, each named by its rook.
    // Moves in that notation are played: after b1h1 the king is on g1 and
    // the rook on f1.
    let (lines, _) = parse(&perftree("1", "rk5r/8/8/8/8/8/8/RK5R w HAha - 0 1", "b1h1 b8a8"));
    assert!(lines.iter().any(|(mv, _)| mv == "f1f8"), "{lines:?}");
    assert!(lines.iter().any(|(mv, _)| mv == "g1g2"), "{lines:?}");
    let (lines, _) = parse(&perftree("1", "rk5r/8/8/8/8/8/8/RK5R w HAha - 0 1", ""));
    assert!(lines.iter().any(|(mv, _)| mv == "b1h1"), "{lines:?}");
    assert!(lines.iter().any(|(mv, _)| mv == "b1a1"), "{lines:?}");
    let output = Command::new(crate::common::PERFT)
        .args([
            "perftree",
            "--chess960",
            "1",
            "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",
            "e1h1",
        ])
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    let (lines, _) = parse(&output);
    assert!(lines.iter().any(|(mv, _)| mv == "e8a8"), "{lines:?}");
    assert!(!lines.iter().any(|(mv, _)| mv == "e8c8"), "{lines:?}");
    let output = Command::new(crate::common::PERFT)
        .args(["run", "--game", "reversi", "--depth", "1", "--chess960"])
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr).trim(),
        "error: --chess960 is for chess, not reversi"
    );
}
