//! The coordinator's journal: an embedded SQLite database in the data dir
//! (WAL, `synchronous=FULL`) holding jobs, their plans and every accepted
//! result, so a restarted coordinator resumes where it stopped.
//!
//! One thread owns the connection and group-commits: writes that arrive
//! while a commit runs go into the next transaction, and each caller is
//! answered only once the transaction holding its writes is durable.

use std::path::{Path, PathBuf};
use std::sync::mpsc;

use perft_core::{GameKind, Leaves, Weight};
use rusqlite::{Connection, OptionalExtension, params};
use tokio::sync::oneshot;

use crate::jobs::{Disagreement, JobSpec, JobState, Vote};
use crate::planning::PlannedJob;

/// The schema this build writes. A data dir with a newer one is refused.
pub const SCHEMA_VERSION: i64 = 1;

/// Why the journal cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("cannot use the journal {path}: {reason}")]
    Open { path: PathBuf, reason: String },
    #[error(
        "the journal {path} was written by a newer Deep Perft (schema {found}, this build reads up to {SCHEMA_VERSION}); refusing to start"
    )]
    Newer { path: PathBuf, found: i64 },
    #[error("the journal {path} is damaged ({reason}); refusing to start rather than lose results")]
    Corrupt { path: PathBuf, reason: String },
    #[error("journal write failed: {0}")]
    Write(String),
}

/// One change to record.
#[derive(Debug, Clone)]
pub enum Op {
    /// A new job with its whole plan.
    Submit {
        seq: u64,
        id: String,
        spec: JobSpec,
        plan: PlannedJob,
    },
    /// A unit's accepted count.
    Result {
        job_id: String,
        unit_id: u64,
        leaves: Leaves,
        worker: String,
    },
    /// Workers sent different counts for a unit.
    Disagreement {
        job_id: String,
        disagreement: Disagreement,
    },
    /// The job's state, timing and counters.
    JobState {
        job_id: String,
        state: JobState,
        error: Option<String>,
        started_ms: Option<u64>,
        finished_ms: Option<u64>,
        released: u64,
    },
}

/// A job read back from the journal.
#[derive(Debug, Clone)]
pub struct RestoredJob {
    pub id: String,
    pub spec: JobSpec,
    pub plan: PlannedJob,
    pub state: JobState,
    pub error: Option<String>,
    pub started_ms: Option<u64>,
    pub finished_ms: Option<u64>,
    pub released: u64,
    pub results: Vec<(u64, Leaves)>,
    pub disagreements: Vec<Disagreement>,
}

/// Writes handed to the journal, durable once [`Commit::wait`] returns Ok.
#[derive(Debug)]
#[must_use = "a write is only durable once its commit is awaited"]
pub struct Commit(Option<oneshot::Receiver<Result<(), String>>>);

impl Commit {
    /// Waits until the writes are committed.
    pub async fn wait(self) -> Result<(), JournalError> {
        match self.0 {
            None => Ok(()),
            Some(rx) => rx
                .await
                .map_err(|_| JournalError::Write("the journal thread stopped".to_owned()))?
                .map_err(JournalError::Write),
        }
    }
}

struct Batch {
    ops: Vec<Op>,
    done: oneshot::Sender<Result<(), String>>,
}

/// Handle to the journal thread.
#[derive(Debug, Clone)]
pub struct Journal {
    sender: mpsc::Sender<Batch>,
    path: PathBuf,
}

fn state_name(state: JobState) -> &'static str {
    match state {
        JobState::Queued => "queued",
        JobState::Running => "running",
        JobState::Done => "done",
        JobState::Failed => "failed",
        JobState::Cancelled => "cancelled",
    }
}

fn parse_state(name: &str) -> Option<JobState> {
    Some(match name {
        "queued" => JobState::Queued,
        "running" => JobState::Running,
        "done" => JobState::Done,
        "failed" => JobState::Failed,
        "cancelled" => JobState::Cancelled,
        _ => return None,
    })
}

fn leaves_blob(l: Leaves) -> Vec<u8> {
    let mut blob = l.leaves.to_le_bytes().to_vec();
    blob.extend_from_slice(&l.higher.to_le_bytes());
    blob
}

