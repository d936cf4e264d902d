//! The journal's thread: it owns the connection, group-commits the writes
//! handed to it, answers reads in order after them, and gives free pages
//! back while idle.

use std::path::PathBuf;
use std::sync::mpsc;

use rusqlite::Connection;
use tokio::sync::watch;

use super::apply::apply;
use super::commit::Progress;
use super::{JournalError, compact, participants, restore, restored};
use crate::ids::{JobId, ParticipantId, UnitId};
use crate::jobs::{Op, Restored, RestoredJob};

pub(super) enum Request {
    Write {
        seq: u64,
        ops: Vec<Op>,
    },
    /// Tries a write: Ok once the disk takes writes again.
    Probe(mpsc::Sender<Result<(), String>>),
    /// Reads every job back, and takes writes again after a failure.
    Restore(mpsc::Sender<Result<Restored, JournalError>>),
    /// Reads one job back with all its units (to resume it).
    Load(JobId, mpsc::Sender<Result<RestoredJob, JournalError>>),
    /// The units a participant's counts decided (alone, or with others).
    DecidedBy(ParticipantId, bool, mpsc::Sender<DecidedUnits>),
}

/// Per job, the units a participant's counts decided.
pub(super) type DecidedUnits = Result<Vec<(JobId, Vec<UnitId>)>, JournalError>;

/// Most writes folded into one transaction.
const MAX_GROUP: usize = 4096;

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

pub(super) fn writer(
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
                match commit(&mut conn, &batches) {
                    Ok(()) => {
                        progress.send_modify(|p| p.committed = last);
                        compacting |= group.iter().flatten().any(frees_space);
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
                            [crate::clock::unix_ms() as i64],
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
                let _ = answer.send(participants::decided_by(&conn, &path, &participant, alone));
            }
        }
    }
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
