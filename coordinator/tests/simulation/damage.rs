//! The journal damaged on disk between a stop and a start, as a failing
//! disk or a careless operator would: a flipped byte in a decided count,
//! a deleted count, a count's deciders changed, a done job's Merkle root
//! flipped. The invariant: every acknowledged count is served as it was,
//! or the damaged units are counted again (a done job with damaged counts
//! comes back running, and never serves or certifies what it cannot
//! prove). Damage to the write-ahead log needs a real crash, which leaves
//! the log behind: `systest/tests/system/journal_loss.rs` does that with
//! real processes (a start is refused or lost nothing).

use perft_model::JobId;
use perft_model::JobState;
use rand::Rng;
use rusqlite::{Connection, params};

use super::model::Broken;
use super::trace::note;
use super::world::World;

/// What is done to the journal.
#[derive(Clone, Copy, Debug)]
enum Damage {
    FlippedCount,
    DeletedCount,
    ChangedDeciders,
    FlippedRoot,
}

impl World {
    /// A crash, damage to the journal's rows while it is stopped (no
    /// `Journal` holds the data dir then), and a start: the restored table must hold every acknowledged count but
    /// the damaged ones, whose units are open again.
    pub(super) fn crash_with_damage(&mut self) -> Result<(), Broken> {
        self.stop();
        // Decided units the journal holds, by job.
        let decided: Vec<(usize, u64)> = self
            .model
            .acked
            .jobs
            .iter()
            .enumerate()
            // A cancelled job's counts went with its plan; a failed one is
            // served from its summary and its counts are read (and a
            // damaged one left out) only when it is resumed.
            .filter(|(_, job)| !matches!(job.state, JobState::Cancelled | JobState::Failed))
            .flat_map(|(j, job)| job.decided.keys().map(move |&u| (j, u)))
            .collect();
        let done: Vec<usize> = (0..self.model.acked.jobs.len())
            .filter(|&j| {
                self.model.acked.jobs[j].state == JobState::Done
                    && self.model.acked.jobs[j].decided.len() as u64 == self.model.plans[j].units()
            })
            .collect();
        let damage = match self.rng.random_range(0..4) {
            0 => Damage::FlippedCount,
            1 => Damage::DeletedCount,
            2 => Damage::ChangedDeciders,
            _ => Damage::FlippedRoot,
        };
        let db = Connection::open(self.dir.path().join("journal.sqlite"))
            .map_err(|e| format!("opening the stopped journal to damage it: {e}"))?;
        match damage {
            Damage::FlippedRoot => {
                if done.is_empty() {
                    note("  damage: no done job's root to flip".to_owned());
                } else {
                    let j = done[self.rng.random_range(0..done.len())];
                    flip_root(&db, &self.model.job_ids[j]).map_err(|e| format!("flipping a root: {e}"))?;
                    note(format!(
                        "  damage: {}'s Merkle root flipped",
                        self.model.job_ids[j]
                    ));
                }
            }
            _ if decided.is_empty() => note("  damage: no decided count to damage".to_owned()),
            _ => {
                let (j, unit) = decided[self.rng.random_range(0..decided.len())];
                let id = self.model.job_ids[j].clone();
                damage_count(&db, &id, unit, damage).map_err(|e| format!("damaging {id}/u{unit}: {e}"))?;
                note(format!("  damage: {damage:?} on {id}/u{unit}"));
                self.model.forget(j, unit);
            }
        }
        drop(db);
        self.stats.damaged += 1;
        self.start()
    }
}

fn flip_root(db: &Connection, job: &JobId) -> rusqlite::Result<()> {
    let mut root: Vec<u8> = db.query_row(
        "SELECT counts_root FROM jobs WHERE id = ?1",
        [job.as_str()],
        |row| row.get(0),
    )?;
    if let Some(byte) = root.first_mut() {
        *byte ^= 0x20;
    }
    db.execute(
        "UPDATE jobs SET counts_root = ?1 WHERE id = ?2",
        params![root, job.as_str()],
    )?;
    Ok(())
}

fn damage_count(db: &Connection, job: &JobId, unit: u64, damage: Damage) -> rusqlite::Result<()> {
    let unit = unit as i64;
    match damage {
        Damage::FlippedCount => {
            let mut blob: Vec<u8> = db.query_row(
                "SELECT leaves FROM results WHERE job_id = ?1 AND unit_id = ?2",
                params![job.as_str(), unit],
                |row| row.get(0),
            )?;
            let at = blob.len() / 2;
            blob[at] ^= 0x01;
            db.execute(
                "UPDATE results SET leaves = ?1 WHERE job_id = ?2 AND unit_id = ?3",
                params![blob, job.as_str(), unit],
            )?;
        }
        Damage::DeletedCount => {
            db.execute(
                "DELETE FROM results WHERE job_id = ?1 AND unit_id = ?2",
                params![job.as_str(), unit],
            )?;
        }
        Damage::ChangedDeciders | Damage::FlippedRoot => {
            db.execute(
                "UPDATE results SET machines = machines || '\nmallory' WHERE job_id = ?1 AND unit_id = ?2",
                params![job.as_str(), unit],
            )?;
        }
    }
    Ok(())
}
