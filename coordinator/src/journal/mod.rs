//! The coordinator's journal: an embedded SQLite database in the data dir
//! (WAL, `synchronous=FULL`) holding jobs, their plans (units in chunks of
//! packed columns), every accepted count and every pending vote, so a
//! restarted coordinator resumes where it stopped. A finished job keeps a
//! summary, so a restart loads the units of open jobs only.
//!
//! One thread owns the connection and group-commits: writes that arrive
//! while a commit runs go into the next transaction, and each caller is
//! answered only once the transaction holding its writes is durable. After
//! a failed write the thread refuses every later write until the
//! coordinator has rebuilt its state from the journal ([`Journal::restore`]),
//! so the journal never holds a change whose cause it lost.

mod codec;
mod compact;
mod participants;
mod restore;
mod schema;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, mpsc};

use perft_core::Leaves;
use rusqlite::{Connection, params};
use tokio::sync::watch;

use crate::jobs::{Credit, Disagreement, JobSpec, JobState, Summary};
use crate::participants::StoredParticipant;
use crate::planning::PlannedJob;
use codec::{leaves_blob, leaves_list_blob, summary_blob};
pub use schema::{DirLock, SCHEMA_VERSION};

/// Why the journal cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    #[error("cannot use the journal {path}: {reason}")]
    Open { path: PathBuf, reason: String },
    #[error("the data dir {dir} is in use by another coordinator ({holder}); refusing to start")]
    Locked { dir: PathBuf, holder: String },
    #[error(
        "the journal {path} was written by a newer Deep Perft (schema {found}, this build reads {SCHEMA_VERSION}); refusing to start"
    )]
    Newer { path: PathBuf, found: i64 },
    #[error(
        "the journal {path} was written by an older Deep Perft (schema {found}, this build reads {SCHEMA_VERSION}); finish its jobs with that release or use a new data dir"
    )]
    Older { path: PathBuf, found: i64 },
    #[error("the journal {path} is damaged ({reason}); refusing to start rather than lose results")]
    Corrupt { path: PathBuf, reason: String },
    #[error("journal write failed: {0}")]
    Write(String),
}

/// One change to record.
#[derive(Debug, Clone)]
pub enum Op {
    /// A new job's row, its plan without the units (written next, in
    /// chunks); it stays "planning" until [`Op::Planned`].
    Submit {
        id: String,
        spec: JobSpec,
        /// The plan without its units ([`PlannedJob::header`]).
        plan: PlannedJob,
        units_total: u64,
    },
    /// Units `first_unit..` of a job's plan as a [`UnitColumns`] blob: one
    /// chunk, one transaction.
    Units {
        job_id: String,
        chunk: u64,
        first_unit: u64,
        blob: Vec<u8>,
    },
    /// Every chunk of the job's plan is written: the job is queued.
    Planned { job_id: String },
    /// A unit's decided count (its pending votes are dropped), with the
    /// names of the machines whose counts agreed, one a line.
    Result {
        job_id: String,
        unit_id: u64,
        leaves: Leaves,
        machines: String,
    },
    /// A count that does not decide its unit yet (verification).
    Vote {
        job_id: String,
        unit_id: u64,
        voter: String,
        label: String,
        leaves: Leaves,
    },
    /// A unit's votes are dropped (a resumed job counts it afresh).
    ClearVotes { job_id: String, unit_id: u64 },
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
        /// With a final state: what the job keeps once its units go.
        summary: Option<Summary>,
    },
    /// A participant's row: new, or revoked.
    Participant(StoredParticipant),
    /// A participant's credit as it now stands.
    Credit { participant: String, total: Credit },
    /// Every undecided vote of a participant is dropped (it was revoked).
    DropVotesOf { voter: String },
    /// Units of a job are counted again: their counts go, and a done job
    /// runs again.
    Reopen { job_id: String, unit_ids: Vec<u64> },
    /// A cancelled job's plan, counts and votes go (its row, summary and
    /// disagreements stay); their pages are given back to the file system.
    DropPlan { job_id: String },
    /// A job goes entirely.
    DeleteJob { job_id: String },
}

