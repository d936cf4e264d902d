//! Reading the journal: a read-only connection beside the writer's, and
//! how a damaged journal is reported while reading it. Shared by every
//! reader (restore, finished jobs, lease records, Merkle roots), so none
//! of them reaches into another for it.

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use super::JournalError;

/// Opens the journal at `path` to read: the writer's locks and pragmas
/// stay the writer's.
pub(super) fn reader(path: &Path) -> Result<Connection, JournalError> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| JournalError::Open {
        path: path.to_owned(),
        reason: e.to_string(),
    })?;
    // A read never waits long behind a checkpoint.
    let _ = conn.busy_timeout(std::time::Duration::from_secs(10));
    Ok(conn)
}

/// How a damaged journal at `path` is reported: a reason of ours, or what
/// SQLite said.
pub(super) fn errors(
    path: &Path,
) -> (
    impl Fn(String) -> JournalError + Copy + '_,
    impl Fn(rusqlite::Error) -> JournalError + Copy + '_,
) {
    let bad = move |reason: String| JournalError::Corrupt {
        path: path.to_owned(),
        reason,
    };
    (bad, move |e: rusqlite::Error| bad(e.to_string()))
}

pub(super) type Bad<'a> = &'a dyn Fn(String) -> JournalError;
pub(super) type Sql<'a> = &'a dyn Fn(rusqlite::Error) -> JournalError;
