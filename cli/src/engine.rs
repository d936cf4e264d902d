//! Driving another perft engine for `perft check`: asks it for a divide
//! (each first move with its leaf count) of a position after some moves,
//! over one of three protocols.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use clap::ValueEnum;

use crate::error::CliError;

/// How the engine is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Protocol {
    /// A UCI engine, started once: `position fen FEN moves ...` and
    /// `go perft N`, read as Stockfish prints its divide (`move: count`).
    Uci,
    /// perftree's script protocol: `CMD DEPTH POSITION MOVES` per divide,
    /// printing `move count` lines (any game).
    Perftree,
    /// `CMD` per divide with three lines on stdin (depth, position, moves),
    /// printing `move count` lines (any game).
    Plain,
}

/// A running or runnable engine.
pub enum Engine {
    /// Started per divide.
    PerDivide {
        /// The program and its leading arguments.
        command: Vec<String>,
        /// Perftree's or the plain protocol.
        protocol: Protocol,
    },
    /// A UCI process kept open.
    Uci {
        /// The process.
        child: Child,
        /// Its stdin.
        input: ChildStdin,
        /// Its stdout, by lines.
        output: BufReader<ChildStdout>,
    },
}

/// The command line split as a shell would (quotes respected).
fn split_command(text: &str) -> Result<Vec<String>, CliError> {
    match shlex::split(text) {
        Some(words) if !words.is_empty() => Ok(words),
        _ => Err(CliError::Usage(format!(
            "--engine '{}' is no command line",
            perft_core::echoed(text)
        ))),
    }
}

fn failed(what: &str, err: impl std::fmt::Display) -> CliError {
    CliError::Failed(format!("the engine {what}: {err}"))
}

impl Engine {
    /// Prepares `command` for `protocol`; a UCI engine is started and
    /// initialised here (`UCI_Chess960` set when `chess960`).
    pub fn start(command: &str, protocol: Protocol, chess960: bool) -> Result<Engine, CliError> {
        let command = split_command(command)?;
        if protocol != Protocol::Uci {
            return Ok(Engine::PerDivide { command, protocol });
        }
        let mut child = Command::new(&command[0])
            .args(&command[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| failed(&format!("'{}' did not start", perft_core::echoed(&command[0])), e))?;
        let input = child
            .stdin
            .take()
            .ok_or_else(|| failed("has no stdin", "closed"))?;
        let output = BufReader::new(
            child
                .stdout
                .take()
                .ok_or_else(|| failed("has no stdout", "closed"))?,
        );
        let mut engine = Engine::Uci { child, input, output };
        engine.send("uci")?;
        engine.read_until(|line| line == "uciok")?;
        if chess960 {
            engine.send("setoption name UCI_Chess960 value true")?;
        }
        engine.send("isready")?;
        engine.read_until(|line| line == "readyok")?;
        Ok(engine)
    }

    fn send(&mut self, line: &str) -> Result<(), CliError> {
        let Engine::Uci { input, .. } = self else {
            return Ok(());
        };
        writeln!(input, "{line}")
            .and_then(|()| input.flush())
            .map_err(|e| failed("closed its input", e))
    }

    /// Lines up to and including the first one `last` accepts.
    fn read_until(&mut self, last: impl Fn(&str) -> bool) -> Result<Vec<String>, CliError> {
        let Engine::Uci { output, .. } = self else {
            return Ok(Vec::new());
        };
        let mut lines = Vec::new();
        loop {
            let mut line = String::new();
            let read = output.read_line(&mut line).map_err(|e| failed("output", e))?;
            if read == 0 {
                return Err(failed("ended", "its output closed before the answer"));
            }
            let line = line.trim().to_owned();
            let done = last(&line);
            lines.push(line);
            if done {
                return Ok(lines);
            }
        }
    }

    /// The engine's divide of `position` after `moves` at `depth`: each
    /// move with its count, as printed.
    pub fn divide(
        &mut self,
        position: &str,
        moves: &[String],
        depth: u32,
    ) -> Result<Vec<(String, u128)>, CliError> {
        let lines = match self {
            Engine::Uci { .. } => {
                let moves = if moves.is_empty() {
                    String::new()
                } else {
                    format!(" moves {}", moves.join(" "))
                };
                self.send(&format!("position fen {position}{moves}"))?;
                self.send(&format!("go perft {depth}"))?;
                self.read_until(|line| line.starts_with("Nodes searched"))?
            }
            Engine::PerDivide { command, protocol } => {
                let mut run = Command::new(&command[0]);
                run.args(&command[1..])
                    .stderr(Stdio::inherit())
                    .stdout(Stdio::piped());
                let stdin = if *protocol == Protocol::Perftree {
                    run.args([depth.to_string(), position.to_owned(), moves.join(" ")]);
                    None
                } else {
                    run.stdin(Stdio::piped());
                    Some(format!("{depth}\n{position}\n{}\n", moves.join(" ")))
                };
                let mut child = run.spawn().map_err(|e| {
                    failed(&format!("'{}' did not start", perft_core::echoed(&command[0])), e)
                })?;
                if let (Some(text), Some(mut input)) = (stdin, child.stdin.take()) {
                    input
                        .write_all(text.as_bytes())
                        .map_err(|e| failed("closed its input", e))?;
                }
                let out = child.wait_with_output().map_err(|e| failed("failed", e))?;
                if !out.status.success() {
                    return Err(failed(
                        "failed",
                        format!(
                            "{} for depth {depth} of '{position}' after '{}'",
                            out.status,
                            moves.join(" ")
                        ),
                    ));
                }
                String::from_utf8_lossy(&out.stdout)
                    .lines()
                    .map(str::to_owned)
                    .collect()
            }
        };
        Ok(parse_divide(&lines))
    }
}

/// `move count` and `move: count` lines; everything else (totals, `info`
/// lines, blank lines) is skipped.
pub fn parse_divide(lines: &[String]) -> Vec<(String, u128)> {
    lines
        .iter()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let (mv, count) = (words.next()?, words.next()?);
            if words.next().is_some() {
                return None;
            }
            let mv = mv.strip_suffix(':').unwrap_or(mv);
            let count = count.parse::<u128>().ok()?;
            (!mv.is_empty()
                && mv != "Nodes"
                && mv.chars().all(|c| c.is_ascii_alphanumeric() || "-x".contains(c)))
            .then(|| (mv.to_owned(), count))
        })
        .collect()
}

impl Drop for Engine {
    fn drop(&mut self) {
        if let Engine::Uci { .. } = self {
            let _ = self.send("quit");
        }
        if let Engine::Uci { child, .. } = self {
            let _ = child.wait();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn divides_in_stockfish_and_perftree_formats() {
        let lines: Vec<String> = [
            "info string hi",
            "a2a3: 380",
            "e1g1 12",
            "",
            "Nodes searched: 392",
            "1x10x19 3",
            "pass 1",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            parse_divide(&lines),
            [
                ("a2a3".to_owned(), 380),
                ("e1g1".to_owned(), 12),
                ("1x10x19".to_owned(), 3),
                ("pass".to_owned(), 1)
            ]
        );
    }
}
