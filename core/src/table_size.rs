//! How big a transposition table to make when nobody gave a size: as big as
//! the count will use, no bigger than the memory at hand. A small count must
//! not pay for faulting in (and zeroing) a big table, and a big count should
//! not be starved by a fixed default.

use crate::game::Game;
use crate::measure::Measure;
use crate::plan::Plan;

/// The smallest table made: one the `--hash` parser also accepts.
pub const SMALLEST_TABLE_BYTES: u64 = 1 << 16;

/// Children generated per measured ply before [`distinct_stored_positions`]
/// stops measuring and extrapolates: a fraction of a second of move
/// generation.
pub const MEASURED_CHILDREN: u64 = 1 << 20;

/// The most bytes of positions one measured ply holds: a ply of game `G`
/// is measured only while its children fit, so a game with big positions
/// (chess: 80 bytes) measures fewer than [`MEASURED_CHILDREN`], and the
/// estimate never holds more than a few tens of MiB at once.
pub const MEASURED_BYTES: u64 = 32 << 20;

/// The children a measured ply of game `G` may have.
fn measured_children<G>() -> u64 {
    MEASURED_CHILDREN.min(MEASURED_BYTES / std::mem::size_of::<G>().max(1) as u64)
}

/// Distinct positions a count stores when `units` are each counted
/// `remaining` plies deep and the table keeps nodes at least `shallowest`
/// plies from the leaves: the units, then each ply's children with distinct
/// table keys (Reversi's symmetric images are one, and chess positions that
/// differ only in their clocks), generated and deduplicated while a ply makes fewer than
/// [`MEASURED_CHILDREN`] (and [`MEASURED_BYTES`]), then grown by the last
/// measured ply's growth.
/// Measuring the transpositions is what makes this close: checkers has
/// about 4.4 moves a position but only 3 times as many distinct positions
/// each ply, which over a dozen plies is two orders of magnitude. The
/// extrapolation assumes the last measured growth holds: where it falls
/// with depth (checkers, chess) the estimate errs big, where it rises
/// (Reversi) it errs small, which rounding to a power of two absorbs.
pub fn distinct_stored_positions<G: Game>(units: &[G], remaining: u32, shallowest: u32) -> u128 {
    let stored_plies = (remaining + 1).saturating_sub(shallowest);
    let mut level: Vec<G> = distinct(units.iter().copied());
    let mut total = 0u128;
    let mut growth = None;
    for ply in 0..stored_plies {
        total = total.saturating_add(level.len() as u128);
        if ply + 1 == stored_plies || level.is_empty() {
            return total;
        }
        let children: u64 = level.iter().map(Game::count_moves).sum();
        if children > measured_children::<G>() {
            // The growth of the last measured ply; from the units, their
            // moves (no dedup measured yet, so an upper bound).
            let (numerator, denominator) = growth.unwrap_or((children as u128, level.len() as u128));
            let mut size = level.len() as u128;
            for _ in ply + 1..stored_plies {
                size = match size.checked_mul(numerator) {
                    Some(product) => product / denominator,
                    None => return u128::MAX,
                };
                total = total.saturating_add(size);
            }
            return total;
        }
        let next = distinct_children(&level);
        growth = Some((next.len() as u128, level.len() as u128));
        level = next;
    }
    total
}

/// `positions` without two of one table key (the first of each), in their
/// order: what the table tells apart is what it stores apart.
fn distinct<G: Game>(positions: impl Iterator<Item = G>) -> Vec<G> {
    let mut seen = std::collections::HashSet::new();
    positions
        .filter(|position| seen.insert(position.table_key()))
        .collect()
}

/// The children of `level` without two of one table key, generated
/// straight into the set (no list of each position's children).
fn distinct_children<G: Game>(level: &[G]) -> Vec<G> {
    let mut seen = std::collections::HashSet::new();
    let mut next = Vec::new();
    for position in level {
        position.for_each_move(|mv| {
            let child = position.play(mv);
            if seen.insert(child.table_key()) {
                next.push(child);
            }
        });
    }
    next
}

