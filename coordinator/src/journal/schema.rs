//! Opening the journal safely: one coordinator per data dir (an OS file
//! lock), a database that is ours and of a schema this build reads, and no
//! write-ahead log left without its database.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::Path;

use rusqlite::{Connection, OptionalExtension};

use super::JournalError;

/// The schema this build writes. A data dir with another one is refused.
pub const SCHEMA_VERSION: i64 = 10;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS secrets (name TEXT PRIMARY KEY, value BLOB NOT NULL);
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY, seq INTEGER NOT NULL UNIQUE, game TEXT NOT NULL, position TEXT NOT NULL,
    depth INTEGER NOT NULL, verify INTEGER NOT NULL, split_depth INTEGER NOT NULL,
    owner TEXT NOT NULL DEFAULT 'anonymous', convention TEXT, stats INTEGER NOT NULL DEFAULT 0,
    remaining_depth INTEGER NOT NULL, first_moves TEXT NOT NULL, settled BLOB NOT NULL,
    root_leaves BLOB, checksum INTEGER NOT NULL, state TEXT NOT NULL, error TEXT,
    started_ms INTEGER, finished_ms INTEGER, released INTEGER NOT NULL DEFAULT 0,
    units_total INTEGER NOT NULL, summary BLOB, summary_checksum INTEGER, counts_root BLOB,
    submitted_ms INTEGER);