/// Units journaled per transaction when a plan is written: small enough
/// that reports queued behind a chunk wait milliseconds, not seconds.
pub const CHUNK_UNITS: usize = 65_536;

/// The writes that journal a new job's plan, each to be sent (and awaited)
/// on its own: the job's row, its units a chunk at a time (a chunk's copy
/// is made only when its turn comes), then the mark that the plan is
/// complete. Until that mark no client knows the job and a restart drops
/// it.
pub fn plan_ops<'p>(
    id: &'p str,
    spec: &'p JobSpec,
    planned: &'p PlannedJob,
) -> impl Iterator<Item = Op> + 'p {
    let submit = Op::Submit {
        id: id.to_owned(),
        spec: spec.clone(),
        plan: planned.header(),
        units_total: planned.units.len() as u64,
    };
    let chunks = (0..planned.units.len())
        .step_by(CHUNK_UNITS)
        .enumerate()
        .map(move |(chunk, first)| {
            let end = (first + CHUNK_UNITS).min(planned.units.len());
            Op::Units {
                job_id: id.to_owned(),
                chunk: chunk as u64,
                first_unit: first as u64,
                blob: planned.units.blob_of(first..end),
            }
        });
    std::iter::once(submit)
        .chain(chunks)
        .chain(std::iter::once(Op::Planned {
            job_id: id.to_owned(),
        }))
}

impl Op {
    /// Writes big enough to get a transaction of their own, so that the
    /// small ones behind them (reports) are not held up long.
    fn is_heavy(&self) -> bool {
        matches!(
            self,
            Op::Units { .. } | Op::DropPlan { .. } | Op::DeleteJob { .. }
        )
    }

    /// Writes that free pages for [`compact`] to give back.
    fn frees_space(&self) -> bool {
        matches!(self, Op::DropPlan { .. } | Op::DeleteJob { .. })
    }
}

/// A vote read back from the journal.
#[derive(Debug, Clone)]
pub struct RestoredVote {
    pub unit_id: u64,
    pub voter: String,
    pub label: String,
    pub leaves: Leaves,
}

/// A job read back from the journal.
#[derive(Debug, Clone)]
pub struct RestoredJob {
    pub id: String,
    pub spec: JobSpec,
    /// The plan; its units only for an open job (or one without summary).
    pub plan: PlannedJob,
    pub units_total: u64,
    /// A finished job's summary; with one, nothing per unit is read.
    pub summary: Option<Summary>,
    pub state: JobState,
    pub error: Option<String>,
    pub started_ms: Option<u64>,
    pub finished_ms: Option<u64>,
    pub released: u64,
    pub results: Vec<(u64, Leaves)>,
    pub votes: Vec<RestoredVote>,
    pub disagreements: Vec<Disagreement>,
    /// Parts of the plan whose checksum failed: the job cannot be trusted.
    pub damage: Vec<String>,
    /// Units whose stored count failed its checksum: counted again.
    pub damaged_counts: Vec<u64>,
}

/// How far the journal got: every write up to `committed` is durable but
/// those in `lost`; with `failed`, the writes after `committed` are lost.
#[derive(Debug, Clone, Default)]
struct Progress {
    committed: u64,
    failed: bool,
    /// Writes refused by failures since start (the state was rebuilt
    /// without them).
    lost: Vec<std::ops::RangeInclusive<u64>>,
}

/// Writes handed to the journal, durable once [`Commit::wait`] returns Ok.
#[derive(Clone, Debug)]
#[must_use = "a write is only durable once its commit is awaited"]
pub struct Commit {
    seq: u64,
    /// A read's barrier: the state read is durable once nothing up to `seq`
    /// is pending, even if some of it was lost and rebuilt without.
    barrier: bool,
    progress: watch::Receiver<Progress>,
}

impl Commit {
    /// Waits until the writes are committed; an error means they are lost.
    pub async fn wait(mut self) -> Result<(), JournalError> {
        let lost = || JournalError::Write("the journal could not make a change durable".to_owned());
        loop {
            {
                let progress = self.progress.borrow_and_update();
                if !self.barrier && progress.lost.iter().any(|range| range.contains(&self.seq)) {
                    return Err(lost());
                }
                if progress.committed >= self.seq {
                    return Ok(());
                }
                if progress.failed {
                    return Err(lost());
                }
            }
            if self.progress.changed().await.is_err() {
                return Err(JournalError::Write("the journal thread stopped".to_owned()));
            }
        }
    }
}