/// Table bytes for `positions` expected stored positions of `entry_bytes`
/// each: an entry apiece, rounded to the nearer power of two (so sizes are
/// few and runs comparable), at least [`SMALLEST_TABLE_BYTES`] and at most
/// `cap` (itself at least the smallest table).
///
/// One entry a position, and rounding down as often as up, because memory
/// is not free: every GiB faulted in costs seconds of system time (about
/// 2.4 s on a virtual machine whose memory is cold), while a table a
/// little short of the positions loses the cheapest subtrees, which a
/// bucket's replacement gives up first. Measured (`BENCHMARKS.md`): chess
/// start perft(8) counts as fast with 256 or 512 MiB as with 1 or 2 GiB, and
/// checkers perft(18) as fast with 2 GiB as with 4 GiB from cold memory and
/// slower with 11.5 GiB.
pub fn table_bytes_for_work(positions: u128, entry_bytes: u64, cap: u64) -> u64 {
    let wanted = positions.saturating_mul(u128::from(entry_bytes));
    let wanted = u64::try_from(wanted).unwrap_or(u64::MAX);
    let nearer = match wanted.checked_next_power_of_two() {
        // Below the geometric middle of the two powers: the lower one.
        Some(up) if u128::from(wanted) * u128::from(wanted) * 2 < u128::from(up) * u128::from(up) => up / 2,
        Some(up) => up,
        None => u64::MAX,
    };
    nearer
        .max(SMALLEST_TABLE_BYTES)
        .min(cap.max(SMALLEST_TABLE_BYTES))
}

/// The most a local count's table takes by default: half the memory the
/// system reports available, leaving the rest to everything else.
pub fn local_table_cap(available_bytes: u64) -> u64 {
    available_bytes / 2
}

/// A worker's default table: a quarter of the available memory, rounded
/// down to a power of two. A worker cannot know the work it will lease, so
/// its table follows its memory budget; a quarter leaves room for a second
/// worker or a coordinator on the same machine, since tables are faulted
/// in lazily and the second one would otherwise see memory the first has
/// not touched yet.
pub fn worker_table_bytes(available_bytes: u64) -> u64 {
    let quarter = available_bytes / 4;
    if quarter < SMALLEST_TABLE_BYTES {
        return SMALLEST_TABLE_BYTES;
    }
    1 << quarter.ilog2()
}

/// [`distinct_stored_positions`] of a plan for game `G` counted under
/// measure `M`: its units, their remaining plies, and the shallowest node
/// `M`'s table stores ([`Measure::min_stored_depth`]).
pub fn plan_stored_positions<G: Game, M: Measure<G>>(plan: &Plan<G>) -> u128 {
    units_stored_positions::<G, M>(plan.units().positions(), plan.remaining_depth())
}

