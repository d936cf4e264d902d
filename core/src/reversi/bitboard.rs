//! Bit-parallel Reversi kernels: the legal-move mask and the discs a move
//! flips. Portable `u64` code, AVX2 copies that the x86-64-v3 kernel uses
//! and AVX-512 flips for the x86-64-v4 kernel; the ray tables are computed
//! at compile time.

use crate::kernel::Isa;

/// Files b..g: masks out wrap-around between the a and h files.
const INNER_FILES: u64 = 0x7E7E_7E7E_7E7E_7E7E;

/// Moves of one direction pair (`shift` left and right) through `mask`,
/// the opponent discs that may be flanked in that direction: a parallel
/// prefix fill covering runs of up to six discs.
#[inline(always)]
fn moves_along(player: u64, mask: u64, shift: u32) -> u64 {
    let mut left = mask & (player << shift);
    let mut right = mask & (player >> shift);
    left |= mask & (left << shift);
    right |= mask & (right >> shift);
    let mask_left = mask & (mask << shift);
    let mask_right = mask_left >> shift;
    let double = 2 * shift;
    left |= mask_left & (left << double);
    right |= mask_right & (right >> double);
    left |= mask_left & (left << double);
    right |= mask_right & (right >> double);
    (left << shift) | (right >> shift)
}

/// Every empty square where `player` would flank at least one `opponent`
/// disc in a straight line.
#[inline(always)]
pub fn legal_moves_mask(player: u64, opponent: u64) -> u64 {
    let inner = opponent & INNER_FILES;
    let moves = moves_along(player, inner, 1)
        | moves_along(player, opponent, 8)
        | moves_along(player, inner, 7)
        | moves_along(player, inner, 9);
    moves & !(player | opponent)
}

/// Rays from a square to the board edge (the square itself excluded): the
/// four that run towards higher bit numbers, then the four towards lower.
const RAYS: [[u64; 8]; 64] = rays();

/// The eight directions as (file step, rank step): E, N, NE and NW, which
/// increase the bit number, then their opposites in the same order.
const DIRECTIONS: [(i32, i32); 8] = [
    (1, 0),
    (0, 1),
    (1, 1),
    (-1, 1),
    (-1, 0),
    (0, -1),
    (-1, -1),
    (1, -1),
];

const fn rays() -> [[u64; 8]; 64] {
    let mut table = [[0u64; 8]; 64];
    let mut square = 0;
    while square < 64 {
        let mut d = 0;
        while d < 8 {
            let (df, dr) = DIRECTIONS[d];
            let mut file = (square % 8) as i32 + df;
            let mut rank = (square / 8) as i32 + dr;
            let mut ray = 0u64;
            while file >= 0 && file < 8 && rank >= 0 && rank < 8 {
                ray |= 1u64 << (rank * 8 + file);
                file += df;
                rank += dr;
            }
            table[square][d] = ray;
            d += 1;
        }
        square += 1;
    }
    table
}

/// The opponent discs flipped when `player` plays on the empty `square`.
///
/// On each ray the first square that is not an opponent disc is found with
/// one bit trick (lowest set bit upwards, highest downwards); if it holds a
/// player disc, the opponent discs before it flip.
#[inline(always)]
pub fn flips(player: u64, opponent: u64, square: u8) -> u64 {
    let rays = &RAYS[square as usize];
    let mut flipped = 0;
    for &ray in &rays[..4] {
        let stops = ray & !opponent;
        let outflank = stops & stops.wrapping_neg() & player;
        flipped |= outflank.wrapping_sub(u64::from(outflank != 0)) & ray;
    }
    for &ray in &rays[4..] {
        // `| 1` keeps the shift defined; bit 0 is then never both in `ray`
        // and a player disc unless it really stops the ray.
        let stops = (ray & !opponent) | 1;
        let outflank = (1u64 << (63 - stops.leading_zeros())) & player & ray;
        flipped |= ray & !((outflank << 1).wrapping_sub(1));
    }
    flipped
}

