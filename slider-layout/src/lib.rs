//! The chess slider tables' layout: the magic numbers, each square's
//! relevant blockers and its slice of the attack table. `perft-core`'s
//! build script fills the tables from it at build time (so the hot path
//! reads plain statics, with no first-use check), and the crate looks them
//! up with it: one crate both depend on, so the two cannot disagree.
//!
//! Every square's slice has one entry per subset of its mask, so the magic
//! table and the PEXT table share their offsets and differ only in the
//! order within a slice.

/// The four rook directions as (file, rank) steps.
pub const ROOK_STEPS: [(i32, i32); 4] = [(1, 0), (-1, 0), (0, 1), (0, -1)];
/// The four diagonal directions.
pub const BISHOP_STEPS: [(i32, i32); 4] = [(1, 1), (1, -1), (-1, 1), (-1, -1)];

/// Slider attacks from `square` along `steps`, stopping at (and including)
/// the first blocker in `occupied`: the slow reference the tables are built
/// from and tested against.
pub const fn ray_attacks(square: usize, occupied: u64, steps: &[(i32, i32); 4]) -> u64 {
    let mut targets = 0u64;
    let mut d = 0;
    while d < 4 {
        let (mut f, mut r) = ((square % 8) as i32, (square / 8) as i32);
        loop {
            f += steps[d].0;
            r += steps[d].1;
            if f < 0 || f >= 8 || r < 0 || r >= 8 {
                break;
            }
            let b = 1u64 << (r * 8 + f);
            targets |= b;
            if occupied & b != 0 {
                break;
            }
        }
        d += 1;
    }
    targets
}

/// The relevant-occupancy mask: the rays without their last square.
pub const fn relevant_mask(square: usize, steps: &[(i32, i32); 4]) -> u64 {
    let (file, rank) = ((square % 8) as i32, (square / 8) as i32);
    let mut mask = 0u64;
    let mut d = 0;
    while d < 4 {
        let (df, dr) = steps[d];
        let (mut f, mut r) = (file + df, rank + dr);
        while f + df >= 0 && f + df < 8 && r + dr >= 0 && r + dr < 8 {
            mask |= 1u64 << (r * 8 + f);
            f += df;
            r += dr;
        }
        d += 1;
    }
    mask
}

/// The magic of each square for rooks, a1 first.
pub const ROOK_MAGICS: [u64; 64] = [
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
pub const BISHOP_MAGICS: [u64; 64] = [
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

/// One square's lookup for one slider kind: 32 bytes aligned, so that a
/// lookup's words never straddle two cache lines (24 bytes unaligned did),
/// with what a PEXT lookup reads (mask and offset) first.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(32))]
pub struct SliderSquare {
    /// Squares whose occupancy changes the attacks (edges excluded).
    pub mask: u64,
    /// Start of this square's slice of the table.
    pub offset: u32,
    /// 64 minus the mask's bit count.
    pub shift: u32,
    /// The magic number.
    pub magic: u64,
}

impl SliderSquare {
    /// The index of `occupied` in the magic-ordered table.
    #[inline(always)]
    pub const fn magic_index(&self, occupied: u64) -> usize {
        self.offset as usize + ((occupied & self.mask).wrapping_mul(self.magic) >> self.shift) as usize
    }
}

/// The lookups of all 64 squares of one slider kind, their slices placed
/// one after the other from `first_offset`.
const fn slider_squares(
    steps: &[(i32, i32); 4],
    magics: &[u64; 64],
    first_offset: u32,
) -> [SliderSquare; 64] {
    let mut squares = [SliderSquare {
        mask: 0,
        magic: 0,
        shift: 0,
        offset: 0,
    }; 64];
    let mut offset = first_offset;
    let mut square = 0;
    while square < 64 {
        let mask = relevant_mask(square, steps);
        squares[square] = SliderSquare {
            mask,
            magic: magics[square],
            shift: 64 - mask.count_ones(),
            offset,
        };
        offset += 1 << mask.count_ones();
        square += 1;
    }
    squares
}

/// Entries of the rook slices (4096 for a corner, 1024 for an edge, ...).
pub const ROOK_ENTRIES: usize = 102_400;
/// Entries of the bishop slices.
pub const BISHOP_ENTRIES: usize = 5_248;
/// Entries of either whole table: the rook slices, then the bishop ones.
pub const SLIDER_ENTRIES: usize = ROOK_ENTRIES + BISHOP_ENTRIES;

/// Rook lookups, slices from 0.
pub const ROOK_SQUARES: [SliderSquare; 64] = slider_squares(&ROOK_STEPS, &ROOK_MAGICS, 0);
/// Bishop lookups, slices after the rook ones.
pub const BISHOP_SQUARES: [SliderSquare; 64] =
    slider_squares(&BISHOP_STEPS, &BISHOP_MAGICS, ROOK_ENTRIES as u32);

/// Parallel bit extract in software: the bits of `value` under `mask`,
/// packed into the low bits in mask order (what BMI2's `pext` computes).
pub const fn soft_pext(value: u64, mask: u64) -> u64 {
    let mut result = 0u64;
    let mut rest = mask;
    let mut k = 0;
    while rest != 0 {
        let low = rest & rest.wrapping_neg();
        if value & low != 0 {
            result |= 1 << k;
        }
        rest ^= low;
        k += 1;
    }
    result
}

// The slices fill the tables exactly.
const _: () =
    assert!(ROOK_SQUARES[63].offset as usize + (1 << (64 - ROOK_SQUARES[63].shift)) == ROOK_ENTRIES);
const _: () =
    assert!(BISHOP_SQUARES[63].offset as usize + (1 << (64 - BISHOP_SQUARES[63].shift)) == SLIDER_ENTRIES);
// A lookup's words share one cache line: 32 bytes, 32 aligned.
const _: () = assert!(size_of::<SliderSquare>() == 32 && align_of::<SliderSquare>() == 32);
