//! Wall-clock time as the journal and the pages keep it.

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch: job times survive restarts.
pub fn unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