/// [`legal_moves_mask`] on the instructions `isa` allows.
#[inline(always)]
pub(crate) fn legal_moves_mask_on<I: Isa>(isa: I, player: u64, opponent: u64) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if I::AVX2 {
        // SAFETY: `I::AVX2` holds only for an `Isa` whose values exist only
        // on CPUs with AVX2, and `isa` is such a value.
        return unsafe { avx2::legal_moves_mask(player, opponent) };
    }
    let _ = isa;
    legal_moves_mask(player, opponent)
}

/// [`flips`] on the instructions `isa` allows.
#[inline(always)]
pub(crate) fn flips_on<I: Isa>(isa: I, player: u64, opponent: u64, square: u8) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if I::AVX512 {
        // SAFETY: `I::AVX512` holds only for an `Isa` whose values exist
        // only on CPUs with x86-64-v4, and `isa` is such a value.
        return unsafe { avx512::flips(player, opponent, square) };
    }
    #[cfg(target_arch = "x86_64")]
    if I::AVX2 {
        // SAFETY: `I::AVX2` holds only for an `Isa` whose values exist only
        // on CPUs with AVX2, and `isa` is such a value.
        return unsafe { avx2::flips(player, opponent, square) };
    }
    let _ = isa;
    flips(player, opponent, square)
}

/// The leaves two plies below a position with a move, where the
/// instructions `isa` allows count them faster than playing each move:
/// every child's moves, and for a child without any: 1 when it passes; 1
/// too when its game is over (Bik's convention: the game ends at full
/// depth), or 0 with `GAME_OVER_EMPTY` (A124004's: an early end counts
/// nothing). `None` when the side to move has no move, or no faster way.
#[inline(always)]
pub(crate) fn count_two_plies_on<I: Isa, const GAME_OVER_EMPTY: bool>(
    isa: I,
    player: u64,
    opponent: u64,
) -> Option<u64> {
    #[cfg(target_arch = "x86_64")]
    if I::AVX512 {
        // SAFETY: `I::AVX512` holds only for an `Isa` whose values exist
        // only on CPUs with x86-64-v4, and `isa` is such a value.
        return unsafe { avx512::count_two_plies::<GAME_OVER_EMPTY>(player, opponent) };
    }
    #[cfg(target_arch = "x86_64")]
    if I::AVX2 {
        // SAFETY: `I::AVX2` holds only for an `Isa` whose values exist only
        // on CPUs with AVX2, and `isa` is such a value.
        return unsafe { avx2::count_two_plies::<GAME_OVER_EMPTY>(player, opponent) };
    }
    let _ = (isa, player, opponent);
    None
}

/// The leaves three plies below a position, where the instructions `isa`
/// allow counting the grandchildren in lanes; `None` when the side to move
/// or one of its children has no move, or no faster way.
#[inline(always)]
pub(crate) fn count_three_plies_on<I: Isa, const GAME_OVER_EMPTY: bool>(
    isa: I,
    player: u64,
    opponent: u64,
) -> Option<u64> {
    #[cfg(target_arch = "x86_64")]
    if I::AVX512 {
        // SAFETY: as in `count_two_plies_on`.
        return unsafe { avx512::count_three_plies::<GAME_OVER_EMPTY>(player, opponent) };
    }
    let _ = (isa, player, opponent);
    None
}

