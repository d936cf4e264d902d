//! Reading a done job back unit by unit, for its certificate and its
//! per-unit counts: the plan's units in plan order, each with its decided
//! count and the participants whose counts decided it. Read on a
//! connection of its own, in one read transaction (a consistent snapshot
//! while the journal's thread goes on writing), so a big job's read
//! delays no report.

use std::path::Path;

use perft_model::{Count, DeciderName, JobId, UnitId};
use rusqlite::Connection;

use super::JournalError;
use super::codec::blob_count;
use super::counts_root::Verdict;
use super::read::{errors, reader};
use super::restore::{count_checksum, fits_job, job_row, restore_units};
use crate::jobs::JobSpec;
use crate::planning::PlannedJob;
use perft_model::JobState;

/// A done job as the journal holds it.
#[derive(Debug)]
pub struct FinishedJob {
    pub id: JobId,
    pub spec: JobSpec,
    /// When it finished, in milliseconds since the Unix epoch, as the
    /// journal's job row keeps it (stamped when the job was done; `None`
    /// only in a row that never had one).
    pub finished_ms: Option<u64>,
    /// The plan, with its units.
    pub plan: PlannedJob,
    /// Per unit, in plan order: its count and who decided it.
    pub counts: Vec<DecidedCount>,
}

/// A unit's accepted count and the participants whose equal counts
/// decided it (one without verification).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecidedCount {
    pub count: Count,
    /// As the journal names them, for the certificate to copy: a
    /// participant, or a machine in a journal from before participants
    /// (so not parsed as a `ParticipantId`, which would refuse those).
    pub deciders: Vec<DeciderName>,
}

/// Why a done job cannot be read back.
#[derive(Debug, thiserror::Error)]
pub enum FinishedError {
    /// The id as it was asked for: it may be no well-formed id at all.
    #[error("no job '{}'", perft_core::echoed(.0))]
    NotFound(String),
    #[error("job {id} is {}, not done: its certificate and unit counts exist once it is done", .state.name())]
    NotDone { id: JobId, state: JobState },
    #[error("job {id}: the journal holds it damaged ({reason})")]
    Damaged { id: JobId, reason: String },
    #[error(transparent)]
    Journal(#[from] JournalError),
}

/// Runs `read` inside one read transaction on `conn`.
fn snapshot<R>(
    conn: &Connection,
    path: &Path,
    read: impl FnOnce() -> Result<R, FinishedError>,
) -> Result<R, FinishedError> {
    let (_, sql) = errors(path);
    conn.execute_batch("BEGIN").map_err(sql)?;
    let result = read();
    // Only reads happened: ending the transaction cannot lose anything.
    let _ = conn.execute_batch("COMMIT");
    result
}

/// The job's row, refused unless it is done and undamaged.
fn done_row(
    conn: &Connection,
    path: &Path,
    job_id: &JobId,
) -> Result<crate::jobs::RestoredJob, FinishedError> {
    let (_, sql) = errors(path);
    let mut stmt = conn
        .prepare(&format!(
            "SELECT {} FROM jobs WHERE id = ?1 AND state != 'planning'",
            super::restore::JOB_COLUMNS
        ))
        .map_err(sql)?;
    let mut rows = stmt.query([job_id.as_str()]).map_err(sql)?;
    let Some(row) = rows.next().map_err(sql)? else {
        return Err(FinishedError::NotFound(job_id.to_string()));
    };
    let job = job_row(row, path)?;
    if job.state != JobState::Done {
        return Err(FinishedError::NotDone {
            id: job.id,
            state: job.state,
        });
    }
    if !job.damage.is_empty() {
        return Err(FinishedError::Damaged {
            id: job.id,
            reason: job.damage.join(", "),
        });
    }
    Ok(job)
}

/// Reads the decided counts of units `start..start + limit` (clipped to
/// the job's units) of a done job: in unit order, every one present and
/// checked against its checksum.
fn read_counts(
    conn: &Connection,
    path: &Path,
    job_id: &JobId,
    spec: &JobSpec,
    units_total: u64,
    start: u64,
    limit: u64,
) -> Result<Vec<DecidedCount>, FinishedError> {
    let (_, sql) = errors(path);
    // A page past the end is empty.
    let start = start.min(units_total);
    let end = start.saturating_add(limit).min(units_total);
    let damaged = |reason: String| FinishedError::Damaged {
        id: job_id.clone(),
        reason,
    };
    let mut stmt = conn
        .prepare(
            "SELECT unit_id, leaves, machines, checksum FROM results
             WHERE job_id = ?1 AND unit_id >= ?2 AND unit_id < ?3 ORDER BY unit_id",
        )
        .map_err(sql)?;
    let mut rows = stmt
        .query(rusqlite::params![job_id.as_str(), start as i64, end as i64])
        .map_err(sql)?;
    let fits = fits_job(spec);
    let mut counts = Vec::with_capacity(end.saturating_sub(start) as usize);
    while let Some(row) = rows.next().map_err(sql)? {
        let unit_id = row.get::<_, i64>(0).map_err(sql)? as u64;
        let blob: Vec<u8> = row.get(1).map_err(sql)?;
        let machines: String = row.get(2).map_err(sql)?;
        let sum: i64 = row.get(3).map_err(sql)?;
        let expected = start + counts.len() as u64;
        if unit_id != expected {
            return Err(damaged(format!("no count for unit {expected}")));
        }
        let count = blob_count(&blob)
            .filter(|_| count_checksum(job_id, UnitId(unit_id), &machines, &blob) == sum)
            .ok_or_else(|| damaged(format!("the count of unit {unit_id} fails its checksum")))?;
        if !fits(&count) {
            return Err(damaged(format!(
                "the count of unit {unit_id} has kinds its job cannot have"
            )));
        }
        if machines.split('\n').any(str::is_empty) {
            return Err(damaged(format!("unit {unit_id} has no decider")));
        }
        let deciders = machines
            .split('\n')
            .map(DeciderName::parse)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| damaged(format!("unit {unit_id} names no decider: {e}")))?;
        counts.push(DecidedCount { count, deciders });
    }
    if (counts.len() as u64) < end.saturating_sub(start) {
        return Err(damaged(format!(
            "no count for unit {}",
            start + counts.len() as u64
        )));
    }
    Ok(counts)
}