CREATE TABLE IF NOT EXISTS unit_chunks (
    job_id TEXT NOT NULL, chunk INTEGER NOT NULL, first_unit INTEGER NOT NULL, units BLOB NOT NULL,
    checksum INTEGER NOT NULL, PRIMARY KEY (job_id, chunk)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS disagreements (
    job_id TEXT NOT NULL, unit_id INTEGER NOT NULL, position TEXT NOT NULL,
    votes TEXT NOT NULL, decided BLOB, checksum INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS results (
    job_id TEXT NOT NULL, unit_id INTEGER NOT NULL, leaves BLOB NOT NULL, machines TEXT NOT NULL,
    checksum INTEGER NOT NULL, PRIMARY KEY (job_id, unit_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS votes (
    job_id TEXT NOT NULL, unit_id INTEGER NOT NULL, voter TEXT NOT NULL, label TEXT NOT NULL,
    leaves BLOB NOT NULL, checksum INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS votes_unit ON votes (job_id, unit_id);
CREATE TABLE IF NOT EXISTS participants (
    id TEXT PRIMARY KEY, role TEXT NOT NULL, secret_hash BLOB NOT NULL, revoked INTEGER NOT NULL,
    created_ms INTEGER NOT NULL, checksum INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS credit (
    participant TEXT PRIMARY KEY, units INTEGER NOT NULL, leaves BLOB NOT NULL, cpu_ms INTEGER NOT NULL,
    lost_votes INTEGER NOT NULL, lost_votes_forgiven INTEGER NOT NULL DEFAULT 0,
    lapses INTEGER NOT NULL DEFAULT 0, strikes INTEGER NOT NULL DEFAULT 0,
    last_strike_ms INTEGER NOT NULL DEFAULT 0, lapse_debt INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS unit_floors (
    job_id TEXT NOT NULL, unit_id INTEGER NOT NULL, floor INTEGER NOT NULL, checksum INTEGER NOT NULL,
    PRIMARY KEY (job_id, unit_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS budgets (
    participant TEXT PRIMARY KEY, figures TEXT NOT NULL, checksum INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS unit_bars (
    job_id TEXT NOT NULL, unit_id INTEGER NOT NULL, participant TEXT NOT NULL, checksum INTEGER NOT NULL,
    PRIMARY KEY (job_id, unit_id, participant)) WITHOUT ROWID;
";

/// Schema 3 (before participants) becomes 4: jobs get an owner, and the
/// participants' and credit tables are created with the rest.
const MIGRATE_3_TO_4: &str = "ALTER TABLE jobs ADD COLUMN owner TEXT NOT NULL DEFAULT 'anonymous';";

/// Schema 4 becomes 5: jobs get their counting convention; NULL (every
/// older job) is the game's default, Bik's for Reversi.
const MIGRATE_4_TO_5: &str = "ALTER TABLE jobs ADD COLUMN convention TEXT;";

/// Schema 5 becomes 6: jobs say whether they count leaves by kind; every
/// older job counts none.
const MIGRATE_5_TO_6: &str = "ALTER TABLE jobs ADD COLUMN stats INTEGER NOT NULL DEFAULT 0;";

/// Schema 6 becomes 7: a participant's record keeps its lapses, strikes
/// and forgiven lost votes (the tables of lease floors and bars are
/// created with the rest; a journal of 6 has none, so every lease issued
/// before the upgrade still stands until its unit is reopened).
const MIGRATE_6_TO_7: &str = "ALTER TABLE credit ADD COLUMN lost_votes_forgiven INTEGER NOT NULL DEFAULT 0;
ALTER TABLE credit ADD COLUMN lapses INTEGER NOT NULL DEFAULT 0;
ALTER TABLE credit ADD COLUMN strikes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE credit ADD COLUMN last_strike_ms INTEGER NOT NULL DEFAULT 0;
ALTER TABLE credit ADD COLUMN lapse_debt INTEGER NOT NULL DEFAULT 0;";

/// Schema 7 becomes 8: the table of budget overrides is created with the
/// rest (a journal of 7 has none: every participant has the defaults).
const MIGRATE_7_TO_8: &str = "";

/// Schema 8 becomes 9: a done job keeps the Merkle root of its counts. A
/// job done before has none; the first start computes it from counts that
/// all pass their checksums (see `counts_root`).
const MIGRATE_8_TO_9: &str = "ALTER TABLE jobs ADD COLUMN counts_root BLOB;";

/// Schema 9 becomes 10: a job keeps when it was submitted, for the
/// dashboard's job list. A job submitted before has none (shown as
/// unknown).
const MIGRATE_9_TO_10: &str = "ALTER TABLE jobs ADD COLUMN submitted_ms INTEGER;";

/// The upgrade steps from schema 3, in order.
const MIGRATIONS: [&str; 7] = [
    MIGRATE_3_TO_4,
    MIGRATE_4_TO_5,
    MIGRATE_5_TO_6,
    MIGRATE_6_TO_7,
    MIGRATE_7_TO_8,
    MIGRATE_8_TO_9,
    MIGRATE_9_TO_10,
];

/// Upgrades a journal of schema `found` (3 to 9) to [`SCHEMA_VERSION`] in
/// one transaction: all of it or nothing.
fn migrate(conn: &Connection, found: i64) -> rusqlite::Result<()> {
    let steps = &MIGRATIONS[(found - 3) as usize..];
    let mut sql = String::from("BEGIN IMMEDIATE;");
    for step in steps {
        sql.push_str(step);
    }
    sql.push_str(&format!(
        "UPDATE meta SET value = {SCHEMA_VERSION} WHERE key = 'schema_version'; COMMIT;"
    ));
    conn.execute_batch(&sql)
}

/// The data dir's lock, held for as long as the coordinator runs; the OS
/// drops it when the process ends, however it ends.
#[derive(Debug)]
pub struct DirLock(#[allow(dead_code)] File);

/// Takes the data dir's lock, or says who holds it.
pub fn lock_dir(dir: &Path) -> Result<DirLock, JournalError> {
    let path = dir.join("coordinator.lock");
    let open_err = |e: std::io::Error| JournalError::Open {
        path: path.clone(),
        reason: e.to_string(),
    };
    let mut file = File::options()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(open_err)?;
    match file.try_lock() {
        Ok(()) => {}
        Err(std::fs::TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            return Err(JournalError::Locked {
                dir: dir.to_owned(),
                holder: perft_core::echoed(holder.trim()),
            });
        }
        Err(std::fs::TryLockError::Error(e)) => return Err(open_err(e)),
    }
    let holder = format!(
        "pid {} on {}, since {} ms after the Unix epoch",
        std::process::id(),
        hostname(),
        crate::clock::unix_ms()
    );
    file.set_len(0)
        .and_then(|()| file.rewind())
        .and_then(|()| file.write_all(holder.as_bytes()))
        .and_then(|()| file.sync_all())
        .map_err(open_err)?;
    Ok(DirLock(file))
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .or_else(|_| std::env::var("HOSTNAME"))
        .unwrap_or_else(|_| "this host".to_owned())
}

/// Refuses a write-ahead log whose database is missing or empty: SQLite
/// would start an empty journal and forget every job.
fn check_wal(path: &Path) -> Result<(), JournalError> {
    let mut wal = path.as_os_str().to_owned();
    wal.push("-wal");
    let wal_bytes = std::fs::metadata(&wal).map_or(0, |m| m.len());
    let db_bytes = std::fs::metadata(path).map_or(0, |m| m.len());
    if wal_bytes > 0 && db_bytes == 0 {
        return Err(JournalError::Corrupt {
            path: path.to_owned(),
            reason: format!(
                "the database is missing or empty but its write-ahead log holds {wal_bytes} bytes; \
                 restore the database, or move the log away to start afresh"
            ),
        });
    }
    Ok(())
}

/// Opens the database: ours, undamaged, of this schema (created when new).
pub fn open_connection(path: &Path) -> Result<Connection, JournalError> {
    check_wal(path)?;
    let open_err = |e: rusqlite::Error| JournalError::Open {
        path: path.to_owned(),
        reason: e.to_string(),
    };
    let corrupt = |e: rusqlite::Error| JournalError::Corrupt {
        path: path.to_owned(),
        reason: e.to_string(),
    };
    let conn = Connection::open(path).map_err(open_err)?;
    // Reading the schema is the first thing to fail on a file that is not
    // an SQLite database.
    let check: String = conn
        .query_row("PRAGMA quick_check", [], |row| row.get(0))
        .map_err(corrupt)?;
    if check != "ok" {
        return Err(JournalError::Corrupt {
            path: path.to_owned(),
            reason: perft_core::echoed(&check),
        });
    }
    // Takes effect on a new journal only (before its first table): its
    // free pages can then be given back while it serves (see `compact`).
    let _ = conn.pragma_update(None, "auto_vacuum", "INCREMENTAL");
    conn.pragma_update(None, "journal_mode", "WAL")
        .map_err(open_err)?;
    conn.pragma_update(None, "synchronous", "FULL")
        .map_err(open_err)?;
    let has_meta: bool = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name = 'meta'",
            [],
            |row| row.get::<_, i64>(0),
        )
        .map_err(corrupt)?
        > 0;
    if has_meta {
        let found: Option<i64> = conn
            .query_row("SELECT value FROM meta WHERE key = 'schema_version'", [], |row| {
                row.get(0)
            })
            .optional()
            .map_err(corrupt)?;
        match found {
            Some(v) if v > SCHEMA_VERSION => {
                return Err(JournalError::Newer {
                    path: path.to_owned(),
                    found: v,
                });
            }
            Some(SCHEMA_VERSION) => {}
            Some(found @ 3..=9) => {
                migrate(&conn, found).map_err(open_err)?;
                tracing::info!(
                    "journal: schema {found} upgraded to {SCHEMA_VERSION} (participants since 4, conventions since 5, statistics since 6, lease floors and lapse records since 7, budgets since 8, done jobs' Merkle roots since 9, submission times since 10)"
                );
            }
            Some(v) => {
                return Err(JournalError::Older {
                    path: path.to_owned(),
                    found: v,
                });
            }
            None => {
                return Err(JournalError::Corrupt {
                    path: path.to_owned(),
                    reason: "no schema version".to_owned(),
                });
            }
        }
    } else {
        let tables: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
                [],
                |row| row.get(0),
            )
            .map_err(corrupt)?;
        if tables > 0 {
            return Err(JournalError::Corrupt {
                path: path.to_owned(),
                reason: "tables of something else, not a Deep Perft journal".to_owned(),
            });
        }
    }
    conn.execute_batch(SCHEMA).map_err(open_err)?;
    conn.execute(
        "INSERT OR IGNORE INTO meta (key, value) VALUES ('schema_version', ?1)",
        [SCHEMA_VERSION],
    )
    .map_err(open_err)?;
    Ok(conn)
}

/// The key that signs leases, made once per journal and kept in it, so
/// leases stay valid across restarts.
pub fn lease_key(conn: &Connection, path: &Path) -> Result<[u8; 32], JournalError> {
    let open_err = |reason: String| JournalError::Open {
        path: path.to_owned(),
        reason,
    };
    let stored: Option<Vec<u8>> = conn
        .query_row("SELECT value FROM secrets WHERE name = 'lease_key'", [], |row| {
            row.get(0)
        })
        .optional()
        .map_err(|e| open_err(e.to_string()))?;
    if let Some(stored) = stored {
        return stored.try_into().map_err(|_| JournalError::Corrupt {
            path: path.to_owned(),
            reason: "the lease key is not 32 bytes".to_owned(),
        });
    }
    let mut key = [0u8; 32];
    getrandom::fill(&mut key).map_err(|e| open_err(format!("no randomness for the lease key: {e}")))?;
    conn.execute(
        "INSERT INTO secrets (name, value) VALUES ('lease_key', ?1)",
        [key.as_slice()],
    )
    .map_err(|e| open_err(e.to_string()))?;
    Ok(key)
}

/// Drops jobs whose plan was being written when the coordinator stopped:
/// their submit was never answered, so no client knows them.
pub fn drop_unfinished_plans(conn: &Connection, path: &Path) -> Result<(), JournalError> {
    let write_err = |e: rusqlite::Error| JournalError::Open {
        path: path.to_owned(),
        reason: e.to_string(),
    };
    conn.execute(
        "DELETE FROM unit_chunks WHERE job_id IN (SELECT id FROM jobs WHERE state = 'planning')",
        [],
    )
    .map_err(write_err)?;
    let dropped = conn
        .execute("DELETE FROM jobs WHERE state = 'planning'", [])
        .map_err(write_err)?;
    if dropped > 0 {
        tracing::warn!(
            jobs = dropped,
            "journal: dropped jobs whose plan was not completely written (their submit was never answered)"
        );
    }
    Ok(())
}

/// Drops the plans, counts and votes of cancelled jobs that still have
/// them (journaled before a cancel dropped them): a cancelled job is
/// never resumed, and its summary is what it shows.
pub fn drop_cancelled_plans(conn: &Connection, path: &Path) -> Result<(), JournalError> {
    let write_err = |e: rusqlite::Error| JournalError::Open {
        path: path.to_owned(),
        reason: e.to_string(),
    };
    for table in ["unit_chunks", "results", "votes", "unit_floors", "unit_bars"] {
        conn.execute(
            &format!(
                "DELETE FROM {table} WHERE job_id IN
                 (SELECT id FROM jobs WHERE state = 'cancelled' AND summary IS NOT NULL)"
            ),
            [],
        )
        .map_err(write_err)?;
    }
    Ok(())
}
