//! Reversi in OEIS A124004's convention: every published term up to 2e9
//! leaves, bare and through the planner and table, from the table shipped
//! in `core/data` (never read from outside the repository).

use perft_core::{
    Convention, Game, GameKind, Leaves, Plan, Reversi, ReversiOeis, TranspositionTable, divide,
    divide_parallel, perft,
};

/// The terms a test can afford: up to 2e9 leaves (term 12).
fn affordable_terms() -> Vec<(u32, u128)> {
    let oeis = GameKind::Reversi.fns_in(Some(Convention::Oeis)).unwrap();
    oeis.published_depths()
        .into_iter()
        .map(|depth| {
            let total = oeis.published(depth).unwrap().total;
            assert_eq!(total.higher, 0, "A124004 has no game-over leaves");
            (depth, total.leaves)
        })
        .filter(|&(_, leaves)| leaves <= 2_000_000_000)
        .collect()
}

#[test]
fn every_term_up_to_2e9_counted_bare() {
    let terms = affordable_terms();
    assert_eq!(terms.len(), 13, "terms 0-12");
    for (depth, expected) in terms {
        assert_eq!(
            perft(&ReversiOeis::start(), depth),
            Leaves::full(expected),
            "A124004({depth})"
        );
    }
}

#[test]
fn every_term_up_to_2e9_counted_planned_with_a_table() {
    let table = TranspositionTable::for_game::<ReversiOeis>(64 << 20).unwrap();
    for (depth, expected) in affordable_terms() {
        let (result, _) =
            divide_parallel::<_, perft_core::Plain>(&ReversiOeis::start(), depth, 2, Some(&table)).unwrap();
        assert_eq!(result.total, Leaves::full(expected), "A124004({depth}) planned");
        if depth > 0 {
            let lines: Leaves = result.moves.iter().map(|&(_, n)| n).sum();
            assert_eq!(lines, result.total);
        }
    }
}

/// Both conventions in one table: entries are keyed per convention, so
/// neither count borrows the other's subtrees.
#[test]
fn one_table_holds_both_conventions_apart() {
    let table = TranspositionTable::for_game::<Reversi>(16 << 20).unwrap();
    for _ in 0..2 {
        let (bik, _) =
            divide_parallel::<_, perft_core::Plain>(&Reversi::start(), 11, 2, Some(&table)).unwrap();
        assert_eq!(
            bik.total,
            Leaves {
                leaves: 212_258_800,
                higher: 228
            }
        );
        let (oeis, _) =
            divide_parallel::<_, perft_core::Plain>(&ReversiOeis::start(), 11, 2, Some(&table)).unwrap();
        assert_eq!(oeis.total, Leaves::full(212_258_216));
    }
}

/// A124004's tree is Bik's (a pass is a ply), but a game over before full
/// depth counts nothing where Bik's counts one leaf.
#[test]
fn a_game_over_before_full_depth_counts_nothing() {
    // Light on a1, dark on b1, dark to move: dark must pass, light plays
    // c1, and then neither side can move (dark has no disc).
    let text = format!("OX{} X", "-".repeat(62));
    let bik: Reversi = text.parse().unwrap();
    let oeis: ReversiOeis = text.parse().unwrap();
    for depth in 0..=2 {
        assert_eq!(perft(&oeis, depth), Leaves::full(1), "depth {depth}");
        assert_eq!(perft(&bik, depth), Leaves::full(1), "depth {depth}");
    }
    let first = divide(&oeis, 2);
    assert_eq!(oeis.format_move(first.moves[0].0), "pass");
    // Game over at ply 2: one ply above full depth Bik's counts it at full
    // depth, two above as "higher"; A124004's not at all.
    assert_eq!(perft(&bik, 3), Leaves::full(1));
    assert_eq!(perft(&bik, 4), Leaves { leaves: 1, higher: 1 });
    assert_eq!(perft(&oeis, 3), Leaves::ZERO);
    assert_eq!(perft(&oeis, 4), Leaves::ZERO);
    // The terms differ from Bik's by exactly the game-over leaves: 228
    // games end at ply 9.
    assert_eq!(perft(&Reversi::start(), 9), perft(&ReversiOeis::start(), 9));
    let bik10 = perft(&Reversi::start(), 10);
    assert_eq!(bik10.leaves - 228, perft(&ReversiOeis::start(), 10).leaves);
    let plan = Plan::new(ReversiOeis::start(), 9, 5).unwrap();
    assert_eq!(plan.first_moves().len(), 4);
    // Packed forms and keys are Bik's: only the counting differs.
    let mut packed = Vec::new();
    oeis.pack(&mut packed);
    assert_eq!(ReversiOeis::unpack(&packed).unwrap(), oeis);
    assert_eq!(oeis.table_key(), bik.table_key());
}
