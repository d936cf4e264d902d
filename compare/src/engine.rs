//! Driving another perft engine as a child process: asks it for a divide
//! (each first move with its leaf count) of a position after some moves,
//! over one of three protocols.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use crate::error::CompareError;

/// How the engine is asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// Another perft engine, ready to be asked for divides; a UCI process is
/// told to quit and waited for when this is dropped.
#[derive(Debug)]
pub struct Engine {
    connection: Connection,
}

/// How an [`Engine`] is reached.
#[derive(Debug)]
enum Connection {
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
fn split_command(text: &str) -> Result<Vec<String>, CompareError> {
    match shlex::split(text) {
        Some(words) if !words.is_empty() => Ok(words),
        _ => Err(CompareError::NoCommandLine {
            echoed: perft_core::echoed(text),
        }),
    }
}

/// Starts `command` with the given pipes; a refusal names the program.
fn spawn(command: &[String], run: &mut Command) -> Result<Child, CompareError> {
    run.spawn().map_err(|source| CompareError::DidNotStart {
        program: perft_core::echoed(&command[0]),
        source,
    })
}

impl Engine {
    /// Prepares `command` for `protocol`; a UCI engine is started and
    /// initialised here (`UCI_Chess960` set when `chess960`).
    pub fn start(command: &str, protocol: Protocol, chess960: bool) -> Result<Engine, CompareError> {
        let command = split_command(command)?;
        if protocol != Protocol::Uci {
            return Ok(Engine {
                connection: Connection::PerDivide { command, protocol },
            });
        }
        let mut child = spawn(
            &command,
            Command::new(&command[0])
                .args(&command[1..])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit()),
        )?;
        let input = child
            .stdin
            .take()
            .ok_or(CompareError::NoPipe { stream: "stdin" })?;
        let output = BufReader::new(
            child
                .stdout
                .take()
                .ok_or(CompareError::NoPipe { stream: "stdout" })?,
        );
        let mut engine = Engine {
            connection: Connection::Uci { child, input, output },
        };
        engine.send("uci")?;
        engine.read_until(|line| line == "uciok")?;
        if chess960 {
            engine.send("setoption name UCI_Chess960 value true")?;
        }
        engine.send("isready")?;
        engine.read_until(|line| line == "readyok")?;
        Ok(engine)
    }

    /// Writes one line to a UCI engine.
    fn send(&mut self, line: &str) -> Result<(), CompareError> {
        let Connection::Uci { input, .. } = &mut self.connection else {
            return Ok(());
        };
        writeln!(input, "{line}")
            .and_then(|()| input.flush())
            .map_err(|source| CompareError::InputClosed { source })
    }

    /// A UCI engine's lines up to and including the first one `last`
    /// accepts.
    fn read_until(&mut self, last: impl Fn(&str) -> bool) -> Result<Vec<String>, CompareError> {
        let Connection::Uci { output, .. } = &mut self.connection else {
            return Ok(Vec::new());
        };
        let mut lines = Vec::new();
        loop {
            let mut line = String::new();
            let read = output
                .read_line(&mut line)
                .map_err(|source| CompareError::Output { source })?;
            if read == 0 {
                return Err(CompareError::Ended);
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
    ) -> Result<Vec<(String, u128)>, CompareError> {
        let lines = match &self.connection {
            Connection::Uci { .. } => {
                let moves = if moves.is_empty() {
                    String::new()
                } else {
                    format!(" moves {}", moves.join(" "))
                };
                self.send(&format!("position fen {position}{moves}"))?;
                self.send(&format!("go perft {depth}"))?;
                self.read_until(|line| line.starts_with("Nodes searched"))?
            }
            Connection::PerDivide { command, protocol } => {
                run_once(command, *protocol, position, moves, depth)?
            }
        };
        Ok(parse_divide(&lines))
    }
}

/// One run of a per-divide engine: its stdout's lines.
fn run_once(
    command: &[String],
    protocol: Protocol,
    position: &str,
    moves: &[String],
    depth: u32,
) -> Result<Vec<String>, CompareError> {
    let mut run = Command::new(&command[0]);
    run.args(&command[1..])
        .stderr(Stdio::inherit())
        .stdout(Stdio::piped());
    let stdin = if protocol == Protocol::Perftree {
        run.args([depth.to_string(), position.to_owned(), moves.join(" ")]);
        None
    } else {
        run.stdin(Stdio::piped());
        Some(format!("{depth}\n{position}\n{}\n", moves.join(" ")))
    };
    let mut child = spawn(command, &mut run)?;
    if let (Some(text), Some(mut input)) = (stdin, child.stdin.take()) {
        input
            .write_all(text.as_bytes())
            .map_err(|source| CompareError::InputClosed { source })?;
    }
    let out = child
        .wait_with_output()
        .map_err(|source| CompareError::Wait { source })?;
    if !out.status.success() {
        return Err(CompareError::Exited {
            status: out.status,
            depth,
            position: position.to_owned(),
            moves: moves.join(" "),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect())
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
        if let Connection::Uci { .. } = self.connection {
            let _ = self.send("quit");
        }
        if let Connection::Uci { child, .. } = &mut self.connection {
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

    #[test]
    fn an_empty_or_unclosed_command_is_no_command_line() {
        for text in ["", "  ", "'open"] {
            let err = Engine::start(text, Protocol::Plain, false).unwrap_err();
            assert!(matches!(err, CompareError::NoCommandLine { .. }), "{err}");
        }
    }

    #[test]
    fn a_failing_per_divide_engine_names_the_divide() {
        let mut engine = Engine::start("false", Protocol::Perftree, false).unwrap();
        let err = engine.divide("start", &["e2e4".to_owned()], 2).unwrap_err();
        let text = err.to_string();
        assert!(text.starts_with("the engine failed: exit status: 1"), "{text}");
        assert!(text.ends_with("for depth 2 of 'start' after 'e2e4'"), "{text}");
    }
}
