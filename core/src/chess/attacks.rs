//! Slider attacks by magic bitboards: for each square, the relevant
//! blockers times a magic number, shifted, index one shared table. The
//! magics are searched at first use (a fixed-seed search, a few
//! milliseconds) and checked against the ray-walking reference in tests.

use std::sync::LazyLock;

use super::bitboard::{BISHOP_STEPS, ROOK_STEPS, Square, ray_attacks};

/// One square's magic lookup for one slider kind.
#[derive(Clone, Copy, Debug, Default)]
struct Magic {
    /// Squares whose occupancy changes the attacks (edges excluded).
    mask: u64,
    magic: u64,
    shift: u32,
    /// Start of this square's slice of the shared table.
    offset: usize,
}

impl Magic {
    #[inline(always)]
    fn index(&self, occupied: u64) -> usize {
        self.offset + ((occupied & self.mask).wrapping_mul(self.magic) >> self.shift) as usize
    }
}

/// The rook and bishop lookups of every square and their shared table.
#[derive(Debug)]
pub struct SliderTables {
    rook: [Magic; 64],
    bishop: [Magic; 64],
    attacks: Vec<u64>,
}

impl SliderTables {
    /// Rook attacks from `square` with `occupied` blockers (blockers
    /// included).
    #[inline(always)]
    pub fn rook(&self, square: Square, occupied: u64) -> u64 {
        self.attacks[self.rook[usize::from(square)].index(occupied)]
    }

    /// Bishop attacks from `square` with `occupied` blockers.
    #[inline(always)]
    pub fn bishop(&self, square: Square, occupied: u64) -> u64 {
        self.attacks[self.bishop[usize::from(square)].index(occupied)]
    }

    /// Queen attacks: rook and bishop together.
    #[inline(always)]
    pub fn queen(&self, square: Square, occupied: u64) -> u64 {
        self.rook(square, occupied) | self.bishop(square, occupied)
    }
}

/// The tables, built on first use.
pub fn sliders() -> &'static SliderTables {
    static TABLES: LazyLock<SliderTables> = LazyLock::new(build);
    &TABLES
}

/// The relevant-occupancy mask: the rays without their last square.
fn relevant_mask(square: usize, steps: &[(i32, i32); 4]) -> u64 {
    let (file, rank) = ((square % 8) as i32, (square / 8) as i32);
    let mut mask = 0u64;
    for &(df, dr) in steps {
        let (mut f, mut r) = (file + df, rank + dr);
        while (0..8).contains(&(f + df)) && (0..8).contains(&(r + dr)) {
            mask |= 1u64 << (r * 8 + f);
            f += df;
            r += dr;
        }
    }
    mask
}

/// xorshift64*: a fixed seed makes the search, and so the tables, the same
/// on every run.
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

/// Finds a magic for one square and appends its slice to `attacks`.
fn find_magic(square: usize, steps: &[(i32, i32); 4], random: &mut Random, attacks: &mut Vec<u64>) -> Magic {
    let mask = relevant_mask(square, steps);
    let bits = mask.count_ones();
    let shift = 64 - bits;
    // Every subset of the mask (carry-rippler) with its true attacks.
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
            let slot = &mut slots[(occupied.wrapping_mul(magic) >> shift) as usize];
            if slot.0 != attempt {
                *slot = (attempt, targets);
                true
            } else {
                slot.1 == targets
            }
        });
        if fits {
            let offset = attacks.len();
            attacks.extend(slots.iter().map(|&(_, targets)| targets));
            return Magic {
                mask,
                magic,
                shift,
                offset,
            };
        }
    }
}

fn build() -> SliderTables {
    let mut random = Random(0x9E37_79B9_7F4A_7C15);
    let mut attacks = Vec::with_capacity(108_000);
    let mut rook = [Magic::default(); 64];
    let mut bishop = [Magic::default(); 64];
    for square in 0..64 {
        rook[square] = find_magic(square, &ROOK_STEPS, &mut random, &mut attacks);
        bishop[square] = find_magic(square, &BISHOP_STEPS, &mut random, &mut attacks);
    }
    SliderTables {
        rook,
        bishop,
        attacks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_lookups_equal_ray_walking_for_random_occupancies() {
        let tables = sliders();
        let mut random = Random(12345);
        for square in 0..64u8 {
            for _ in 0..2000 {
                let occupied = random.next() & random.next();
                let s = usize::from(square);
                assert_eq!(
                    tables.rook(square, occupied),
                    ray_attacks(s, occupied, &ROOK_STEPS)
                );
                assert_eq!(
                    tables.bishop(square, occupied),
                    ray_attacks(s, occupied, &BISHOP_STEPS)
                );
            }
        }
    }
}
