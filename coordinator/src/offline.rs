//! Work on a stopped coordinator's data dir: the one door through which a
//! command line reaches a journal no coordinator is serving. Adding and
//! listing participants, a done job's certificate and a journal check each
//! open the journal for the call (holding its lock, so no coordinator
//! starts meanwhile) and answer in the vocabulary's forms (a listing is
//! `perft_model::Participant`s, as the client reads a running
//! coordinator's); nothing of the journal's internals crosses it.

use std::path::Path;

use perft_model::{JobId, Participant, Role};

use crate::certify::{CertifyError, certificate_file};
use crate::jobs::Op;
use crate::journal::{CheckError, Checked, FinishedError, Journal, JournalError};
use crate::participants::{ParticipantError, Participants, Secret, StoredParticipant};

pub use crate::journal::{Finding, Level};

/// Why offline work on a data dir failed.
#[derive(Debug, thiserror::Error)]
pub enum OfflineError {
    #[error(transparent)]
    Journal(#[from] JournalError),
    #[error(transparent)]
    Participant(#[from] ParticipantError),
    #[error(transparent)]
    Certify(#[from] CertifyError),
    #[error(transparent)]
    Check(#[from] CheckError),
}

impl OfflineError {
    /// The caller's to fix (a data dir in use or of another release, an
    /// unknown job, a job not done, a bad name): a command line exits with
    /// its usage code. A damaged or unreadable journal behind a
    /// certificate is not.
    pub fn is_request(&self) -> bool {
        match self {
            OfflineError::Certify(e) => matches!(
                e,
                CertifyError::UnitList { .. }
                    | CertifyError::Finished(
                        FinishedError::NotFound(_)
                            | FinishedError::NotDone { .. }
                            | FinishedError::Journal(
                                JournalError::Locked { .. }
                                    | JournalError::Newer { .. }
                                    | JournalError::Older { .. },
                            ),
                    )
            ),
            OfflineError::Journal(_) | OfflineError::Participant(_) | OfflineError::Check(_) => true,
        }
    }
}

/// Adds participant `name` with `role` to the journal in `data_dir`; its
/// record and its secret (shown once).
pub fn add_participant(
    data_dir: &Path,
    name: &str,
    role: Role,
) -> Result<(StoredParticipant, Secret), OfflineError> {
    let opened = Journal::open(data_dir)?;
    let registry = Participants::new(opened.participants, &opened.key, None);
    let (stored, secret) = registry.mint(name, role)?;
    // Offline: no coordinator runs on this data dir, so no scheduler owns
    // the journal and this is its one writer.
    let commit = opened.journal.send(vec![Op::Participant(stored.clone())]);
    wait_blocking(commit)?;
    Ok((stored, secret))
}

/// Every participant of the journal in `data_dir`, as `ListParticipants`
/// shows them, less what only a running coordinator knows (machines,
/// quarantines, budgets).
pub fn participants(data_dir: &Path) -> Result<Vec<Participant>, OfflineError> {
    let opened = Journal::open(data_dir)?;
    let credit: std::collections::HashMap<_, _> = opened.restored.credit.into_iter().collect();
    Ok(opened
        .participants
        .into_iter()
        .map(|p| {
            let c = credit.get(&p.id).copied().unwrap_or_default();
            Participant {
                role: p.role,
                revoked: p.revoked,
                quarantined: false,
                suspended: false,
                created_ms: p.created_ms,
                units: c.units,
                leaves: c.leaves,
                cpu_seconds: c.cpu_ms as f64 / 1000.0,
                lost_votes: c.lost_votes,
                lost_votes_forgiven: c.lost_votes_forgiven,
                lapses: c.lapses,
                strikes: c.strikes,
                machines: 0,
                threads: 0,
                // Offline, the defaults of the next `perft serve` are unknown.
                budget: Vec::new(),
                name: p.id,
            }
        })
        .collect())
}

/// A done job in a stopped coordinator's data dir.
#[derive(Debug, Clone, Copy)]
pub struct DoneJob<'a> {
    pub data_dir: &'a Path,
    pub id: &'a JobId,
}

impl DoneJob<'_> {
    /// The job's certificate file, written by `program` (`perft 0.1.0`).
    /// Blocking: reads every unit and compresses them.
    pub fn certificate(&self, program: &str) -> Result<Vec<u8>, OfflineError> {
        let opened = Journal::open(self.data_dir)?;
        Ok(certificate_file(&opened.journal, self.id, program)?)
    }
}

/// Checks the data dir (or a copy of one) `dir` row by row. Refuses a
/// directory that is not one, or one a running coordinator holds; damage
/// is in the answer.
pub fn check_journal(dir: &Path) -> Result<Checked, OfflineError> {
    Ok(crate::journal::check(dir)?)
}

fn wait_blocking(commit: crate::journal::Commit) -> Result<(), JournalError> {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .map_err(|e| JournalError::Write(e.to_string()))?
        .block_on(commit.wait())
}
