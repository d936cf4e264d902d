//! Slider attacks, looked up in tables the build script fills (see
//! the `perft-slider-layout` crate): by magic multiplication on any CPU, by BMI2's PEXT
//! where the counting copy proves the CPU has it ([`Isa::BMI2`]). The
//! magics were found by this module's own fixed-seed search
//! (`search_magic`, kept in the tests, which check that it still finds
//! them), and both tables are tested exhaustively against ray walking.
//!
//! The tables are plain statics, so a lookup is a load or two: no
//! first-use check on the hot path.

use super::bitboard::Square;
use crate::kernel::Isa;
use perft_slider_layout::{BISHOP_SQUARES, ROOK_SQUARES, SLIDER_ENTRIES, SliderSquare};

/// The rook lookups, a1 first.
static ROOK: [SliderSquare; 64] = ROOK_SQUARES;
/// The bishop lookups.
static BISHOP: [SliderSquare; 64] = BISHOP_SQUARES;

/// Attacks in magic order: every square's slice indexed by
/// [`SliderSquare::magic_index`].
// SAFETY: every bit pattern is a `u64`, and the build script wrote the
// file as exactly `SLIDER_ENTRIES` words in the target's byte order (the
// transmute refuses to compile if the size differs).
static MAGIC_ATTACKS: [u64; SLIDER_ENTRIES] =
    unsafe { std::mem::transmute(*include_bytes!(concat!(env!("OUT_DIR"), "/magic_attacks.bin"))) };

/// Attacks in PEXT order: every square's slice indexed by the blockers
/// under its mask, packed.
#[cfg(target_arch = "x86_64")]
// SAFETY: as for `MAGIC_ATTACKS`.
static PEXT_ATTACKS: [u64; SLIDER_ENTRIES] =
    unsafe { std::mem::transmute(*include_bytes!(concat!(env!("OUT_DIR"), "/pext_attacks.bin"))) };

/// The attacks of one square's slider with `occupied` blockers.
#[inline(always)]
fn lookup<I: Isa>(isa: I, entry: &SliderSquare, occupied: u64) -> u64 {
    let _ = isa;
    #[cfg(target_arch = "x86_64")]
    if I::BMI2 {
        // SAFETY: `I::BMI2` holds only for an `Isa` whose values exist only
        // on CPUs with BMI2, and `isa` is such a value.
        return unsafe { pext_lookup(entry, occupied) };
    }
    let index = entry.magic_index(occupied);
    debug_assert!(index < SLIDER_ENTRIES);
    // SAFETY: the multiply-shift leaves at most as many bits as the mask
    // has (`shift` is 64 minus them), so the index is within the square's
    // slice, and `perft-slider-layout` asserts that the slices fit the table.
    unsafe { *MAGIC_ATTACKS.get_unchecked(index) }
}

/// [`lookup`] by PEXT.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "bmi2")]
#[inline]
fn pext_lookup(entry: &SliderSquare, occupied: u64) -> u64 {
    let index = entry.offset as usize + std::arch::x86_64::_pext_u64(occupied, entry.mask) as usize;
    debug_assert!(index < SLIDER_ENTRIES);
    // SAFETY: PEXT packs the mask's bits, so the index is within the
    // square's slice of `1 << mask.count_ones()` entries, and
    // `perft-slider-layout` asserts that the slices fit the table.
    unsafe { *PEXT_ATTACKS.get_unchecked(index) }
}

/// Rook attacks from `square` with `occupied` blockers (blockers included).
#[inline(always)]
pub fn rook<I: Isa>(isa: I, square: Square, occupied: u64) -> u64 {
    lookup(isa, &ROOK[usize::from(square & 63)], occupied)
}

/// Bishop attacks from `square` with `occupied` blockers.
#[inline(always)]
pub fn bishop<I: Isa>(isa: I, square: Square, occupied: u64) -> u64 {
    lookup(isa, &BISHOP[usize::from(square & 63)], occupied)
}

