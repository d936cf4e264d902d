//! `perft journal check DIR`: checks a stopped data dir or a copy of one
//! (`perft backup`) without serving it, and without changing it: the
//! database is opened read-only (immutable when its write-ahead log is
//! empty, so not even SQLite's shared-memory index is made), nothing is
//! checkpointed, no mark written, no unfinished plan dropped. It runs
//! SQLite's `integrity_check`, reads the schema version, compares the
//! commit sequence with the mark as `perft serve` does, and checks the
//! checksum of every row that has one.
//!
//! This file holds the driver: refusing what is not a stopped data dir,
//! opening read-only, the integrity check, the schema, the commit mark and
//! the findings handed back. The row checks, table by table, are in
//! `rows.rs`.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags, OptionalExtension};

use super::{SCHEMA_VERSION, mark};

mod rows;

/// Damaged rows shown one a line per table; the rest are counted.
const SHOWN_PER_TABLE: u64 = 20;

/// Lines of `integrity_check` asked for.
const INTEGRITY_LINES: u32 = 100;

/// How a finding weighs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    /// Checked and sound.
    Ok,
    /// Worth knowing, not damage.
    Note,
    /// The journal is damaged (or lost work): exit 1.
    Damage,
}

/// One line of the check.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    pub level: Level,
    pub text: String,
}

/// What a check found.
#[derive(Clone, Debug, Default)]
pub struct Checked {
    pub findings: Vec<Finding>,
    /// The journal's commit sequence, when it could be read.
    pub sequence: Option<u64>,
    /// Rows whose checksum was checked.
    pub rows: u64,
    /// Damaged rows and other damage, all told (some not shown).
    pub damaged: u64,
}

impl Checked {
    /// Whether nothing is damaged.
    pub fn is_clean(&self) -> bool {
        self.damaged == 0
    }

    /// The damage shown, in order.
    pub fn damage(&self) -> impl Iterator<Item = &Finding> {
        self.findings.iter().filter(|f| f.level == Level::Damage)
    }

    fn ok(&mut self, text: String) {
        self.findings.push(Finding {
            level: Level::Ok,
            text,
        });
    }

    fn note(&mut self, text: String) {
        self.findings.push(Finding {
            level: Level::Note,
            text,
        });
    }

    /// Damage that is not a row of a table.
    fn broken(&mut self, text: String) {
        self.damaged += 1;
        self.findings.push(Finding {
            level: Level::Damage,
            text,
        });
    }
}

/// Why a directory cannot be checked (the caller's to fix: exit 2).
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("cannot check {}: {reason}", .dir.display())]
    Input { dir: PathBuf, reason: String },
    #[error("cannot check {}: {what}: {source}", .dir.display())]
    Open {
        dir: PathBuf,
        what: &'static str,
        #[source]
        source: rusqlite::Error,
    },
}

/// Checks the data dir (or copy) `dir`. Refuses (Err) a directory that is
/// not one, or one a running coordinator holds; damage is in the answer.
pub fn check(dir: &Path) -> Result<Checked, CheckError> {
    let input = |reason: String| CheckError::Input {
        dir: dir.to_owned(),
        reason,
    };
    match std::fs::metadata(dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(input("no such directory".to_owned()));
        }
        Err(e) => return Err(input(format!("cannot look at it: {e}"))),
        Ok(meta) if !meta.is_dir() => return Err(input("not a directory".to_owned())),
        Ok(_) => {}
    }
    let db = dir.join("journal.sqlite");
    let db_bytes = match std::fs::metadata(&db) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(input(
                "no journal.sqlite in it: not a data dir or a copy of one".to_owned(),
            ));
        }
        Err(e) => return Err(input(format!("cannot look at journal.sqlite: {e}"))),
        Ok(meta) if !meta.is_file() => return Err(input("journal.sqlite is not a file".to_owned())),
        Ok(meta) => meta.len(),
    };
    // Held (shared) while checking: no coordinator starts meanwhile.
    let _lock = lock_shared(dir)?;
    let mut checked = Checked::default();
    let mut wal = db.as_os_str().to_owned();
    wal.push("-wal");
    let wal_bytes = std::fs::metadata(&wal).map_or(0, |m| m.len());
    if db_bytes == 0 {
        checked.broken(if wal_bytes > 0 {
            format!("journal.sqlite is empty but its write-ahead log holds {wal_bytes} bytes")
        } else {
            "journal.sqlite is empty".to_owned()
        });
        return Ok(checked);
    }
    let conn = open(dir, &db, wal_bytes, &mut checked)?;
    // The first read fails on a file that is not an SQLite database.
    let tables: rusqlite::Result<i64> = conn.query_row(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
        [],
        |row| row.get(0),
    );
    match tables {
        Ok(0) => {
            return Err(input(
                "journal.sqlite holds no tables: not a Deep Perft journal".to_owned(),
            ));
        }
        Ok(_) => {}
        Err(e) => {
            checked.broken(format!("journal.sqlite cannot be read as a database: {e}"));
            return Ok(checked);
        }
    }
    integrity(&conn, &mut checked);
    let schema = match schema(&conn, dir, &mut checked)? {
        Some(schema) => schema,
        None => return Ok(checked),
    };
    commit_mark(&conn, &db, &dir.join(mark::MARK_FILE), &mut checked);
    if schema == SCHEMA_VERSION {
        rows::rows(&conn, &mut checked);
    } else {
        checked.note(format!(
            "rows not checked: schema {schema} is an older release's (this build checks {SCHEMA_VERSION}; `perft serve` upgrades it at start)"
        ));
    }
    Ok(checked)
}

