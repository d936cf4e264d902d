//! `perft journal check DIR`: checks a stopped data dir or a copy of one
//! (`perft backup`) without serving it, and without changing it: the
//! database is opened read-only (immutable when its write-ahead log is
//! empty, so not even SQLite's shared-memory index is made), nothing is
//! checkpointed, no mark written, no unfinished plan dropped. It runs
//! SQLite's `integrity_check`, reads the schema version, compares the
//! commit sequence with the mark as `perft serve` does, and checks the
//! checksum of every row that has one.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use rusqlite::config::DbConfig;
use rusqlite::{Connection, OpenFlags, OptionalExtension};

use super::codec::{blob_count, blob_summary};
use super::restore::{
    JOB_COLUMNS, chunk_checksum, count_checksum, disagreement_checksum, fits_job, job_row, parse_votes,
    summary_checksum,
};
use super::{SCHEMA_VERSION, budgets, leases, mark, participants};
use crate::columns::UnitColumns;
use crate::count::Count;
use crate::ids::{Epoch, JobId, ParticipantId, UnitId};
use crate::jobs::JobState;
use crate::participants::{Role, StoredParticipant};

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
        rows(&conn, &mut checked);
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
                    perft_core::shown(holder.trim())
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
                checked.broken(format!("SQLite integrity_check: {}", perft_core::shown(&line)));
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

/// What the rows of a job are checked against.
struct JobInfo {
    id: JobId,
    units_total: u64,
    stride: usize,
    state: JobState,
    fits: Box<dyn Fn(&Count) -> bool>,
    /// Its plan may be gone: a cancelled job with its summary.
    plan_dropped: bool,
    results: u64,
}

/// Damage per table: a line each for the first few, a count for the rest.
struct Rows<'a> {
    checked: &'a mut Checked,
    table: &'static str,
    rows: u64,
    bad: u64,
    orphans: u64,
}

impl<'a> Rows<'a> {
    fn new(checked: &'a mut Checked, table: &'static str) -> Rows<'a> {
        Rows {
            checked,
            table,
            rows: 0,
            bad: 0,
            orphans: 0,
        }
    }

    fn damage(&mut self, text: String) {
        self.bad += 1;
        self.checked.damaged += 1;
        if self.bad <= SHOWN_PER_TABLE {
            self.checked.findings.push(Finding {
                level: Level::Damage,
                text: format!("{}: {text}", self.table),
            });
        }
    }

    /// Runs `sql`, handing each row to `each`; a failed read is damage.
    fn scan(
        &mut self,
        conn: &Connection,
        sql: &str,
        mut each: impl FnMut(&mut Self, &rusqlite::Row<'_>) -> rusqlite::Result<()>,
    ) {
        let outcome = conn.prepare(sql).and_then(|mut stmt| {
            let mut rows = stmt.query([])?;
            while let Some(row) = rows.next()? {
                self.rows += 1;
                each(self, row)?;
            }
            Ok(())
        });
        if let Err(e) = outcome {
            self.damage(format!("cannot be read to its end: {e}"));
        }
    }

    fn finish(self) {
        let Rows {
            checked,
            table,
            rows,
            bad,
            orphans,
        } = self;
        checked.rows += rows;
        if bad > SHOWN_PER_TABLE {
            checked.findings.push(Finding {
                level: Level::Damage,
                text: format!("{table}: {} more damaged rows not shown", bad - SHOWN_PER_TABLE),
            });
        }
        if orphans > 0 {
            checked.note(format!(
                "{table}: {orphans} rows of no job (left out when the journal is read)"
            ));
        }
        if bad == 0 {
            checked.ok(format!("{table}: {rows} rows, every checksum holds"));
        }
    }
}

fn unit(row: &rusqlite::Row<'_>, column: usize) -> rusqlite::Result<UnitId> {
    Ok(UnitId(row.get::<_, i64>(column)? as u64))
}

/// Every row that carries a checksum, table by table.
fn rows(conn: &Connection, checked: &mut Checked) {
    participant_rows(conn, checked);
    budget_rows(conn, checked);
    credit_rows(conn, checked);
    secret_rows(conn, checked);
    let (mut jobs, planning) = job_rows(conn, checked);
    chunk_rows(conn, checked, &jobs, &planning);
    result_rows(conn, checked, &mut jobs);
    vote_rows(conn, checked, &jobs);
    disagreement_rows(conn, checked, &jobs);
    floor_rows(conn, checked, &jobs);
    bar_rows(conn, checked, &jobs);
}