/// Queen attacks: rook and bishop together.
#[inline(always)]
pub fn queen<I: Isa>(isa: I, square: Square, occupied: u64) -> u64 {
    rook(isa, square, occupied) | bishop(isa, square, occupied)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::{Portable, V3};
    use perft_slider_layout::{
        BISHOP_MAGICS, BISHOP_STEPS, ROOK_MAGICS, ROOK_STEPS, ray_attacks, relevant_mask, soft_pext,
    };

    /// xorshift64*, seeded: the search is the same on every run.
    struct Random(u64);

    impl Random {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }

        /// A candidate with few bits set, as good magics tend to have.
        fn sparse(&mut self) -> u64 {
            self.next() & self.next() & self.next()
        }
    }

    /// The first sparse random number that maps every blocker subset of
    /// the square's mask to a slot without two different attack sets.
    fn search_magic(square: usize, steps: &[(i32, i32); 4], random: &mut Random) -> u64 {
        let mask = relevant_mask(square, steps);
        let bits = mask.count_ones();
        let mut subsets = Vec::with_capacity(1 << bits);
        let mut subset = 0u64;
        loop {
            subsets.push((subset, ray_attacks(square, subset, steps)));
            subset = subset.wrapping_sub(mask) & mask;
            if subset == 0 {
                break;
            }
        }
        let mut slots = vec![(0u32, 0u64); 1 << bits];
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            let magic = random.sparse();
            if (mask.wrapping_mul(magic) >> 56).count_ones() < 6 {
                continue;
            }
            let fits = subsets.iter().all(|&(occupied, targets)| {
                let slot = &mut slots[(occupied.wrapping_mul(magic) >> (64 - bits)) as usize];
                if slot.0 != attempt {
                    *slot = (attempt, targets);
                    true
                } else {
                    slot.1 == targets
                }
            });
            if fits {
                return magic;
            }
        }
    }

    #[test]
    fn the_search_finds_the_embedded_magics() {
        let mut random = Random(0x9E37_79B9_7F4A_7C15);
        for square in 0..64 {
            assert_eq!(
                search_magic(square, &ROOK_STEPS, &mut random),
                ROOK_MAGICS[square]
            );
            assert_eq!(
                search_magic(square, &BISHOP_STEPS, &mut random),
                BISHOP_MAGICS[square]
            );
        }
    }

    /// Every subset of every square's mask (with noise outside the mask,
    /// which never changes the attacks) looks up its ray-walked attacks,
    /// through `isa`'s lookup.
    fn every_blocker_subset_on<I: Isa>(isa: I) {
        for square in 0..64u8 {
            let s = usize::from(square);
            for (steps, lookup) in [
                (&ROOK_STEPS, rook::<I> as fn(I, Square, u64) -> u64),
                (&BISHOP_STEPS, bishop::<I>),
            ] {
                let mask = relevant_mask(s, steps);
                let mut subset = 0u64;
                loop {
                    let noise = !mask & 0x5A5A_A5A5_3C3C_C3C3;
                    assert_eq!(
                        lookup(isa, square, subset | noise),
                        ray_attacks(s, subset | noise, steps)
                    );
                    assert_eq!(lookup(isa, square, subset), ray_attacks(s, subset, steps));
                    subset = subset.wrapping_sub(mask) & mask;
                    if subset == 0 {
                        break;
                    }
                }
            }
        }
    }

    #[test]
    fn every_blocker_subset_looks_up_its_true_attacks_by_magic() {
        every_blocker_subset_on(Portable);
    }

    #[test]
    fn every_blocker_subset_looks_up_its_true_attacks_by_pext() {
        match V3::detect() {
            Some(v3) => every_blocker_subset_on(v3),
            None => eprintln!("no x86-64-v3 here: the PEXT lookups are not tested"),
        }
    }

    #[test]
    fn magic_and_pext_agree_with_ray_walking_for_random_occupancies() {
        let v3 = V3::detect();
        let mut random = Random(12345);
        for square in 0..64u8 {
            for _ in 0..2000 {
                let occupied = random.next() & random.next();
                let s = usize::from(square);
                let rooks = ray_attacks(s, occupied, &ROOK_STEPS);
                let bishops = ray_attacks(s, occupied, &BISHOP_STEPS);
                assert_eq!(rook(Portable, square, occupied), rooks);
                assert_eq!(bishop(Portable, square, occupied), bishops);
                assert_eq!(queen(Portable, square, occupied), rooks | bishops);
                if let Some(v3) = v3 {
                    assert_eq!(rook(v3, square, occupied), rooks);
                    assert_eq!(bishop(v3, square, occupied), bishops);
                    assert_eq!(queen(v3, square, occupied), rooks | bishops);
                }
            }
        }
    }

    /// The empty-board rays that let the generator skip a lookup are the
    /// lookups' own answers on an empty board.
    #[test]
    fn the_empty_board_rays_are_the_empty_board_attacks() {
        use crate::chess::bitboard::{BISHOP_RAYS, ROOK_RAYS};
        for square in 0..64u8 {
            assert_eq!(
                ROOK_RAYS[usize::from(square)],
                rook(Portable, square, 0),
                "rook on {square}"
            );
            assert_eq!(
                BISHOP_RAYS[usize::from(square)],
                bishop(Portable, square, 0),
                "bishop on {square}"
            );
        }
        assert_eq!(ROOK_RAYS[0], 0x0101_0101_0101_01FE);
        assert_eq!(BISHOP_RAYS[0], 0x8040_2010_0804_0200);
    }

    #[test]
    fn soft_pext_packs_the_masked_bits_in_order() {
        assert_eq!(soft_pext(0b1011_0110, 0b1111_0000), 0b1011);
        assert_eq!(soft_pext(0b1011_0110, 0b1010_1010), 0b1101);
        assert_eq!(soft_pext(!0, 0x8000_0000_0000_0001), 0b11);
        #[cfg(target_arch = "x86_64")]
        if V3::detect().is_some() {
            let mut random = Random(99);
            for _ in 0..10_000 {
                let (value, mask) = (random.next(), random.next());
                // SAFETY: the CPU runs x86-64-v3, which includes BMI2.
                let hard = unsafe { std::arch::x86_64::_pext_u64(value, mask) };
                assert_eq!(soft_pext(value, mask), hard);
            }
        }
    }
}
