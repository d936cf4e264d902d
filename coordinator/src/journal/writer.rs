//! The journal's thread: it owns the connection, group-commits the writes
//! handed to it, answers reads in order after them, and gives free pages
//! back while idle.

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rusqlite::Connection;
use tokio::sync::watch;

use super::apply::apply;
use super::commit::Progress;
use super::compact::checkpoint;
use super::counts_root::{self, Rooter};
use super::{JournalError, WriteError, compact, mark, participants, restore, restored};
use crate::jobs::{Op, Restored, RestoredJob};
use perft_model::{JobId, ParticipantId, UnitId};

pub(super) enum Request {
    Write {
        seq: u64,
        ops: Vec<Op>,
    },
    /// Tries a write: Ok once the disk takes writes again.
    Probe(mpsc::Sender<Result<(), WriteError>>),
    /// Reads every job back, and takes writes again after a failure.
    Restore(mpsc::Sender<Result<Restored, JournalError>>),
    /// Reads one job back with all its units (to resume it).
    Load(JobId, mpsc::Sender<Result<RestoredJob, JournalError>>),
    /// The units a participant's counts decided (alone, or with others).
    DecidedBy(ParticipantId, bool, mpsc::Sender<DecidedUnits>),
    /// Checkpoints the write-ahead log into the database and cuts it to
    /// nothing, writes the mark, answers, and stops the thread.
    Close(mpsc::Sender<Result<(), WriteError>>),
}

/// Per job, the units a participant's counts decided.
pub(super) type DecidedUnits = Result<Vec<(JobId, Vec<UnitId>)>, JournalError>;

/// Most writes folded into one transaction.
const MAX_GROUP: usize = 4096;

/// The write-ahead log is checkpointed into the database (and cut to
/// nothing) at least this often while writes come, and this long after
/// the last one: so the database, not the log, holds nearly everything.
const CHECKPOINT_EVERY: Duration = Duration::from_secs(2);

/// The commit sequence and where its mark goes (see [`mark`]).
pub(super) struct Sequence {
    pub(super) committed: u64,
    pub(super) mark_path: PathBuf,
    /// Whether the last mark write failed (logged once per streak).
    pub(super) mark_failing: bool,
    /// The mark, held open once a commit wrote it (reopened after a failure).
    pub(super) mark_file: Option<mark::MarkFile>,
}

impl Sequence {
    /// Writes the mark after a durable commit. A failure is logged, not
    /// fatal: the mark then lags the journal, which it may.
    fn mark(&mut self) {
        let written = match &mut self.mark_file {
            Some(file) => file.set(self.committed),
            // Opened at the first commit; made afresh if it went missing.
            None => mark::MarkFile::open(&self.mark_path)
                .or_else(|_| {
                    mark::write(&self.mark_path, self.committed)?;
                    mark::MarkFile::open(&self.mark_path)
                })
                .and_then(|mut file| {
                    file.set(self.committed)?;
                    self.mark_file = Some(file);
                    Ok(())
                }),
        };
        match written {
            Ok(()) => self.mark_failing = false,
            Err(e) => {
                self.mark_file = None;
                if !self.mark_failing {
                    tracing::warn!(mark = %self.mark_path.display(), error = %e, "journal: cannot write the commit mark; it lags the journal until it can");
                }
                self.mark_failing = true;
            }
        }
    }
}

/// Test builds only (`fault-injection`): while the file named by
/// `PERFT_JOURNAL_FAULT_FILE` exists, every write fails as on a full disk.
pub(super) fn injected_fault() -> Option<String> {
    #[cfg(feature = "fault-injection")]
    if let Some(flag) = std::env::var_os("PERFT_JOURNAL_FAULT_FILE")
        && std::path::Path::new(&flag).exists()
    {
        return Some("database or disk is full (injected)".to_owned());
    }
    None
}

/// Commits `ops` with the next sequence number, then writes the mark:
/// once the caller hears of it, the mark covers the commit.
fn commit(conn: &mut Connection, sequence: &mut Sequence, ops: &[&[Op]]) -> Result<(), WriteError> {
    if let Some(fault) = injected_fault() {
        return Err(WriteError::Injected(fault));
    }
    let tx = conn.transaction()?;
    for batch in ops {
        for op in *batch {
            apply(&tx, op)?;
        }
    }
    mark::set_sequence(&tx, sequence.committed + 1)?;
    tx.commit()?;
    sequence.committed += 1;
    sequence.mark();
    Ok(())
}

