//! Every slider of a side at once: the eight directions' rays filled side
//! by side in the lanes of one AVX-512 register (Kogge-Stone occluded
//! fills by rotation), or of two AVX2 registers on x86-64-v3 (by shifts:
//! the directions towards higher squares in one, their opposites in the
//! other), in place of one table lookup per slider.
//!
//! Two sliders' rays in one direction never share a square (the nearer
//! one's ray stops at or before the further one), so a lane's population
//! is the number of moves along its direction, and the lanes' sum is the
//! number of moves of all the sliders filled.

use super::attacks;
use super::bitboard::{FILE_A, FILE_H, RANK_1, RANK_8, Squares};
use crate::kernel::Isa;

/// The left rotation of one step in each lane's direction (a right
/// shift is a rotation by 64 less): straight lanes north, east, south,
/// west, then diagonal lanes north-east, north-west, south-west,
/// south-east, from the lowest lane up.
const STEP: [i64; 8] = [8, 1, 56, 63, 9, 7, 55, 57];
/// The squares a step may land on, per lane: rotation brings the far
/// edge round to exactly the squares each mask drops.
const LANDING: [u64; 8] = [
    !RANK_1,
    !FILE_A,
    !RANK_8,
    !FILE_H,
    !(FILE_A | RANK_1),
    !(FILE_H | RANK_1),
    !(FILE_H | RANK_8),
    !(FILE_A | RANK_8),
];

/// The population of each nibble value, one byte each from the lowest:
/// the table a byte shuffle counts bits through.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const NIBBLE_POPULATIONS: u128 = 0x0403_0302_0302_0201_0302_0201_0201_0100;

/// The fills, compiled for x86-64-v4: the eight directions in the lanes
/// of one 512-bit register (measured faster than two of 256 bits).
#[cfg(target_arch = "x86_64")]
mod v4 {
    use std::arch::x86_64::{
        __m512i, _mm512_add_epi8, _mm512_and_si512, _mm512_andnot_si512, _mm512_reduce_add_epi64,
        _mm512_reduce_or_epi64, _mm512_rolv_epi64, _mm512_sad_epu8, _mm512_set_epi64, _mm512_set1_epi8,
        _mm512_set1_epi64, _mm512_setzero_si512, _mm512_shuffle_epi8, _mm512_srli_epi64,
        _mm512_ternarylogic_epi64,
    };

    use super::{LANDING, NIBBLE_POPULATIONS, STEP};

    /// `lanes` in a register, the first in the lowest lane.
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn load(lanes: [i64; 8]) -> __m512i {
        let [a, b, c, d, e, f, g, h] = lanes;
        _mm512_set_epi64(h, g, f, e, d, c, b, a)
    }

    /// The rays of `straight` sliders in the first four lanes and of
    /// `diagonal` sliders in the last four, each up to and including the
    /// first square of `occupied`.
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn rays(straight: u64, diagonal: u64, occupied: u64) -> __m512i {
        let landing = load(LANDING.map(|mask| mask as i64));
        let (one, two, four) = (load(STEP), load(STEP.map(|s| 2 * s)), load(STEP.map(|s| 4 * s)));
        let (s, d) = (straight as i64, diagonal as i64);
        let mut fill = load([s, s, s, s, d, d, d, d]);
        let mut open = _mm512_andnot_si512(_mm512_set1_epi64(occupied as i64), landing);
        // 0xF8: a | (b & c).
        fill = _mm512_ternarylogic_epi64::<0xF8>(fill, open, _mm512_rolv_epi64(fill, one));
        open = _mm512_and_si512(open, _mm512_rolv_epi64(open, one));
        fill = _mm512_ternarylogic_epi64::<0xF8>(fill, open, _mm512_rolv_epi64(fill, two));
        open = _mm512_and_si512(open, _mm512_rolv_epi64(open, two));
        fill = _mm512_ternarylogic_epi64::<0xF8>(fill, open, _mm512_rolv_epi64(fill, four));
        _mm512_and_si512(_mm512_rolv_epi64(fill, one), landing)
    }