/// A shared lock on the data dir's lock file, if it has one: refused
/// while a coordinator holds it.
fn lock_shared(dir: &Path) -> Result<Option<File>, CheckError> {
    let path = dir.join("coordinator.lock");
    let mut file = match File::open(&path) {
        Ok(file) => file,
        Err(_) => return Ok(None),
    };
    match file.try_lock_shared() {
        Ok(()) => Ok(Some(file)),
        Err(std::fs::TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = (&mut file).take(512).read_to_string(&mut holder);
            Err(CheckError::Input {
                dir: dir.to_owned(),
                reason: format!(
                    "a running coordinator holds it ({}): check a copy (`perft backup`) or stop it first",
                    perft_core::echoed(holder.trim())
                ),
            })
        }
        // A file system without locks: nothing to learn from it.
        Err(std::fs::TryLockError::Error(_)) => Ok(None),
    }
}

/// `path` as the path of a `file:` URI.
fn uri_path(path: &Path) -> String {
    let bytes = path.as_os_str().as_encoded_bytes();
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        if b.is_ascii_alphanumeric() || b"/._-~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Opens the database read-only: immutable (nothing read or made beside
/// it) when the write-ahead log is empty; else with the log, as SQLite
/// reads it, and never checkpointed.
fn open(dir: &Path, db: &Path, wal_bytes: u64, checked: &mut Checked) -> Result<Connection, CheckError> {
    let failed = |what: &'static str| {
        move |source: rusqlite::Error| CheckError::Open {
            dir: dir.to_owned(),
            what,
            source,
        }
    };
    let read_only = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    if wal_bytes == 0 {
        return Connection::open_with_flags(
            format!("file:{}?immutable=1", uri_path(db)),
            read_only | OpenFlags::SQLITE_OPEN_URI,
        )
        .map_err(failed("opening journal.sqlite"));
    }
    checked.note(format!(
        "the write-ahead log holds {wal_bytes} bytes (the coordinator did not stop cleanly): read with the database, not checkpointed"
    ));
    let conn = Connection::open_with_flags(db, read_only).map_err(failed("opening journal.sqlite"))?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, true)
        .map_err(failed("opening journal.sqlite"))?;
    Ok(conn)
}

fn integrity(conn: &Connection, checked: &mut Checked) {
    let lines: rusqlite::Result<Vec<String>> = conn
        .prepare(&format!("PRAGMA integrity_check({INTEGRITY_LINES})"))
        .and_then(|mut stmt| stmt.query_map([], |row| row.get(0))?.collect());
    match lines {
        Ok(lines) if lines == ["ok"] => checked.ok("SQLite integrity_check: ok".to_owned()),
        Ok(lines) => {
            for line in lines {
                checked.broken(format!("SQLite integrity_check: {}", perft_core::echoed(&line)));
            }
        }
        Err(e) => checked.broken(format!("SQLite integrity_check cannot run: {e}")),
    }
}

/// The schema version: `None` when nothing more can be checked.
fn schema(conn: &Connection, dir: &Path, checked: &mut Checked) -> Result<Option<i64>, CheckError> {
    let found: rusqlite::Result<Option<i64>> = conn
        .query_row("SELECT value FROM meta WHERE key = 'schema_version'", [], |row| {
            row.get(0)
        })
        .optional();
    match found {
        Ok(Some(SCHEMA_VERSION)) => {
            checked.ok(format!("schema {SCHEMA_VERSION}: this build's"));
            Ok(Some(SCHEMA_VERSION))
        }
        Ok(Some(v)) if v > SCHEMA_VERSION => Err(CheckError::Input {
            dir: dir.to_owned(),
            reason: format!(
                "its journal was written by a newer Deep Perft (schema {v}, this build reads {SCHEMA_VERSION}): check it with that release"
            ),
        }),
        Ok(Some(v @ 3..SCHEMA_VERSION)) => Ok(Some(v)),
        Ok(Some(v)) => {
            checked.broken(format!("schema {v}: no Deep Perft release wrote it"));
            Ok(None)
        }
        Ok(None) => {
            checked.broken("no schema version in the meta table".to_owned());
            Ok(None)
        }
        Err(e) => {
            checked.broken(format!("the schema version cannot be read: {e}"));
            Ok(None)
        }
    }
}

/// The commit sequence against the mark, judged as `perft serve` judges
/// them at start.
fn commit_mark(conn: &Connection, db: &Path, mark_path: &Path, checked: &mut Checked) {
    let journal = match mark::journal_sequence(conn, db) {
        Ok(journal) => journal,
        Err(e) => {
            checked.broken(e.to_string());
            return;
        }
    };
    checked.sequence = journal;
    match mark::check(conn, db, mark_path, false) {
        Err(e) => checked.broken(e.to_string()),
        Ok(_) => match (journal, mark::read(mark_path).ok().flatten()) {
            (Some(journal), Some(mark)) if journal == mark => {
                checked.ok(format!("commit mark: sequence {mark}, as the journal"));
            }
            (Some(journal), Some(mark)) => checked.ok(format!(
                "commit mark: sequence {mark}, the journal at {journal} (a mark may lag its journal, never lead it)"
            )),
            _ => checked.note(
                "no commit sequence yet (a journal from before the mark): `perft serve` starts one".to_owned(),
            ),
        },
    }
}

#[cfg(test)]
mod tests;
