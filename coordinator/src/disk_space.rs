//! Whether a plan fits the data dir: a unit takes about 160 bytes of
//! journal once counted (BENCHMARKS.md), so a plan that would fill the
//! disk is refused before any of it is written, rather than failing every
//! write once the disk is full.

use std::path::Path;

use tonic::Status;

/// Journal bytes of one unit once its count is in (plan and result rows).
pub const JOURNAL_BYTES_PER_UNIT: u64 = 160;

/// Kept free beside the plan's estimate: the write-ahead log, other jobs'
/// counts.
pub const SPARE_BYTES: u64 = 64 << 20;

/// Refuses a plan of `units` whose journal rows would not fit the free
/// space beside `journal`.
pub(crate) fn check_room(journal: &Path, units: usize) -> Result<(), Status> {
    let dir = journal.parent().unwrap_or(Path::new("."));
    let free = free_bytes(dir).map_err(|e| {
        Status::unavailable(format!(
            "cannot read the free space of the data dir {}: {e}",
            dir.display()
        ))
    })?;
    room(units as u64, free, dir).map_err(|e| Status::resource_exhausted(e.to_string()))
}

/// The free bytes of the file system holding `dir` (test builds: as set by
/// `PERFT_FREE_BYTES`, to test a full disk without filling one).
fn free_bytes(dir: &Path) -> std::io::Result<u64> {
    #[cfg(feature = "fault-injection")]
    if let Some(free) = std::env::var("PERFT_FREE_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
    {
        return Ok(free);
    }
    fs4::available_space(dir)
}

fn mb(bytes: u64) -> String {
    format!("{} MB", bytes.div_ceil(1_000_000))
}

/// A plan that does not fit the data dir's free space.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "the plan has {units} units, about {} of journal once counted, but the data dir {dir} has {} free \
     ({} kept spare): free space (perft delete finished jobs) or submit with a smaller --split-depth",
    mb(*.needed),
    mb(*.free),
    mb(SPARE_BYTES)
)]
struct NoRoom {
    units: u64,
    needed: u64,
    free: u64,
    /// The data dir, echoed for the message.
    dir: String,
}

/// Ok when `units` fit in `free` bytes with [`SPARE_BYTES`] to spare.
fn room(units: u64, free: u64, dir: &Path) -> Result<(), NoRoom> {
    let needed = units.saturating_mul(JOURNAL_BYTES_PER_UNIT);
    // Checked: a sum past u64 never fits.
    if units
        .checked_mul(JOURNAL_BYTES_PER_UNIT)
        .and_then(|n| n.checked_add(SPARE_BYTES))
        .is_some_and(|total| total <= free)
    {
        return Ok(());
    }
    Err(NoRoom {
        units,
        needed,
        free,
        dir: perft_core::echoed(&dir.display().to_string()),
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::{JOURNAL_BYTES_PER_UNIT, SPARE_BYTES, room};

    #[test]
    fn a_plan_fits_only_with_room_to_spare() {
        let dir = Path::new("/data");
        let units = 2_000_000;
        let needed = units * JOURNAL_BYTES_PER_UNIT;
        assert_eq!(room(units, needed + SPARE_BYTES, dir), Ok(()));
        let refused = room(units, needed + SPARE_BYTES - 1, dir).unwrap_err();
        assert_eq!(
            refused.to_string(),
            "the plan has 2000000 units, about 320 MB of journal once counted, but the data dir /data has 388 MB free \
             (68 MB kept spare): free space (perft delete finished jobs) or submit with a smaller --split-depth"
        );
        assert!(room(u64::MAX, u64::MAX, dir).is_err());
    }
}
