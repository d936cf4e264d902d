//! Knuth's random paths: a unit's leaves estimated from the branching
//! factors met on random walks down its tree.

use perft_core::{Counter, Game, MoveSet};
use rand::Rng;
use rand::rngs::StdRng;

/// Plies below which a random path stops and counts exactly.
const EXACT_PLIES: u32 = 3;

/// Mean and standard error of the mean.
pub(crate) fn mean_and_error(values: &[f64]) -> (f64, f64) {
    let n = values.len() as f64;
    if values.is_empty() {
        return (0.0, 0.0);
    }
    let mean = values.iter().sum::<f64>() / n;
    if values.len() < 2 {
        return (mean, mean.abs());
    }
    let variance = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, (variance / n).sqrt())
}

/// One random path's estimate of the leaves below `pos` at `depth`:
/// the product of the branching factors met, times the exact count of
/// the last plies.
pub(crate) fn random_path<G: Game>(pos: &G, depth: u32, rng: &mut StdRng, counter: &mut Counter<'_>) -> f64 {
    let mut pos = *pos;
    let mut factor = 1.0;
    let mut depth = depth;
    while depth > EXACT_PLIES {
        let moves = pos.legal_moves();
        let n = moves.len();
        if n == 0 {
            break;
        }
        let Some(mv) = moves.into_iter().nth(rng.random_range(0..n)) else {
            break;
        };
        factor *= n as f64;
        pos = pos.play(mv);
        depth -= 1;
    }
    factor * counter.perft(&pos, depth).leaves as f64
}
