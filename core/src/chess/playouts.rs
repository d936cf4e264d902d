//! Seeded random playouts for the chess tests: every run tests the same
//! positions.

use super::position::Chess;
use crate::game::Game;

/// A xorshift stream that picks plies and moves.
pub(super) struct Playouts(u64);

impl Playouts {
    /// A stream from `seed` (not zero).
    pub(super) fn new(seed: u64) -> Playouts {
        Playouts(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// The positions after each ply of one random playout from `start`,
    /// fewer than `max_plies` plies, stopping at a mate or stalemate.
    pub(super) fn line(&mut self, start: Chess, max_plies: u64) -> Vec<Chess> {
        let plies = self.next() % max_plies;
        let mut line = Vec::new();
        let mut pos = start;
        for _ in 0..plies {
            let moves = pos.legal_moves();
            if moves.is_empty() {
                break;
            }
            pos = pos.play(moves[(self.next() % moves.len() as u64) as usize]);
            line.push(pos);
        }
        line
    }

    /// Where one random playout of [`Playouts::line`] ends.
    pub(super) fn end(&mut self, start: Chess, max_plies: u64) -> Chess {
        self.line(start, max_plies).last().copied().unwrap_or(start)
    }
}

/// Positions two plies from Kiwipete and from the standard positions 3
/// and 4 (en passant, promotions, castling both ways), and the ends of
/// random playouts from the standard start, Kiwipete and Chess960 starts
/// (castling rooks off the corners).
pub(super) fn varied_positions() -> Vec<Chess> {
    let suite = crate::parse_suite(include_str!("../../data/chess960.epd")).expect("the suite parses");
    let mut starts: Vec<Chess> = suite
        .iter()
        .step_by(24)
        .map(|line| line.position.parse().expect("a suite position"))
        .collect();
    starts.push(Chess::start());
    let sliders_and_specials: Vec<Chess> = [
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    ]
    .iter()
    .map(|fen| fen.parse().expect("a valid FEN"))
    .collect();
    starts.push(sliders_and_specials[0]);
    let mut positions = Vec::new();
    for pos in sliders_and_specials {
        for first in pos.legal_moves() {
            let after = pos.play(first);
            for second in after.legal_moves() {
                positions.push(after.play(second));
            }
        }
    }
    let mut playouts = Playouts::new(0x9E37_79B9_7F4A_7C15);
    for start in starts {
        for _ in 0..60 {
            positions.push(playouts.end(start, 90));
        }
    }
    positions
}
