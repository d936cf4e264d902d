//! The transposition table of a local count: which one the caller chose,
//! its size when left to the work, building it, and what it reports after.

use perft_core::table_size::{local_table_cap, table_bytes_for_work};
use perft_core::{Game, Measure, SharedTable, TableStats};
use serde::Serialize;

use crate::error::LocalError;
use crate::memory::available_memory_bytes;

/// The table a count is asked to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableChoice {
    /// No table.
    Off,
    /// A table of this many bytes.
    Bytes(u64),
    /// The default size, which depends on the work and memory.
    Default,
}

impl TableChoice {
    /// The table's bytes: the chosen size, or `default` (worked out only
    /// then) when none was chosen. `None`: no table.
    pub fn bytes_or(self, default: impl FnOnce() -> u64) -> Option<u64> {
        match self {
            TableChoice::Off => None,
            TableChoice::Bytes(bytes) => Some(bytes),
            TableChoice::Default => Some(default()),
        }
    }

    /// The bytes of a local count's table: the chosen size, or by default
    /// sized to the `stored` positions the work promises (worked out only
    /// then) in entries of `entry_bytes`, within half the available memory,
    /// so that a small count does not pay for zeroing a big table. `None`:
    /// no table.
    pub fn local_bytes(self, stored: impl FnOnce() -> u128, entry_bytes: u64) -> Option<u64> {
        self.bytes_or(|| {
            table_bytes_for_work(stored(), entry_bytes, local_table_cap(available_memory_bytes()))
        })
    }
}

/// The table `choice` asks for ([`TableChoice::local_bytes`]) under
/// measure `M`: by default sized to the `stored` positions the work
/// promises. `None`: no table.
pub fn table_for<G: Game, M: Measure<G>>(
    choice: TableChoice,
    stored: impl FnOnce() -> u128,
) -> Result<Option<M::Table>, LocalError> {
    let Some(bytes) = choice.local_bytes(stored, M::entry_bytes()) else {
        return Ok(None);
    };
    let table = M::table(bytes).map_err(LocalError::Table)?;
    tracing::debug!(bytes, entries = table.entries(), "table");
    Ok(Some(table))
}

/// What the table was and how it served.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct TableReport {
    /// Bytes it held.
    pub bytes: u64,
    /// Entries it held.
    pub entries: u64,
    /// Lookups made.
    pub probes: u64,
    /// Lookups that found their position.
    pub hits: u64,
    /// Share of entries in use at the end, sampled.
    pub fill: f64,
}

impl TableReport {
    /// The report of `table` after lookups `stats`.
    pub fn new(table: &impl SharedTable, stats: TableStats) -> TableReport {
        TableReport {
            bytes: table.bytes(),
            entries: table.entries(),
            probes: stats.probes,
            hits: stats.hits,
            fill: table.fill(100_000),
        }
    }

    /// Share of lookups that hit (0 with none made).
    pub fn hit_rate(&self) -> f64 {
        if self.probes == 0 {
            0.0
        } else {
            self.hits as f64 / self.probes as f64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chosen_size_is_kept_and_off_is_no_table() {
        let unasked = || -> u128 { panic!("the work is not sized when the size is chosen") };
        assert_eq!(
            TableChoice::Bytes(1 << 20).local_bytes(unasked, 16),
            Some(1 << 20)
        );
        assert_eq!(TableChoice::Off.local_bytes(unasked, 16), None);
        assert_eq!(TableChoice::Off.bytes_or(|| 7), None);
        assert_eq!(TableChoice::Default.bytes_or(|| 7), Some(7));
    }

    #[test]
    fn the_default_size_grows_with_the_work() {
        let small = TableChoice::Default.local_bytes(|| 1_000, 16).expect("a table");
        let large = TableChoice::Default
            .local_bytes(|| 1_000_000, 16)
            .expect("a table");
        assert!(small <= large, "{small} > {large}");
    }

    #[test]
    fn a_table_too_small_is_the_callers_to_fix() {
        let refused = table_for::<perft_core::Chess, perft_core::Plain>(TableChoice::Bytes(1), || 0);
        let err = refused.expect_err("one byte holds no entry");
        assert!(err.is_request());
        assert_eq!(
            err.to_string(),
            "a table of 1 bytes holds no entry; give at least 64K"
        );
    }
}
