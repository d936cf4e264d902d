//! The row checks of `perft journal check`: table by table, every row
//! that carries a checksum is read against it (and against the job it
//! belongs to), damage counted per table, a line each for the first few.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use rusqlite::{Connection, OptionalExtension};

use super::super::codec::{blob_count, blob_summary};
use super::super::counts_root::{self, Verdict};
use super::super::restore::{
    JOB_COLUMNS, chunk_checksum, count_checksum, disagreement_checksum, fits_job, job_row, parse_votes,
    summary_checksum,
};
use super::super::{budgets, leases, participants};
use super::{Checked, Finding, Level, SHOWN_PER_TABLE};
use crate::columns::UnitColumns;
use crate::jobs::JobSpec;
use crate::participants::StoredParticipant;
use perft_model::Count;
use perft_model::JobState;
use perft_model::Role;
use perft_model::{Epoch, JobId, ParticipantId, UnitId};

/// What the rows of a job are checked against.
struct JobInfo {
    id: JobId,
    units_total: u64,
    stride: usize,
    state: JobState,
    fits: Box<dyn Fn(&Count) -> bool>,
    spec: JobSpec,
    /// Its plan may be gone: a cancelled job with its summary.
    plan_dropped: bool,
}

/// Damage per table: a line each for the first few, a count for the rest.
struct Rows<'a> {
    checked: &'a mut Checked,
    table: &'static str,
    rows: u64,
    bad: u64,
    orphans: u64,
}

impl<'a> Rows<'a> {
    fn new(checked: &'a mut Checked, table: &'static str) -> Rows<'a> {
        Rows {
            checked,
            table,
            rows: 0,
            bad: 0,
            orphans: 0,
        }
    }

    fn damage(&mut self, text: String) {
        self.bad += 1;
        self.checked.damaged += 1;
        if self.bad <= SHOWN_PER_TABLE {
            self.checked.findings.push(Finding {
                level: Level::Damage,
                text: format!("{}: {text}", self.table),
            });
        }
    }

    /// Runs `sql`, handing each row to `each`; a failed read is damage.
    fn scan(
        &mut self,
        conn: &Connection,
        sql: &str,
        mut each: impl FnMut(&mut Self, &rusqlite::Row<'_>) -> rusqlite::Result<()>,
    ) {
        let outcome = conn.prepare(sql).and_then(|mut stmt| {
            let mut rows = stmt.query([])?;
            while let Some(row) = rows.next()? {
                self.rows += 1;
                each(self, row)?;
            }
            Ok(())
        });
        if let Err(e) = outcome {
            self.damage(format!("cannot be read to its end: {e}"));
        }
    }

    /// Damage to the row of `job` and `unit`.
    fn unit_damage(&mut self, job: &JobInfo, unit: UnitId, what: &str) {
        self.damage(format!("job {} unit {unit}: {what}", job.id));
    }

    /// [`Rows::scan`] for a table keyed by job and unit (its first two
    /// columns): hands `each` the row's job and unit; a row of no job is
    /// counted as an orphan, not checked.
    fn scan_units<'j>(
        &mut self,
        conn: &Connection,
        sql: &str,
        jobs: &'j HashMap<String, JobInfo>,
        mut each: impl FnMut(&mut Self, &'j JobInfo, UnitId, &rusqlite::Row<'_>) -> rusqlite::Result<()>,
    ) {
        self.scan(conn, sql, |t, row| {
            let raw: String = row.get(0)?;
            let Some(job) = jobs.get(&raw) else {
                t.orphans += 1;
                return Ok(());
            };
            each(t, job, unit(row, 1)?, row)
        });
    }

    fn finish(self) {
        let Rows {
            checked,
            table,
            rows,
            bad,
            orphans,
        } = self;
        checked.rows += rows;
        if bad > SHOWN_PER_TABLE {
            checked.findings.push(Finding {
                level: Level::Damage,
                text: format!("{table}: {} more damaged rows not shown", bad - SHOWN_PER_TABLE),
            });
        }
        if orphans > 0 {
            checked.note(format!(
                "{table}: {orphans} rows of no job (left out when the journal is read)"
            ));
        }
        if bad == 0 {
            checked.ok(format!("{table}: {rows} rows, every checksum holds"));
        }
    }
}