/// A done job with every unit and count, from the journal at `path`.
pub(super) fn read_finished(path: &Path, job_id: &JobId) -> Result<FinishedJob, FinishedError> {
    let conn = reader(path)?;
    snapshot(&conn, path, || {
        let mut job = done_row(&conn, path, job_id)?;
        let (bad, sql) = errors(path);
        restore_units(&conn, &mut job, &bad, &sql)?;
        if !job.damage.is_empty() {
            return Err(FinishedError::Damaged {
                id: job.id,
                reason: job.damage.join(", "),
            });
        }
        let verdict = super::counts_root::verdict(&conn, path, &job.id, &job.spec, job.units_total)?;
        let reason = match &verdict {
            Verdict::Sound | Verdict::Rooted(_) => None,
            Verdict::Damaged(units) => Some(format!(
                "the counts of units {} are missing or fail their checksums; a coordinator serving it counts them again",
                UnitId::listed(units)
            )),
            Verdict::Altered => Some(
                "its counts do not match the Merkle root stored when it finished; a coordinator serving it counts \
                 every unit again"
                    .to_owned(),
            ),
        };
        if let Some(reason) = reason {
            return Err(FinishedError::Damaged { id: job.id, reason });
        }
        let counts = read_counts(
            &conn,
            path,
            &job.id,
            &job.spec,
            job.units_total,
            0,
            job.units_total,
        )?;
        Ok(FinishedJob {
            id: job.id,
            spec: job.spec,
            finished_ms: job.finished_ms,
            plan: job.plan,
            counts,
        })
    })
}

/// The decided counts of units `start..start + limit` of a done job, and
/// its number of units.
pub(super) fn read_count_page(
    path: &Path,
    job_id: &JobId,
    start: u64,
    limit: u64,
) -> Result<(u64, Vec<DecidedCount>), FinishedError> {
    let conn = reader(path)?;
    snapshot(&conn, path, || {
        let job = done_row(&conn, path, job_id)?;
        let counts = read_counts(&conn, path, &job.id, &job.spec, job.units_total, start, limit)?;
        Ok((job.units_total, counts))
    })
}
