//! A deliberately broken perft engine, for `perft check`'s tests and for
//! trying the checker by hand. It counts with Deep Perft's generator but
//! bends every node's move list the way one classic bug does:
//!
//! - `ep-discovered-check` (chess): takes en passant even when that
//!   uncovers a check on its own king along the rank;
//! - `no-en-passant` (chess): never takes en passant;
//! - `castle-through-check` (chess): castles whenever the squares between
//!   king and rook are empty and it is not in check, attacked or not;
//! - `dedup-captures` (checkers): keeps one of several capture sequences
//!   that take the same pieces to the same square;
//! - `no-pass` (Reversi): a side without a move ends the game instead of
//!   passing;
//! - `none-chess`, `none-checkers`, `none-reversi`: no bug.
//!
//! Protocols: `broken_engine BUG perftree DEPTH POSITION [MOVES]`,
//! `broken_engine BUG plain` (reads depth, position and moves as three
//! lines on stdin), `broken_engine BUG uci` (a UCI loop with `go perft`).

use std::io::{BufRead, Write};

use perft_core::chess::MoveKind;
use perft_core::{Checkers, Chess, Game, Reversi};

/// One entry of a node's move list: a real move, or one the bug invents
/// (counted as a single leaf below it).
enum Entry<M> {
    Real(M),
    Invented(String),
}

/// A game with a bug in its move list.
trait Buggy: Game {
    /// The moves the broken engine sees; `last` is the move that led here.
    fn entries(&self, last: Option<Self::Move>, bug: &str) -> Vec<Entry<Self::Move>>;
}

fn real<G: Game>(pos: &G) -> Vec<Entry<G::Move>> {
    pos.legal_moves().into_iter().map(Entry::Real).collect()
}

impl Buggy for Chess {
    fn entries(&self, last: Option<Self::Move>, bug: &str) -> Vec<Entry<Self::Move>> {
        let mut entries = real(self);
        let names: Vec<String> = self.legal_moves().iter().map(|&m| self.format_move(m)).collect();
        let name = |square: u8| perft_core::chess::square_name(square);
        match bug {
            "ep-discovered-check" => {
                // After a double push, every pawn beside the pushed one takes.
                if let Some(last) = last.filter(|m| m.kind() == MoveKind::DoublePush) {
                    let (to, behind) = (last.to(), (last.from() + last.to()) / 2);
                    for beside in [to.wrapping_sub(1), to + 1] {
                        let same_rank = beside < 64 && beside / 8 == to / 8;
                        let ours = same_rank
                            && self.piece_on(beside)
                                == Some((self.side_to_move(), perft_core::chess::Piece::Pawn));
                        let text = name(beside) + &name(behind);
                        if ours && !names.contains(&text) {
                            entries.push(Entry::Invented(text));
                        }
                    }
                }
            }
            "no-en-passant" => {
                entries.retain(|entry| !matches!(entry, Entry::Real(mv) if mv.kind() == MoveKind::EnPassant));
            }
            "castle-through-check" => {
                let fen = self.to_string();
                let rights = fen.split(' ').nth(2).unwrap_or("-");
                let (rank, king_side, queen_side) = match self.side_to_move() {
                    perft_core::chess::Colour::White => (0u8, 'K', 'Q'),
                    perft_core::chess::Colour::Black => (56u8, 'k', 'q'),
                };
                let empty = |files: &[u8]| files.iter().all(|f| self.piece_on(rank + f).is_none());
                for (right, files, to) in [(king_side, &[5u8, 6][..], 6u8), (queen_side, &[1u8, 2, 3][..], 2)]
                {
                    let text = name(rank + 4) + &name(rank + to);
                    if rights.contains(right) && empty(files) && !self.in_check() && !names.contains(&text) {
                        entries.push(Entry::Invented(text));
                    }
                }
            }
            _ => {}
        }
        entries
    }
}

impl Buggy for Checkers {
    fn entries(&self, _: Option<Self::Move>, bug: &str) -> Vec<Entry<Self::Move>> {
        let mut entries = real(self);
        if bug == "dedup-captures" {
            let mut seen: Vec<Checkers> = Vec::new();
            entries.retain(|entry| match entry {
                Entry::Real(mv) => {
                    let child = self.play(*mv);
                    let new = !seen.contains(&child);
                    seen.push(child);
                    new
                }
                Entry::Invented(_) => true,
            });
        }
        entries
    }
}

impl Buggy for Reversi {
    fn entries(&self, _: Option<Self::Move>, bug: &str) -> Vec<Entry<Self::Move>> {
        let moves = real(self);
        let only_pass = matches!(&moves[..], [Entry::Real(mv)] if self.format_move(*mv) == "pass");
        if bug == "no-pass" && only_pass {
            return Vec::new();
        }
        moves
    }
}

