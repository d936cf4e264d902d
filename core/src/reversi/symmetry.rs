//! The eight symmetries of the Reversi board, for the table key: a position
//! and its mirror images and rotations have the same perft counts.

/// Mirrors ranks: a1 <-> a8.
#[inline(always)]
pub fn flip_vertical(b: u64) -> u64 {
    b.swap_bytes()
}

/// Mirrors files: a1 <-> h1.
#[inline(always)]
pub fn flip_horizontal(b: u64) -> u64 {
    const K1: u64 = 0x5555_5555_5555_5555;
    const K2: u64 = 0x3333_3333_3333_3333;
    const K4: u64 = 0x0F0F_0F0F_0F0F_0F0F;
    let b = ((b >> 1) & K1) | ((b & K1) << 1);
    let b = ((b >> 2) & K2) | ((b & K2) << 2);
    ((b >> 4) & K4) | ((b & K4) << 4)
}

/// Mirrors about the a1-h8 diagonal: b1 <-> a2.
#[inline(always)]
pub fn flip_diagonal(b: u64) -> u64 {
    const K1: u64 = 0x5500_5500_5500_5500;
    const K2: u64 = 0x3333_0000_3333_0000;
    const K4: u64 = 0x0F0F_0F0F_0000_0000;
    let mut b = b;
    let t = K4 & (b ^ (b << 28));
    b ^= t ^ (t >> 28);
    let t = K2 & (b ^ (b << 14));
    b ^= t ^ (t >> 14);
    let t = K1 & (b ^ (b << 7));
    b ^ t ^ (t >> 7)
}

/// The smallest of the eight images of (player, opponent), compared as one
/// 128-bit number: the same for every position of one symmetry class.
#[inline(always)]
pub fn canonical(player: u64, opponent: u64) -> [u64; 2] {
    let join = |p: u64, o: u64| (u128::from(p) << 64) | u128::from(o);
    let (pv, ov) = (flip_vertical(player), flip_vertical(opponent));
    let images = [
        (player, opponent),
        (pv, ov),
        (flip_horizontal(player), flip_horizontal(opponent)),
        (flip_horizontal(pv), flip_horizontal(ov)),
    ];
    let mut best = u128::MAX;
    for (p, o) in images {
        best = best.min(join(p, o)).min(join(flip_diagonal(p), flip_diagonal(o)));
    }
    [(best >> 64) as u64, best as u64]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The square (file, rank) moved by a board transform, one bit at a time.
    fn image(transform: fn(u64) -> u64, file: u32, rank: u32) -> (u32, u32) {
        let sq = transform(1 << (rank * 8 + file)).trailing_zeros();
        (sq % 8, sq / 8)
    }

    #[test]
    fn transforms_move_squares_as_named() {
        for rank in 0..8 {
            for file in 0..8 {
                assert_eq!(image(flip_vertical, file, rank), (file, 7 - rank));
                assert_eq!(image(flip_horizontal, file, rank), (7 - file, rank));
                assert_eq!(image(flip_diagonal, file, rank), (rank, file));
            }
        }
    }

    #[test]
    fn canonical_is_the_same_for_all_images() {
        let (p, o) = (0x0000_0010_0818_0000u64, 0x0000_0008_1000_0400u64);
        let key = canonical(p, o);
        for t in [flip_vertical, flip_horizontal, flip_diagonal] {
            assert_eq!(canonical(t(p), t(o)), key);
            assert_eq!(canonical(flip_diagonal(t(p)), flip_diagonal(t(o))), key);
        }
    }
}
