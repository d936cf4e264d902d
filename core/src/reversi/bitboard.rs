//! Bit-parallel Reversi kernels: the legal-move mask and the discs a move
//! flips. Portable `u64` code; the ray tables are computed at compile time.

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

const fn rays() -> [[u64; 8]; 64] {
    // (file step, rank step): E, N, NE, NW increase the bit number.
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Flips by walking each direction square by square: slow and obvious.
    fn flips_by_walking(player: u64, opponent: u64, square: u8) -> u64 {
        let mut flipped = 0;
        for (df, dr) in [
            (1, 0),
            (0, 1),
            (1, 1),
            (-1, 1),
            (-1, 0),
            (0, -1),
            (-1, -1),
            (1, -1),
        ] {
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

    proptest::proptest! {
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
}
