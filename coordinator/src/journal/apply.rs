//! How each change is written: one [`Op`] as SQL statements inside the
//! transaction that holds it.

use rusqlite::params;

use super::codec::{count_blob, count_list_blob, deciders_text, summary_blob};
use super::{budgets, leases, participants, restore};
use crate::jobs::Op;
use perft_model::JobId;

pub(super) fn apply(tx: &rusqlite::Transaction<'_>, op: &Op) -> rusqlite::Result<()> {
    match op {
        Op::Submit {
            id,
            spec,
            plan,
            units_total,
            submitted_ms,
        } => {
            // Jobs are ordered as their submits commit.
            tx.execute(
                "INSERT INTO jobs (id, seq, game, position, depth, verify, split_depth, remaining_depth,
                                   first_moves, settled, root_leaves, checksum, state, units_total, owner,
                                   convention, stats, submitted_ms)
                 VALUES (?1, (SELECT coalesce(max(seq), 0) + 1 FROM jobs), ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10,
                         ?11, 'planning', ?12, ?13, ?14, ?15, ?16)",
                params![
                    id.as_str(),
                    spec.game.name(),
                    spec.position,
                    spec.depth,
                    spec.verify,
                    plan.split_depth,
                    plan.remaining_depth,
                    plan.first_moves.join("\n"),
                    count_list_blob(&plan.settled),
                    plan.root_leaves.as_ref().map(count_blob),
                    restore::job_checksum(id, spec, plan),
                    *units_total as i64,
                    spec.owner.as_str(),
                    spec.convention.map(perft_core::Convention::name),
                    spec.stats,
                    *submitted_ms as i64,
                ],
            )?;
        }
        Op::Units {
            job_id,
            chunk,
            first_unit,
            blob,
        } => {
            let sum = restore::chunk_checksum(job_id, *chunk, *first_unit, blob);
            tx.prepare_cached(
                "INSERT INTO unit_chunks (job_id, chunk, first_unit, units, checksum) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![job_id.as_str(), *chunk as i64, first_unit.0 as i64, blob, sum])?;
        }
        Op::Planned { job_id } => {
            tx.prepare_cached("UPDATE jobs SET state = 'queued' WHERE id = ?1 AND state = 'planning'")?
                .execute(params![job_id.as_str()])?;
        }
        Op::Result {
            job_id,
            unit_id,
            count,
            deciders,
        } => {
            let blob = count_blob(count);
            let machines = deciders_text(deciders);
            let sum = restore::count_checksum(job_id, *unit_id, &machines, &blob);
            tx.prepare_cached(
                // Replaces only a count restore found damaged and dropped:
                // a unit is decided once.
                "INSERT OR REPLACE INTO results (job_id, unit_id, leaves, machines, checksum) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![job_id.as_str(), unit_id.0 as i64, blob, machines, sum])?;
            tx.prepare_cached("DELETE FROM votes WHERE job_id = ?1 AND unit_id = ?2")?
                .execute(params![job_id.as_str(), unit_id.0 as i64])?;
        }
        Op::Vote {
            job_id,
            unit_id,
            voter,
            label,
            count,
        } => {
            let blob = count_blob(count);
            let sum = restore::count_checksum(job_id, *unit_id, voter.as_str(), &blob);
            tx.prepare_cached(
                "INSERT INTO votes (job_id, unit_id, voter, label, leaves, checksum) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![job_id.as_str(), unit_id.0 as i64, voter.as_str(), label, blob, sum])?;
        }
        Op::ClearVotes { job_id, unit_id } => {
            tx.prepare_cached("DELETE FROM votes WHERE job_id = ?1 AND unit_id = ?2")?
                .execute(params![job_id.as_str(), unit_id.0 as i64])?;
        }
        Op::Disagreement {
            job_id,
            disagreement: d,
        } => {
            let votes = restore::votes_text(&d.votes);
            let decided = d.decided.as_ref().map(count_blob);
            let sum = restore::disagreement_checksum(
                job_id,
                d.unit_id,
                &votes,
                decided.as_deref().unwrap_or_default(),
            );
            tx.prepare_cached(
                "INSERT INTO disagreements (job_id, unit_id, position, votes, decided, checksum)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(params![
                job_id.as_str(),
                d.unit_id.0 as i64,
                d.position,
                votes,
                decided,
                sum
            ])?;
        }
        Op::JobState {
            job_id,
            state,
            error,
            started_ms,
            finished_ms,
            released,
            summary,
        } => {
            let summary = summary.as_ref().map(summary_blob);
            let summary_sum = summary.as_deref().map(|b| restore::summary_checksum(job_id, b));
            tx.prepare_cached(
                "UPDATE jobs SET state = ?2, error = ?3, started_ms = ?4, finished_ms = ?5, released = ?6,
                                 summary = ?7, summary_checksum = ?8 WHERE id = ?1",
            )?
            .execute(params![
                job_id.as_str(),
                state.name(),
                error,
                started_ms.map(|v| v as i64),
                finished_ms.map(|v| v as i64),
                *released as i64,
                summary,
                summary_sum
            ])?;
        }
        Op::Participant(p) => participants::store(tx, p)?,
        Op::Budget {
            participant,
            overrides,
        } => budgets::store(tx, participant, overrides)?,
        Op::Credit { participant, total } => participants::store_credit(tx, participant, total)?,
        Op::DropVotesOf { voter } => {
            tx.prepare_cached("DELETE FROM votes WHERE voter = ?1")?
                .execute([voter.as_str()])?;
        }
        Op::Reopen {
            job_id,
            unit_ids,
            floor,
            barred,
        } => {
            participants::reopen(tx, job_id, unit_ids)?;
            leases::store_floors(tx, job_id, unit_ids, *floor)?;
            if let Some(participant) = barred {
                leases::store_bars(tx, job_id, unit_ids, participant)?;
            }
        }
        Op::Floors {
            job_id,
            unit_ids,
            floor,
        } => leases::store_floors(tx, job_id, unit_ids, *floor)?,
        Op::DropPlan { job_id } => drop_plan(tx, job_id)?,
        Op::DeleteJob { job_id } => {
            drop_plan(tx, job_id)?;
            tx.execute(
                "DELETE FROM disagreements WHERE job_id = ?1",
                params![job_id.as_str()],
            )?;
            tx.execute("DELETE FROM jobs WHERE id = ?1", params![job_id.as_str()])?;
        }
    }
    Ok(())
}

/// Deletes a job's units, counts and votes.
fn drop_plan(tx: &rusqlite::Transaction<'_>, job_id: &JobId) -> rusqlite::Result<()> {
    for table in ["unit_chunks", "results", "votes", "unit_floors", "unit_bars"] {
        tx.execute(
            &format!("DELETE FROM {table} WHERE job_id = ?1"),
            params![job_id.as_str()],
        )?;
    }
    Ok(())
}
