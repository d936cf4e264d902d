//! The last three plies in lanes: a position's children, then all their
//! children (the leaves' parents), each in its own 64-bit lane, eight to a
//! 512-bit register, every direction's fill run on all of them at once by
//! shifts of the whole register. The grandchildren of several children
//! fill one register, so few lanes go unused; the vector code of
//! [`super::bitboard`] instead spreads one child's eight directions over
//! the lanes and must fold them together for each child.

/// Files b..g: the discs a run along a file-crossing direction may flank.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const INNER: u64 = 0x7E7E_7E7E_7E7E_7E7E;
/// Every square off file a, where a shift towards file h cannot wrap.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const NOT_FILE_A: u64 = !0x0101_0101_0101_0101;
/// Every square off file h.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const NOT_FILE_H: u64 = !(0x0101_0101_0101_0101 << 7);

#[cfg(target_arch = "x86_64")]
pub(super) mod v4 {
    use std::arch::x86_64::{
        __m512i, __mmask8, _mm512_add_epi8, _mm512_add_epi64, _mm512_and_si512, _mm512_andnot_si512,
        _mm512_mask_or_epi64, _mm512_mask_set1_epi64, _mm512_mask_test_epi64_mask,
        _mm512_mask_testn_epi64_mask, _mm512_maskz_and_epi64, _mm512_or_si512, _mm512_reduce_add_epi64,
        _mm512_sad_epu8, _mm512_set1_epi8, _mm512_set1_epi64, _mm512_set4_epi32, _mm512_setzero_si512,
        _mm512_shuffle_epi8, _mm512_slli_epi64, _mm512_srli_epi64, _mm512_ternarylogic_epi64,
        _mm512_test_epi64_mask,
    };

    use super::{INNER, NOT_FILE_A, NOT_FILE_H};

    /// `x | (mask & y)`.
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn or_and(x: __m512i, mask: __m512i, y: __m512i) -> __m512i {
        // 0xF8: a | (b & c).
        _mm512_ternarylogic_epi64::<0xF8>(x, mask, y)
    }

    /// Each lane shifted `S` squares up the board (towards higher squares)
    /// when `UP`, else down.
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn shift<const UP: bool, const S: u32>(x: __m512i) -> __m512i {
        if UP {
            _mm512_slli_epi64::<S>(x)
        } else {
            _mm512_srli_epi64::<S>(x)
        }
    }

    /// The run of `mask` squares from each lane's `from` by steps of `S`
    /// (`S2` = 2S) up the board when `UP`, else down, `pairs` being `mask`
    /// where the square one step back is `mask` too: runs of up to six.
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn run<const UP: bool, const S: u32, const S2: u32>(
        from: __m512i,
        mask: __m512i,
        pairs: __m512i,
    ) -> __m512i {
        let mut run = _mm512_and_si512(mask, shift::<UP, S>(from));
        run = or_and(run, mask, shift::<UP, S>(run));
        run = or_and(run, pairs, shift::<UP, S2>(run));
        or_and(run, pairs, shift::<UP, S2>(run))
    }

    /// Each lane's moves for `player` along one direction pair (shifts by
    /// `S` both ways), flanking discs of `mask`.
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn moves_along<const S: u32, const S2: u32>(player: __m512i, mask: __m512i) -> __m512i {
        let up = _mm512_and_si512(mask, _mm512_slli_epi64::<S>(mask));
        let down = _mm512_srli_epi64::<S>(up);
        _mm512_or_si512(
            shift::<true, S>(run::<true, S, S2>(player, mask, up)),
            shift::<false, S>(run::<false, S, S2>(player, mask, down)),
        )
    }

    /// Each lane's legal moves for `player` against `opponent` (empty
    /// squares not yet required).
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn moves(player: __m512i, opponent: __m512i) -> __m512i {
        let inner = _mm512_and_si512(opponent, _mm512_set1_epi64(INNER as i64));
        // 0xFE: a | b | c.
        _mm512_or_si512(
            _mm512_ternarylogic_epi64::<0xFE>(
                moves_along::<1, 2>(player, inner),
                moves_along::<8, 16>(player, opponent),
                moves_along::<9, 18>(player, inner),
            ),
            moves_along::<7, 14>(player, inner),
        )
    }

    /// What a parent's boards give every child's flips: per direction, the
    /// opponent discs a run may cross (`mask`), those whose neighbour back
    /// along the direction is one too (`pairs`), and the player discs that
    /// may end a run there (`ends`, without the squares a shift wraps to).
    struct Direction {
        mask: __m512i,
        pairs: __m512i,
        ends: __m512i,
    }