fn unit(row: &rusqlite::Row<'_>, column: usize) -> rusqlite::Result<UnitId> {
    Ok(UnitId(row.get::<_, i64>(column)? as u64))
}

/// Every row that carries a checksum, table by table.
pub(super) fn rows(conn: &Connection, checked: &mut Checked) {
    participant_rows(conn, checked);
    budget_rows(conn, checked);
    credit_rows(conn, checked);
    secret_rows(conn, checked);
    let (jobs, planning) = job_rows(conn, checked);
    chunk_rows(conn, checked, &jobs, &planning);
    result_rows(conn, checked, &jobs);
    root_rows(conn, checked, &jobs);
    vote_rows(conn, checked, &jobs);
    disagreement_rows(conn, checked, &jobs);
    lease_rows(conn, checked, &jobs);
}

fn participant_rows(conn: &Connection, checked: &mut Checked) {
    let mut t = Rows::new(checked, "participants");
    let sql = "SELECT id, role, secret_hash, revoked, created_ms, checksum FROM participants ORDER BY id";
    t.scan(conn, sql, |t, row| {
        let name: String = row.get(0)?;
        let shown = perft_core::echoed(&name);
        let parsed = ParticipantId::parse(&name)
            .map_err(|e| e.to_string())
            .and_then(|id| {
                let role =
                    Role::parse(&row.get::<_, String>(1).unwrap_or_default()).map_err(|e| e.to_string())?;
                let hash: Vec<u8> = row.get(2).unwrap_or_default();
                let secret_hash = hash
                    .try_into()
                    .map_err(|_| "its secret hash is not 32 bytes".to_owned())?;
                Ok(StoredParticipant {
                    id,
                    role,
                    secret_hash,
                    revoked: row.get::<_, i64>(3).unwrap_or(0) != 0,
                    created_ms: row.get::<_, i64>(4).unwrap_or(0) as u64,
                })
            });
        match parsed {
            Err(e) => t.damage(format!("participant '{shown}': {e}")),
            Ok(p) if participants::participant_checksum(&p) != row.get::<_, i64>(5)? => {
                t.damage(format!("participant '{shown}' fails its checksum"));
            }
            Ok(_) => {}
        }
        Ok(())
    });
    t.finish();
}

fn budget_rows(conn: &Connection, checked: &mut Checked) {
    let mut t = Rows::new(checked, "budgets");
    let sql = "SELECT participant, figures, checksum FROM budgets ORDER BY participant";
    t.scan(conn, sql, |t, row| {
        let name: String = row.get(0)?;
        let figures: String = row.get(1)?;
        if budgets::row_checksum(&name, &figures) != row.get::<_, i64>(2)? {
            t.damage(format!(
                "the budget of '{}' fails its checksum",
                perft_core::echoed(&name)
            ));
        } else if let Err(e) = crate::admission::Overrides::decode(&figures) {
            t.damage(format!("the budget of '{}': {e}", perft_core::echoed(&name)));
        }
        Ok(())
    });
    t.finish();
}

/// Credit carries no checksum; a row must name a participant.
fn credit_rows(conn: &Connection, checked: &mut Checked) {
    let mut t = Rows::new(checked, "credit");
    t.scan(conn, "SELECT participant FROM credit", |t, row| {
        let name: String = row.get(0)?;
        if let Err(e) = ParticipantId::parse(&name) {
            t.damage(format!("'{}': {e}", perft_core::echoed(&name)));
        }
        Ok(())
    });
    let Rows {
        checked, rows, bad, ..
    } = t;
    checked.rows += rows;
    if bad == 0 {
        checked.ok(format!("credit: {rows} rows, each of a participant"));
    }
}

