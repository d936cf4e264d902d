//! `perft bench --anchors` as a user meets it without the public engines
//! built: a folder that is not one is refused, and every absent engine is
//! skipped with a note naming it, not an error.

use std::process::Command;

use crate::common::PERFT;
use crate::common::local::refused;
use crate::common::ok;

#[test]
fn a_missing_anchor_folder_is_refused_in_one_line() {
    assert_eq!(
        refused(&["bench", "--anchors", "/nonexistent/anchors"]),
        "error: --anchors: /nonexistent/anchors is not a folder (leave the value out to look on PATH)\n"
    );
}

#[test]
fn absent_anchors_are_skipped_with_a_note_naming_each() {
    let empty = tempfile::tempdir().expect("a temporary folder");
    let output = Command::new(PERFT)
        .args(["bench", "--anchors"])
        .arg(empty.path())
        .args(["--game", "checkers", "--runs", "1", "--pin", "0"])
        .env("PATH", empty.path())
        .output()
        .expect("the perft binary runs");
    let out = ok(output);
    for program in ["darkhorse", "darkhorse-table"] {
        let note = format!("skipped: `{program}` is not in the folder given or on PATH (bench/ builds it)");
        assert!(out.lines().any(|line| line == note), "{out}");
    }
    assert!(!out.contains("gigantua"), "only checkers' anchors: {out}");
}
