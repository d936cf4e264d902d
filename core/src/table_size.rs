//! How big a transposition table to make when nobody gave a size: as big as
//! the count will use, no bigger than the memory at hand. A small count must
//! not pay for faulting in (and zeroing) a big table, and a big count should
//! not be starved by a fixed default.

use crate::game::Game;
use crate::plan::Plan;

/// The smallest table made: one the `--hash` parser also accepts.
pub const SMALLEST_TABLE_BYTES: u64 = 1 << 16;

/// Table entries per position expected to be stored. Buckets hold two
/// entries and a store evicts the smaller subtree, so a table just as big
/// as the stored positions would lose some that matter. With two (and the
/// rounding up) chess perft(8) gets 512 MiB of 32-byte entries, which
/// counted faster than 1 or 2 GiB, with less system time (`BENCHMARKS.md`).
pub const ENTRIES_PER_STORED_POSITION: u64 = 2;

/// Positions a count stores, estimated from its plan: `units` frontier
/// positions with `child_moves` legal moves between them, then as many new
/// positions per ply as that branching gives, over the `stored_plies` plies
/// whose nodes are deep enough to be stored (the units' own ply first).
/// Transpositions make the true number smaller; the estimate errs big.
pub fn expected_stored_positions(units: u64, child_moves: u64, stored_plies: u32) -> u128 {
    if units == 0 {
        return 0;
    }
    // Integer arithmetic, so the estimate is exact and the same everywhere;
    // fewer moves than units (game-over units) count as one per unit.
    let (units, moves) = (u128::from(units), u128::from(child_moves.max(units)));
    let mut level = units;
    let mut total = 0u128;
    for _ in 0..stored_plies {
        total = total.saturating_add(level);
        level = match level.checked_mul(moves) {
            Some(product) => product / units,
            None => return u128::MAX,
        };
    }
    total
}

/// Table bytes for `positions` expected stored positions of `entry_bytes`
/// each: [`ENTRIES_PER_STORED_POSITION`] entries apiece, rounded up to a
/// power of two (so sizes are few and runs comparable), at least
/// [`SMALLEST_TABLE_BYTES`] and at most `cap` (itself at least the smallest
/// table).
pub fn table_bytes_for_work(positions: u128, entry_bytes: u64, cap: u64) -> u64 {
    let wanted = positions
        .saturating_mul(u128::from(entry_bytes))
        .saturating_mul(u128::from(ENTRIES_PER_STORED_POSITION));
    let wanted = u64::try_from(wanted).unwrap_or(u64::MAX);
    let rounded = wanted.checked_next_power_of_two().unwrap_or(u64::MAX);
    rounded
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

/// [`expected_stored_positions`] of a plan for game `G`: the units, their
/// legal moves, and the plies from the units down to the shallowest node
/// the table stores ([`Game::MIN_STORED_DEPTH`]), but not below depth 3.
/// Depth-2 nodes (chess stores them) are the most and the cheapest: they
/// take the slot a bucket's deeper entry leaves, and evicting one another
/// there costs little. Chess perft(8) counted no faster with 1 or 2 GiB
/// than with 256 or 512 MiB (`BENCHMARKS.md`).
pub fn plan_stored_positions<G: Game>(plan: &Plan<G>) -> u128 {
    units_stored_positions(plan.units().positions(), plan.remaining_depth())
}

/// [`expected_stored_positions`] of `units` each counted `remaining` plies
/// deep: [`plan_stored_positions`] for units that come without their plan
/// (an audit's sample).
pub fn units_stored_positions<G: Game>(units: &[G], remaining: u32) -> u128 {
    let child_moves: u64 = units.iter().map(Game::count_moves).sum();
    let shallowest = G::MIN_STORED_DEPTH.max(crate::table_key::MIN_STORED_DEPTH);
    let stored_plies = (remaining + 1).saturating_sub(shallowest);
    expected_stored_positions(units.len() as u64, child_moves, stored_plies)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    #[test]
    fn stored_positions_sum_a_geometric_series() {
        // 400 units with 8902 moves (chess ply 2): 22.255 per position.
        assert_eq!(expected_stored_positions(400, 8902, 0), 0);
        assert_eq!(expected_stored_positions(400, 8902, 1), 400);
        assert_eq!(expected_stored_positions(400, 8902, 2), 400 + 8902);
        // 8902 * 8902 / 400 = 198114.01: each ply rounds down.
        assert_eq!(expected_stored_positions(400, 8902, 3), 400 + 8902 + 198_114);
        assert_eq!(expected_stored_positions(10, 30, 3), 10 + 30 + 90);
        // Fewer moves than units (many game-over units) counts one per ply.
        assert_eq!(expected_stored_positions(10, 0, 3), 30);
        assert_eq!(expected_stored_positions(0, 0, 5), 0);
        assert_eq!(expected_stored_positions(1, 218, 100), u128::MAX);
    }

    #[test]
    fn table_bytes_round_up_to_a_power_of_two_within_bounds() {
        // 1000 positions x 64 bytes x 2 entries = 128000 -> 128 KiB.
        assert_eq!(table_bytes_for_work(1000, 64, GIB), 128 << 10);
        assert_eq!(table_bytes_for_work(1024, 64, GIB), 128 << 10);
        assert_eq!(table_bytes_for_work(1025, 64, GIB), 256 << 10);
        // Chess perft(8) from the start: 4,616,443 positions -> 1 GiB.
        assert_eq!(expected_stored_positions(400, 8902, 4), 4_616_443);
        assert_eq!(table_bytes_for_work(4_616_443, 64, 11 * GIB), GIB);
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
