//! Decoding a position: `unpack` of the packed bytes against `parse` of the
//! text, per game, over positions of a few playouts. `cargo bench -p
//! perft-core --bench packed`.

use divan::{Bencher, black_box};
use perft_core::{Checkers, Chess, Game, Reversi};

fn main() {
    divan::main();
}

/// Positions of deterministic playouts: a mix of openings and middlegames.
fn positions<G: Game>() -> Vec<G> {
    let mut positions = Vec::new();
    for game in 0..8usize {
        let mut pos = G::start();
        for ply in 0..60 {
            let moves: Vec<_> = pos.legal_moves().into_iter().collect();
            if moves.is_empty() {
                break;
            }
            pos = pos.play(moves[(ply * 7 + game * 3) % moves.len()]);
            positions.push(pos);
        }
    }
    positions
}

#[divan::bench(types = [Reversi, Checkers, Chess])]
fn parse_text<G: Game>(bencher: Bencher) {
    let texts: Vec<String> = positions::<G>().iter().map(ToString::to_string).collect();
    bencher
        .counter(divan::counter::ItemsCount::new(texts.len()))
        .bench(|| {
            texts
                .iter()
                .filter(|t| black_box(t.as_str()).parse::<G>().is_ok())
                .count()
        });
}

#[divan::bench(types = [Reversi, Checkers, Chess])]
fn unpack<G: Game>(bencher: Bencher) {
    let packed: Vec<Vec<u8>> = positions::<G>()
        .iter()
        .map(|pos| {
            let mut out = Vec::new();
            pos.pack(&mut out);
            out
        })
        .collect();
    bencher
        .counter(divan::counter::ItemsCount::new(packed.len()))
        .bench(|| packed.iter().filter(|b| G::unpack(black_box(b)).is_ok()).count());
}

#[divan::bench(types = [Reversi, Checkers, Chess])]
fn pack<G: Game>(bencher: Bencher) {
    let positions = positions::<G>();
    let mut out = Vec::with_capacity(positions.len() * G::PACKED_BYTES);
    bencher
        .counter(divan::counter::ItemsCount::new(positions.len()))
        .bench_local(|| {
            out.clear();
            for pos in &positions {
                black_box(pos).pack(&mut out);
            }
            out.len()
        });
}
