//! Participants and their credit in the journal: a participant's row (its
//! secret only as a keyed hash, under a checksum) and the running totals
//! of what it counted.

use std::path::Path;

use perft_core::Leaves;
use rusqlite::{Connection, Transaction, params};

use super::JournalError;
use super::codec::{blob_count, checksum, count_blob};
use crate::jobs::Credit;
use crate::participants::StoredParticipant;
use perft_model::Count;
use perft_model::Role;
use perft_model::{JobId, ParticipantId, UnitId};

pub(super) fn participant_checksum(p: &StoredParticipant) -> i64 {
    checksum(&[
        p.id.as_str().as_bytes(),
        p.role.name().as_bytes(),
        &p.secret_hash,
        &[u8::from(p.revoked)],
        &p.created_ms.to_le_bytes(),
    ])
}

/// Writes a participant's row (new, or revoked).
pub(super) fn store(tx: &Transaction<'_>, p: &StoredParticipant) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "INSERT OR REPLACE INTO participants (id, role, secret_hash, revoked, created_ms, checksum)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![
        p.id.as_str(),
        p.role.name(),
        p.secret_hash.as_slice(),
        p.revoked,
        p.created_ms as i64,
        participant_checksum(p)
    ])?;
    Ok(())
}

/// Writes a participant's credit as it now stands.
pub(super) fn store_credit(
    tx: &Transaction<'_>,
    participant: &ParticipantId,
    credit: &Credit,
) -> rusqlite::Result<()> {
    tx.prepare_cached(
        "INSERT OR REPLACE INTO credit (participant, units, leaves, cpu_ms, lost_votes, lost_votes_forgiven,
                                        lapses, strikes, last_strike_ms, lapse_debt)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
    )?
    .execute(params![
        participant.as_str(),
        credit.units as i64,
        count_blob(&Count::plain(Leaves::full(credit.leaves))),
        credit.cpu_ms as i64,
        credit.lost_votes as i64,
        credit.lost_votes_forgiven as i64,
        credit.lapses as i64,
        credit.strikes as i64,
        credit.last_strike_ms as i64,
        credit.lapse_debt as i64,
    ])?;
    Ok(())
}

/// Every participant; a row whose checksum fails refuses the journal (a
/// damaged credential or role must never be guessed at).
pub(super) fn load(conn: &Connection, path: &Path) -> Result<Vec<StoredParticipant>, JournalError> {
    let corrupt = |reason: String| JournalError::Corrupt {
        path: path.to_owned(),
        reason,
    };
    let sql = |e: rusqlite::Error| corrupt(e.to_string());
    let mut stmt = conn
        .prepare("SELECT id, role, secret_hash, revoked, created_ms, checksum FROM participants ORDER BY id")
        .map_err(sql)?;
    let mut rows = stmt.query([]).map_err(sql)?;
    let mut all = Vec::new();
    while let Some(row) = rows.next().map_err(sql)? {
        let id: String = row.get(0).map_err(sql)?;
        let id = ParticipantId::parse(&id).map_err(|e| corrupt(e.to_string()))?;
        let role: String = row.get(1).map_err(sql)?;
        let role = Role::parse(&role).map_err(|e| corrupt(e.to_string()))?;
        let hash: Vec<u8> = row.get(2).map_err(sql)?;
        let p = StoredParticipant {
            secret_hash: hash
                .try_into()
                .map_err(|_| corrupt(format!("participant {id}: a secret hash is not 32 bytes")))?,
            revoked: row.get::<_, i64>(3).map_err(sql)? != 0,
            created_ms: row.get::<_, i64>(4).map_err(sql)? as u64,
            id,
            role,
        };
        if participant_checksum(&p) != row.get::<_, i64>(5).map_err(sql)? {
            return Err(corrupt(format!("participant {} failed its checksum", p.id)));
        }
        all.push(p);
    }
    Ok(all)
}