/// The AVX2 kernels: the four direction pairs of [`legal_moves_mask`] and
/// [`flips`] side by side in the four 64-bit lanes of one vector.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::{
        __m256i, _mm_cvtsi128_si64, _mm_or_si128, _mm_unpackhi_epi64, _mm256_and_si256, _mm256_andnot_si256,
        _mm256_castsi256_si128, _mm256_cmpeq_epi64, _mm256_extracti128_si256, _mm256_or_si256,
        _mm256_permute4x64_epi64, _mm256_set_epi64x, _mm256_set1_epi64x, _mm256_setzero_si256,
        _mm256_shuffle_epi32, _mm256_sllv_epi64, _mm256_srli_epi64, _mm256_srlv_epi64, _mm256_sub_epi64,
    };

    use super::{INNER_FILES, RAYS};

    /// The OR of the four lanes.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) fn or_lanes(v: __m256i) -> u64 {
        let half = _mm_or_si128(_mm256_castsi256_si128(v), _mm256_extracti128_si256::<1>(v));
        _mm_cvtsi128_si64(_mm_or_si128(half, _mm_unpackhi_epi64(half, half))) as u64
    }

    /// The OR of the four lanes, in every lane.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn or_lanes_spread(v: __m256i) -> __m256i {
        let halves = _mm256_or_si256(v, _mm256_permute4x64_epi64::<0x4E>(v));
        _mm256_or_si256(halves, _mm256_shuffle_epi32::<0x4E>(halves))
    }

    /// [`super::legal_moves_mask`] with the boards in every lane, one
    /// direction pair per lane (shifts 1, 8, 9 and 7), the lanes not yet
    /// merged nor the occupied squares removed.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn moves_lanes(p: __m256i, opponent: __m256i) -> __m256i {
        let shift = _mm256_set_epi64x(7, 9, 8, 1);
        let double = _mm256_set_epi64x(14, 18, 16, 2);
        let inner = INNER_FILES as i64;
        let files = _mm256_set_epi64x(inner, inner, -1, inner);
        let mask = _mm256_and_si256(opponent, files);
        let mut left = _mm256_and_si256(mask, _mm256_sllv_epi64(p, shift));
        let mut right = _mm256_and_si256(mask, _mm256_srlv_epi64(p, shift));
        left = _mm256_or_si256(left, _mm256_and_si256(mask, _mm256_sllv_epi64(left, shift)));
        right = _mm256_or_si256(right, _mm256_and_si256(mask, _mm256_srlv_epi64(right, shift)));
        let mask_left = _mm256_and_si256(mask, _mm256_sllv_epi64(mask, shift));
        let mask_right = _mm256_srlv_epi64(mask_left, shift);
        left = _mm256_or_si256(left, _mm256_and_si256(mask_left, _mm256_sllv_epi64(left, double)));
        right = _mm256_or_si256(
            right,
            _mm256_and_si256(mask_right, _mm256_srlv_epi64(right, double)),
        );
        left = _mm256_or_si256(left, _mm256_and_si256(mask_left, _mm256_sllv_epi64(left, double)));
        right = _mm256_or_si256(
            right,
            _mm256_and_si256(mask_right, _mm256_srlv_epi64(right, double)),
        );
        _mm256_or_si256(_mm256_sllv_epi64(left, shift), _mm256_srlv_epi64(right, shift))
    }

    /// [`super::legal_moves_mask`].
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) fn legal_moves_mask(player: u64, opponent: u64) -> u64 {
        let lanes = moves_lanes(
            _mm256_set1_epi64x(player as i64),
            _mm256_set1_epi64x(opponent as i64),
        );
        or_lanes(lanes) & !(player | opponent)
    }

    /// The rays from `square`: the four towards higher bits, then the four
    /// towards lower bits, one per lane.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) fn ray_lanes(square: u8) -> (__m256i, __m256i) {
        let rays = &RAYS[square as usize];
        let up = _mm256_set_epi64x(rays[3] as i64, rays[2] as i64, rays[1] as i64, rays[0] as i64);
        let down = _mm256_set_epi64x(rays[7] as i64, rays[6] as i64, rays[5] as i64, rays[4] as i64);
        (up, down)
    }

    /// The flips of [`super::flips`] per ray, the boards in every lane: the
    /// four rays towards higher bits in one vector (lowest stop by
    /// `x & -x`), the four towards lower bits in another (highest stop by
    /// smearing it down and keeping what lies above); the two ORed.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn flips_lanes(p: __m256i, o: __m256i, square: u8) -> __m256i {
        let (up, down) = ray_lanes(square);
        let zero = _mm256_setzero_si256();
        let one = _mm256_set1_epi64x(1);

        let stops = _mm256_andnot_si256(o, up);
        let outflank = _mm256_and_si256(_mm256_and_si256(stops, _mm256_sub_epi64(zero, stops)), p);
        let below = _mm256_and_si256(_mm256_sub_epi64(outflank, one), up);
        let flipped_up = _mm256_andnot_si256(_mm256_cmpeq_epi64(outflank, zero), below);

        let stops = _mm256_andnot_si256(o, down);
        let mut smear = _mm256_or_si256(stops, _mm256_srli_epi64::<1>(stops));
        smear = _mm256_or_si256(smear, _mm256_srli_epi64::<2>(smear));
        smear = _mm256_or_si256(smear, _mm256_srli_epi64::<4>(smear));
        smear = _mm256_or_si256(smear, _mm256_srli_epi64::<8>(smear));
        smear = _mm256_or_si256(smear, _mm256_srli_epi64::<16>(smear));
        smear = _mm256_or_si256(smear, _mm256_srli_epi64::<32>(smear));
        // The highest stop: the smear without what lies below it.
        let highest = _mm256_andnot_si256(_mm256_srli_epi64::<1>(smear), smear);
        let outflank = _mm256_and_si256(highest, p);
        let above = _mm256_andnot_si256(smear, down);
        let flipped_down = _mm256_andnot_si256(_mm256_cmpeq_epi64(outflank, zero), above);

        _mm256_or_si256(flipped_up, flipped_down)
    }

    /// [`super::flips`].
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) fn flips(player: u64, opponent: u64, square: u8) -> u64 {
        let (p, o) = (
            _mm256_set1_epi64x(player as i64),
            _mm256_set1_epi64x(opponent as i64),
        );
        or_lanes(flips_lanes(p, o, square))
    }

    /// [`super::count_two_plies_on`], with [`flips_lanes`].
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) fn count_two_plies<const GAME_OVER_EMPTY: bool>(player: u64, opponent: u64) -> Option<u64> {
        count_two_plies_with::<GAME_OVER_EMPTY>(player, opponent, |p, o, square| flips_lanes(p, o, square))
    }

    /// [`super::count_two_plies_on`], finding flips with `flips_lanes`:
    /// each child's boards stay in vectors from the flips to its move mask,
    /// and its empty squares are the parent's but the one played.
    #[target_feature(enable = "avx2")]
    #[inline]
    pub(super) fn count_two_plies_with<const GAME_OVER_EMPTY: bool>(
        player: u64,
        opponent: u64,
        flips_lanes: impl Fn(__m256i, __m256i, u8) -> __m256i,
    ) -> Option<u64> {
        let mut moves = legal_moves_mask(player, opponent);
        if moves == 0 {
            return None;
        }
        let (p, o) = (
            _mm256_set1_epi64x(player as i64),
            _mm256_set1_epi64x(opponent as i64),
        );
        let empty = !(player | opponent);
        let mut n = 0u64;
        while moves != 0 {
            let square = moves.trailing_zeros() as u8;
            moves &= moves - 1;
            let placed = 1u64 << square;
            let flipped = or_lanes_spread(flips_lanes(p, o, square));
            let child_player = _mm256_andnot_si256(flipped, o);
            let child_opponent =
                _mm256_or_si256(_mm256_or_si256(p, flipped), _mm256_set1_epi64x(placed as i64));
            let child_moves = or_lanes(moves_lanes(child_player, child_opponent)) & empty & !placed;
            n += match child_moves {
                0 if GAME_OVER_EMPTY => {
                    // Rare: the child passes (one leaf) or its game is over.
                    let flipped = or_lanes(flipped);
                    let child_player = opponent & !flipped;
                    let child_opponent = player | flipped | placed;
                    u64::from(legal_moves_mask(child_opponent, child_player) != 0)
                }
                0 => 1,
                moves => u64::from(moves.count_ones()),
            };
        }
        Some(n)
    }
}