pub(super) fn writer(
    mut conn: Connection,
    path: PathBuf,
    requests: mpsc::Receiver<Request>,
    progress: watch::Sender<Progress>,
    mut sequence: Sequence,
    rooter: Rooter,
) {
    let mut failed = false;
    let mut pending: Option<Request> = None;
    // Free pages to give back, a step at a time while no request waits.
    let mut compacting = compact::due(&conn);
    // Commits since the last checkpoint, and when that was.
    let mut unchecked = false;
    let mut checked_at = Instant::now();
    loop {
        let roots = rooter.ready();
        if !roots.is_empty() && !failed {
            match store_roots(&mut conn, &mut sequence, &roots) {
                Ok(()) => unchecked = true,
                Err(e) => {
                    tracing::warn!(error = %e, "journal: cannot store finished jobs' Merkle roots; the next start computes them");
                }
            }
        }
        if unchecked && checked_at.elapsed() >= CHECKPOINT_EVERY {
            if let Err(e) = checkpoint(&conn, false) {
                tracing::debug!(error = %e, "journal: checkpoint");
            }
            unchecked = false;
            checked_at = Instant::now();
        }
        let first = match pending.take() {
            Some(request) => request,
            None if compacting && !failed && injected_fault().is_none() => match requests.try_recv() {
                Ok(request) => request,
                Err(mpsc::TryRecvError::Empty) => {
                    compacting = compact::step(&conn);
                    continue;
                }
                Err(mpsc::TryRecvError::Disconnected) => {
                    let _ = close(&mut conn, &mut sequence, rooter);
                    return;
                }
            },
            None if unchecked => {
                let wait = CHECKPOINT_EVERY.saturating_sub(checked_at.elapsed());
                match requests.recv_timeout(wait) {
                    Ok(request) => request,
                    Err(mpsc::RecvTimeoutError::Timeout) => continue,
                    Err(mpsc::RecvTimeoutError::Disconnected) => {
                        let _ = close(&mut conn, &mut sequence, rooter);
                        return;
                    }
                }
            }
            None => match requests.recv() {
                Ok(request) => request,
                Err(_) => {
                    let _ = close(&mut conn, &mut sequence, rooter);
                    return;
                }
            },
        };
        match first {
            Request::Write { seq, ops } => {
                // At most one heavy write a transaction, last: writes that
                // arrive while it commits go into the next one.
                let mut heavy = ops.iter().any(is_heavy);
                let mut group = vec![ops];
                let mut last = seq;
                while group.len() < MAX_GROUP && !heavy {
                    match requests.try_recv() {
                        Ok(Request::Write { seq, ops }) => {
                            heavy = ops.iter().any(is_heavy);
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
                match commit(&mut conn, &mut sequence, &batches) {
                    Ok(()) => {
                        unchecked = true;
                        progress.send_modify(|p| p.committed = last);
                        compacting |= group.iter().flatten().any(frees_space);
                        for job_id in group.iter().flatten().filter_map(finished_done) {
                            rooter.finished(job_id);
                        }
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
                    Some(fault) => Err(WriteError::Injected(fault)),
                    None => probe(&mut conn, &mut sequence),
                };
                if outcome.is_ok() {
                    unchecked = true;
                }
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
                let _ = answer.send(participants::decided_by(&conn, &path, &participant, alone));
            }
            Request::Close(answer) => {
                let _ = answer.send(close(&mut conn, &mut sequence, rooter));
                return;
            }
        }
    }
}

/// Stores finished jobs' Merkle roots in a commit of their own.
fn store_roots(
    conn: &mut Connection,
    sequence: &mut Sequence,
    roots: &[(JobId, counts_root::Hash)],
) -> Result<(), WriteError> {
    if let Some(fault) = injected_fault() {
        return Err(WriteError::Injected(fault));
    }
    let tx = conn.transaction()?;
    for (job_id, root) in roots {
        counts_root::store(&tx, job_id, root)?;
    }
    mark::set_sequence(&tx, sequence.committed + 1)?;
    tx.commit()?;
    sequence.committed += 1;
    sequence.mark();
    Ok(())
}

/// The job a write finished as done, with its summary: its root is wanted.
fn finished_done(op: &Op) -> Option<&JobId> {
    match op {
        Op::JobState {
            job_id,
            state: perft_model::JobState::Done,
            summary: Some(_),
            ..
        } => Some(job_id),
        _ => None,
    }
}

/// A write of its own, to learn whether the disk takes writes again.
fn probe(conn: &mut Connection, sequence: &mut Sequence) -> Result<(), WriteError> {
    let tx = conn.transaction()?;
    tx.execute(
        "INSERT OR REPLACE INTO meta (key, value) VALUES ('probe', ?1)",
        [crate::clock::unix_ms() as i64],
    )?;
    mark::set_sequence(&tx, sequence.committed + 1)?;
    tx.commit()?;
    sequence.committed += 1;
    sequence.mark();
    Ok(())
}

/// At a clean stop: the finished jobs' roots stored, everything into the
/// database, the log cut to nothing, and the mark at the last commit.
fn close(conn: &mut Connection, sequence: &mut Sequence, rooter: Rooter) -> Result<(), WriteError> {
    let roots = rooter.finish();
    if !roots.is_empty()
        && let Err(e) = store_roots(conn, sequence, &roots)
    {
        tracing::warn!(error = %e, "journal: cannot store finished jobs' Merkle roots; the next start computes them");
    }
    sequence.mark();
    let outcome = checkpoint(conn, true);
    match &outcome {
        Ok(()) => tracing::info!(
            sequence = sequence.committed,
            "journal closed: the write-ahead log is checkpointed and empty"
        ),
        Err(e) => tracing::warn!(error = %e, "journal: cannot checkpoint the write-ahead log at close"),
    }
    outcome
}

/// Writes big enough to get a transaction of their own, so that the
/// small ones behind them (reports) are not held up long.
fn is_heavy(op: &Op) -> bool {
    matches!(op, Op::Units { .. } | Op::DropPlan { .. } | Op::DeleteJob { .. })
}

/// Writes that free pages for [`compact`] to give back.
fn frees_space(op: &Op) -> bool {
    matches!(op, Op::DropPlan { .. } | Op::DeleteJob { .. })
}
