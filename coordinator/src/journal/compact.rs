//! Keeping the journal's files small while it serves: checkpoints move the
//! write-ahead log into the database and cut it to nothing, and free pages
//! go back to the file system (the database keeps
//! `auto_vacuum=INCREMENTAL`; the journal thread moves a few pages at a
//! time, between transactions, when no write waits, until none is free,
//! then truncates the log).

use std::path::Path;
use std::time::Duration;

use rusqlite::Connection;

use super::WriteError;

/// Pages moved per step: a few milliseconds of writing, so a report that
/// arrives meanwhile waits little.
const STEP_PAGES: u32 = 512;

/// The write-ahead log is cut back to this after a checkpoint: a big plan
/// chunk's or a vacuum's log does not stay on disk.
const WAL_KEEP_BYTES: i64 = 64 << 20;

/// Makes the journal compactable: sets the write-ahead log's size limit
/// and, for a journal created before compaction existed, converts it once
/// with a full `VACUUM` (it needs about the journal's size free, and takes
/// a few seconds a gigabyte). A failed conversion is logged: the journal
/// then works as before, without giving space back.
pub(super) fn enable(conn: &Connection, path: &Path) {
    if let Err(e) = conn.pragma_update(None, "journal_size_limit", WAL_KEEP_BYTES) {
        tracing::warn!(error = %e, "journal: cannot limit the write-ahead log's size");
    }
    let mode: i64 = conn
        .query_row("PRAGMA auto_vacuum", [], |row| row.get(0))
        .unwrap_or(0);
    // 2: INCREMENTAL.
    if mode == 2 {
        return;
    }
    let bytes = std::fs::metadata(path).map_or(0, |m| m.len());
    tracing::warn!(
        journal = %path.display(),
        bytes,
        "journal: converting to incremental vacuum once (a full VACUUM), so finished jobs' space can be given back"
    );
    let converted = conn
        .pragma_update(None, "auto_vacuum", "INCREMENTAL")
        .and_then(|()| conn.execute_batch("VACUUM"));
    if let Err(e) = converted {
        tracing::warn!(error = %e, "journal: cannot convert; space of finished jobs is reused but not given back");
    }
}

/// Whether free pages wait to be given back.
pub(super) fn due(conn: &Connection) -> bool {
    let incremental = conn
        .query_row("PRAGMA auto_vacuum", [], |row| row.get::<_, i64>(0))
        .is_ok_and(|mode| mode == 2);
    incremental && free_pages(conn) > 0
}

fn free_pages(conn: &Connection) -> i64 {
    conn.query_row("PRAGMA freelist_count", [], |row| row.get(0))
        .unwrap_or(0)
}

/// Runs `incremental_vacuum` to its end: it frees a page per step of the
/// statement, so a single step (as `execute` takes) would free only one.
fn vacuum(conn: &Connection) -> rusqlite::Result<()> {
    let mut statement = conn.prepare_cached(&format!("PRAGMA incremental_vacuum({STEP_PAGES})"))?;
    let mut rows = statement.query([])?;
    while rows.next()?.is_some() {}
    Ok(())
}

/// Gives up to [`STEP_PAGES`] free pages back; once none is left, also
/// cuts the write-ahead log to nothing. Returns whether more are due.
pub(super) fn step(conn: &Connection) -> bool {
    if let Err(e) = vacuum(conn) {
        tracing::warn!(error = %e, "journal: incremental vacuum failed; retried after the next deletion");
        return false;
    }
    if free_pages(conn) > 0 {
        return true;
    }
    // Without waiting for readers: a long one (a backup being written, a
    // certificate being read) would hold the journal's thread, and every
    // commit behind it, for the busy timeout. The periodic checkpoint
    // truncates the log once the reader is gone.
    if let Err(e) = checkpoint(conn, false) {
        tracing::debug!(error = %e, "journal: cannot truncate the write-ahead log yet");
    }
    false
}

/// Checkpoints the log into the database and truncates it. `wait`: wait
/// for readers (at shutdown); else a busy reader makes it a partial one.
pub(super) fn checkpoint(conn: &Connection, wait: bool) -> Result<(), WriteError> {
    if !wait {
        conn.busy_timeout(Duration::ZERO)?;
    }
    let outcome = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |row| row.get::<_, i64>(0));
    if !wait {
        let _ = conn.busy_timeout(Duration::from_secs(5));
    }
    match outcome? {
        0 => Ok(()),
        _ => Err(WriteError::ReadersHeld),
    }
}
