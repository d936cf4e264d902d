//! Micro-benchmarks of the engine: move generation, play, shallow perft
//! with and without a table. `cargo bench -p perft-core`.

use divan::{Bencher, black_box};
use perft_core::{Checkers, Counter, Game, Reversi, TranspositionTable};

fn main() {
    divan::main();
}

/// Positions a few plies in, where move generation does real work.
fn midgame<G: Game>(plies: usize) -> Vec<G> {
    let mut positions = Vec::new();
    let mut pos = G::start();
    for ply in 0..plies {
        let moves: Vec<_> = pos.legal_moves().into_iter().collect();
        if moves.is_empty() {
            break;
        }
        pos = pos.play(moves[(ply * 7) % moves.len()]);
        positions.push(pos);
    }
    positions
}

#[divan::bench(types = [Reversi, Checkers])]
fn count_moves<G: Game>(bencher: Bencher) {
    let positions = midgame::<G>(30);
    bencher.bench(|| positions.iter().map(|p| black_box(p).count_moves()).sum::<u64>());
}

#[divan::bench(types = [Reversi, Checkers])]
fn legal_moves_and_play<G: Game>(bencher: Bencher) {
    let positions = midgame::<G>(30);
    bencher.bench(|| {
        let mut n = 0usize;
        for p in &positions {
            for mv in black_box(p).legal_moves() {
                n += usize::from(black_box(p.play(mv)) != *p);
            }
        }
        n
    });
}

/// Perft 9 from the start, bare and with a 64 MiB table, side by side.
#[divan::bench(types = [Reversi, Checkers], args = [false, true], sample_count = 10)]
fn perft_9<G: Game>(bencher: Bencher, with_table: bool) {
    bencher.bench(|| {
        let table = with_table.then(|| TranspositionTable::for_game::<G>(64 << 20).unwrap());
        Counter::new(table.as_ref()).perft(&black_box(G::start()), 9)
    });
}