fn participant_rows(conn: &Connection, checked: &mut Checked) {
    let mut t = Rows::new(checked, "participants");
    t.scan(
        conn,
        "SELECT id, role, secret_hash, revoked, created_ms, checksum FROM participants ORDER BY id",
        |t, row| {
            let name: String = row.get(0)?;
            let shown = perft_core::shown(&name);
            let parsed = ParticipantId::parse(&name).and_then(|id| {
                let role = Role::parse(&row.get::<_, String>(1).unwrap_or_default())?;
                let hash: Vec<u8> = row.get(2).unwrap_or_default();
                let secret_hash = hash
                    .try_into()
                    .map_err(|_| "its secret hash is not 32 bytes".to_owned())?;
                Ok(StoredParticipant {
                    id,
                    role,
                    secret_hash,
                    revoked: row.get::<_, i64>(3).unwrap_or(0) != 0,
                    created_ms: row.get::<_, i64>(4).unwrap_or(0) as u64,
                })
            });
            match parsed {
                Err(e) => t.damage(format!("participant '{shown}': {e}")),
                Ok(p) if participants::participant_checksum(&p) != row.get::<_, i64>(5)? => {
                    t.damage(format!("participant '{shown}' fails its checksum"));
                }
                Ok(_) => {}
            }
            Ok(())
        },
    );
    t.finish();
}

fn budget_rows(conn: &Connection, checked: &mut Checked) {
    let mut t = Rows::new(checked, "budgets");
    t.scan(
        conn,
        "SELECT participant, figures, checksum FROM budgets ORDER BY participant",
        |t, row| {
            let name: String = row.get(0)?;
            let figures: String = row.get(1)?;
            if budgets::row_checksum(&name, &figures) != row.get::<_, i64>(2)? {
                t.damage(format!(
                    "the budget of '{}' fails its checksum",
                    perft_core::shown(&name)
                ));
            } else if let Err(e) = crate::admission::Overrides::decode(&figures) {
                t.damage(format!("the budget of '{}': {e}", perft_core::shown(&name)));
            }
            Ok(())
        },
    );
    t.finish();
}

/// Credit carries no checksum; a row must name a participant.
fn credit_rows(conn: &Connection, checked: &mut Checked) {
    let mut t = Rows::new(checked, "credit");
    t.scan(conn, "SELECT participant FROM credit", |t, row| {
        let name: String = row.get(0)?;
        if let Err(e) = ParticipantId::parse(&name) {
            t.damage(format!("'{}': {e}", perft_core::shown(&name)));
        }
        Ok(())
    });
    let Rows {
        checked, rows, bad, ..
    } = t;
    checked.rows += rows;
    if bad == 0 {
        checked.ok(format!("credit: {rows} rows, each of a participant"));
    }
}

fn secret_rows(conn: &Connection, checked: &mut Checked) {
    let key: rusqlite::Result<Option<Vec<u8>>> = conn
        .query_row("SELECT value FROM secrets WHERE name = 'lease_key'", [], |row| {
            row.get(0)
        })
        .optional();
    match key {
        Ok(Some(key)) if key.len() == 32 => checked.ok("secrets: the lease key is 32 bytes".to_owned()),
        Ok(Some(key)) => checked.broken(format!("secrets: the lease key is {} bytes, not 32", key.len())),
        Ok(None) => checked.note("secrets: no lease key yet (made at the next start)".to_owned()),
        Err(e) => checked.broken(format!("secrets: cannot be read: {e}")),
    }
}

/// Every job's row: its plan, settled counts, root count and summary
/// against their checksums. Returns what its other rows are checked
/// against, by id, and the jobs whose plan was still being written.
fn job_rows(conn: &Connection, checked: &mut Checked) -> (HashMap<String, JobInfo>, HashSet<String>) {
    let mut jobs = HashMap::new();
    let path = Path::new("journal.sqlite");
    let mut t = Rows::new(checked, "jobs");
    t.scan(
        conn,
        &format!("SELECT {JOB_COLUMNS} FROM jobs WHERE state != 'planning' ORDER BY seq"),
        |t, row| {
            let raw: String = row.get(0)?;
            let job = match job_row(row, path) {
                Ok(job) => job,
                Err(e) => {
                    t.damage(format!("job '{}' cannot be read: {e}", perft_core::shown(&raw)));
                    return Ok(());
                }
            };
            for part in &job.damage {
                t.damage(format!("job {}: {part} fails its checksum", job.id));
            }
            let summary: Option<Vec<u8>> = row.get(17)?;
            let summary_sum: Option<i64> = row.get(18)?;
            let has_summary = summary.is_some();
            match (summary, summary_sum) {
                (Some(blob), Some(sum)) => {
                    if summary_checksum(&job.id, &blob) != sum
                        || blob_summary(&blob, job.spec.kinds()).is_none()
                    {
                        t.damage(format!("job {}: its summary fails its checksum", job.id));
                    }
                }
                (Some(_), None) | (None, Some(_)) => {
                    t.damage(format!("job {}: its summary lacks its checksum", job.id));
                }
                (None, None) => {}
            }
            jobs.insert(
                raw,
                JobInfo {
                    units_total: job.units_total,
                    stride: job.plan.units.stride(),
                    state: job.state,
                    fits: Box::new(fits_job(&job.spec)),
                    plan_dropped: job.state == JobState::Cancelled && has_summary,
                    results: 0,
                    id: job.id,
                },
            );
            Ok(())
        },
    );
    let mut planning = HashSet::new();
    t.scan(conn, "SELECT id FROM jobs WHERE state = 'planning'", |t, row| {
        let raw: String = row.get(0)?;
        t.checked.note(format!(
            "job '{}': its plan was being written when the coordinator stopped (its submit was never answered); the next start drops it",
            perft_core::shown(&raw)
        ));
        planning.insert(raw);
        Ok(())
    });
    t.finish();
    (jobs, planning)
}