/// The broken engine's leaf count of `pos` at `depth`.
fn count<G: Buggy>(pos: &G, last: Option<G::Move>, depth: u32, bug: &str) -> u128 {
    if depth == 0 {
        return 1;
    }
    let entries = pos.entries(last, bug);
    if entries.is_empty() {
        return u128::from(G::GAME_OVER_IS_LEAF);
    }
    entries
        .iter()
        .map(|entry| match entry {
            Entry::Real(mv) => count(&pos.play(*mv), Some(*mv), depth - 1, bug),
            Entry::Invented(_) => 1,
        })
        .sum()
}

/// The divide of the position after `moves`, sorted by move.
fn divide<G: Buggy>(
    position: &str,
    moves: &str,
    depth: u32,
    bug: &str,
) -> Result<Vec<(String, u128)>, String> {
    let mut pos: G = position.trim().parse().map_err(|e| format!("{e}"))?;
    let mut last = None;
    for text in moves.split_whitespace() {
        let mv = pos.parse_move(text).map_err(|e| e.to_string())?;
        pos = pos.play(mv);
        last = Some(mv);
    }
    let mut lines: Vec<(String, u128)> = pos
        .entries(last, bug)
        .iter()
        .map(|entry| match entry {
            Entry::Real(mv) => (
                pos.format_move(*mv),
                count(&pos.play(*mv), Some(*mv), depth - 1, bug),
            ),
            Entry::Invented(text) => (text.clone(), 1),
        })
        .collect();
    lines.sort();
    Ok(lines)
}

fn divide_for(bug: &str, position: &str, moves: &str, depth: u32) -> Result<Vec<(String, u128)>, String> {
    match bug {
        "dedup-captures" | "none-checkers" => divide::<Checkers>(position, moves, depth, bug),
        "no-pass" | "none-reversi" => divide::<Reversi>(position, moves, depth, bug),
        _ => divide::<Chess>(position, moves, depth, bug),
    }
}

fn print(
    out: &mut impl Write,
    lines: &[(String, u128)],
    separator: &str,
    total_label: &str,
) -> std::io::Result<()> {
    for (mv, n) in lines {
        writeln!(out, "{mv}{separator}{n}")?;
    }
    writeln!(
        out,
        "\n{total_label}{}",
        lines.iter().map(|(_, n)| n).sum::<u128>()
    )?;
    out.flush()
}

/// The UCI loop: `position fen ... [moves ...]` and `go perft N`.
fn uci(bug: &str) -> Result<(), String> {
    let stdin = std::io::stdin();
    let mut out = std::io::stdout().lock();
    let (mut fen, mut moves) = (Chess::start().to_string(), String::new());
    for line in stdin.lock().lines() {
        let line = line.map_err(|e| e.to_string())?;
        let words: Vec<&str> = line.split_whitespace().collect();
        let result = match words.as_slice() {
            ["uci"] => writeln!(out, "id name broken_engine {bug}\nuciok"),
            ["isready"] => writeln!(out, "readyok"),
            ["quit"] => return Ok(()),
            ["position", "startpos", rest @ ..] => {
                fen = Chess::start().to_string();
                moves = rest.iter().skip(1).copied().collect::<Vec<_>>().join(" ");
                Ok(())
            }
            ["position", "fen", rest @ ..] => {
                let split = rest.iter().position(|&w| w == "moves").unwrap_or(rest.len());
                fen = rest[..split].join(" ");
                moves = rest.get(split + 1..).unwrap_or_default().join(" ");
                Ok(())
            }
            ["go", "perft", depth] => {
                let depth = depth.parse().map_err(|_| format!("bad depth {depth}"))?;
                let lines = divide_for(bug, &fen, &moves, depth)?;
                print(&mut out, &lines, ": ", "Nodes searched: ").and_then(|()| writeln!(out))
            }
            _ => Ok(()),
        };
        result.and_then(|()| out.flush()).map_err(|e| e.to_string())?;
    }
    Ok(())
}

fn main() -> std::process::ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.iter().map(String::as_str).collect::<Vec<_>>().as_slice() {
        [bug, "uci"] => uci(bug),
        [bug, "plain"] => {
            let mut input = String::new();
            let _ = std::io::Read::read_to_string(&mut std::io::stdin(), &mut input);
            let mut lines = input.lines();
            let depth = lines.next().unwrap_or("").trim().parse().unwrap_or(1);
            let position = lines.next().unwrap_or("").to_owned();
            let moves = lines.next().unwrap_or("").to_owned();
            divide_for(bug, &position, &moves, depth)
                .and_then(|lines| print(&mut std::io::stdout(), &lines, " ", "").map_err(|e| e.to_string()))
        }
        [bug, "perftree", depth, position, rest @ ..] => {
            let moves = rest.first().copied().unwrap_or("");
            depth
                .parse()
                .map_err(|_| format!("bad depth {depth}"))
                .and_then(|depth| divide_for(bug, position, moves, depth))
                .and_then(|lines| print(&mut std::io::stdout(), &lines, " ", "").map_err(|e| e.to_string()))
        }
        _ => Err("usage: broken_engine BUG (uci | plain | perftree DEPTH POSITION [MOVES])".to_owned()),
    };
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("broken_engine: {e}");
            std::process::ExitCode::from(2)
        }
    }
}
