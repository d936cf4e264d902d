//! Planning: expanding a start position into merged frontier units, per
//! game, at a split of a few hundred thousand units (the coordinator's
//! whole-job figures are `bench/scale.sh`'s). `cargo bench -p perft-core
//! --bench plan`.

use divan::black_box;
use perft_core::{Checkers, Chess, Game, Plan, Reversi};

fn main() {
    divan::main();
}

/// Splits giving 0.4-0.8 M units: Reversi 9 plies (434,021), checkers 10
/// (768,155), chess 5 (822,518).
fn split<G: Game>() -> u32 {
    match G::NAME {
        "reversi" => 9,
        "checkers" => 10,
        _ => 5,
    }
}

#[divan::bench(types = [Reversi, Checkers, Chess], sample_count = 5, sample_size = 1)]
fn plan<G: Game>() -> usize {
    let split = split::<G>();
    let plan = Plan::new(G::start(), split + 2, split).expect("split below depth");
    black_box(plan.units().len())
}
