//! Every kernel this CPU runs counts exactly what the portable one does:
//! published totals from the start, and random midgame and endgame
//! positions, with and without a table. This is also the test that runs
//! the `unsafe` calls into the `#[target_feature]` copies of the recursion.

use perft_core::{Checkers, Chess, Counter, Game, GameKind, Kernel, Leaves, Reversi, TranspositionTable};

/// Positions reached by `plies` pseudo-random legal moves from the start
/// (a fixed linear congruential sequence, so every run tests the same).
fn playouts<G: Game>(games: usize, plies: usize) -> Vec<G> {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut positions = Vec::new();
    for _ in 0..games {
        let mut pos = G::start();
        for _ in 0..plies {
            let moves: Vec<G::Move> = pos.legal_moves().into_iter().collect();
            if moves.is_empty() {
                break;
            }
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            pos = pos.play(moves[(state >> 33) as usize % moves.len()]);
            positions.push(pos);
        }
    }
    positions
}

fn count<G: Game>(kernel: Kernel, table: Option<&TranspositionTable>, pos: &G, depth: u32) -> Leaves {
    Counter::with_kernel(table, kernel)
        .expect("only available kernels are tested")
        .perft(pos, depth)
}

fn kernels_agree<G: Game>(kind: GameKind, start_depth: u32, positions: &[G], depth: u32) {
    let expected = kind.fns().published(start_depth).unwrap().total;
    let portable: Vec<Leaves> = positions
        .iter()
        .map(|p| count(Kernel::Portable, None, p, depth))
        .collect();
    for kernel in Kernel::available() {
        assert_eq!(
            count(kernel, None, &G::start(), start_depth),
            expected,
            "{kernel} {kind}"
        );
        let table = TranspositionTable::for_game::<G>(1 << 22).unwrap();
        assert_eq!(
            count(kernel, Some(&table), &G::start(), start_depth),
            expected,
            "{kernel} {kind} table"
        );
        for (pos, &want) in positions.iter().zip(&portable) {
            assert_eq!(count(kernel, None, pos, depth), want, "{kernel} {pos}");
            assert_eq!(
                count(kernel, Some(&table), pos, depth),
                want,
                "{kernel} {pos} table"
            );
        }
    }
}

#[test]
fn every_reversi_kernel_counts_the_same() {
    // Up to 60 plies: the endgames, passes and finished games included.
    let positions = playouts::<Reversi>(8, 60);
    kernels_agree(GameKind::Reversi, 9, &positions, 4);
}

#[test]
fn every_checkers_kernel_counts_the_same() {
    let positions = playouts::<Checkers>(8, 80);
    kernels_agree(GameKind::Checkers, 10, &positions, 5);
}

/// Chess looks its sliders up by PEXT on the x86-64-v3 kernel and by magic
/// multiplication on the portable one, and on x86-64-v3 and v4 fills them
/// all at once where a union or a count is enough: all count the same.
#[test]
fn every_chess_kernel_counts_the_same() {
    let positions = playouts::<Chess>(8, 80);
    kernels_agree(GameKind::Chess, 5, &positions, 3);
}

#[test]
fn the_best_kernel_runs_here_and_unavailable_ones_are_refused() {
    assert!(Kernel::Portable.is_available());
    for kernel in Kernel::ALL {
        assert_eq!(
            Counter::with_kernel(None, kernel).is_some(),
            kernel.is_available()
        );
    }
    assert_eq!(Kernel::best_of(&[]), Kernel::Portable);
    best_kernel_is_the_first_available::<Reversi>();
    best_kernel_is_the_first_available::<Checkers>();
    best_kernel_is_the_first_available::<Chess>();
}

/// A game counts on the first of its kernels that this CPU runs (unless
/// `PERFT_KERNEL` names another), and a default counter uses it.
fn best_kernel_is_the_first_available<G: Game>() {
    let best = G::best_kernel();
    assert!(best.is_available(), "{} on {best}", G::NAME);
    if std::env::var_os("PERFT_KERNEL").is_none() {
        let first = G::preferred_kernels().iter().find(|k| k.is_available()).copied();
        assert_eq!(Some(best), first, "{}", G::NAME);
    }
    assert_eq!(Counter::new(None).kernel_for::<G>(), best);
}

/// Reversi (flips) and chess (slider fills) have AVX-512 code and count
/// on x86-64-v4 first; checkers has none and keeps to v3.
#[test]
fn only_games_with_avx512_code_prefer_the_avx512_kernel() {
    assert_eq!(Reversi::KERNELS[0], Kernel::X86_64V4);
    assert_eq!(Chess::KERNELS[0], Kernel::X86_64V4);
    assert!(!Checkers::KERNELS.contains(&Kernel::X86_64V4));
}
