//! `BackupJournal`: an admin's copy of the journal, written by the
//! coordinator into a directory of its own machine while it serves (see
//! `journal::backup`).

use std::sync::Arc;

use perft_proto as pb;
use tonic::Status;

use crate::Coordinator;
use crate::journal::BackupError;

impl Coordinator {
    /// Copies the journal into `dir` (a caller's text, checked there):
    /// everything acknowledged before the call is in the copy. One copy at
    /// a time; the copy goes on to its end if the caller leaves.
    pub(crate) async fn backup(&self, dir: String) -> Result<pb::BackupJournalResponse, Status> {
        let turn = Arc::clone(&self.backups).try_acquire_owned().map_err(|_| {
            Status::failed_precondition(
                "another copy of the journal is being written; try again once it ends",
            )
        })?;
        // Every change handed to the journal before this call is durable,
        // so in the snapshot the copy is taken from.
        self.read(|_| ()).await?;
        let journal = Arc::clone(&self.journal);
        let written = tokio::task::spawn_blocking(move || {
            let written = journal.backup(&dir);
            drop(turn);
            written
        })
        .await
        .map_err(|e| Status::internal(format!("the copy stopped: {e}")))?;
        match written {
            Ok(backup) => {
                tracing::info!(
                    dir = %backup.dir.display(),
                    sequence = backup.sequence,
                    bytes = backup.bytes,
                    ms = backup.took.as_millis() as u64,
                    "journal copied (perft backup)"
                );
                Ok(pb::BackupJournalResponse {
                    sequence: backup.sequence,
                    bytes: backup.bytes,
                    dir: backup.dir.to_string_lossy().into_owned(),
                    seconds: backup.took.as_secs_f64(),
                })
            }
            Err(e @ BackupError::Target { .. }) => Err(Status::invalid_argument(e.to_string())),
            Err(e) => {
                tracing::error!(error = %e, "journal copy failed (perft backup)");
                Err(Status::internal(e.to_string()))
            }
        }
    }
}
