//! Reading the journal back: every job, a finished one as its summary, an
//! open one with its units, accepted counts and pending votes. Each stored
//! count is checked against its checksum; a damaged count is reported and
//! dropped (its unit is counted again), and a journal that contradicts
//! itself is refused.

use std::path::Path;

use perft_core::{GameKind, Leaves};
use rusqlite::Connection;

use super::JournalError;
use super::codec::{
    blob_count, blob_count_list, blob_summary, checksum, count_blob, count_list_blob, parse_state,
};
use super::read::{Bad, Sql, errors};
use crate::columns::UnitColumns;
use crate::jobs::{Disagreement, JobSpec, Vote};
use crate::jobs::{RestoredJob, RestoredVote};
use crate::planning::PlannedJob;
use perft_model::Count;
use perft_model::{JobId, ParticipantId, UnitId};

/// Votes as lines of `worker<TAB>leaves<TAB>higher`, then a field per kind
/// in a statistics job.
pub(crate) fn votes_text(votes: &[Vote]) -> String {
    votes
        .iter()
        .map(|v| {
            let mut line = format!(
                "{}\t{}\t{}",
                v.worker.replace(['\t', '\n'], " "),
                v.count.leaves.leaves,
                v.count.leaves.higher
            );
            for k in v.count.kinds() {
                line.push_str(&format!("\t{k}"));
            }
            line
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub(super) fn parse_votes(text: &str) -> Option<Vec<Vote>> {
    text.lines()
        .map(|line| {
            let mut fields = line.split('\t');
            let worker = fields.next()?.to_owned();
            let leaves = fields.next()?.parse().ok()?;
            let higher = fields.next()?.parse().ok()?;
            let kinds = fields.map(|f| f.parse().ok()).collect::<Option<Vec<u128>>>()?;
            Some(Vote {
                worker,
                count: Count::with_kinds(Leaves { leaves, higher }, &kinds)?,
            })
        })
        .collect()
}

/// The checksum of a job row's plan fields.
pub(crate) fn job_checksum(id: &JobId, spec: &JobSpec, plan: &PlannedJob) -> i64 {
    let settled = count_list_blob(&plan.settled);
    let root = plan.root_leaves.as_ref().map(count_blob).unwrap_or_default();
    // A convention other than the game's default is covered too; the
    // default adds nothing, so rows of schema 4 (which had none) still check.
    let default = spec.game.resolve_convention(None).ok().flatten();
    let convention = match spec.convention {
        c if c == default => None,
        Some(c) => Some(c.name()),
        None => Some("none"),
    };
    let first_moves = plan.first_moves.join("\n");
    let parts: [&[u8]; 10] = [
        id.as_str().as_bytes(),
        spec.game.name().as_bytes(),
        spec.position.as_bytes(),
        &spec.depth.to_le_bytes(),
        &[u8::from(spec.verify)],
        &plan.split_depth.to_le_bytes(),
        &plan.remaining_depth.to_le_bytes(),
        first_moves.as_bytes(),
        &settled,
        &root,
    ];
    // So is a statistics job (older rows had none, and still check).
    let mut with = parts.to_vec();
    if let Some(name) = convention {
        with.push(name.as_bytes());
    }
    if spec.stats {
        with.push(b"stats");
    }
    checksum(&with)
}

pub(crate) fn chunk_checksum(job_id: &JobId, chunk: u64, first_unit: UnitId, units: &[u8]) -> i64 {
    checksum(&[
        job_id.as_str().as_bytes(),
        &chunk.to_le_bytes(),
        &first_unit.0.to_le_bytes(),
        units,
    ])
}

pub(crate) fn summary_checksum(job_id: &JobId, summary: &[u8]) -> i64 {
    checksum(&[job_id.as_str().as_bytes(), b"summary", summary])
}

pub(crate) fn count_checksum(job_id: &JobId, unit_id: UnitId, who: &str, leaves: &[u8]) -> i64 {
    checksum(&[
        job_id.as_str().as_bytes(),
        &unit_id.0.to_le_bytes(),
        who.as_bytes(),
        leaves,
    ])
}

pub(crate) fn disagreement_checksum(job_id: &JobId, unit_id: UnitId, votes: &str, decided: &[u8]) -> i64 {
    checksum(&[
        job_id.as_str().as_bytes(),
        &unit_id.0.to_le_bytes(),
        votes.as_bytes(),
        decided,
    ])
}

pub(super) const JOB_COLUMNS: &str = "id, game, position, depth, verify, split_depth, remaining_depth, first_moves, settled,
     root_leaves, state, error, started_ms, finished_ms, released, checksum, units_total, summary, summary_checksum, owner,
     convention, stats, submitted_ms";

/// Reads back the row of every job whose plan was completely written, in
/// submission order: a finished one with its summary (see
/// [`restore_open_jobs`] for the rest).
pub(super) fn job_rows(conn: &Connection, path: &Path) -> Result<Vec<RestoredJob>, JournalError> {
    let (_, sql) = errors(path);
    let mut jobs = Vec::new();
    let mut stmt = conn
        .prepare(&format!(
            "SELECT {JOB_COLUMNS} FROM jobs WHERE state != 'planning' ORDER BY seq"
        ))
        .map_err(sql)?;
    let mut rows = stmt.query([]).map_err(sql)?;
    while let Some(row) = rows.next().map_err(sql)? {
        jobs.push(job_row(row, path)?);
    }
    Ok(jobs)
}

/// Reads in full every job of `jobs` that has no summary to be served
/// from: its units, accepted counts, pending votes and lease records.
pub(super) fn restore_open_jobs(
    conn: &Connection,
    path: &Path,
    jobs: &mut [RestoredJob],
) -> Result<(), JournalError> {
    for job in jobs.iter_mut().filter(|job| job.summary.is_none()) {
        restore_open(conn, job, path)?;
    }
    Ok(())
}

/// One job with all its units, whatever its state (to resume it).
pub(crate) fn load_job(conn: &Connection, path: &Path, job_id: &JobId) -> Result<RestoredJob, JournalError> {
    let (_, sql) = errors(path);
    let mut stmt = conn
        .prepare(&format!("SELECT {JOB_COLUMNS} FROM jobs WHERE id = ?1"))
        .map_err(sql)?;
    let mut rows = stmt.query([job_id.as_str()]).map_err(sql)?;
    let Some(row) = rows.next().map_err(sql)? else {
        return Err(errors(path).0(format!(
            "job {} is not in the journal",
            perft_core::echoed(job_id.as_str())
        )));
    };
    let mut job = job_row(row, path)?;
    job.summary = None;
    restore_open(conn, &mut job, path)?;
    Ok(job)
}

pub(super) fn job_row(row: &rusqlite::Row<'_>, path: &Path) -> Result<RestoredJob, JournalError> {
    let (bad, sql) = errors(path);
    let id: String = row.get(0).map_err(sql)?;
    let id = JobId::parse(&id).map_err(|e| bad(e.to_string()))?;
    let game: String = row.get(1).map_err(sql)?;
    let game: GameKind = game
        .parse()
        .map_err(|e: perft_core::UnknownGame| bad(format!("job {id}: {e}")))?;
    let first_moves: String = row.get(7).map_err(sql)?;
    let settled: Vec<u8> = row.get(8).map_err(sql)?;
    let root_leaves: Option<Vec<u8>> = row.get(9).map_err(sql)?;
    let state: String = row.get(10).map_err(sql)?;
    let position: String = row.get(2).map_err(sql)?;
    let owner: String = row.get(19).map_err(sql)?;
    let stats = row.get::<_, i64>(21).map_err(sql)? != 0;
    let kinds = perft_model::kinds_of(game, stats);
    let mut damage = Vec::new();
    let settled = blob_count_list(&settled, kinds).unwrap_or_else(|| {
        damage.push("its settled counts".to_owned());
        Vec::new()
    });
    let root_leaves = match root_leaves.as_deref().map(blob_count) {
        Some(None) => {
            damage.push("its root count".to_owned());
            None
        }
        Some(Some(l)) => Some(l),
        None => None,
    };
    // No convention (every job before schema 5): the game's default.
    let convention: Option<String> = row.get(20).map_err(sql)?;
    let convention = match convention.as_deref() {
        None => None,
        Some(name) => Some(
            name.parse::<perft_core::Convention>()
                .map_err(|e| bad(format!("job {id}: {e}")))?,
        ),
    };
    let convention = game
        .resolve_convention(convention)
        .map_err(|e| bad(format!("job {id}: {e}")))?;
    let spec = JobSpec {
        game,
        convention,
        position: position.clone(),
        depth: row.get(3).map_err(sql)?,
        verify: row.get::<_, i64>(4).map_err(sql)? != 0,
        owner: ParticipantId::parse(&owner).map_err(|e| bad(format!("job {id}: {e}")))?,
        stats,
    };
    let plan = PlannedJob {
        position,
        split_depth: row.get(5).map_err(sql)?,
        remaining_depth: row.get(6).map_err(sql)?,
        first_moves: if first_moves.is_empty() {
            Vec::new()
        } else {
            first_moves.split('\n').map(str::to_owned).collect()
        },
        settled,
        root_leaves,
        units: UnitColumns::new(game.packed_bytes()),
    };
    if damage.is_empty() && job_checksum(&id, &spec, &plan) != row.get::<_, i64>(15).map_err(sql)? {
        damage.push("its plan".to_owned());
    }
    let state = parse_state(&state)
        .ok_or_else(|| bad(format!("job {id}: state '{}'", perft_core::echoed(&state))))?;
    let summary_blob: Option<Vec<u8>> = row.get(17).map_err(sql)?;
    let summary_sum: Option<i64> = row.get(18).map_err(sql)?;
    let summary = match (summary_blob, summary_sum) {
        (Some(blob), Some(sum)) if state.is_final() && damage.is_empty() => {
            let summary = blob_summary(&blob, kinds).filter(|_| summary_checksum(&id, &blob) == sum);
            if summary.is_none() {
                tracing::error!(job = %id, "journal: a finished job's summary failed its checksum; reading its units instead");
            }
            summary
        }
        _ => None,
    };
    Ok(RestoredJob {
        spec,
        plan,
        units_total: row.get::<_, i64>(16).map_err(sql)? as u64,
        summary,
        state,
        error: row.get(11).map_err(sql)?,
        submitted_ms: row.get::<_, Option<i64>>(22).map_err(sql)?.map(|v| v as u64),
        started_ms: row.get::<_, Option<i64>>(12).map_err(sql)?.map(|v| v as u64),
        finished_ms: row.get::<_, Option<i64>>(13).map_err(sql)?.map(|v| v as u64),
        released: row.get::<_, i64>(14).map_err(sql)? as u64,
        results: Vec::new(),
        votes: Vec::new(),
        disagreements: Vec::new(),
        damage,
        damaged_counts: Vec::new(),
        recount: Vec::new(),
        floors: Vec::new(),
        bars: Vec::new(),
        id,
    })
}

/// Reads an open job's units, counts, votes and disagreements.
fn restore_open(conn: &Connection, job: &mut RestoredJob, path: &Path) -> Result<(), JournalError> {
    let (bad, sql) = errors(path);
    restore_units(conn, job, &bad, &sql)?;
    restore_counts(conn, job, &bad, &sql)?;
    if !job.recount.is_empty() {
        let recount: std::collections::HashSet<UnitId> = job.recount.iter().copied().collect();
        job.results.retain(|(unit_id, _)| !recount.contains(unit_id));
        job.damaged_counts.retain(|unit_id| !recount.contains(unit_id));
    }
    super::leases::restore(conn, job, path)?;
    if job.state == perft_model::JobState::Done
        && job.results.len() as u64 != job.units_total
        && job.damage.is_empty()
        && job.damaged_counts.is_empty()
        && job.recount.is_empty()
    {
        return Err(bad(format!(
            "job {} is done but has {} counts for {} units",
            job.id,
            job.results.len(),
            job.units_total
        )));
    }
    Ok(())
}

pub(super) fn restore_units(
    conn: &Connection,
    job: &mut RestoredJob,
    _bad: Bad<'_>,
    sql: Sql<'_>,
) -> Result<(), JournalError> {
    let mut chunks = conn
        .prepare(
            "SELECT chunk, first_unit, units, checksum FROM unit_chunks WHERE job_id = ?1 ORDER BY chunk",
        )
        .map_err(sql)?;
    let mut rows = chunks.query([job.id.as_str()]).map_err(sql)?;
    let mut expected_chunk = 0u64;
    while let Some(row) = rows.next().map_err(sql)? {
        let chunk = row.get::<_, i64>(0).map_err(sql)? as u64;
        let first_unit = row.get::<_, i64>(1).map_err(sql)? as u64;
        let blob: Vec<u8> = row.get(2).map_err(sql)?;
        let sum: i64 = row.get(3).map_err(sql)?;
        let columns = UnitColumns::from_blob(&blob)
            .filter(|c| c.stride() == job.plan.units.stride())
            .filter(|_| chunk_checksum(&job.id, chunk, UnitId(first_unit), &blob) == sum);
        let in_order = chunk == expected_chunk && first_unit == job.plan.units.len() as u64;
        match columns {
            Some(columns) if in_order && job.plan.units.extend(&columns).is_ok() => {}
            _ => {
                job.damage.push(format!("unit chunk {chunk}"));
                return Ok(());
            }
        }
        expected_chunk += 1;
    }
    if job.plan.units.len() as u64 != job.units_total {
        job.damage.push(format!(
            "its units ({} of {} found)",
            job.plan.units.len(),
            job.units_total
        ));
    }
    Ok(())
}

/// Whether a stored count can be one of the job `spec`'s: the job's number
/// of kinds, and kinds its leaves allow (none above them, the game's totals
/// equal to their parts). A count that is not is damaged, whatever its
/// checksum says.
pub(super) fn fits_job(spec: &JobSpec) -> impl Fn(&Count) -> bool + use<> {
    let kinds = spec.kinds();
    let fns = spec.game.fns_in(spec.convention).ok();
    move |c: &Count| {
        c.kinds().len() == kinds && (kinds == 0 || fns.is_some_and(|f| f.kinds_fit(&c.leaves, c.kinds())))
    }
}

fn restore_counts(
    conn: &Connection,
    job: &mut RestoredJob,
    bad: Bad<'_>,
    sql: Sql<'_>,
) -> Result<(), JournalError> {
    let units = job.units_total;
    let fits = fits_job(&job.spec);
    let mut results = conn
        .prepare("SELECT unit_id, leaves, machines, checksum FROM results WHERE job_id = ?1")
        .map_err(sql)?;
    let mut rows = results.query([job.id.as_str()]).map_err(sql)?;
    while let Some(row) = rows.next().map_err(sql)? {
        let unit_id = UnitId(row.get::<_, i64>(0).map_err(sql)? as u64);
        let blob: Vec<u8> = row.get(1).map_err(sql)?;
        let worker: String = row.get(2).map_err(sql)?;
        if unit_id.0 >= units {
            return Err(bad(format!("job {}: count for unknown unit {unit_id}", job.id)));
        }
        match blob_count(&blob).filter(&fits) {
            Some(count)
                if count_checksum(&job.id, unit_id, &worker, &blob)
                    == row.get::<_, i64>(3).map_err(sql)? =>
            {
                job.results.push((unit_id, count));
            }
            _ => job.damaged_counts.push(unit_id),
        }
    }
    let mut votes = conn
        .prepare("SELECT unit_id, voter, label, leaves, checksum FROM votes WHERE job_id = ?1 ORDER BY rowid")
        .map_err(sql)?;
    let mut rows = votes.query([job.id.as_str()]).map_err(sql)?;
    while let Some(row) = rows.next().map_err(sql)? {
        let unit_id = UnitId(row.get::<_, i64>(0).map_err(sql)? as u64);
        let voter: String = row.get(1).map_err(sql)?;
        let blob: Vec<u8> = row.get(3).map_err(sql)?;
        if unit_id.0 >= units {
            return Err(bad(format!("job {}: vote for unknown unit {unit_id}", job.id)));
        }
        match blob_count(&blob).filter(&fits) {
            Some(count)
                if count_checksum(&job.id, unit_id, &voter, &blob)
                    == row.get::<_, i64>(4).map_err(sql)? =>
            {
                // A vote journaled before participants existed names a
                // machine: it confirms no participant's count, so its unit
                // is counted afresh.
                match ParticipantId::parse(&voter) {
                    Ok(voter) => job.votes.push(RestoredVote {
                        unit_id,
                        voter,
                        label: row.get(2).map_err(sql)?,
                        count,
                    }),
                    Err(e) => {
                        tracing::warn!(job = %job.id, unit = unit_id.0, error = %e, "journal: a pending vote of no participant is left out; its unit is counted again");
                    }
                }
            }
            _ => job.damaged_counts.push(unit_id),
        }
    }
    let mut found = conn
        .prepare("SELECT unit_id, position, votes, decided, checksum FROM disagreements WHERE job_id = ?1 ORDER BY rowid")
        .map_err(sql)?;
    let mut rows = found.query([job.id.as_str()]).map_err(sql)?;
    while let Some(row) = rows.next().map_err(sql)? {
        let unit_id = UnitId(row.get::<_, i64>(0).map_err(sql)? as u64);
        let votes: String = row.get(2).map_err(sql)?;
        let decided: Option<Vec<u8>> = row.get(3).map_err(sql)?;
        let sum = disagreement_checksum(&job.id, unit_id, &votes, decided.as_deref().unwrap_or_default());
        let parsed = parse_votes(&votes);
        let decided_count = decided.as_deref().map(blob_count);
        if sum != row.get::<_, i64>(4).map_err(sql)? || parsed.is_none() || decided_count == Some(None) {
            tracing::error!(job = %job.id, unit = unit_id.0, "journal: a damaged disagreement record is left out");
            continue;
        }
        job.disagreements.push(Disagreement {
            unit_id,
            position: row.get(1).map_err(sql)?,
            votes: parsed.unwrap_or_default(),
            decided: decided_count.flatten(),
        });
    }
    Ok(())
}