    /// The flips of each lane's move `placed` (one square) along the
    /// direction of steps of `S` up the board when `UP`, else down, added
    /// to `flipped`.
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn flips_along<const UP: bool, const S: u32, const S2: u32>(
        flipped: __m512i,
        placed: __m512i,
        d: &Direction,
    ) -> __m512i {
        let run = run::<UP, S, S2>(placed, d.mask, d.pairs);
        let beyond = shift::<UP, S>(_mm512_or_si512(run, placed));
        _mm512_mask_or_epi64(flipped, _mm512_test_epi64_mask(beyond, d.ends), flipped, run)
    }

    /// The per-direction boards of each lane's parent, for
    /// [`flips_along`], in the order E, W, N, S, NE, SW, NW, SE.
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn directions(player: __m512i, opponent: __m512i) -> [Direction; 8] {
        let inner = _mm512_and_si512(opponent, _mm512_set1_epi64(INNER as i64));
        let ends_a = _mm512_and_si512(player, _mm512_set1_epi64(NOT_FILE_A as i64));
        let ends_h = _mm512_and_si512(player, _mm512_set1_epi64(NOT_FILE_H as i64));
        let dir = |mask: __m512i, shifted: __m512i, ends: __m512i| Direction {
            mask,
            pairs: _mm512_and_si512(mask, shifted),
            ends,
        };
        [
            dir(inner, _mm512_slli_epi64::<1>(inner), ends_a),
            dir(inner, _mm512_srli_epi64::<1>(inner), ends_h),
            dir(opponent, _mm512_slli_epi64::<8>(opponent), player),
            dir(opponent, _mm512_srli_epi64::<8>(opponent), player),
            dir(inner, _mm512_slli_epi64::<9>(inner), ends_a),
            dir(inner, _mm512_srli_epi64::<9>(inner), ends_h),
            dir(inner, _mm512_slli_epi64::<7>(inner), ends_h),
            dir(inner, _mm512_srli_epi64::<7>(inner), ends_a),
        ]
    }

    /// Each lane's flips for its move `placed` (zero: none).
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn flips(placed: __m512i, d: &[Direction; 8]) -> __m512i {
        let mut flipped = _mm512_setzero_si512();
        flipped = flips_along::<true, 1, 2>(flipped, placed, &d[0]);
        flipped = flips_along::<false, 1, 2>(flipped, placed, &d[1]);
        flipped = flips_along::<true, 8, 16>(flipped, placed, &d[2]);
        flipped = flips_along::<false, 8, 16>(flipped, placed, &d[3]);
        flipped = flips_along::<true, 9, 18>(flipped, placed, &d[4]);
        flipped = flips_along::<false, 9, 18>(flipped, placed, &d[5]);
        flipped = flips_along::<true, 7, 14>(flipped, placed, &d[6]);
        flips_along::<false, 7, 14>(flipped, placed, &d[7])
    }

    /// The population of each lane, summed into `sums` lane by lane.
    #[target_feature(enable = "avx512f,avx512bw")]
    #[inline]
    fn add_populations(sums: __m512i, x: __m512i) -> __m512i {
        let nibble = _mm512_set1_epi8(0x0F);
        let table = _mm512_set4_epi32(0x0403_0302, 0x0302_0201, 0x0302_0201, 0x0201_0100);
        let low = _mm512_shuffle_epi8(table, _mm512_and_si512(x, nibble));
        let high = _mm512_shuffle_epi8(table, _mm512_and_si512(_mm512_srli_epi64::<4>(x), nibble));
        _mm512_add_epi64(
            sums,
            _mm512_sad_epu8(_mm512_add_epi8(low, high), _mm512_setzero_si512()),
        )
    }

    /// Moves waiting in lanes, each lane a parent's boards and one of its
    /// moves, to count the replies of their children eight at a time.
    pub(in crate::reversi) struct Batch {
        player: __m512i,
        opponent: __m512i,
        placed: __m512i,
        len: u32,
        sums: __m512i,
        childless: u64,
    }

    impl Batch {
        /// No move waiting, nothing counted.
        #[target_feature(enable = "avx512f")]
        #[inline]
        pub(in crate::reversi) fn new() -> Batch {
            Batch {
                player: _mm512_setzero_si512(),
                opponent: _mm512_setzero_si512(),
                placed: _mm512_setzero_si512(),
                len: 0,
                sums: _mm512_setzero_si512(),
                childless: 0,
            }
        }