/// [`plan_stored_positions`] for units that come without their plan (an
/// audit's sample), each counted `remaining` plies deep.
pub fn units_stored_positions<G: Game, M: Measure<G>>(units: &[G], remaining: u32) -> u128 {
    distinct_stored_positions(units, remaining, M::min_stored_depth())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{ByKind, Checkers, Chess, Plain, Reversi};

    const GIB: u64 = 1 << 30;

    /// Distinct table keys per ply from the start (measured once with a
    /// set, as the estimate does): checkers plies 0-9, chess plies 0-3
    /// (6482 positions at ply 3, 5362 without their clocks), Reversi
    /// plies 0-4 (4 positions at ply 1, all one under symmetry).
    const CHECKERS_DISTINCT: [u128; 10] = [1, 7, 49, 216, 805, 2733, 9105, 28_123, 85_340, 255_800];
    const CHESS_DISTINCT: [u128; 4] = [1, 20, 400, 5362];
    const REVERSI_DISTINCT: [u128; 5] = [1, 1, 3, 14, 60];

    #[test]
    fn stored_positions_are_counted_without_transpositions() {
        let checkers = [Checkers::start()];
        // Remaining 9, stored from 4 plies above the leaves: plies 0-5.
        let plies_0_to_5: u128 = CHECKERS_DISTINCT[..6].iter().sum();
        assert_eq!(distinct_stored_positions(&checkers, 9, 4), plies_0_to_5);
        // The same unit twice is one unit.
        let twice = [Checkers::start(), Checkers::start()];
        assert_eq!(distinct_stored_positions(&twice, 9, 4), plies_0_to_5);
        let chess = [Chess::start()];
        assert_eq!(
            distinct_stored_positions(&chess, 5, 2),
            CHESS_DISTINCT.iter().sum()
        );
        assert_eq!(
            units_stored_positions::<Chess, Plain>(&chess, 5),
            CHESS_DISTINCT.iter().sum()
        );
        // Statistics store from depth 3: one ply fewer.
        assert_eq!(
            units_stored_positions::<Chess, ByKind>(&chess, 5),
            CHESS_DISTINCT[..3].iter().sum()
        );
        assert_eq!(distinct_stored_positions(&chess, 1, 2), 0);
        let reversi = [Reversi::start()];
        assert_eq!(
            distinct_stored_positions(&reversi, 8, 4),
            REVERSI_DISTINCT.iter().sum()
        );
        assert_eq!(distinct_stored_positions::<Chess>(&[], 9, 2), 0);
    }

    #[test]
    fn stored_positions_past_the_measured_plies_grow_as_the_last_measured_ply() {
        // Checkers ply 9 has 1,108,320 children, past MEASURED_CHILDREN
        // (ply 8's 369,764 are not): plies 10-12 grow as ply 9 did over 8.
        assert!(measured_children::<Checkers>() < 1_108_320);
        assert!(measured_children::<Checkers>() > 369_764);
        let measured: u128 = CHECKERS_DISTINCT.iter().sum();
        let ply10 = 255_800 * 255_800 / 85_340;
        let ply11 = ply10 * 255_800 / 85_340;
        let ply12 = ply11 * 255_800 / 85_340;
        assert_eq!(
            distinct_stored_positions(&[Checkers::start()], 16, 4),
            measured + ply10 + ply11 + ply12
        );
    }

    #[test]
    fn table_bytes_round_to_the_nearer_power_of_two_within_bounds() {
        // 1000 positions x 64 bytes = 64000: nearer 64 KiB than 32 KiB.
        assert_eq!(table_bytes_for_work(1000, 64, GIB), 64 << 10);
        assert_eq!(table_bytes_for_work(2048, 64, GIB), 128 << 10);
        // Either side of 4 x 1.414 = 5.66 GiB: 5.52 GiB and 5.96 GiB.
        assert_eq!(table_bytes_for_work(92_700_000, 64, 16 * GIB), 4 * GIB);
        assert_eq!(table_bytes_for_work(100_000_000, 64, 16 * GIB), 8 * GIB);
        // Checkers perft(18)'s 92.9 M positions of 32 bytes: 2.77 GiB is
        // under 2 x 1.414 GiB, so 2 GiB.
        assert_eq!(table_bytes_for_work(92_877_290, 32, 11 * GIB), 2 * GIB);
        // Chess perft(8)'s 21.6 M positions of 32 bytes: 0.64 GiB -> 512 MiB.
        assert_eq!(table_bytes_for_work(21_607_096, 32, 11 * GIB), GIB / 2);
        assert_eq!(table_bytes_for_work(0, 64, GIB), SMALLEST_TABLE_BYTES);
        assert_eq!(table_bytes_for_work(1, 32, GIB), SMALLEST_TABLE_BYTES);
        // The cap wins, and is not rounded.
        assert_eq!(table_bytes_for_work(100_000_000, 64, 3 * GIB), 3 * GIB);
        assert_eq!(table_bytes_for_work(u128::MAX, 64, 5 * GIB), 5 * GIB);
        // A cap below the smallest table gives the smallest table.
        assert_eq!(table_bytes_for_work(1 << 30, 64, 1000), SMALLEST_TABLE_BYTES);
    }

    #[test]
    fn caps_follow_available_memory() {
        assert_eq!(local_table_cap(22 * GIB), 11 * GIB);
        assert_eq!(worker_table_bytes(22 * GIB), 4 * GIB);
        assert_eq!(worker_table_bytes(16 * GIB), 4 * GIB);
        assert_eq!(worker_table_bytes(15 * GIB), 2 * GIB);
        assert_eq!(worker_table_bytes(100_000), SMALLEST_TABLE_BYTES);
        assert_eq!(worker_table_bytes(0), SMALLEST_TABLE_BYTES);
    }
}