fn secret_rows(conn: &Connection, checked: &mut Checked) {
    let key: rusqlite::Result<Option<Vec<u8>>> = conn
        .query_row("SELECT value FROM secrets WHERE name = 'lease_key'", [], |row| {
            row.get(0)
        })
        .optional();
    match key {
        Ok(Some(key)) if key.len() == 32 => checked.ok("secrets: the lease key is 32 bytes".to_owned()),
        Ok(Some(key)) => checked.broken(format!("secrets: the lease key is {} bytes, not 32", key.len())),
        Ok(None) => checked.note("secrets: no lease key yet (made at the next start)".to_owned()),
        Err(e) => checked.broken(format!("secrets: cannot be read: {e}")),
    }
}

/// Every job's row: its plan, settled counts, root count and summary
/// against their checksums. Returns what its other rows are checked
/// against, by id, and the jobs whose plan was still being written.
fn job_rows(conn: &Connection, checked: &mut Checked) -> (HashMap<String, JobInfo>, HashSet<String>) {
    let mut jobs = HashMap::new();
    let path = Path::new("journal.sqlite");
    let mut t = Rows::new(checked, "jobs");
    t.scan(
        conn,
        &format!("SELECT {JOB_COLUMNS} FROM jobs WHERE state != 'planning' ORDER BY seq"),
        |t, row| {
            let raw: String = row.get(0)?;
            let job = match job_row(row, path) {
                Ok(job) => job,
                Err(e) => {
                    t.damage(format!("job '{}' cannot be read: {e}", perft_core::echoed(&raw)));
                    return Ok(());
                }
            };
            for part in &job.damage {
                t.damage(format!("job {}: {part} fails its checksum", job.id));
            }
            let summary: Option<Vec<u8>> = row.get(17)?;
            let summary_sum: Option<i64> = row.get(18)?;
            let has_summary = summary.is_some();
            match (summary, summary_sum) {
                (Some(blob), Some(sum)) => {
                    if summary_checksum(&job.id, &blob) != sum
                        || blob_summary(&blob, job.spec.kinds()).is_none()
                    {
                        t.damage(format!("job {}: its summary fails its checksum", job.id));
                    }
                }
                (Some(_), None) | (None, Some(_)) => {
                    t.damage(format!("job {}: its summary lacks its checksum", job.id));
                }
                (None, None) => {}
            }
            jobs.insert(
                raw,
                JobInfo {
                    units_total: job.units_total,
                    stride: job.plan.units.stride(),
                    state: job.state,
                    fits: Box::new(fits_job(&job.spec)),
                    spec: job.spec,
                    plan_dropped: job.state == JobState::Cancelled && has_summary,
                    id: job.id,
                },
            );
            Ok(())
        },
    );
    let mut planning = HashSet::new();
    t.scan(conn, "SELECT id FROM jobs WHERE state = 'planning'", |t, row| {
        let raw: String = row.get(0)?;
        t.checked.note(format!(
            "job '{}': its plan was being written when the coordinator stopped (its submit was never answered); the next start drops it",
            perft_core::echoed(&raw)
        ));
        planning.insert(raw);
        Ok(())
    });
    t.finish();
    (jobs, planning)
}

/// Each job's plan, chunk by chunk (one chunk in memory at a time): in
/// order, of the job's position size, under its checksum, and all of its
/// units.
fn chunk_rows(
    conn: &Connection,
    checked: &mut Checked,
    jobs: &HashMap<String, JobInfo>,
    planning: &HashSet<String>,
) {
    let mut t = Rows::new(checked, "unit_chunks");
    // Per job: chunks and units seen, and whether they are in order.
    let mut seen: HashMap<String, (u64, u64, bool)> = HashMap::new();
    let sql = "SELECT job_id, chunk, first_unit, units, checksum FROM unit_chunks ORDER BY job_id, chunk";
    t.scan(conn, sql, |t, row| {
        let raw: String = row.get(0)?;
        let Some(job) = jobs.get(&raw) else {
            // A plan cut short is dropped whole at the next start.
            if !planning.contains(&raw) {
                t.orphans += 1;
            }
            return Ok(());
        };
        let chunk = row.get::<_, i64>(1)? as u64;
        let first_unit = unit(row, 2)?;
        let blob: Vec<u8> = row.get(3)?;
        let sum: i64 = row.get(4)?;
        let (chunks, units, in_order) = seen.entry(raw).or_insert((0, 0, true));
        if chunk_checksum(&job.id, chunk, first_unit, &blob) != sum {
            t.damage(format!("job {} chunk {chunk} fails its checksum", job.id));
            *in_order = false;
            return Ok(());
        }
        match UnitColumns::from_blob(&blob).filter(|c| c.stride() == job.stride) {
            None => {
                t.damage(format!("job {} chunk {chunk} holds no units of its game", job.id));
                *in_order = false;
            }
            Some(columns) => {
                if *in_order && (chunk != *chunks || first_unit.0 != *units) {
                    t.damage(format!("job {} chunk {chunk} is out of order", job.id));
                    *in_order = false;
                }
                *chunks += 1;
                *units += columns.len() as u64;
            }
        }
        Ok(())
    });
    for (raw, job) in jobs {
        let (_, units, in_order) = seen.get(raw).copied().unwrap_or((0, 0, true));
        if in_order && units != job.units_total && !(job.plan_dropped && units == 0) {
            t.damage(format!(
                "job {}: its plan holds {units} of its {} units",
                job.id, job.units_total
            ));
        }
    }
    t.finish();
}

