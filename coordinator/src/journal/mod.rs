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

mod apply;
mod backup;
mod budgets;
mod check;
mod codec;
mod commit;
mod compact;
mod counts_root;
mod finished;
mod leases;
mod mark;
mod participants;
mod read;
mod restore;
mod schema;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, mpsc};

use rusqlite::Connection;
use tokio::sync::watch;

use crate::jobs::{JobSpec, Op, Restored, RestoredJob};
use crate::participants::StoredParticipant;
use crate::planning::PlannedJob;
pub use backup::{Backup, BackupError};
pub use check::{CheckError, Checked, Finding, Level, check};
pub use commit::Commit;
use commit::Progress;
pub use finished::{DecidedCount, FinishedError, FinishedJob};
pub use mark::MarkError;
use perft_model::{JobId, ParticipantId, UnitId};
pub use schema::{DirLock, SCHEMA_VERSION};
use writer::Request;

/// Why a write to the journal (or a checkpoint) did not go through.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error(transparent)]
    Sql(#[from] rusqlite::Error),
    /// Test builds only: the injected fault of a full disk.
    #[error("{0}")]
    Injected(String),
    #[error("readers held the log; checkpointed in part")]
    ReadersHeld,
    #[error("the journal thread stopped")]
    Stopped,
}

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
    #[error(
        "the journal {path} lost committed work: its commit sequence is {journal} but its mark says {mark} (the write-ahead log was damaged, cut or deleted); {fix}"
    )]
    RolledBack {
        path: PathBuf,
        journal: u64,
        mark: u64,
        fix: &'static str,
    },
    #[error(
        "the journal's mark {path} is missing though the journal is at commit {journal}, so lost work cannot be ruled out; {fix}"
    )]
    MarkMissing {
        path: PathBuf,
        journal: u64,
        fix: &'static str,
    },
    #[error("the journal's mark {path} is unusable: {source}; {fix}")]
    Mark {
        path: PathBuf,
        fix: &'static str,
        #[source]
        source: mark::MarkError,
    },
    #[error("journal write failed: {0}")]
    Write(String),
}

impl JournalError {
    /// Whether the journal (or its mark) is damaged or lost work, as
    /// opposed to being in use, of another release, or out of reach.
    pub fn is_damage(&self) -> bool {
        matches!(
            self,
            JournalError::Corrupt { .. }
                | JournalError::RolledBack { .. }
                | JournalError::MarkMissing { .. }
                | JournalError::Mark { .. }
        )
    }
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
    id: &'p JobId,
    spec: &'p JobSpec,
    planned: &'p PlannedJob,
    submitted_ms: u64,
) -> impl Iterator<Item = Op> + 'p {
    let submit = Op::Submit {
        id: id.clone(),
        spec: spec.clone(),
        plan: planned.header(),
        units_total: planned.units.len() as u64,
        submitted_ms,
    };
    let chunks = (0..planned.units.len())
        .step_by(CHUNK_UNITS)
        .enumerate()
        .map(move |(chunk, first)| {
            let end = (first + CHUNK_UNITS).min(planned.units.len());
            Op::Units {
                job_id: id.clone(),
                chunk: chunk as u64,
                first_unit: UnitId(first as u64),
                blob: planned.units.blob_of(first..end),
            }
        });
    std::iter::once(submit)
        .chain(chunks)
        .chain(std::iter::once(Op::Planned { job_id: id.clone() }))
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
    /// The journal thread: joined when the handle goes, so the data dir's
    /// lock is released only once nothing writes there any more (a
    /// journal reopened in the same process, as after a failed write or in
    /// the simulation, never races the old thread's last commit or mark).
    thread: Option<std::thread::JoinHandle<()>>,
    _lock: DirLock,
}