    /// Every square the sliders attack.
    #[target_feature(enable = "avx512f")]
    #[inline]
    pub(super) fn attacked(straight: u64, diagonal: u64, occupied: u64) -> u64 {
        _mm512_reduce_or_epi64(rays(straight, diagonal, occupied)) as u64
    }

    /// The rays lane by lane, in [`STEP`]'s order.
    #[target_feature(enable = "avx512f")]
    #[inline]
    pub(super) fn lanes(straight: u64, diagonal: u64, occupied: u64) -> [u64; 8] {
        // SAFETY: a 512-bit register and eight words have one size, and
        // every bit pattern is valid for both.
        unsafe { std::mem::transmute::<__m512i, [u64; 8]>(rays(straight, diagonal, occupied)) }
    }

    /// The sliders' moves onto `allowed` squares.
    #[target_feature(enable = "avx512f,avx512bw")]
    #[inline]
    pub(super) fn moves(straight: u64, diagonal: u64, occupied: u64, allowed: u64) -> u64 {
        let targets = _mm512_and_si512(
            rays(straight, diagonal, occupied),
            _mm512_set1_epi64(allowed as i64),
        );
        // Each byte's population by its two nibbles, through a table (one
        // copy per 128 bits), then summed per lane and over the lanes.
        let nibble = _mm512_set1_epi8(0x0F);
        let (high, low) = ((NIBBLE_POPULATIONS >> 64) as i64, NIBBLE_POPULATIONS as i64);
        let table = load([low, high, low, high, low, high, low, high]);
        let low = _mm512_shuffle_epi8(table, _mm512_and_si512(targets, nibble));
        let high = _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi64::<4>(targets), nibble));
        let per_lane = _mm512_sad_epu8(_mm512_add_epi8(low, high), _mm512_setzero_si512());
        _mm512_reduce_add_epi64(per_lane) as u64
    }
}

/// The lanes of the two AVX2 registers of the v3 fills, as indices into
/// [`STEP`] and [`LANDING`]: the directions that step towards higher
/// squares (a left shift) in one, their opposites (a right shift by as
/// much) in the other, lane for lane, each straight then diagonal.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const UP_DOWN: [[usize; 4]; 2] = [[0, 1, 4, 5], [2, 3, 6, 7]];
/// The shift of one step in each lane of both v3 registers: north and
/// south by 8, east and west by 1, north-east and south-west by 9,
/// north-west and south-east by 7.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const SHIFT: [i64; 4] = [8, 1, 9, 7];

/// The fills, compiled for x86-64-v3: the eight directions in the lanes
/// of two 256-bit registers. AVX2 has no rotation, but a shift needs no
/// more than one instruction when a register's lanes all shift the same
/// way, so one register holds the directions towards higher squares and
/// the other their opposites; a shift drops what a rotation would bring
/// round, and the landing masks still drop what crosses a file edge.
#[cfg(target_arch = "x86_64")]
mod v3 {
    use std::arch::x86_64::{
        __m256i, _mm_add_epi64, _mm_cvtsi128_si64, _mm_or_si128, _mm_unpackhi_epi64, _mm256_add_epi8,
        _mm256_and_si256, _mm256_andnot_si256, _mm256_castsi256_si128, _mm256_extracti128_si256,
        _mm256_or_si256, _mm256_sad_epu8, _mm256_set_epi64x, _mm256_set1_epi8, _mm256_set1_epi64x,
        _mm256_setzero_si256, _mm256_shuffle_epi8, _mm256_sllv_epi64, _mm256_srli_epi64, _mm256_srlv_epi64,
    };

    use super::{LANDING, NIBBLE_POPULATIONS, SHIFT, UP_DOWN};