/// Decided counts: each under its checksum, of a unit of its job, a count
/// its job can have, with its deciders; a done job has one for every unit.
fn result_rows(conn: &Connection, checked: &mut Checked, jobs: &HashMap<String, JobInfo>) {
    let mut t = Rows::new(checked, "results");
    // Counts held, per job.
    let mut held: HashMap<&JobId, u64> = HashMap::new();
    let sql = "SELECT job_id, unit_id, leaves, machines, checksum FROM results ORDER BY job_id, unit_id";
    t.scan_units(conn, sql, jobs, |t, job, unit_id, row| {
        *held.entry(&job.id).or_default() += 1;
        let blob: Vec<u8> = row.get(2)?;
        let machines: String = row.get(3)?;
        let sum: i64 = row.get(4)?;
        let sound = count_holds(
            t,
            job,
            unit_id,
            &machines,
            &blob,
            || Ok(sum),
            ["a count of", "its count"],
        )?;
        if sound && machines.split('\n').any(str::is_empty) {
            t.unit_damage(job, unit_id, "its count names no decider");
        }
        Ok(())
    });
    for job in jobs.values() {
        let results = held.get(&job.id).copied().unwrap_or(0);
        if job.state == JobState::Done && results != job.units_total {
            t.damage(format!(
                "job {} is done but holds {results} counts for {} units",
                job.id, job.units_total
            ));
        }
    }
    t.finish();
}

/// Each done job's counts against the Merkle root stored when it
/// finished (one "row" a job).
fn root_rows(conn: &Connection, checked: &mut Checked, jobs: &HashMap<String, JobInfo>) {
    let path = Path::new("journal.sqlite");
    let mut t = Rows::new(checked, "roots");
    let mut done: Vec<&JobInfo> = jobs.values().filter(|job| job.state == JobState::Done).collect();
    done.sort_by(|a, b| a.id.as_str().cmp(b.id.as_str()));
    for job in done {
        t.rows += 1;
        let stored = counts_root::read_stored(conn, path, &job.id);
        match counts_root::verdict(conn, path, &job.id, &job.spec, job.units_total) {
            Ok(Verdict::Sound) => {}
            Ok(Verdict::Rooted(_)) if matches!(stored, Ok(None)) => t.checked.note(format!(
                "roots: job {} was done before Merkle roots were kept; the next start computes its root from its sound counts",
                job.id
            )),
            Ok(Verdict::Rooted(_)) => t.damage(format!(
                "job {}: its Merkle root fails its checksum (its counts are sound: the next start computes it again)",
                job.id
            )),
            Ok(Verdict::Damaged(units)) => t.damage(format!(
                "job {}: the counts of units {} are missing or damaged (the next start counts them again)",
                job.id,
                UnitId::listed(&units)
            )),
            Ok(Verdict::Altered) => t.damage(format!(
                "job {}: its counts pass their checksums but not its Merkle root (the next start counts every unit again)",
                job.id
            )),
            Err(e) => t.damage(format!("job {}: its counts cannot be read: {e}", job.id)),
        }
    }
    t.finish();
}