        /// Adds the move onto the square of `placed` by `player` against
        /// `opponent`, counting the lanes once eight are waiting.
        #[target_feature(enable = "avx2,avx512f,avx512bw,avx512cd,avx512dq,avx512vl")]
        #[inline]
        pub(in crate::reversi) fn push<const GAME_OVER_EMPTY: bool>(
            &mut self,
            player: u64,
            opponent: u64,
            placed: u64,
        ) {
            let lane = (1u32 << self.len) as __mmask8;
            self.player = _mm512_mask_set1_epi64(self.player, lane, player as i64);
            self.opponent = _mm512_mask_set1_epi64(self.opponent, lane, opponent as i64);
            self.placed = _mm512_mask_set1_epi64(self.placed, lane, placed as i64);
            self.len += 1;
            if self.len == 8 {
                self.count::<GAME_OVER_EMPTY>();
            }
        }

        /// Counts the replies of the waiting lanes' children (a child
        /// without a move counts 1, or with `GAME_OVER_EMPTY` 1 only when it
        /// passes), the other lanes empty.
        #[target_feature(enable = "avx2,avx512f,avx512bw,avx512cd,avx512dq,avx512vl")]
        #[inline]
        fn count<const GAME_OVER_EMPTY: bool>(&mut self) {
            let (p, o, placed) = (self.player, self.opponent, self.placed);
            let d = directions(p, o);
            let flipped = flips(placed, &d);
            let child_player = _mm512_andnot_si512(flipped, o);
            // 0xFE: a | b | c.
            let child_opponent = _mm512_ternarylogic_epi64::<0xFE>(p, flipped, placed);
            let real = _mm512_test_epi64_mask(placed, placed);
            // 0x01: !(a | b | c): the squares empty in the child.
            let empty = _mm512_ternarylogic_epi64::<0x01>(p, o, placed);
            let replies = _mm512_maskz_and_epi64(real, moves(child_player, child_opponent), empty);
            self.sums = add_populations(self.sums, replies);
            let none = _mm512_mask_testn_epi64_mask(real, replies, replies);
            if none != 0 {
                self.childless += if GAME_OVER_EMPTY {
                    passing_children(none, child_player, child_opponent, empty)
                } else {
                    u64::from(none.count_ones())
                };
            }
            self.placed = _mm512_setzero_si512();
            self.len = 0;
        }

        /// The replies of the children of every move pushed.
        #[target_feature(enable = "avx2,avx512f,avx512bw,avx512cd,avx512dq,avx512vl")]
        #[inline]
        pub(in crate::reversi) fn total<const GAME_OVER_EMPTY: bool>(mut self) -> u64 {
            if self.len > 0 {
                self.count::<GAME_OVER_EMPTY>();
            }
            _mm512_reduce_add_epi64(self.sums) as u64 + self.childless
        }
    }

    /// The children of the parent `p` to move against `o` for its moves
    /// onto the square of each lane of `placed` (zero: none), one a lane:
    /// each child's boards (its side to move first) and its moves.
    #[target_feature(enable = "avx2,avx512f,avx512bw,avx512cd,avx512dq,avx512vl")]
    #[inline]
    fn children(
        p: __m512i,
        o: __m512i,
        d: &[Direction; 8],
        empty: __m512i,
        placed: __m512i,
    ) -> [[u64; 8]; 3] {
        let flipped = flips(placed, d);
        let child_player = _mm512_andnot_si512(flipped, o);
        // 0xFE: a | b | c.
        let child_opponent = _mm512_ternarylogic_epi64::<0xFE>(p, flipped, placed);
        let replies = _mm512_and_si512(
            moves(child_player, child_opponent),
            _mm512_andnot_si512(placed, empty),
        );
        // SAFETY: a 512-bit register and eight words have one size, and
        // every bit pattern is valid for both.
        [child_player, child_opponent, replies]
            .map(|v| unsafe { std::mem::transmute::<__m512i, [u64; 8]>(v) })
    }