    /// `lanes` in a register, the first in the lowest lane.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn load(lanes: [i64; 4]) -> __m256i {
        let [a, b, c, d] = lanes;
        _mm256_set_epi64x(d, c, b, a)
    }

    /// One Kogge-Stone fill of `fill` through `open` in every lane, by
    /// `shift` (a left shift when `UP`, else a right one) of `SHIFT` times
    /// 1, 2 and 4, and then one step beyond into `landing`.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn fill<const UP: bool>(mut fill: __m256i, mut open: __m256i, landing: __m256i) -> __m256i {
        let shift = |x, by| {
            if UP {
                _mm256_sllv_epi64(x, by)
            } else {
                _mm256_srlv_epi64(x, by)
            }
        };
        let (one, two, four) = (
            load(SHIFT),
            load(SHIFT.map(|s| 2 * s)),
            load(SHIFT.map(|s| 4 * s)),
        );
        fill = _mm256_or_si256(fill, _mm256_and_si256(open, shift(fill, one)));
        open = _mm256_and_si256(open, shift(open, one));
        fill = _mm256_or_si256(fill, _mm256_and_si256(open, shift(fill, two)));
        open = _mm256_and_si256(open, shift(open, two));
        fill = _mm256_or_si256(fill, _mm256_and_si256(open, shift(fill, four)));
        _mm256_and_si256(shift(fill, one), landing)
    }

    /// The rays of `straight` sliders in the first two lanes of each
    /// register and of `diagonal` sliders in the last two (towards higher
    /// squares, then lower), each up to and including the first square of
    /// `occupied`.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn rays(straight: u64, diagonal: u64, occupied: u64) -> [__m256i; 2] {
        let (s, d) = (straight as i64, diagonal as i64);
        let sliders = load([s, s, d, d]);
        let occupied = _mm256_set1_epi64x(occupied as i64);
        let [up, down] = UP_DOWN.map(|lanes| load(lanes.map(|lane| LANDING[lane] as i64)));
        [
            fill::<true>(sliders, _mm256_andnot_si256(occupied, up), up),
            fill::<false>(sliders, _mm256_andnot_si256(occupied, down), down),
        ]
    }

    /// The rays lane by lane, in [`STEP`]'s order.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) fn lanes(straight: u64, diagonal: u64, occupied: u64) -> [u64; 8] {
        let [up, down] = rays(straight, diagonal, occupied);
        // SAFETY: a 256-bit register and four words have one size, and
        // every bit pattern is valid for both.
        let [up, down] = [up, down].map(|lanes| unsafe { std::mem::transmute::<__m256i, [u64; 4]>(lanes) });
        // Lanes as in `UP_DOWN`.
        [up[0], up[1], down[0], down[1], up[2], up[3], down[2], down[3]]
    }

    /// Every square the sliders attack.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) fn attacked(straight: u64, diagonal: u64, occupied: u64) -> u64 {
        let [up, down] = rays(straight, diagonal, occupied);
        let both = _mm256_or_si256(up, down);
        let half = _mm_or_si128(_mm256_castsi256_si128(both), _mm256_extracti128_si256::<1>(both));
        _mm_cvtsi128_si64(_mm_or_si128(half, _mm_unpackhi_epi64(half, half))) as u64
    }

    /// The sliders' moves onto `allowed` squares.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) fn moves(straight: u64, diagonal: u64, occupied: u64, allowed: u64) -> u64 {
        let allowed = _mm256_set1_epi64x(allowed as i64);
        let [up, down] = rays(straight, diagonal, occupied).map(|rays| _mm256_and_si256(rays, allowed));
        // Each byte's population by its two nibbles, through a table (one
        // copy per 128 bits), both registers' bytes added (16 at most),
        // then summed per lane and over the lanes.
        let nibble = _mm256_set1_epi8(0x0F);
        let (high, low) = ((NIBBLE_POPULATIONS >> 64) as i64, NIBBLE_POPULATIONS as i64);
        let table = load([low, high, low, high]);
        let count = |targets| {
            let low = _mm256_shuffle_epi8(table, _mm256_and_si256(targets, nibble));
            let high = _mm256_shuffle_epi8(table, _mm256_and_si256(_mm256_srli_epi64::<4>(targets), nibble));
            _mm256_add_epi8(low, high)
        };
        let per_lane = _mm256_sad_epu8(_mm256_add_epi8(count(up), count(down)), _mm256_setzero_si256());
        let half = _mm_add_epi64(
            _mm256_castsi256_si128(per_lane),
            _mm256_extracti128_si256::<1>(per_lane),
        );
        _mm_cvtsi128_si64(_mm_add_epi64(half, _mm_unpackhi_epi64(half, half))) as u64
    }
}

