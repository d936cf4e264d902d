//! The CLI run on this machine, with no coordinator: `perft run`, `verify`,
//! `suite`, `check`. The tests of those verbs share these so that a refusal
//! means the same (exit 2, one line, no panic) in every file.

use std::process::{Command, Output};

use super::PERFT;

/// Runs `perft args` here, without the caller's `RUST_LOG` (its logs would
/// be read as the verb's output).
pub fn perft(args: &[&str]) -> Output {
    Command::new(PERFT)
        .args(args)
        .env_remove("RUST_LOG")
        .env_remove("PERFT_COORDINATOR")
        .output()
        .expect("the perft binary runs")
}

/// Runs a command that must fail on its input: exit 2, nothing on stdout,
/// one line on stderr, no panic; returns that line.
pub fn refused(args: &[&str]) -> String {
    let output = perft(args);
    assert_eq!(output.status.code(), Some(2), "exit code for {args:?}");
    assert!(output.stdout.is_empty(), "nothing on stdout for {args:?}");
    let stderr = String::from_utf8(output.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "one line for {args:?}: {stderr}");
    assert!(stderr.starts_with("error: "), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    stderr
}