/// Each job's plan, chunk by chunk (one chunk in memory at a time): in
/// order, of the job's position size, under its checksum, and all of its
/// units.
fn chunk_rows(
    conn: &Connection,
    checked: &mut Checked,
    jobs: &HashMap<String, JobInfo>,
    planning: &HashSet<String>,
) {
    let mut t = Rows::new(checked, "unit_chunks");
    // Per job: chunks and units seen, and whether they are in order.
    let mut seen: HashMap<String, (u64, u64, bool)> = HashMap::new();
    t.scan(
        conn,
        "SELECT job_id, chunk, first_unit, units, checksum FROM unit_chunks ORDER BY job_id, chunk",
        |t, row| {
            let raw: String = row.get(0)?;
            let Some(job) = jobs.get(&raw) else {
                // A plan cut short is dropped whole at the next start.
                if !planning.contains(&raw) {
                    t.orphans += 1;
                }
                return Ok(());
            };
            let chunk = row.get::<_, i64>(1)? as u64;
            let first_unit = unit(row, 2)?;
            let blob: Vec<u8> = row.get(3)?;
            let sum: i64 = row.get(4)?;
            let (chunks, units, in_order) = seen.entry(raw).or_insert((0, 0, true));
            if chunk_checksum(&job.id, chunk, first_unit, &blob) != sum {
                t.damage(format!("job {} chunk {chunk} fails its checksum", job.id));
                *in_order = false;
                return Ok(());
            }
            match UnitColumns::from_blob(&blob).filter(|c| c.stride() == job.stride) {
                None => {
                    t.damage(format!("job {} chunk {chunk} holds no units of its game", job.id));
                    *in_order = false;
                }
                Some(columns) => {
                    if *in_order && (chunk != *chunks || first_unit.0 != *units) {
                        t.damage(format!("job {} chunk {chunk} is out of order", job.id));
                        *in_order = false;
                    }
                    *chunks += 1;
                    *units += columns.len() as u64;
                }
            }
            Ok(())
        },
    );
    for (raw, job) in jobs {
        let (_, units, in_order) = seen.get(raw).copied().unwrap_or((0, 0, true));
        if in_order && units != job.units_total && !(job.plan_dropped && units == 0) {
            t.damage(format!(
                "job {}: its plan holds {units} of its {} units",
                job.id, job.units_total
            ));
        }
    }
    t.finish();
}

/// Decided counts: each under its checksum, of a unit of its job, a count
/// its job can have, with its deciders; a done job has one for every unit.
fn result_rows(conn: &Connection, checked: &mut Checked, jobs: &mut HashMap<String, JobInfo>) {
    let mut t = Rows::new(checked, "results");
    t.scan(
        conn,
        "SELECT job_id, unit_id, leaves, machines, checksum FROM results ORDER BY job_id, unit_id",
        |t, row| {
            let raw: String = row.get(0)?;
            let Some(job) = jobs.get_mut(&raw) else {
                t.orphans += 1;
                return Ok(());
            };
            job.results += 1;
            let unit_id = unit(row, 1)?;
            let blob: Vec<u8> = row.get(2)?;
            let machines: String = row.get(3)?;
            let sum: i64 = row.get(4)?;
            if unit_id.0 >= job.units_total {
                t.damage(format!(
                    "job {}: a count of unit {unit_id}, which it does not have",
                    job.id
                ));
            } else if count_checksum(&job.id, unit_id, &machines, &blob) != sum {
                t.damage(format!(
                    "job {} unit {unit_id}: its count fails its checksum",
                    job.id
                ));
            } else if !blob_count(&blob).is_some_and(|c| (job.fits)(&c)) {
                t.damage(format!(
                    "job {} unit {unit_id}: its count cannot be one of its job's",
                    job.id
                ));
            } else if machines.split('\n').any(str::is_empty) {
                t.damage(format!(
                    "job {} unit {unit_id}: its count names no decider",
                    job.id
                ));
            }
            Ok(())
        },
    );
    for job in jobs.values() {
        if job.state == JobState::Done && job.results != job.units_total {
            t.damage(format!(
                "job {} is done but holds {} counts for {} units",
                job.id, job.results, job.units_total
            ));
        }
    }
    t.finish();
}

