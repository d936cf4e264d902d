//! What the journal keeps of leases so they outlive a restart safely: a
//! lease itself is never written (its tag proves it was issued), but every
//! reopening of a unit (a lapse, a hand-back, a recount) writes the unit's
//! floor, the first epoch still valid for it, and a recount because of a
//! participant's counts bars that participant from the unit for good.
//! Each row carries a checksum; a damaged floor ends every old lease of
//! its unit, a damaged bar is logged.

use std::path::Path;

use rusqlite::{Connection, Transaction, params};

use super::JournalError;
use super::codec::checksum;
use super::read::errors;
use crate::jobs::RestoredJob;
use perft_model::{Epoch, JobId, ParticipantId, UnitId};

pub(super) fn floor_checksum(job_id: &JobId, unit_id: UnitId, floor: Epoch) -> i64 {
    checksum(&[
        job_id.as_str().as_bytes(),
        b"floor",
        &unit_id.0.to_le_bytes(),
        &floor.0.to_le_bytes(),
    ])
}

pub(super) fn bar_checksum(job_id: &JobId, unit_id: UnitId, participant: &str) -> i64 {
    checksum(&[
        job_id.as_str().as_bytes(),
        b"bar",
        &unit_id.0.to_le_bytes(),
        participant.as_bytes(),
    ])
}

/// Raises the floors of `unit_ids` to `floor` (a floor never goes down).
pub(super) fn store_floors(
    tx: &Transaction<'_>,
    job_id: &JobId,
    unit_ids: &[UnitId],
    floor: Epoch,
) -> rusqlite::Result<()> {
    let mut stmt = tx.prepare_cached(
        "INSERT INTO unit_floors (job_id, unit_id, floor, checksum) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (job_id, unit_id) DO UPDATE SET floor = excluded.floor, checksum = excluded.checksum
         WHERE excluded.floor > floor",
    )?;
    for &unit_id in unit_ids {
        stmt.execute(params![
            job_id.as_str(),
            unit_id.0 as i64,
            floor.0 as i64,
            floor_checksum(job_id, unit_id, floor)
        ])?;
    }
    Ok(())
}

/// Bars `participant` from `unit_ids` of the job for good.
pub(super) fn store_bars(
    tx: &Transaction<'_>,
    job_id: &JobId,
    unit_ids: &[UnitId],
    participant: &ParticipantId,
) -> rusqlite::Result<()> {
    let mut stmt = tx.prepare_cached(
        "INSERT OR IGNORE INTO unit_bars (job_id, unit_id, participant, checksum) VALUES (?1, ?2, ?3, ?4)",
    )?;
    for &unit_id in unit_ids {
        stmt.execute(params![
            job_id.as_str(),
            unit_id.0 as i64,
            participant.as_str(),
            bar_checksum(job_id, unit_id, participant.as_str())
        ])?;
    }
    Ok(())
}

/// Reads an open job's floors and bars.
pub(super) fn restore(conn: &Connection, job: &mut RestoredJob, path: &Path) -> Result<(), JournalError> {
    let (_, sql) = errors(path);
    let mut stmt = conn
        .prepare_cached("SELECT unit_id, floor, checksum FROM unit_floors WHERE job_id = ?1 ORDER BY unit_id")
        .map_err(sql)?;
    let mut rows = stmt.query([job.id.as_str()]).map_err(sql)?;
    while let Some(row) = rows.next().map_err(sql)? {
        let unit_id = UnitId(row.get::<_, i64>(0).map_err(sql)? as u64);
        let floor = Epoch(row.get::<_, i64>(1).map_err(sql)? as u64);
        if row.get::<_, i64>(2).map_err(sql)? == floor_checksum(&job.id, unit_id, floor) {
            job.floors.push((unit_id, floor));
        } else {
            tracing::error!(job = %job.id, unit = unit_id.0, "journal: a lease floor failed its checksum; no lease from before the restart counts for the unit");
            job.floors.push((unit_id, Epoch(i64::MAX as u64)));
        }
    }
    let mut stmt = conn
        .prepare_cached(
            "SELECT unit_id, participant, checksum FROM unit_bars WHERE job_id = ?1 ORDER BY unit_id",
        )
        .map_err(sql)?;
    let mut rows = stmt.query([job.id.as_str()]).map_err(sql)?;
    while let Some(row) = rows.next().map_err(sql)? {
        let unit_id = UnitId(row.get::<_, i64>(0).map_err(sql)? as u64);
        let name: String = row.get(1).map_err(sql)?;
        let sum: i64 = row.get(2).map_err(sql)?;
        match ParticipantId::parse(&name) {
            Ok(participant) if sum == bar_checksum(&job.id, unit_id, &name) => {
                job.bars.push((unit_id, participant));
            }
            _ => {
                tracing::error!(job = %job.id, unit = unit_id.0, "journal: a participant's bar from a unit failed its checksum and is dropped");
            }
        }
    }
    Ok(())
}