fn blob_leaves(blob: &[u8]) -> Option<Leaves> {
    let leaves = u128::from_le_bytes(blob.get(..16)?.try_into().ok()?);
    let higher = u128::from_le_bytes(blob.get(16..32)?.try_into().ok()?);
    Some(Leaves { leaves, higher })
}

/// Votes as lines of `worker<TAB>leaves<TAB>higher`.
fn votes_text(votes: &[Vote]) -> String {
    votes
        .iter()
        .map(|v| {
            format!(
                "{}\t{}\t{}",
                v.worker.replace(['\t', '\n'], " "),
                v.leaves.leaves,
                v.leaves.higher
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn parse_votes(text: &str) -> Option<Vec<Vote>> {
    text.lines()
        .map(|line| {
            let mut fields = line.split('\t');
            let worker = fields.next()?.to_owned();
            let leaves = fields.next()?.parse().ok()?;
            let higher = fields.next()?.parse().ok()?;
            Some(Vote {
                worker,
                leaves: Leaves { leaves, higher },
            })
        })
        .collect()
}

fn weights_blob(weights: &[Weight]) -> Vec<u8> {
    weights
        .iter()
        .flat_map(|w| {
            w.first_move
                .to_le_bytes()
                .into_iter()
                .chain(w.paths.to_le_bytes())
        })
        .collect()
}

fn blob_weights(blob: &[u8]) -> Option<Vec<Weight>> {
    blob.chunks(12)
        .map(|c| {
            Some(Weight {
                first_move: u32::from_le_bytes(c.get(..4)?.try_into().ok()?),
                paths: u64::from_le_bytes(c.get(4..12)?.try_into().ok()?),
            })
        })
        .collect()
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY, seq INTEGER NOT NULL, game TEXT NOT NULL, position TEXT NOT NULL,
    depth INTEGER NOT NULL, verify INTEGER NOT NULL, split_depth INTEGER NOT NULL,
    remaining_depth INTEGER NOT NULL, first_moves TEXT NOT NULL, settled BLOB NOT NULL,
    root_leaves BLOB, state TEXT NOT NULL, error TEXT, started_ms INTEGER, finished_ms INTEGER,
    released INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS units (
    job_id TEXT NOT NULL, unit_id INTEGER NOT NULL, position TEXT NOT NULL, weights BLOB NOT NULL,
    PRIMARY KEY (job_id, unit_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS disagreements (
    job_id TEXT NOT NULL, unit_id INTEGER NOT NULL, position TEXT NOT NULL,
    votes TEXT NOT NULL, decided BLOB);
CREATE TABLE IF NOT EXISTS results (
    job_id TEXT NOT NULL, unit_id INTEGER NOT NULL, leaves BLOB NOT NULL, worker TEXT NOT NULL,
    PRIMARY KEY (job_id, unit_id)) WITHOUT ROWID;
";

fn open_connection(path: &Path) -> Result<Connection, JournalError> {
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
            reason: check,
        });
    }
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
            Some(_) => {}
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

fn restore(conn: &Connection, path: &Path) -> Result<Vec<RestoredJob>, JournalError> {
    let bad = |reason: String| JournalError::Corrupt {
        path: path.to_owned(),
        reason,
    };
    let sql = |e: rusqlite::Error| JournalError::Corrupt {
        path: path.to_owned(),
        reason: e.to_string(),
    };
    let mut jobs = Vec::new();
    let mut stmt = conn
        .prepare(
            "SELECT id, game, position, depth, verify, split_depth, remaining_depth, first_moves, settled,
                    root_leaves, state, error, started_ms, finished_ms, released FROM jobs ORDER BY seq",
        )
        .map_err(sql)?;
    let mut rows = stmt.query([]).map_err(sql)?;
    while let Some(row) = rows.next().map_err(sql)? {
        let id: String = row.get(0).map_err(sql)?;
        let game: String = row.get(1).map_err(sql)?;
        let game: GameKind = game
            .parse()
            .map_err(|e: perft_core::UnknownGame| bad(e.to_string()))?;
        let first_moves: String = row.get(7).map_err(sql)?;
        let settled: Vec<u8> = row.get(8).map_err(sql)?;
        let root_leaves: Option<Vec<u8>> = row.get(9).map_err(sql)?;
        let state: String = row.get(10).map_err(sql)?;
        let settled = settled
            .chunks(32)
            .map(blob_leaves)
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| bad(format!("job {id}: bad settled counts")))?;
        let position: String = row.get(2).map_err(sql)?;
        jobs.push(RestoredJob {
            spec: JobSpec {
                game,
                position: position.clone(),
                depth: row.get(3).map_err(sql)?,
                verify: row.get::<_, i64>(4).map_err(sql)? != 0,
            },
            plan: PlannedJob {
                position,
                split_depth: row.get(5).map_err(sql)?,
                remaining_depth: row.get(6).map_err(sql)?,
                first_moves: if first_moves.is_empty() {
                    Vec::new()
                } else {
                    first_moves.split('\n').map(str::to_owned).collect()
                },
                settled,
                root_leaves: root_leaves.as_deref().and_then(blob_leaves),
                units: Vec::new(),
            },
            state: parse_state(&state).ok_or_else(|| bad(format!("job {id}: state '{state}'")))?,
            error: row.get(11).map_err(sql)?,
            started_ms: row.get::<_, Option<i64>>(12).map_err(sql)?.map(|v| v as u64),
            finished_ms: row.get::<_, Option<i64>>(13).map_err(sql)?.map(|v| v as u64),
            released: row.get::<_, i64>(14).map_err(sql)? as u64,
            results: Vec::new(),
            disagreements: Vec::new(),
            id,
        });
    }
    for job in &mut jobs {
        let mut units = conn
            .prepare("SELECT unit_id, position, weights FROM units WHERE job_id = ?1 ORDER BY unit_id")
            .map_err(sql)?;
        let mut rows = units.query([&job.id]).map_err(sql)?;
        while let Some(row) = rows.next().map_err(sql)? {
            let unit_id: i64 = row.get(0).map_err(sql)?;
            if unit_id as usize != job.plan.units.len() {
                return Err(bad(format!("job {}: unit {unit_id} out of sequence", job.id)));
            }
            let weights: Vec<u8> = row.get(2).map_err(sql)?;
            let weights =
                blob_weights(&weights).ok_or_else(|| bad(format!("job {}: bad weights", job.id)))?;
            job.plan.units.push((row.get(1).map_err(sql)?, weights));
        }
        let mut results = conn
            .prepare("SELECT unit_id, leaves FROM results WHERE job_id = ?1")
            .map_err(sql)?;
        let mut rows = results.query([&job.id]).map_err(sql)?;
        while let Some(row) = rows.next().map_err(sql)? {
            let unit_id: i64 = row.get(0).map_err(sql)?;
            let blob: Vec<u8> = row.get(1).map_err(sql)?;
            let leaves = blob_leaves(&blob).ok_or_else(|| bad(format!("job {}: bad result", job.id)))?;
            if unit_id as usize >= job.plan.units.len() {
                return Err(bad(format!("job {}: result for unknown unit {unit_id}", job.id)));
            }
            job.results.push((unit_id as u64, leaves));
        }
        let mut found = conn
            .prepare("SELECT unit_id, position, votes, decided FROM disagreements WHERE job_id = ?1 ORDER BY rowid")
            .map_err(sql)?;
        let mut rows = found.query([&job.id]).map_err(sql)?;
        while let Some(row) = rows.next().map_err(sql)? {
            let votes: String = row.get(2).map_err(sql)?;
            let decided: Option<Vec<u8>> = row.get(3).map_err(sql)?;
            job.disagreements.push(Disagreement {
                unit_id: row.get::<_, i64>(0).map_err(sql)? as u64,
                position: row.get(1).map_err(sql)?,
                votes: parse_votes(&votes).ok_or_else(|| bad(format!("job {}: bad disagreement", job.id)))?,
                decided: decided.as_deref().and_then(blob_leaves),
            });
        }
    }
    Ok(jobs)
}

fn apply(tx: &rusqlite::Transaction<'_>, op: &Op) -> rusqlite::Result<()> {
    match op {
        Op::Submit { seq, id, spec, plan } => {
            let settled: Vec<u8> = plan.settled.iter().flat_map(|&l| leaves_blob(l)).collect();
            tx.execute(
                "INSERT INTO jobs (id, seq, game, position, depth, verify, split_depth, remaining_depth,
                                   first_moves, settled, root_leaves, state)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, 'queued')",
                params![
                    id,
                    *seq as i64,
                    spec.game.name(),
                    spec.position,
                    spec.depth,
                    spec.verify,
                    plan.split_depth,
                    plan.remaining_depth,
                    plan.first_moves.join("\n"),
                    settled,
                    plan.root_leaves.map(leaves_blob),
                ],
            )?;
            let mut insert = tx.prepare_cached(
                "INSERT INTO units (job_id, unit_id, position, weights) VALUES (?1, ?2, ?3, ?4)",
            )?;
            for (unit_id, (position, weights)) in plan.units.iter().enumerate() {
                insert.execute(params![id, unit_id as i64, position, weights_blob(weights)])?;
            }
        }
        Op::Result {
            job_id,
            unit_id,
            leaves,
            worker,
        } => {
            tx.prepare_cached(
                "INSERT OR IGNORE INTO results (job_id, unit_id, leaves, worker) VALUES (?1, ?2, ?3, ?4)",
            )?
            .execute(params![job_id, *unit_id as i64, leaves_blob(*leaves), worker])?;
        }
        Op::Disagreement {
            job_id,
            disagreement: d,
        } => {
            tx.prepare_cached(
                "INSERT INTO disagreements (job_id, unit_id, position, votes, decided) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![job_id, d.unit_id as i64, d.position, votes_text(&d.votes), d.decided.map(leaves_blob)])?;
        }
        Op::JobState {
            job_id,
            state,
            error,
            started_ms,
            finished_ms,
            released,
        } => {
            tx.prepare_cached(
                "UPDATE jobs SET state = ?2, error = ?3, started_ms = ?4, finished_ms = ?5, released = ?6 WHERE id = ?1",
            )?
            .execute(params![
                job_id,
                state_name(*state),
                error,
                started_ms.map(|v| v as i64),
                finished_ms.map(|v| v as i64),
                *released as i64
            ])?;
        }
    }
    Ok(())
}

/// Most batches folded into one transaction.
const MAX_GROUP: usize = 4096;

fn writer(mut conn: Connection, batches: mpsc::Receiver<Batch>) {
    while let Ok(first) = batches.recv() {
        let mut group = vec![first];
        while group.len() < MAX_GROUP {
            match batches.try_recv() {
                Ok(batch) => group.push(batch),
                Err(_) => break,
            }
        }
        let outcome = (|| -> rusqlite::Result<()> {
            let tx = conn.transaction()?;
            for batch in &group {
                for op in &batch.ops {
                    apply(&tx, op)?;
                }
            }
            tx.commit()
        })()
        .map_err(|e| e.to_string());
        for batch in group {
            let _ = batch.done.send(outcome.clone());
        }
    }
}

impl Journal {
    /// Opens (or creates) `journal.sqlite` in `dir` and reads back every
    /// job. Refuses a newer or damaged journal.
    pub fn open(dir: &Path) -> Result<(Journal, Vec<RestoredJob>), JournalError> {
        std::fs::create_dir_all(dir).map_err(|e| JournalError::Open {
            path: dir.to_owned(),
            reason: e.to_string(),
        })?;
        let path = dir.join("journal.sqlite");
        let conn = open_connection(&path)?;
        let restored = restore(&conn, &path)?;
        let (sender, receiver) = mpsc::channel();
        std::thread::Builder::new()
            .name("perft-journal".to_owned())
            .spawn(move || writer(conn, receiver))
            .map_err(|e| JournalError::Open {
                path: path.clone(),
                reason: e.to_string(),
            })?;
        Ok((Journal { sender, path }, restored))
    }

    /// Hands `ops` to the journal thread now (so the order of calls is the
    /// order of commits); the returned commit resolves once they are
    /// durable.
    pub fn send(&self, ops: Vec<Op>) -> Commit {
        if ops.is_empty() {
            return Commit(None);
        }
        let (done, committed) = oneshot::channel();
        match self.sender.send(Batch { ops, done }) {
            Ok(()) => Commit(Some(committed)),
            Err(_) => {
                let (tx, rx) = oneshot::channel();
                let _ = tx.send(Err("the journal thread stopped".to_owned()));
                Commit(Some(rx))
            }
        }
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}
