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
