//! The bitboard kernels' tests: every kernel against slow, obvious models.

use super::*;

/// Flips by walking each direction square by square: slow and obvious.
fn flips_by_walking(player: u64, opponent: u64, square: u8) -> u64 {
    let mut flipped = 0;
    for (df, dr) in DIRECTIONS {
        let (mut f, mut r) = (i32::from(square % 8) + df, i32::from(square / 8) + dr);
        let mut run = 0u64;
        while (0..8).contains(&f) && (0..8).contains(&r) {
            let bit = 1u64 << (r * 8 + f);
            if opponent & bit != 0 {
                run |= bit;
            } else {
                if player & bit != 0 {
                    flipped |= run;
                }
                break;
            }
            f += df;
            r += dr;
        }
    }
    flipped
}

fn moves_by_walking(player: u64, opponent: u64) -> u64 {
    (0..64u8)
        .filter(|&sq| (player | opponent) & (1 << sq) == 0)
        .filter(|&sq| flips_by_walking(player, opponent, sq) != 0)
        .fold(0, |m, sq| m | 1 << sq)
}

/// One of the instruction sets this CPU runs, as the kernels see it.
#[derive(Clone, Copy)]
enum AnyIsa {
    Portable(crate::kernel::Portable),
    V3(crate::kernel::V3),
    V4(crate::kernel::V4),
}

impl AnyIsa {
    fn moves(self, p: u64, o: u64) -> u64 {
        match self {
            AnyIsa::Portable(isa) => legal_moves_mask_on(isa, p, o),
            AnyIsa::V3(isa) => legal_moves_mask_on(isa, p, o),
            AnyIsa::V4(isa) => legal_moves_mask_on(isa, p, o),
        }
    }

    fn flips(self, p: u64, o: u64, sq: u8) -> u64 {
        match self {
            AnyIsa::Portable(isa) => flips_on(isa, p, o, sq),
            AnyIsa::V3(isa) => flips_on(isa, p, o, sq),
            AnyIsa::V4(isa) => flips_on(isa, p, o, sq),
        }
    }

    fn count_two_plies(self, p: u64, o: u64, game_over_empty: bool) -> Option<u64> {
        match (self, game_over_empty) {
            (AnyIsa::Portable(isa), false) => count_two_plies_on::<_, false>(isa, p, o),
            (AnyIsa::V3(isa), false) => count_two_plies_on::<_, false>(isa, p, o),
            (AnyIsa::V4(isa), false) => count_two_plies_on::<_, false>(isa, p, o),
            (AnyIsa::Portable(isa), true) => count_two_plies_on::<_, true>(isa, p, o),
            (AnyIsa::V3(isa), true) => count_two_plies_on::<_, true>(isa, p, o),
            (AnyIsa::V4(isa), true) => count_two_plies_on::<_, true>(isa, p, o),
        }
    }
}

impl AnyIsa {
    fn count_three_plies(self, p: u64, o: u64, game_over_empty: bool) -> Option<u64> {
        match (self, game_over_empty) {
            (AnyIsa::Portable(isa), false) => count_three_plies_on::<_, false>(isa, p, o),
            (AnyIsa::V3(isa), false) => count_three_plies_on::<_, false>(isa, p, o),
            (AnyIsa::V4(isa), false) => count_three_plies_on::<_, false>(isa, p, o),
            (AnyIsa::Portable(isa), true) => count_three_plies_on::<_, true>(isa, p, o),
            (AnyIsa::V3(isa), true) => count_three_plies_on::<_, true>(isa, p, o),
            (AnyIsa::V4(isa), true) => count_three_plies_on::<_, true>(isa, p, o),
        }
    }

    /// Whether this instruction set counts three plies in lanes.
    fn has_lanes(self) -> bool {
        matches!(self, AnyIsa::V4(_))
    }
}

/// The children of `p` to move against `o`: each one's boards, its
/// side to move first.
fn children(p: u64, o: u64) -> Vec<(u64, u64)> {
    let moves = legal_moves_mask(p, o);
    (0..64u8)
        .filter(|&sq| moves & (1 << sq) != 0)
        .map(|sq| {
            let f = flips(p, o, sq);
            (o & !f, p | f | (1 << sq))
        })
        .collect()
}

/// The leaves two plies below `p` to move against `o`, which has a
/// move, in Bik's convention (a child without a move counts 1) or in
/// A124004's (only when it passes).
fn two_plies_by_walking(p: u64, o: u64, game_over_empty: bool) -> u64 {
    children(p, o)
        .into_iter()
        .map(
            |(child_p, child_o)| match legal_moves_mask(child_p, child_o).count_ones() {
                0 if game_over_empty => u64::from(legal_moves_mask(child_o, child_p) != 0),
                0 => 1,
                n => u64::from(n),
            },
        )
        .sum()
}