/// Every participant's credit; a row that names no participant refuses
/// the journal.
pub(super) fn load_credit(
    conn: &Connection,
    path: &Path,
) -> Result<Vec<(ParticipantId, Credit)>, JournalError> {
    let corrupt = |reason: String| JournalError::Corrupt {
        path: path.to_owned(),
        reason,
    };
    let sql = |e: rusqlite::Error| corrupt(e.to_string());
    let mut stmt = conn
        .prepare(
            "SELECT participant, units, leaves, cpu_ms, lost_votes, lost_votes_forgiven, lapses, strikes,
                    last_strike_ms, lapse_debt FROM credit",
        )
        .map_err(sql)?;
    let rows = stmt
        .query_map([], |r| {
            let leaves: Vec<u8> = r.get(2)?;
            Ok((
                r.get::<_, String>(0)?,
                Credit {
                    units: r.get::<_, i64>(1)? as u64,
                    leaves: blob_count(&leaves).map_or(0, |c| c.leaves.leaves),
                    cpu_ms: r.get::<_, i64>(3)? as u64,
                    lost_votes: r.get::<_, i64>(4)? as u64,
                    lost_votes_forgiven: r.get::<_, i64>(5)? as u64,
                    lapses: r.get::<_, i64>(6)? as u64,
                    strikes: r.get::<_, i64>(7)? as u64,
                    last_strike_ms: r.get::<_, i64>(8)? as u64,
                    lapse_debt: r.get::<_, i64>(9)? as u64,
                },
            ))
        })
        .map_err(sql)?;
    rows.map(|row| {
        let (name, credit) = row.map_err(sql)?;
        let participant = ParticipantId::parse(&name).map_err(|e| corrupt(format!("credit: {e}")))?;
        Ok((participant, credit))
    })
    .collect()
}

/// The units each job's counts from `participant` decided, per job in
/// submission order; with `alone`, only those it decided by itself.
pub(super) fn decided_by(
    conn: &Connection,
    path: &Path,
    participant: &ParticipantId,
    alone: bool,
) -> Result<Vec<(JobId, Vec<UnitId>)>, JournalError> {
    let sql = |e: rusqlite::Error| JournalError::Write(e.to_string());
    let mut stmt = conn
        .prepare(
            "SELECT r.job_id, r.unit_id, r.machines, r.leaves, r.checksum FROM results r JOIN jobs j ON j.id = r.job_id
         WHERE j.state IN ('queued', 'running', 'done', 'failed') ORDER BY j.seq, r.unit_id",
        )
        .map_err(sql)?;
    let mut rows = stmt.query([]).map_err(sql)?;
    let mut out: Vec<(JobId, Vec<UnitId>)> = Vec::new();
    while let Some(row) = rows.next().map_err(sql)? {
        let machines: String = row.get(2).map_err(sql)?;
        let deciders: Vec<&str> = machines.split('\n').collect();
        let hit = if alone {
            deciders == [participant.as_str()]
        } else {
            deciders.contains(&participant.as_str())
        };
        if !hit {
            continue;
        }
        let job: String = row.get(0).map_err(sql)?;
        let unit = UnitId(row.get::<_, i64>(1).map_err(sql)? as u64);
        // A damaged row decides nothing: the start that found it opened
        // its unit again, and its deciders may be the damage.
        let leaves: Vec<u8> = row.get(3).map_err(sql)?;
        let sound = JobId::parse(&job).is_ok_and(|id| {
            super::restore::count_checksum(&id, unit, &machines, &leaves)
                == row.get::<_, i64>(4).unwrap_or_default()
        });
        if !sound {
            continue;
        }
        match out.last_mut() {
            Some((last, units)) if last.as_str() == job => units.push(unit),
            _ => {
                let job = JobId::parse(&job).map_err(|e| JournalError::Corrupt {
                    path: path.to_owned(),
                    reason: e.to_string(),
                })?;
                out.push((job, vec![unit]));
            }
        }
    }
    Ok(out)
}

/// Reopens units of a job for counting again: their counts go, and a done
/// job is running again (one transaction, so the journal never holds a
/// done job short of counts).
pub(super) fn reopen(tx: &Transaction<'_>, job_id: &JobId, unit_ids: &[UnitId]) -> rusqlite::Result<()> {
    for unit in unit_ids {
        tx.prepare_cached("DELETE FROM results WHERE job_id = ?1 AND unit_id = ?2")?
            .execute(params![job_id.as_str(), unit.0 as i64])?;
    }
    tx.prepare_cached(
        "UPDATE jobs SET state = 'running', summary = NULL, summary_checksum = NULL, finished_ms = NULL
         WHERE id = ?1 AND state = 'done'",
    )?
    .execute([job_id.as_str()])?;
    Ok(())
}