enum Request {
    Write {
        seq: u64,
        ops: Vec<Op>,
    },
    /// Tries a write: Ok once the disk takes writes again.
    Probe(mpsc::Sender<Result<(), String>>),
    /// Reads every job back, and takes writes again after a failure.
    Restore(mpsc::Sender<Result<Restored, JournalError>>),
    /// Reads one job back with all its units (to resume it).
    Load(String, mpsc::Sender<Result<RestoredJob, JournalError>>),
    /// The units a participant's counts decided (alone, or with others).
    DecidedBy(String, bool, mpsc::Sender<Result<DecidedUnits, JournalError>>),
}

/// Handle to the journal thread.
#[derive(Debug)]
pub struct Journal {
    sender: mpsc::Sender<Request>,
    progress: watch::Sender<Progress>,
    /// Sequence number of the last write handed over.
    sent: AtomicU64,
    /// Held while a write takes its number and enters the channel, so the
    /// writer sees writes in the order of their numbers: a commit is
    /// durable once the committed number reaches its own.
    numbering: Mutex<()>,
    path: PathBuf,
    _lock: DirLock,
}

fn apply(tx: &rusqlite::Transaction<'_>, op: &Op) -> rusqlite::Result<()> {
    match op {
        Op::Submit {
            id,
            spec,
            plan,
            units_total,
        } => {
            // Jobs are ordered as their submits commit.
            tx.execute(
                "INSERT INTO jobs (id, seq, game, position, depth, verify, split_depth, remaining_depth,
                                   first_moves, settled, root_leaves, checksum, state, units_total, owner)
                 VALUES (?1, (SELECT coalesce(max(seq), 0) + 1 FROM jobs), ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10,
                         ?11, 'planning', ?12, ?13)",
                params![
                    id,
                    spec.game.name(),
                    spec.position,
                    spec.depth,
                    spec.verify,
                    plan.split_depth,
                    plan.remaining_depth,
                    plan.first_moves.join("\n"),
                    leaves_list_blob(&plan.settled),
                    plan.root_leaves.map(leaves_blob),
                    restore::job_checksum(id, spec, plan),
                    *units_total as i64,
                    spec.owner,
                ],
            )?;
        }
        Op::Units {
            job_id,
            chunk,
            first_unit,
            blob,
        } => {
            let sum = restore::chunk_checksum(job_id, *chunk, *first_unit, blob);
            tx.prepare_cached(
                "INSERT INTO unit_chunks (job_id, chunk, first_unit, units, checksum) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![job_id, *chunk as i64, *first_unit as i64, blob, sum])?;
        }
        Op::Planned { job_id } => {
            tx.prepare_cached("UPDATE jobs SET state = 'queued' WHERE id = ?1 AND state = 'planning'")?
                .execute(params![job_id])?;
        }
        Op::Result {
            job_id,
            unit_id,
            leaves,
            machines,
        } => {
            let blob = leaves_blob(*leaves);
            let sum = restore::count_checksum(job_id, *unit_id, machines, &blob);
            tx.prepare_cached(
                "INSERT OR IGNORE INTO results (job_id, unit_id, leaves, machines, checksum) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![job_id, *unit_id as i64, blob, machines, sum])?;
            tx.prepare_cached("DELETE FROM votes WHERE job_id = ?1 AND unit_id = ?2")?
                .execute(params![job_id, *unit_id as i64])?;
        }
        Op::Vote {
            job_id,
            unit_id,
            voter,
            label,
            leaves,
        } => {
            let blob = leaves_blob(*leaves);
            let sum = restore::count_checksum(job_id, *unit_id, voter, &blob);
            tx.prepare_cached(
                "INSERT INTO votes (job_id, unit_id, voter, label, leaves, checksum) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![job_id, *unit_id as i64, voter, label, blob, sum])?;
        }
        Op::ClearVotes { job_id, unit_id } => {
            tx.prepare_cached("DELETE FROM votes WHERE job_id = ?1 AND unit_id = ?2")?
                .execute(params![job_id, *unit_id as i64])?;
        }
        Op::Disagreement {
            job_id,
            disagreement: d,
        } => {
            let votes = restore::votes_text(&d.votes);
            let decided = d.decided.map(leaves_blob);
            let sum = restore::disagreement_checksum(
                job_id,
                d.unit_id,
                &votes,
                decided.as_deref().unwrap_or_default(),
            );
            tx.prepare_cached(
                "INSERT INTO disagreements (job_id, unit_id, position, votes, decided, checksum)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![job_id, d.unit_id as i64, d.position, votes, decided, sum])?;
        }
        Op::JobState {
            job_id,
            state,
            error,
            started_ms,
            finished_ms,
            released,
            summary,
        } => {
            let summary = summary.as_ref().map(summary_blob);
            let summary_sum = summary.as_deref().map(|b| restore::summary_checksum(job_id, b));
            tx.prepare_cached(
                "UPDATE jobs SET state = ?2, error = ?3, started_ms = ?4, finished_ms = ?5, released = ?6,
                                 summary = ?7, summary_checksum = ?8 WHERE id = ?1",
            )?
            .execute(params![
                job_id,
                state.name(),
                error,
                started_ms.map(|v| v as i64),
                finished_ms.map(|v| v as i64),
                *released as i64,
                summary,
                summary_sum
            ])?;
        }
        Op::Participant(p) => participants::store(tx, p)?,
        Op::Credit { participant, total } => participants::store_credit(tx, participant, total)?,
        Op::DropVotesOf { voter } => {
            tx.prepare_cached("DELETE FROM votes WHERE voter = ?1")?
                .execute([voter])?;
        }
        Op::Reopen { job_id, unit_ids } => participants::reopen(tx, job_id, unit_ids)?,
        Op::DropPlan { job_id } => drop_plan(tx, job_id)?,
        Op::DeleteJob { job_id } => {
            drop_plan(tx, job_id)?;
            tx.execute("DELETE FROM disagreements WHERE job_id = ?1", params![job_id])?;
            tx.execute("DELETE FROM jobs WHERE id = ?1", params![job_id])?;
        }
    }
    Ok(())
}

/// Deletes a job's units, counts and votes.
fn drop_plan(tx: &rusqlite::Transaction<'_>, job_id: &str) -> rusqlite::Result<()> {
    for table in ["unit_chunks", "results", "votes"] {
        tx.execute(&format!("DELETE FROM {table} WHERE job_id = ?1"), params![job_id])?;
    }
    Ok(())
}

/// Most writes folded into one transaction.
const MAX_GROUP: usize = 4096;

/// Test builds only (`fault-injection`): while the file named by
/// `PERFT_JOURNAL_FAULT_FILE` exists, every write fails as on a full disk.
fn injected_fault() -> Option<String> {
    #[cfg(feature = "fault-injection")]
    if let Some(flag) = std::env::var_os("PERFT_JOURNAL_FAULT_FILE")
        && std::path::Path::new(&flag).exists()
    {
        return Some("database or disk is full (injected)".to_owned());
    }
    None
}

fn commit(conn: &mut Connection, ops: &[&[Op]]) -> Result<(), String> {
    if let Some(fault) = injected_fault() {
        return Err(fault);
    }
    let tx = conn.transaction().map_err(|e| e.to_string())?;
    for batch in ops {
        for op in *batch {
            apply(&tx, op).map_err(|e| e.to_string())?;
        }
    }
    tx.commit().map_err(|e| e.to_string())
}

fn writer(
    mut conn: Connection,
    path: PathBuf,
    requests: mpsc::Receiver<Request>,
    progress: watch::Sender<Progress>,
) {
    let mut failed = false;
    let mut pending: Option<Request> = None;
    // Free pages to give back, a step at a time while no request waits.
    let mut compacting = compact::due(&conn);
    loop {
        let first = match pending.take() {
            Some(request) => request,
            None if compacting && !failed && injected_fault().is_none() => match requests.try_recv() {
                Ok(request) => request,
                Err(mpsc::TryRecvError::Empty) => {
                    compacting = compact::step(&conn);
                    continue;
                }
                Err(mpsc::TryRecvError::Disconnected) => return,
            },
            None => match requests.recv() {
                Ok(request) => request,
                Err(_) => return,
            },
        };
        match first {
            Request::Write { seq, ops } => {
                // At most one heavy write a transaction, last: writes that
                // arrive while it commits go into the next one.
                let mut heavy = ops.iter().any(Op::is_heavy);
                let mut group = vec![ops];
                let mut last = seq;
                while group.len() < MAX_GROUP && !heavy {
                    match requests.try_recv() {
                        Ok(Request::Write { seq, ops }) => {
                            heavy = ops.iter().any(Op::is_heavy);
                            group.push(ops);
                            last = seq;
                        }
                        Ok(other) => {
                            pending = Some(other);
                            break;
                        }
                        Err(_) => break,
                    }
                }
                if failed {
                    continue;
                }
                let batches: Vec<&[Op]> = group.iter().map(Vec::as_slice).collect();
                match commit(&mut conn, &batches) {
                    Ok(()) => {
                        progress.send_modify(|p| p.committed = last);
                        compacting |= group.iter().flatten().any(Op::frees_space);
                    }
                    Err(e) => {
                        tracing::error!(error = %e, "journal write failed; refusing writes until the state is rebuilt");
                        failed = true;
                        progress.send_modify(|p| p.failed = true);
                    }
                }
            }
            Request::Probe(answer) => {
                let outcome = match injected_fault() {
                    Some(fault) => Err(fault),
                    None => conn
                        .execute(
                            "INSERT OR REPLACE INTO meta (key, value) VALUES ('probe', ?1)",
                            [crate::jobs::unix_ms() as i64],
                        )
                        .map(drop)
                        .map_err(|e| e.to_string()),
                };
                let _ = answer.send(outcome);
            }
            Request::Restore(answer) => {
                let restored = restored(&conn, &path);
                if restored.is_ok() {
                    failed = false;
                }
                let _ = answer.send(restored);
            }
            Request::Load(job_id, answer) => {
                let _ = answer.send(restore::load_job(&conn, &path, &job_id));
            }
            Request::DecidedBy(participant, alone, answer) => {
                let found = participants::decided_by(&conn, &participant, alone)
                    .map_err(|e| JournalError::Write(e.to_string()));
                let _ = answer.send(found);
            }
        }
    }
}

/// Units per job, in submission order: what a participant decided.
pub type DecidedUnits = Vec<(String, Vec<u64>)>;

/// What the journal holds of the jobs and of who counted them.
#[derive(Debug, Default)]
pub struct Restored {
    pub jobs: Vec<RestoredJob>,
    /// Every participant's credit.
    pub credit: Vec<(String, Credit)>,
}

fn restored(conn: &Connection, path: &Path) -> Result<Restored, JournalError> {
    Ok(Restored {
        jobs: restore::restore(conn, path)?,
        credit: participants::load_credit(conn, path)?,
    })
}

/// An opened journal and everything it holds.
#[derive(Debug)]
pub struct OpenedJournal {
    pub journal: Journal,
    pub restored: Restored,
    pub participants: Vec<StoredParticipant>,
    /// The journal's key (lease tags, and credentials' hashes).
    pub key: [u8; 32],
}

impl Journal {
    /// Locks `dir` for this process, opens (or creates) `journal.sqlite` in
    /// it and reads back every job. Refuses a locked dir, and a newer,
    /// older, damaged or self-contradicting journal.
    pub fn open(dir: &Path) -> Result<OpenedJournal, JournalError> {
        std::fs::create_dir_all(dir).map_err(|e| JournalError::Open {
            path: dir.to_owned(),
            reason: e.to_string(),
        })?;
        let lock = schema::lock_dir(dir)?;
        let path = dir.join("journal.sqlite");
        let conn = schema::open_connection(&path)?;
        let key = schema::lease_key(&conn, &path)?;
        schema::drop_unfinished_plans(&conn, &path)?;
        schema::drop_cancelled_plans(&conn, &path)?;
        compact::enable(&conn, &path);
        let restored = restored(&conn, &path)?;
        let participants = participants::load(&conn, &path)?;
        let (sender, receiver) = mpsc::channel();
        let progress = watch::Sender::new(Progress::default());
        let thread_progress = progress.clone();
        let thread_path = path.clone();
        std::thread::Builder::new()
            .name("perft-journal".to_owned())
            .spawn(move || writer(conn, thread_path, receiver, thread_progress))
            .map_err(|e| JournalError::Open {
                path: path.clone(),
                reason: e.to_string(),
            })?;
        let journal = Journal {
            sender,
            progress,
            sent: AtomicU64::new(0),
            numbering: Mutex::new(()),
            path,
            _lock: lock,
        };
        Ok(OpenedJournal {
            journal,
            restored,
            participants,
            key,
        })
    }

    /// Hands `ops` to the journal thread now (from the one owner of the
    /// changes, so the order of calls is the order of commits); the
    /// returned commit resolves once they are durable.
    pub fn send(&self, ops: Vec<Op>) -> Commit {
        if ops.is_empty() {
            return self.barrier();
        }
        let numbering = self
            .numbering
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let seq = self.sent.fetch_add(1, Ordering::AcqRel) + 1;
        let sent = self.sender.send(Request::Write { seq, ops });
        drop(numbering);
        if sent.is_err() {
            self.progress.send_modify(|p| p.failed = true);
        }
        Commit {
            seq,
            barrier: false,
            progress: self.progress.subscribe(),
        }
    }

    /// Resolves once everything handed over so far is durable: a read
    /// answers only with state the journal holds.
    pub fn barrier(&self) -> Commit {
        Commit {
            seq: self.sent.load(Ordering::Acquire),
            barrier: true,
            progress: self.progress.subscribe(),
        }
    }

    /// Ok when a write goes through again (the disk has room).
    pub fn probe(&self) -> Result<(), String> {
        let (answer, reply) = mpsc::channel();
        self.sender
            .send(Request::Probe(answer))
            .map_err(|_| "the journal thread stopped".to_owned())?;
        reply
            .recv()
            .map_err(|_| "the journal thread stopped".to_owned())?
    }

    /// Reads every job back as the journal holds it, and takes writes again:
    /// call it from the one owner of the changes (a task alone on the
    /// scheduler), and replace the state with what it returns.
    pub fn restore(&self) -> Result<Restored, JournalError> {
        let (answer, reply) = mpsc::channel();
        let stopped = || JournalError::Write("the journal thread stopped".to_owned());
        self.sender
            .send(Request::Restore(answer))
            .map_err(|_| stopped())?;
        let restored = reply.recv().map_err(|_| stopped())??;
        let sent = self.sent.load(Ordering::Acquire);
        self.progress.send_modify(|p| {
            if p.committed < sent {
                p.lost.push(p.committed + 1..=sent);
            }
            p.committed = sent;
            p.failed = false;
        });
        Ok(restored)
    }

    /// Reads one job back as the journal holds it, units and all (a
    /// finished job's are not kept in memory). Blocking: call it off the
    /// async threads, and not on the scheduler's loop.
    pub fn load_job(&self, job_id: &str) -> Result<RestoredJob, JournalError> {
        let (answer, reply) = mpsc::channel();
        let stopped = || JournalError::Write("the journal thread stopped".to_owned());
        self.sender
            .send(Request::Load(job_id.to_owned(), answer))
            .map_err(|_| stopped())?;
        reply.recv().map_err(|_| stopped())?
    }

    /// The units whose counts `participant` decided (with `alone`, by
    /// itself), per job. Blocking, like [`Journal::load_job`]; it answers
    /// after every write handed over before it.
    pub fn decided_by(
        &self,
        participant: &str,
        alone: bool,
    ) -> Result<Vec<(String, Vec<u64>)>, JournalError> {
        let (answer, reply) = mpsc::channel();
        let stopped = || JournalError::Write("the journal thread stopped".to_owned());
        self.sender
            .send(Request::DecidedBy(participant.to_owned(), alone, answer))
            .map_err(|_| stopped())?;
        reply.recv().map_err(|_| stopped())?
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}