/// `f` on every instruction set this CPU runs, the portable one first.
fn on_every_isa<T>(f: impl Fn(AnyIsa) -> T) -> Vec<T> {
    let mut isas = vec![AnyIsa::Portable(crate::kernel::Portable)];
    isas.extend(crate::kernel::V3::detect().map(AnyIsa::V3));
    isas.extend(crate::kernel::V4::detect().map(AnyIsa::V4));
    isas.into_iter().map(f).collect()
}

proptest::proptest! {
    #[test]
    fn every_isa_matches_the_portable_kernels(a: u64, b: u64) {
        let (player, opponent) = (a & !b, b & !a);
        // Sparser boards too, so that long runs and open rays occur.
        let (sparse_player, sparse_opponent) = (player & (a >> 7), opponent & (b >> 3));
        for (p, o) in [(player, opponent), (sparse_player, sparse_opponent), (opponent, player)] {
            for moves in on_every_isa(|isa| isa.moves(p, o)) {
                proptest::prop_assert_eq!(moves, legal_moves_mask(p, o));
            }
            for sq in (0..64u8).filter(|&sq| (p | o) & (1 << sq) == 0) {
                for flipped in on_every_isa(|isa| isa.flips(p, o, sq)) {
                    proptest::prop_assert_eq!(flipped, flips(p, o, sq), "square {}", sq);
                }
            }
        }
    }

    #[test]
    fn two_plies_count_every_child(a: u64, b: u64) {
        let (player, opponent) = (a & !b, b & !a);
        let (sparse_player, sparse_opponent) = (player & (a >> 7), opponent & (b >> 3));
        for (p, o) in [(player, opponent), (sparse_player, sparse_opponent), (opponent, player)] {
            let moves = legal_moves_mask(p, o);
            // Bik's counts a child without a move as 1; A124004's only
            // when it passes, not when its game is over.
            let (mut bik, mut oeis) = (0u64, 0u64);
            for sq in (0..64u8).filter(|&sq| moves & (1 << sq) != 0) {
                let f = flips(p, o, sq);
                let (child_p, child_o) = (o & !f, p | f | (1 << sq));
                let child = legal_moves_mask(child_p, child_o).count_ones();
                bik += u64::from(child).max(1);
                oeis += match child {
                    0 => u64::from(legal_moves_mask(child_o, child_p) != 0),
                    n => u64::from(n),
                };
            }
            for (game_over_empty, expected) in [(false, bik), (true, oeis)] {
                let want = if moves == 0 { None } else { Some(expected) };
                let counts = on_every_isa(|isa| isa.count_two_plies(p, o, game_over_empty));
                // The portable kernel has no shortcut; every vector kernel has.
                proptest::prop_assert_eq!(counts[0], None);
                for count in &counts[1..] {
                    proptest::prop_assert_eq!(*count, want);
                }
            }
        }
    }

    #[test]
    fn three_plies_count_every_grandchild(a: u64, b: u64, c: u64) {
        let (player, opponent) = (a & !b, b & !a);
        // Sparse boards (few moves, passes) and ones with a few empty
        // squares (long runs, children without a move).
        let (sparse_player, sparse_opponent) = (player & (a >> 7) & c, opponent & (b >> 3) & c);
        let (full_player, full_opponent) = (player | (!(a | b) & c & (c >> 5)), opponent | (!(a | b) & !c));
        for (p, o) in [(player, opponent), (sparse_player, sparse_opponent), (full_player, full_opponent & !full_player)] {
            let children = children(p, o);
            let counted = !children.is_empty()
                && children.iter().all(|&(child_p, child_o)| legal_moves_mask(child_p, child_o) != 0);
            for game_over_empty in [false, true] {
                let want = counted.then(|| {
                    children
                        .iter()
                        .map(|&(child_p, child_o)| two_plies_by_walking(child_p, child_o, game_over_empty))
                        .sum::<u64>()
                });
                for (isa, count) in on_every_isa(|isa| (isa, isa.count_three_plies(p, o, game_over_empty))) {
                    let want = if isa.has_lanes() { want } else { None };
                    proptest::prop_assert_eq!(count, want, "{:#x} {:#x}", p, o);
                }
            }
        }
    }

    #[test]
    fn kernels_match_square_by_square_walk(a: u64, b: u64) {
        let (player, opponent) = (a & !b, b & !a);
        proptest::prop_assert_eq!(legal_moves_mask(player, opponent), moves_by_walking(player, opponent));
        for sq in 0..64u8 {
            if (player | opponent) & (1 << sq) == 0 {
                proptest::prop_assert_eq!(flips(player, opponent, sq), flips_by_walking(player, opponent, sq));
            }
        }
    }
}