    /// The leaves three plies below `player` to move against `opponent`,
    /// whose moves are `squares` (not none), or `None` when one of its
    /// children has no move: the children eight at a time in lanes, then
    /// the grandchildren.
    #[target_feature(enable = "avx2,avx512f,avx512bw,avx512cd,avx512dq,avx512vl")]
    #[inline]
    pub(in crate::reversi) fn count_three_plies<const GAME_OVER_EMPTY: bool>(
        player: u64,
        opponent: u64,
        mut squares: u64,
    ) -> Option<u64> {
        let (p, o) = (
            _mm512_set1_epi64(player as i64),
            _mm512_set1_epi64(opponent as i64),
        );
        let d = directions(p, o);
        let empty = _mm512_set1_epi64(!(player | opponent) as i64);
        let mut batch = Batch::new();
        while squares != 0 {
            let mut placed = _mm512_setzero_si512();
            let mut len = 0;
            while len < 8 && squares != 0 {
                let lane = (1u32 << len) as __mmask8;
                placed = _mm512_mask_set1_epi64(placed, lane, (squares & squares.wrapping_neg()) as i64);
                squares &= squares - 1;
                len += 1;
            }
            let [child_players, child_opponents, replies] = children(p, o, &d, empty, placed);
            for lane in 0..len {
                let mut replies = replies[lane];
                if replies == 0 {
                    return None;
                }
                while replies != 0 {
                    batch.push::<GAME_OVER_EMPTY>(
                        child_players[lane],
                        child_opponents[lane],
                        replies & replies.wrapping_neg(),
                    );
                    replies &= replies - 1;
                }
            }
        }
        Some(batch.total::<GAME_OVER_EMPTY>())
    }

    /// Of the children of the lanes in `none` (which have no move), those
    /// whose opponent has one: they pass, one leaf each.
    #[target_feature(enable = "avx512f")]
    #[inline(never)]
    fn passing_children(none: __mmask8, player: __m512i, opponent: __m512i, empty: __m512i) -> u64 {
        let theirs = _mm512_and_si512(moves(opponent, player), empty);
        u64::from(_mm512_mask_test_epi64_mask(none, theirs, theirs).count_ones())
    }
}

#[cfg(test)]
mod tests {
    //! The lanes' algorithm one lane at a time in scalar code, every shift
    //! and mask as the v4 code makes them, checked on every CPU against
    //! the bitboard kernels (the v4 code itself is checked against the
    //! walked counts where the CPU runs it, in `bitboard`'s tests).

    use super::{INNER, NOT_FILE_A, NOT_FILE_H};
    use crate::reversi::bitboard::{flips, legal_moves_mask};

    fn shift(up: bool, s: u32, x: u64) -> u64 {
        if up { x << s } else { x >> s }
    }

    /// `run` of the v4 code, one lane.
    fn run(up: bool, s: u32, from: u64, mask: u64, pairs: u64) -> u64 {
        let mut run = mask & shift(up, s, from);
        run |= mask & shift(up, s, run);
        run |= pairs & shift(up, 2 * s, run);
        run | pairs & shift(up, 2 * s, run)
    }

    /// `moves_along` and `moves` of the v4 code, one lane.
    fn moves(player: u64, opponent: u64) -> u64 {
        let inner = opponent & INNER;
        let along = |s: u32, mask: u64| {
            let up = mask & mask << s;
            shift(true, s, run(true, s, player, mask, up))
                | shift(false, s, run(false, s, player, mask, up >> s))
        };
        along(1, inner) | along(8, opponent) | along(9, inner) | along(7, inner)
    }

    /// `directions` and `flips` of the v4 code, one lane.
    fn flips_by_runs(player: u64, opponent: u64, placed: u64) -> u64 {
        let inner = opponent & INNER;
        let (ends_a, ends_h) = (player & NOT_FILE_A, player & NOT_FILE_H);
        let directions = [
            (true, 1, inner, ends_a),
            (false, 1, inner, ends_h),
            (true, 8, opponent, player),
            (false, 8, opponent, player),
            (true, 9, inner, ends_a),
            (false, 9, inner, ends_h),
            (true, 7, inner, ends_h),
            (false, 7, inner, ends_a),
        ];
        directions.into_iter().fold(0, |flipped, (up, s, mask, ends)| {
            let pairs = mask & shift(up, s, mask);
            let run = run(up, s, placed, mask, pairs);
            if shift(up, s, run | placed) & ends != 0 {
                flipped | run
            } else {
                flipped
            }
        })
    }

    proptest::proptest! {
        #[test]
        fn the_lane_model_finds_every_move_and_flip(a: u64, b: u64, c: u64) {
            let (player, opponent) = (a & !b, b & !a);
            let (sparse_player, sparse_opponent) = (player & (a >> 7) & c, opponent & (b >> 3) & c);
            for (p, o) in [(player, opponent), (sparse_player, sparse_opponent), (opponent, player)] {
                let empty = !(p | o);
                proptest::prop_assert_eq!(moves(p, o) & empty, legal_moves_mask(p, o));
                for square in (0..64u8).filter(|&square| empty & 1 << square != 0) {
                    proptest::prop_assert_eq!(flips_by_runs(p, o, 1 << square), flips(p, o, square), "square {}", square);
                }
            }
        }
    }
}