/// Whether a count of `unit` by `by` (a decided count or a vote: `of` and
/// `its` name it in the findings) is of a unit its job has, under its
/// checksum (`sum`, read only then), and one its job can have.
fn count_holds(
    t: &mut Rows<'_>,
    job: &JobInfo,
    unit: UnitId,
    by: &str,
    blob: &[u8],
    sum: impl FnOnce() -> rusqlite::Result<i64>,
    [of, its]: [&str; 2],
) -> rusqlite::Result<bool> {
    if unit.0 >= job.units_total {
        t.damage(format!(
            "job {}: {of} unit {unit}, which it does not have",
            job.id
        ));
    } else if count_checksum(&job.id, unit, by, blob) != sum()? {
        t.unit_damage(job, unit, &format!("{its} fails its checksum"));
    } else if !blob_count(blob).is_some_and(|c| (job.fits)(&c)) {
        t.unit_damage(job, unit, &format!("{its} cannot be one of its job's"));
    } else {
        return Ok(true);
    }
    Ok(false)
}

/// Pending votes, each under its checksum.
fn vote_rows(conn: &Connection, checked: &mut Checked, jobs: &HashMap<String, JobInfo>) {
    let mut t = Rows::new(checked, "votes");
    let sql = "SELECT job_id, unit_id, voter, leaves, checksum FROM votes ORDER BY rowid";
    t.scan_units(conn, sql, jobs, |t, job, unit_id, row| {
        let voter: String = row.get(2)?;
        let blob: Vec<u8> = row.get(3)?;
        count_holds(
            t,
            job,
            unit_id,
            &voter,
            &blob,
            || row.get(4),
            ["a vote for", "a vote"],
        )?;
        Ok(())
    });
    t.finish();
}

fn disagreement_rows(conn: &Connection, checked: &mut Checked, jobs: &HashMap<String, JobInfo>) {
    let mut t = Rows::new(checked, "disagreements");
    let sql = "SELECT job_id, unit_id, votes, decided, checksum FROM disagreements ORDER BY rowid";
    t.scan_units(conn, sql, jobs, |t, job, unit_id, row| {
        let votes: String = row.get(2)?;
        let decided: Option<Vec<u8>> = row.get(3)?;
        let sum = disagreement_checksum(&job.id, unit_id, &votes, decided.as_deref().unwrap_or_default());
        if sum != row.get::<_, i64>(4)?
            || parse_votes(&votes).is_none()
            || decided.as_deref().is_some_and(|d| blob_count(d).is_none())
        {
            t.unit_damage(job, unit_id, "a disagreement record fails its checksum");
        }
        Ok(())
    });
    t.finish();
}

/// Lease floors and participants' bars: each row (job, unit, a value, its
/// checksum) under its checksum.
fn lease_rows(conn: &Connection, checked: &mut Checked, jobs: &HashMap<String, JobInfo>) {
    type Sum = fn(&JobId, UnitId, &rusqlite::Row<'_>) -> rusqlite::Result<i64>;
    let floor: Sum = |id, unit, row| {
        let floor = Epoch(row.get::<_, i64>(2)? as u64);
        Ok(leases::floor_checksum(id, unit, floor))
    };
    let bar: Sum = |id, unit, row| Ok(leases::bar_checksum(id, unit, &row.get::<_, String>(2)?));
    for (table, column, what, sum) in [
        ("unit_floors", "floor", "its lease floor", floor),
        ("unit_bars", "participant", "a participant's bar", bar),
    ] {
        let mut t = Rows::new(checked, table);
        let sql = format!("SELECT job_id, unit_id, {column}, checksum FROM {table} ORDER BY job_id, unit_id");
        t.scan_units(conn, &sql, jobs, |t, job, unit_id, row| {
            if sum(&job.id, unit_id, row)? != row.get::<_, i64>(3)? {
                t.unit_damage(job, unit_id, &format!("{what} fails its checksum"));
            }
            Ok(())
        });
        t.finish();
    }
}