/// Every square attacked by the `straight` (rook, queen) and `diagonal`
/// (bishop, queen) sliders, `occupied` blocking.
#[inline(always)]
pub(super) fn attacked<I: Isa>(isa: I, straight: u64, diagonal: u64, occupied: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if I::AVX512 {
        // SAFETY: `I::AVX512` holds only for an `Isa` whose values exist
        // only on CPUs running x86-64-v4, and `isa` is such a value.
        return unsafe { v4::attacked(straight, diagonal, occupied) };
    }
    #[cfg(target_arch = "x86_64")]
    if I::AVX2 {
        // SAFETY: `I::AVX2` holds only for an `Isa` whose values exist
        // only on CPUs running x86-64-v3 (or better), and `isa` is one.
        return unsafe { v3::attacked(straight, diagonal, occupied) };
    }
    let mut attacked = 0;
    for from in Squares(diagonal) {
        attacked |= attacks::bishop(isa, from, occupied);
    }
    for from in Squares(straight) {
        attacked |= attacks::rook(isa, from, occupied);
    }
    attacked
}

/// The rays of `straight` and `diagonal` sliders in each of the eight
/// directions, each up to and including the first square of `occupied`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Rays([u64; 8]);

impl Rays {
    /// The rays of the straight directions.
    #[inline(always)]
    pub(super) fn straight(&self) -> u64 {
        self.0[0] | self.0[1] | self.0[2] | self.0[3]
    }

    /// The rays of the diagonal directions.
    #[inline(always)]
    pub(super) fn diagonal(&self) -> u64 {
        self.0[4] | self.0[5] | self.0[6] | self.0[7]
    }

    /// Every direction's rays, with `other`'s.
    #[inline(always)]
    pub(super) fn or(&self, other: &Rays) -> Rays {
        Rays(std::array::from_fn(|lane| self.0[lane] | other.0[lane]))
    }

    /// The squares where a ray of these meets one of `facing` running the
    /// opposite way: between two pieces on a line (they see each other
    /// there) or, on a line with one piece between, that piece.
    #[inline(always)]
    pub(super) fn meeting(&self, facing: &Rays) -> u64 {
        // The opposite of lane `l` is `l ^ 2`: north and south, east and
        // west, north-east and south-west, north-west and south-east.
        (0..8).fold(0, |met, lane| met | self.0[lane] & facing.0[lane ^ 2])
    }
}

/// [`Rays`] of the `straight` (rook, queen) and `diagonal` (bishop, queen)
/// sliders, `occupied` blocking.
#[inline(always)]
pub(super) fn rays<I: Isa>(isa: I, straight: u64, diagonal: u64, occupied: u64) -> Rays {
    let _ = isa;
    #[cfg(target_arch = "x86_64")]
    if I::AVX512 {
        // SAFETY: as in `attacked`.
        return Rays(unsafe { v4::lanes(straight, diagonal, occupied) });
    }
    #[cfg(target_arch = "x86_64")]
    if I::AVX2 {
        // SAFETY: as in `attacked`.
        return Rays(unsafe { v3::lanes(straight, diagonal, occupied) });
    }
    Rays(lanes_by_rotation(straight, diagonal, occupied))
}