impl Drop for Journal {
    fn drop(&mut self) {
        // A closed channel ends the thread once its last batch is written.
        self.sender = mpsc::channel().0;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Every job and credit the journal holds: the jobs' rows, the done ones
/// checked against their Merkle roots (a damaged one read in full with
/// those units open), the open ones read in full.
fn restored(conn: &Connection, path: &Path) -> Result<Restored, JournalError> {
    let mut jobs = restore::job_rows(conn, path)?;
    counts_root::check_done_jobs(conn, path, &mut jobs)?;
    restore::restore_open_jobs(conn, path, &mut jobs)?;
    Ok(Restored {
        jobs,
        credit: participants::load_credit(conn, path)?,
    })
}

/// An opened journal and everything it holds.
#[derive(Debug)]
pub struct OpenedJournal {
    pub journal: Journal,
    pub restored: Restored,
    pub participants: Vec<StoredParticipant>,
    /// An admin's budget overrides, per participant.
    pub budgets: Vec<(perft_model::ParticipantId, crate::admission::Overrides)>,
    /// The journal's key (lease tags, and credentials' hashes).
    pub key: [u8; 32],
}

impl Journal {
    /// Locks `dir` for this process, opens (or creates) `journal.sqlite` in
    /// it and reads back every job. Refuses a locked dir, and a newer,
    /// older, damaged or self-contradicting journal.
    pub fn open(dir: &Path) -> Result<OpenedJournal, JournalError> {
        Journal::open_accepting_loss(dir, false)
    }

    /// [`Journal::open`]; with `accept_loss`, a journal that lost committed
    /// work (behind its mark), or whose mark is missing or unreadable, is
    /// opened anyway: what was lost is logged at error level, and the mark
    /// is rewritten.
    pub fn open_accepting_loss(dir: &Path, accept_loss: bool) -> Result<OpenedJournal, JournalError> {
        std::fs::create_dir_all(dir).map_err(|e| JournalError::Open {
            path: dir.to_owned(),
            reason: e.to_string(),
        })?;
        let lock = schema::lock_dir(dir)?;
        let path = dir.join("journal.sqlite");
        let conn = schema::open_connection(&path)?;
        let mark_path = dir.join(mark::MARK_FILE);
        let sequence = mark::check(&conn, &path, &mark_path, accept_loss)?;
        let key = schema::lease_key(&conn, &path)?;
        schema::drop_unfinished_plans(&conn, &path)?;
        schema::drop_cancelled_plans(&conn, &path)?;
        compact::enable(&conn, &path);
        // A commit of its own at open: it covers the writes above, and
        // starts (or, after an accepted loss, rewrites) the mark.
        let sequence = sequence + 1;
        let open_err = |reason: String| JournalError::Open {
            path: path.clone(),
            reason,
        };
        mark::set_sequence(&conn, sequence).map_err(|e| open_err(e.to_string()))?;
        mark::write(&mark_path, sequence).map_err(|e| {
            open_err(format!(
                "cannot write the commit mark {}: {e}",
                mark_path.display()
            ))
        })?;
        let sequence = writer::Sequence {
            committed: sequence,
            mark_path,
            mark_failing: false,
            mark_file: None,
        };
        let restored = restored(&conn, &path)?;
        let participants = participants::load(&conn, &path)?;
        let budgets = budgets::load(&conn, &path)?;
        let (sender, receiver) = mpsc::channel();
        let progress = watch::Sender::new(Progress::default());
        let thread_progress = progress.clone();
        let thread_path = path.clone();
        let no_thread = |e: std::io::Error| JournalError::Open {
            path: path.clone(),
            reason: e.to_string(),
        };
        let rooter = counts_root::Rooter::spawn(path.clone()).map_err(no_thread)?;
        let thread = std::thread::Builder::new()
            .name("perft-journal".to_owned())
            .spawn(move || writer::writer(conn, thread_path, receiver, thread_progress, sequence, rooter))
            .map_err(no_thread)?;
        let journal = Journal {
            sender,
            progress,
            sent: AtomicU64::new(0),
            numbering: Mutex::new(()),
            path,
            thread: Some(thread),
            _lock: lock,
        };
        Ok(OpenedJournal {
            journal,
            restored,
            participants,
            budgets,
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

    /// Stops the journal at a clean shutdown: the write-ahead log is
    /// checkpointed into the database and cut to nothing, the mark written,
    /// and the thread ends (later writes fail). Blocking.
    pub fn close(&self) -> Result<(), WriteError> {
        let (answer, reply) = mpsc::channel();
        self.sender
            .send(Request::Close(answer))
            .map_err(|_| WriteError::Stopped)?;
        reply.recv().map_err(|_| WriteError::Stopped)?
    }

    /// Ok when a write goes through again (the disk has room).
    pub fn probe(&self) -> Result<(), WriteError> {
        let (answer, reply) = mpsc::channel();
        self.sender
            .send(Request::Probe(answer))
            .map_err(|_| WriteError::Stopped)?;
        reply.recv().map_err(|_| WriteError::Stopped)?
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
    pub fn load_job(&self, job_id: &JobId) -> Result<RestoredJob, JournalError> {
        let (answer, reply) = mpsc::channel();
        let stopped = || JournalError::Write("the journal thread stopped".to_owned());
        self.sender
            .send(Request::Load(job_id.clone(), answer))
            .map_err(|_| stopped())?;
        reply.recv().map_err(|_| stopped())?
    }

    /// The units whose counts `participant` decided (with `alone`, by
    /// itself), per job. Blocking, like [`Journal::load_job`]; it answers
    /// after every write handed over before it.
    pub fn decided_by(
        &self,
        participant: &ParticipantId,
        alone: bool,
    ) -> Result<Vec<(JobId, Vec<UnitId>)>, JournalError> {
        let (answer, reply) = mpsc::channel();
        let stopped = || JournalError::Write("the journal thread stopped".to_owned());
        self.sender
            .send(Request::DecidedBy(participant.clone(), alone, answer))
            .map_err(|_| stopped())?;
        reply.recv().map_err(|_| stopped())?
    }

    /// A done job with every unit in plan order, each with its count and
    /// deciders (for its certificate). Read on a connection of its own
    /// while the journal goes on writing. Blocking: call it off the async
    /// threads.
    pub fn read_finished(&self, job_id: &JobId) -> Result<FinishedJob, FinishedError> {
        finished::read_finished(&self.path, job_id)
    }

    /// The counts of units `start..start + limit` of a done job, and its
    /// number of units. Blocking, like [`Journal::read_finished`].
    pub fn read_count_page(
        &self,
        job_id: &JobId,
        start: u64,
        limit: u64,
    ) -> Result<(u64, Vec<DecidedCount>), FinishedError> {
        finished::read_count_page(&self.path, job_id, start, limit)
    }

    /// Writes a consistent copy of the journal, with a commit mark of its
    /// own, into the directory `dir` of this machine (a caller's text,
    /// checked: an absolute path, new or empty, not the data dir nor inside
    /// it), while the journal goes on committing. Blocking: call it off the
    /// async threads.
    pub fn backup(&self, dir: &str) -> Result<Backup, BackupError> {
        let data_dir = match self.path.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        };
        let target = backup::target(data_dir, dir)?;
        backup::copy(&self.path, &target)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

#[cfg(test)]
mod tests;