/// The x86-64-v4 kernels: [`avx2`]'s, with the far end of each downward ray
/// found by `vplzcntq` instead of smearing its stops down, and the masks
/// folded by `vpternlogq` (which LLVM also picks for the inlined AVX2 code).
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::{
        __m256i, _mm256_and_si256, _mm256_andnot_si256, _mm256_lzcnt_epi64, _mm256_maskz_and_epi64,
        _mm256_or_si256, _mm256_set1_epi64x, _mm256_setzero_si256, _mm256_srlv_epi64, _mm256_sub_epi64,
        _mm256_ternarylogic_epi64, _mm256_test_epi64_mask,
    };

    use super::avx2;
    use crate::reversi::lanes;

    /// The flips per ray, the boards in every lane, as `avx2::flips_lanes`.
    /// Upward rays: the lowest stop is `x & -x`; if it is a player disc,
    /// what lies below it on the ray flips. Downward rays: the highest stop
    /// is the top bit shifted right by its leading zeros (64 shifts it out);
    /// if it is a player disc, what lies above it on the ray flips, which is
    /// `-x & !x` for a single bit `x`.
    #[target_feature(enable = "avx2,avx512f,avx512cd,avx512vl")]
    #[inline]
    fn flips_lanes(p: __m256i, o: __m256i, square: u8) -> __m256i {
        let (up, down) = avx2::ray_lanes(square);
        let zero = _mm256_setzero_si256();

        let stops = _mm256_andnot_si256(o, up);
        // 0x80: a & b & c.
        let outflank = _mm256_ternarylogic_epi64::<0x80>(stops, _mm256_sub_epi64(zero, stops), p);
        let below = _mm256_sub_epi64(outflank, _mm256_set1_epi64x(1));
        let flipped_up = _mm256_maskz_and_epi64(_mm256_test_epi64_mask(outflank, outflank), below, up);

        let stops = _mm256_andnot_si256(o, down);
        let top = _mm256_set1_epi64x(i64::MIN);
        let highest = _mm256_srlv_epi64(top, _mm256_lzcnt_epi64(stops));
        let outflank = _mm256_and_si256(highest, p);
        // 0x20: a & !b & c.
        let flipped_down =
            _mm256_ternarylogic_epi64::<0x20>(_mm256_sub_epi64(zero, outflank), outflank, down);

        _mm256_or_si256(flipped_up, flipped_down)
    }

    /// [`super::flips`].
    #[target_feature(enable = "avx2,avx512f,avx512cd,avx512vl")]
    #[inline]
    pub(super) fn flips(player: u64, opponent: u64, square: u8) -> u64 {
        let (p, o) = (
            _mm256_set1_epi64x(player as i64),
            _mm256_set1_epi64x(opponent as i64),
        );
        avx2::or_lanes(flips_lanes(p, o, square))
    }

    /// [`super::count_two_plies_on`], with [`flips_lanes`].
    #[target_feature(enable = "avx2,avx512f,avx512cd,avx512vl")]
    #[inline]
    pub(super) fn count_two_plies<const GAME_OVER_EMPTY: bool>(player: u64, opponent: u64) -> Option<u64> {
        avx2::count_two_plies_with::<GAME_OVER_EMPTY>(player, opponent, |p, o, square| {
            flips_lanes(p, o, square)
        })
    }

    /// [`super::count_three_plies_on`]: the children and grandchildren in
    /// lanes ([`lanes::v4`]).
    #[target_feature(enable = "avx2,avx512f,avx512bw,avx512cd,avx512dq,avx512vl")]
    #[inline]
    pub(super) fn count_three_plies<const GAME_OVER_EMPTY: bool>(player: u64, opponent: u64) -> Option<u64> {
        match avx2::legal_moves_mask(player, opponent) {
            0 => None,
            moves => lanes::v4::count_three_plies::<GAME_OVER_EMPTY>(player, opponent, moves),
        }
    }
}

#[cfg(test)]
mod tests;