/// The v4 fill's steps one lane at a time in scalar code: the portable
/// [`rays`].
fn lanes_by_rotation(straight: u64, diagonal: u64, occupied: u64) -> [u64; 8] {
    std::array::from_fn(|lane| {
        let (step, landing) = (STEP[lane] as u32, LANDING[lane]);
        let mut fill = if lane < 4 { straight } else { diagonal };
        let mut open = !occupied & landing;
        fill |= open & fill.rotate_left(step);
        open &= open.rotate_left(step);
        fill |= open & fill.rotate_left(2 * step);
        open &= open.rotate_left(2 * step);
        fill |= open & fill.rotate_left(4 * step);
        fill.rotate_left(step) & landing
    })
}

/// The number of moves of the `straight` and `diagonal` sliders onto
/// `allowed` squares, `occupied` blocking. Every slider must be in
/// `occupied`: that is what keeps two rays along a direction apart.
#[inline(always)]
pub(super) fn moves<I: Isa>(isa: I, straight: u64, diagonal: u64, occupied: u64, allowed: u64) -> u64 {
    debug_assert_eq!((straight | diagonal) & !occupied, 0, "a slider off the board");
    #[cfg(target_arch = "x86_64")]
    if I::AVX512 {
        // SAFETY: as in `attacked` (x86-64-v4 includes AVX-512 BW).
        return unsafe { v4::moves(straight, diagonal, occupied, allowed) };
    }
    #[cfg(target_arch = "x86_64")]
    if I::AVX2 {
        // SAFETY: as in `attacked`.
        return unsafe { v3::moves(straight, diagonal, occupied, allowed) };
    }
    let mut moves = 0;
    for from in Squares(diagonal) {
        moves += u64::from((attacks::bishop(isa, from, occupied) & allowed).count_ones());
    }
    for from in Squares(straight) {
        moves += u64::from((attacks::rook(isa, from, occupied) & allowed).count_ones());
    }
    moves
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::bitboard::bit;
    use crate::chess::playouts::Playouts;
    use crate::chess::position::{Chess, Colour, Piece};
    use crate::game::Game;
    use crate::kernel::{Portable, V3, V4};

    /// A slider's attacks walked square by square: slow and obvious.
    fn walked(from: u8, occupied: u64, directions: &[(i8, i8)]) -> u64 {
        let mut attacked = 0;
        for &(df, dr) in directions {
            let (mut file, mut rank) = ((from % 8) as i8 + df, (from / 8) as i8 + dr);
            while (0..8).contains(&file) && (0..8).contains(&rank) {
                let square = bit((rank * 8 + file) as u8);
                attacked |= square;
                if occupied & square != 0 {
                    break;
                }
                (file, rank) = (file + df, rank + dr);
            }
        }
        attacked
    }

    /// The v3 fill's steps on one lane at a time, in scalar code: shifts
    /// in place of rotations, the register of the directions towards
    /// higher squares first, then their opposites, lanes as in [`UP_DOWN`].
    fn lanes_by_shifts(straight: u64, diagonal: u64, occupied: u64) -> [[u64; 4]; 2] {
        [true, false].map(|up| {
            std::array::from_fn(|i| {
                let lane = UP_DOWN[usize::from(!up)][i];
                let (by, landing) = (SHIFT[i] as u32, LANDING[lane]);
                let shift = |x: u64, n: u32| if up { x << n } else { x >> n };
                let mut fill = if lane < 4 { straight } else { diagonal };
                let mut open = !occupied & landing;
                fill |= open & shift(fill, by);
                open &= shift(open, by);
                fill |= open & shift(fill, 2 * by);
                open &= shift(open, 2 * by);
                fill |= open & shift(fill, 4 * by);
                shift(fill, by) & landing
            })
        })
    }

    /// Each v3 lane shifts by its direction's step: left by the step
    /// towards higher squares, right by 64 less towards lower ones.
    #[test]
    fn the_v3_lanes_shift_by_their_steps() {
        for i in 0..4 {
            let [up, down] = [UP_DOWN[0][i], UP_DOWN[1][i]];
            assert_eq!(STEP[up], SHIFT[i], "lane {i} up");
            assert_eq!(STEP[down], 64 - SHIFT[i], "lane {i} down");
            assert_eq!(up < 4, i < 2, "lane {i} straight or diagonal");
            assert_eq!(down < 4, i < 2, "lane {i} straight or diagonal");
        }
    }

    /// A byte's population through the nibble table, as v4 and v3 count.
    fn by_nibbles(byte: u8) -> u32 {
        let table = NIBBLE_POPULATIONS.to_le_bytes();
        u32::from(table[usize::from(byte & 15)] + table[usize::from(byte >> 4)])
    }

    #[test]
    fn the_nibble_table_counts_every_byte() {
        for byte in 0..=255u8 {
            assert_eq!(by_nibbles(byte), byte.count_ones(), "{byte}");
        }
    }

    /// The start and the ends of `playouts` random playouts from it.
    fn start_and_playouts(seed: u64, playouts: usize) -> Vec<Chess> {
        let mut stream = Playouts::new(seed);
        let mut positions = vec![Chess::start()];
        for _ in 0..playouts {
            positions.push(stream.end(Chess::start(), 80));
        }
        positions
    }

    const STRAIGHT: [(i8, i8); 4] = [(0, 1), (1, 0), (0, -1), (-1, 0)];
    const DIAGONAL: [(i8, i8); 4] = [(1, 1), (-1, 1), (-1, -1), (1, -1)];

    /// The fills, in scalar code and on every kernel this CPU runs, agree
    /// with walking each slider's rays, for both colours' sliders on
    /// positions of random playouts.
    #[test]
    fn fills_agree_with_walking_each_slider() {
        let positions = start_and_playouts(0x5DEE_CE66_D1CE_4E5B, 400);
        if V4::detect().is_none() {
            eprintln!("no x86-64-v4 here: the v4 fills are checked in scalar code only");
        }
        if V3::detect().is_none() {
            eprintln!("no x86-64-v3 here: the v3 fills are checked in scalar code only");
        }
        let mut compared = 0;
        for pos in positions {
            let queens = pos.pieces[Piece::Queen.index()];
            for colour in [Colour::White, Colour::Black] {
                let side = pos.colours[colour.index()];
                let straight = (pos.pieces[Piece::Rook.index()] | queens) & side;
                let diagonal = (pos.pieces[Piece::Bishop.index()] | queens) & side;
                // With their king and without it (as the king's test takes it).
                for occupied in [pos.occupied(), pos.occupied() ^ bit(pos.king(colour.other()))] {
                    let rays: Vec<u64> = Squares(straight)
                        .map(|from| walked(from, occupied, &STRAIGHT))
                        .chain(Squares(diagonal).map(|from| walked(from, occupied, &DIAGONAL)))
                        .collect();
                    let all = rays.iter().fold(0, |all, ray| all | ray);
                    let lanes = lanes_by_rotation(straight, diagonal, occupied);
                    assert_eq!(lanes.iter().fold(0, |all, lane| all | lane), all, "{pos}");
                    let shifted = lanes_by_shifts(straight, diagonal, occupied);
                    assert_eq!(
                        shifted.as_flattened().iter().fold(0, |all, lane| all | lane),
                        all,
                        "{pos}"
                    );
                    for allowed in [!0, !side, pos.colours[colour.other().index()]] {
                        let count: u64 = rays
                            .iter()
                            .map(|ray| u64::from((ray & allowed).count_ones()))
                            .sum();
                        assert_eq!(
                            moves(Portable, straight, diagonal, occupied, allowed),
                            count,
                            "{pos}"
                        );
                        let by_lanes: u64 = lanes
                            .iter()
                            .map(|lane| u64::from((lane & allowed).count_ones()))
                            .sum();
                        assert_eq!(by_lanes, count, "{pos}");
                        let by_shifted_lanes: u64 = shifted
                            .as_flattened()
                            .iter()
                            .map(|lane| u64::from((lane & allowed).count_ones()))
                            .sum();
                        assert_eq!(by_shifted_lanes, count, "{pos}");
                        if let Some(v3) = V3::detect() {
                            assert_eq!(moves(v3, straight, diagonal, occupied, allowed), count, "{pos}");
                        }
                        if let Some(v4) = V4::detect() {
                            assert_eq!(moves(v4, straight, diagonal, occupied, allowed), count, "{pos}");
                        }
                    }
                    assert_eq!(attacked(Portable, straight, diagonal, occupied), all, "{pos}");
                    if let Some(v3) = V3::detect() {
                        assert_eq!(attacked(v3, straight, diagonal, occupied), all, "{pos}");
                    }
                    if let Some(v4) = V4::detect() {
                        assert_eq!(attacked(v4, straight, diagonal, occupied), all, "{pos}");
                    }
                    compared += 1;
                }
            }
        }
        assert_eq!(compared, 4 * 401);
    }

    /// Each lane of [`rays`], on every kernel this CPU runs, holds the
    /// sliders' rays in that lane's direction, walked square by square.
    #[test]
    fn rays_run_each_lane_in_its_direction_on_every_kernel() {
        for pos in start_and_playouts(0x2545_F491_4F6C_DD1D, 200) {
            let queens = pos.pieces[Piece::Queen.index()];
            for colour in [Colour::White, Colour::Black] {
                let side = pos.colours[colour.index()];
                let straight = (pos.pieces[Piece::Rook.index()] | queens) & side;
                let diagonal = (pos.pieces[Piece::Bishop.index()] | queens) & side;
                let occupied = pos.occupied();
                let walked_lanes: [u64; 8] = std::array::from_fn(|lane| {
                    let (sliders, direction) = if lane < 4 {
                        (straight, STRAIGHT[lane])
                    } else {
                        (diagonal, DIAGONAL[lane - 4])
                    };
                    Squares(sliders).fold(0, |all, from| all | walked(from, occupied, &[direction]))
                });
                let expected = Rays(walked_lanes);
                assert_eq!(rays(Portable, straight, diagonal, occupied), expected, "{pos}");
                if let Some(v3) = V3::detect() {
                    assert_eq!(rays(v3, straight, diagonal, occupied), expected, "{pos}");
                }
                if let Some(v4) = V4::detect() {
                    assert_eq!(rays(v4, straight, diagonal, occupied), expected, "{pos}");
                }
            }
        }
    }

    /// Two pieces on a file meet on the squares between them, or on the
    /// one piece between them; pieces on no common line meet nowhere.
    #[test]
    fn rays_meet_between_two_pieces_on_a_line() {
        let (a1, a4, a8, b3) = (bit(0), bit(24), bit(56), bit(17));
        let between = (1..7).fold(0, |all, rank| all | bit(rank * 8));
        let rook = rays(Portable, a1, 0, a1 | a8);
        let watched = rays(Portable, a8, a8, a1 | a8);
        assert_eq!(rook.meeting(&watched), between);
        let rook = rays(Portable, a1, 0, a1 | a4 | a8);
        let watched = rays(Portable, a8, a8, a1 | a4 | a8);
        assert_eq!(rook.meeting(&watched), a4);
        let bishop = rays(Portable, 0, b3, b3 | a8);
        assert_eq!(bishop.meeting(&rays(Portable, a8, a8, b3 | a8)), 0);
    }
}
