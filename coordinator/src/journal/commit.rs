//! How far the journal got, and the handle a caller awaits until its
//! writes are durable.

use tokio::sync::watch;

use super::JournalError;

/// How far the journal got: every write up to `committed` is durable but
/// those in `lost`; with `failed`, the writes after `committed` are lost.
#[derive(Debug, Clone, Default)]
pub(super) struct Progress {
    pub(super) committed: u64,
    pub(super) failed: bool,
    /// Writes refused by failures since start (the state was rebuilt
    /// without them).
    pub(super) lost: Vec<std::ops::RangeInclusive<u64>>,
}

/// Writes handed to the journal, durable once [`Commit::wait`] returns Ok.
#[derive(Clone, Debug)]
#[must_use = "a write is only durable once its commit is awaited"]
pub struct Commit {
    pub(super) seq: u64,
    /// A read's barrier: the state read is durable once nothing up to `seq`
    /// is pending, even if some of it was lost and rebuilt without.
    pub(super) barrier: bool,
    pub(super) progress: watch::Receiver<Progress>,
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