/// Pending votes, each under its checksum.
fn vote_rows(conn: &Connection, checked: &mut Checked, jobs: &HashMap<String, JobInfo>) {
    let mut t = Rows::new(checked, "votes");
    t.scan(
        conn,
        "SELECT job_id, unit_id, voter, leaves, checksum FROM votes ORDER BY rowid",
        |t, row| {
            let raw: String = row.get(0)?;
            let Some(job) = jobs.get(&raw) else {
                t.orphans += 1;
                return Ok(());
            };
            let unit_id = unit(row, 1)?;
            let voter: String = row.get(2)?;
            let blob: Vec<u8> = row.get(3)?;
            if unit_id.0 >= job.units_total {
                t.damage(format!(
                    "job {}: a vote for unit {unit_id}, which it does not have",
                    job.id
                ));
            } else if count_checksum(&job.id, unit_id, &voter, &blob) != row.get::<_, i64>(4)? {
                t.damage(format!(
                    "job {} unit {unit_id}: a vote fails its checksum",
                    job.id
                ));
            } else if !blob_count(&blob).is_some_and(|c| (job.fits)(&c)) {
                t.damage(format!(
                    "job {} unit {unit_id}: a vote cannot be one of its job's",
                    job.id
                ));
            }
            Ok(())
        },
    );
    t.finish();
}

fn disagreement_rows(conn: &Connection, checked: &mut Checked, jobs: &HashMap<String, JobInfo>) {
    let mut t = Rows::new(checked, "disagreements");
    t.scan(
        conn,
        "SELECT job_id, unit_id, votes, decided, checksum FROM disagreements ORDER BY rowid",
        |t, row| {
            let raw: String = row.get(0)?;
            let Some(job) = jobs.get(&raw) else {
                t.orphans += 1;
                return Ok(());
            };
            let unit_id = unit(row, 1)?;
            let votes: String = row.get(2)?;
            let decided: Option<Vec<u8>> = row.get(3)?;
            let sum = disagreement_checksum(&job.id, unit_id, &votes, decided.as_deref().unwrap_or_default());
            if sum != row.get::<_, i64>(4)?
                || parse_votes(&votes).is_none()
                || decided.as_deref().is_some_and(|d| blob_count(d).is_none())
            {
                t.damage(format!(
                    "job {} unit {unit_id}: a disagreement record fails its checksum",
                    job.id
                ));
            }
            Ok(())
        },
    );
    t.finish();
}

fn floor_rows(conn: &Connection, checked: &mut Checked, jobs: &HashMap<String, JobInfo>) {
    let mut t = Rows::new(checked, "unit_floors");
    t.scan(
        conn,
        "SELECT job_id, unit_id, floor, checksum FROM unit_floors ORDER BY job_id, unit_id",
        |t, row| {
            let raw: String = row.get(0)?;
            let Some(job) = jobs.get(&raw) else {
                t.orphans += 1;
                return Ok(());
            };
            let unit_id = unit(row, 1)?;
            let floor = Epoch(row.get::<_, i64>(2)? as u64);
            if leases::floor_checksum(&job.id, unit_id, floor) != row.get::<_, i64>(3)? {
                t.damage(format!(
                    "job {} unit {unit_id}: its lease floor fails its checksum",
                    job.id
                ));
            }
            Ok(())
        },
    );
    t.finish();
}

fn bar_rows(conn: &Connection, checked: &mut Checked, jobs: &HashMap<String, JobInfo>) {
    let mut t = Rows::new(checked, "unit_bars");
    t.scan(
        conn,
        "SELECT job_id, unit_id, participant, checksum FROM unit_bars ORDER BY job_id, unit_id",
        |t, row| {
            let raw: String = row.get(0)?;
            let Some(job) = jobs.get(&raw) else {
                t.orphans += 1;
                return Ok(());
            };
            let unit_id = unit(row, 1)?;
            let name: String = row.get(2)?;
            if leases::bar_checksum(&job.id, unit_id, &name) != row.get::<_, i64>(3)? {
                t.damage(format!(
                    "job {} unit {unit_id}: a participant's bar fails its checksum",
                    job.id
                ));
            }
            Ok(())
        },
    );
    t.finish();
}

#[cfg(test)]
mod tests;
