//! Slider attacks by magic bitboards: for each square, the relevant
//! blockers times a magic number, shifted, index one shared table. The
//! magics below were found by this module's own fixed-seed search
//! (`search_magic`, kept in the tests, which check that it still finds
//! them); the table is filled from them at first use, in about a
//! millisecond, and tested exhaustively against ray walking.

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

/// The magic of each square for rooks, a1 first.
const ROOK_MAGICS: [u64; 64] = [
    0x1080004008801020,
    0x0840092002C03000,
    0x1900200010400900,
    0x0880100008000480,
    0x4200100420080200,
    0x8100020100080400,
    0x0200040110886200,
    0x0200008040220411,
    0x0404800084400220,
    0x0000401000402000,
    0x0086001081220440,
    0x0408800800100280,
    0x000A001201040820,
    0x8848800200840080,
    0x4001000100040200,
    0x0442000102105084,
    0x9080010020804100,
    0x0040404000201009,
    0x0000808010002009,
    0x2200090021D00100,
    0x0008008008040080,
    0x0004004002010040,
    0x0011040008015042,
    0x00000A0001768104,
    0x0000800080204009,
    0x2010004140002001,
    0x9800200280100080,
    0x1000100080080080,
    0x0050500500080100,
    0x0000020080040080,
    0x0C10010400420810,
    0x1040008200005104,
    0x01808240088004A0,
    0x0882804004802000,
    0x0880402001001100,
    0x2000210409001000,
    0x2000480131001500,
    0x0000800400800200,
    0x000002380C001003,
    0x4600084882000431,
    0x0080002000504000,
    0x0300500020004002,
    0x0040408200220011,
    0x0010040008004040,
    0x0000080004008080,
    0x0010040002008080,
    0x2012004881020004,
    0x8300842444820011,
    0x0088403882010200,
    0x0820400080210100,
    0x0110910040A00300,
    0x0801100280080480,
    0x0242009008200600,
    0x1002000489500200,
    0x0040800200010080,
    0x0091800041000080,
    0x0000209300488001,
    0x04C1002414824001,
    0x020020000B001041,
    0x7000100004200901,
    0x8002002004100802,
    0x30010002084C0007,
    0x0888221800813004,
    0x4000002840840112,
];

/// The magic of each square for bishops, a1 first.
const BISHOP_MAGICS: [u64; 64] = [
    0x20C0090901061081,
    0x0024040094030104,
    0x8210810200290200,
    0x0011040484620000,
    0x0081104002221000,
    0x0009012011001350,
    0x0081010802400380,
    0x0000420210010408,
    0x0008105002280050,
    0x0001028484040044,
    0x2A00880810408804,
    0x7020022282000100,
    0x0084040420100A50,
    0x000401010840E000,
    0x2020020210420888,
    0x0008084202012010,
    0x2010400810018800,
    0x0445122008020840,
    0x0804100808002008,
    0x0008002104110100,
    0x0061005820080800,
    0x2001000200820100,
    0x480C210084010800,
    0x3004442500480420,
    0x1010102240048100,
    0x00182009084220A3,
    0x8803090A10004205,
    0x0208080040202020,
    0x000C044084010040,
    0x00A1010002004106,
    0x6008210020640202,
    0x1600902112860801,
    0x00042008C1220200,
    0x010C042002440140,
    0x5022080200040820,
    0x0402004042940100,
    0x0860108400008020,
    0x000C080022021000,
    0x0264080652822100,
    0x4005031221010401,
    0x0004502410008400,
    0x000500B010A20400,
    0x0415094050080800,
    0x080000201800A104,
    0x4022A80304000110,
    0x4012140802028020,
    0x40200104010100A0,
    0x12810806008B0C41,
    0x0020441008080000,
    0x2002120084045420,
    0x0704020062080002,
    0x0000001084040001,
    0x0322200891240200,
    0xF040200210024800,
    0x0140824832008042,
    0x000210020A004602,
    0x0083042805141020,
    0x002C12009A011000,
    0x0041A00044140400,
    0x00004004020A0202,
    0x0000140010020210,
    0x2864160811012200,
    0x2060080841082A17,
    0xA010041108003100,
];

/// One square's lookup: its slice of the table, filled by enumerating every
/// subset of the mask (carry-rippler) with its true attacks.
fn fill(square: usize, steps: &[(i32, i32); 4], magic: u64, attacks: &mut Vec<u64>) -> Magic {
    let mask = relevant_mask(square, steps);
    let bits = mask.count_ones();
    let entry = Magic {
        mask,
        magic,
        shift: 64 - bits,
        offset: attacks.len(),
    };
    attacks.resize(attacks.len() + (1 << bits), 0);
    let mut subset = 0u64;
    loop {
        attacks[entry.index(subset)] = ray_attacks(square, subset, steps);
        subset = subset.wrapping_sub(mask) & mask;
        if subset == 0 {
            break;
        }
    }
    entry
}

fn build() -> SliderTables {
    let mut attacks = Vec::with_capacity(108_000);
    let mut rook = [Magic::default(); 64];
    let mut bishop = [Magic::default(); 64];
    for square in 0..64 {
        rook[square] = fill(square, &ROOK_STEPS, ROOK_MAGICS[square], &mut attacks);
        bishop[square] = fill(square, &BISHOP_STEPS, BISHOP_MAGICS[square], &mut attacks);
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

    #[test]
    fn every_blocker_subset_looks_up_its_true_attacks() {
        let tables = sliders();
        for square in 0..64u8 {
            let s = usize::from(square);
            for (steps, lookup) in [
                (
                    &ROOK_STEPS,
                    SliderTables::rook as fn(&SliderTables, Square, u64) -> u64,
                ),
                (&BISHOP_STEPS, SliderTables::bishop),
            ] {
                let mask = relevant_mask(s, steps);
                let mut subset = 0u64;
                loop {
                    // Squares outside the mask never change the attacks.
                    let noise = !mask & 0x5A5A_A5A5_3C3C_C3C3;
                    assert_eq!(
                        lookup(tables, square, subset | noise),
                        ray_attacks(s, subset | noise, steps)
                    );
                    subset = subset.wrapping_sub(mask) & mask;
                    if subset == 0 {
                        break;
                    }
                }
            }
        }
    }

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
