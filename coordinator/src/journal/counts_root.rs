//! Each done job's Merkle root over its decided counts, stored when it
//! finishes and checked at every start: a done job is served from its
//! summary, so without the root a damaged, deleted or altered count below
//! it would go unseen until its certificate failed for good.
//!
//! A leaf hashes one unit's stored count and deciders with its index
//! (the certificate's tree, over the journal's rows). The root is kept
//! with a checksum of its own, so a damaged root is told apart from
//! damaged counts: the first is computed again from counts that all pass
//! their checksums, the second reopens the units to count them again.

use std::path::{Path, PathBuf};
use std::sync::mpsc;

use perft_certificate::merkle;
pub(super) use perft_certificate::merkle::Hash;
use rusqlite::{Connection, OptionalExtension, params};

use super::JournalError;
use super::codec::{blob_count, checksum};
use super::read::{errors, reader};
use super::restore::{count_checksum, fits_job};
use crate::jobs::{JobSpec, RestoredJob};
use perft_model::JobState;
use perft_model::{JobId, UnitId};

/// What a done job's stored counts say when read back in full.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Scrubbed {
    /// The root over every unit's count; meaningful only without damage.
    pub root: Hash,
    /// Units whose count is missing, fails its checksum, has kinds the
    /// job cannot have, or names no decider.
    pub damaged: Vec<UnitId>,
}

/// What the scrub of a done job found, against its stored root.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// Every count is there, passes its checksum and matches the root.
    Sound,
    /// Every count passes its checksum, but the root is missing (a job
    /// done before roots were kept) or damaged itself: store this one.
    Rooted(Hash),
    /// These units' counts are damaged or missing: count them again.
    Damaged(Vec<UnitId>),
    /// Every count passes its checksum, yet they are not the counts the
    /// job finished with: no unit can be trusted, all are counted again.
    Altered,
}

impl Verdict {
    /// The units to count again, of a job of `units_total` units.
    pub(crate) fn recount(&self, units_total: u64) -> Vec<UnitId> {
        match self {
            Verdict::Sound | Verdict::Rooted(_) => Vec::new(),
            Verdict::Damaged(units) => units.clone(),
            Verdict::Altered => (0..units_total).map(UnitId).collect(),
        }
    }
}

fn leaf(unit_id: u64, blob: &[u8], machines: &str) -> Hash {
    // The blob's length first: no count and decider list can pass for
    // another split at a different place.
    let mut bytes = Vec::with_capacity(8 + blob.len() + machines.len());
    bytes.extend_from_slice(&(blob.len() as u64).to_le_bytes());
    bytes.extend_from_slice(blob);
    bytes.extend_from_slice(machines.as_bytes());
    merkle::leaf_hash(unit_id, &bytes)
}

/// Reads every stored count of done job `job_id` in unit order.
pub(super) fn scrub(
    conn: &Connection,
    path: &Path,
    job_id: &JobId,
    spec: &JobSpec,
    units_total: u64,
) -> Result<Scrubbed, JournalError> {
    let (_, sql) = errors(path);
    let fits = fits_job(spec);
    let mut stmt = conn
        .prepare_cached(
            "SELECT unit_id, leaves, machines, checksum FROM results WHERE job_id = ?1 ORDER BY unit_id",
        )
        .map_err(sql)?;
    let mut rows = stmt.query([job_id.as_str()]).map_err(sql)?;
    let mut leaves = Vec::with_capacity(usize::try_from(units_total).unwrap_or(0).min(1 << 24));
    let mut damaged = Vec::new();
    let mut next = 0u64;
    while let Some(row) = rows.next().map_err(sql)? {
        let unit_id = row.get::<_, i64>(0).map_err(sql)?;
        let Ok(unit_id) = u64::try_from(unit_id) else {
            continue;
        };
        if unit_id >= units_total {
            // No unit of this job: not one of its counts, and not served.
            continue;
        }
        damaged.extend((next..unit_id).map(UnitId));
        next = unit_id + 1;
        let blob: Vec<u8> = row.get(1).map_err(sql)?;
        let machines: String = row.get(2).map_err(sql)?;
        let sum: i64 = row.get(3).map_err(sql)?;
        let sound = blob_count(&blob).is_some_and(|c| fits(&c))
            && count_checksum(job_id, UnitId(unit_id), &machines, &blob) == sum
            && !machines.split('\n').any(str::is_empty);
        if sound {
            leaves.push(leaf(unit_id, &blob, &machines));
        } else {
            damaged.push(UnitId(unit_id));
        }
    }
    damaged.extend((next..units_total).map(UnitId));
    Ok(Scrubbed {
        root: merkle::root(&leaves),
        damaged,
    })
}

/// The stored form of `root`: the root, then a checksum of it and its job.
pub(super) fn stored(job_id: &JobId, root: &Hash) -> Vec<u8> {
    let mut blob = root.to_vec();
    blob.extend_from_slice(&root_checksum(job_id, root).to_le_bytes());
    blob
}

fn root_checksum(job_id: &JobId, root: &Hash) -> i64 {
    checksum(&[job_id.as_str().as_bytes(), b"counts root", root])
}

/// The root a stored blob holds, if it is whole and passes its checksum.
pub(super) fn parse(job_id: &JobId, blob: &[u8]) -> Option<Hash> {
    let (root, sum) = blob.split_at_checked(32)?;
    let root: Hash = root.try_into().ok()?;
    let sum = i64::from_le_bytes(sum.try_into().ok()?);
    (root_checksum(job_id, &root) == sum).then_some(root)
}

/// Judges a done job's counts against its stored root (`None` when it has
/// none, or it fails its checksum).
pub(super) fn judge(scrubbed: Scrubbed, stored_root: Option<Hash>) -> Verdict {
    if !scrubbed.damaged.is_empty() {
        return Verdict::Damaged(scrubbed.damaged);
    }
    match stored_root {
        Some(root) if root == scrubbed.root => Verdict::Sound,
        Some(_) => Verdict::Altered,
        None => Verdict::Rooted(scrubbed.root),
    }
}

/// Computes the roots of jobs as they finish, off the journal's thread: a
/// job of 434,021 units takes about 0.35 s to read back, which would hold
/// up every report behind it. It reads the committed rows on a connection
/// of its own; the journal's thread stores each root with its next write
/// (or within 2 s). A root not stored before a stop is computed at the
/// next start, from counts that all pass their checksums.
pub(super) struct Rooter {
    finished: mpsc::Sender<JobId>,
    roots: mpsc::Receiver<(JobId, Hash)>,
    thread: std::thread::JoinHandle<()>,
}

impl Rooter {
    /// Starts the thread that reads the journal at `path`.
    pub(super) fn spawn(path: PathBuf) -> std::io::Result<Rooter> {
        let (finished, jobs) = mpsc::channel::<JobId>();
        let (found, roots) = mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("perft-roots".to_owned())
            .spawn(move || {
                for job_id in jobs {
                    match compute(&path, &job_id) {
                        Ok(Some(root)) => {
                            let _ = found.send((job_id, root));
                        }
                        Ok(None) => {}
                        Err(e) => {
                            tracing::warn!(job = %job_id, error = %e, "journal: cannot read a finished job's counts for its Merkle root; the next start computes it");
                        }
                    }
                }
            })?;
        Ok(Rooter {
            finished,
            roots,
            thread,
        })
    }

    /// Job `job_id` was committed done: its root is wanted.
    pub(super) fn finished(&self, job_id: &JobId) {
        let _ = self.finished.send(job_id.clone());
    }

    /// The roots computed since the last call.
    pub(super) fn ready(&self) -> Vec<(JobId, Hash)> {
        self.roots.try_iter().collect()
    }

    /// At a clean stop: the roots of every job finished so far, once
    /// computed (the thread ends when it has no job left).
    pub(super) fn finish(self) -> Vec<(JobId, Hash)> {
        let Rooter {
            finished,
            roots,
            thread,
        } = self;
        drop(finished);
        let _ = thread.join();
        roots.try_iter().collect()
    }
}

/// The root of done job `job_id` from its committed counts, in one read
/// transaction; `None` (logged) when they are damaged.
fn compute(path: &Path, job_id: &JobId) -> Result<Option<Hash>, JournalError> {
    let conn = reader(path)?;
    let (_, sql) = errors(path);
    conn.execute_batch("BEGIN").map_err(sql)?;
    let read = job_spec(&conn, job_id)
        .map_err(sql)
        .and_then(|found| match found {
            Some((units_total, spec)) => scrub(&conn, path, job_id, &spec, units_total).map(Some),
            None => Ok(None),
        });
    // Only reads happened: ending the transaction cannot lose anything.
    let _ = conn.execute_batch("COMMIT");
    let Some(scrubbed) = read? else {
        return Ok(None);
    };
    if scrubbed.damaged.is_empty() {
        return Ok(Some(scrubbed.root));
    }
    // Cannot happen while the journal holds what it was given; the next
    // start finds the same damage and counts the units again.
    tracing::error!(job = %job_id, units = %UnitId::listed(&scrubbed.damaged), "journal: a finished job's counts are damaged; no Merkle root is stored");
    Ok(None)
}

/// Stores `root` for done job `job_id`.
pub(super) fn store(conn: &Connection, job_id: &JobId, root: &Hash) -> rusqlite::Result<()> {
    conn.execute(
        "UPDATE jobs SET counts_root = ?2 WHERE id = ?1",
        params![job_id.as_str(), stored(job_id, root)],
    )?;
    Ok(())
}

/// The stored root of job `job_id`, as stored (unchecked).
pub(super) fn read_stored(
    conn: &Connection,
    path: &Path,
    job_id: &JobId,
) -> Result<Option<Vec<u8>>, JournalError> {
    let (_, sql) = errors(path);
    conn.prepare_cached("SELECT counts_root FROM jobs WHERE id = ?1")
        .and_then(|mut stmt| stmt.query_row([job_id.as_str()], |row| row.get(0)))
        .map_err(sql)
}

/// The verdict on done job `job_id`'s counts as the journal holds them.
pub(super) fn verdict(
    conn: &Connection,
    path: &Path,
    job_id: &JobId,
    spec: &JobSpec,
    units_total: u64,
) -> Result<Verdict, JournalError> {
    let stored = read_stored(conn, path, job_id)?;
    let root = stored.as_deref().and_then(|blob| parse(job_id, blob));
    if stored.is_some() && root.is_none() {
        tracing::error!(job = %job_id, "journal: a done job's Merkle root fails its own checksum; it is computed again if its counts are sound");
    }
    Ok(judge(scrub(conn, path, job_id, spec, units_total)?, root))
}

/// Checks every done job served from its summary against its root, at
/// start: a sound one stays as it is; one with no root (done before roots
/// were kept) or a damaged root gets one; one with damaged or altered
/// counts is rebuilt from its units with those counted again.
pub(super) fn check_done_jobs(
    conn: &Connection,
    path: &Path,
    jobs: &mut [RestoredJob],
) -> Result<(), JournalError> {
    let started = std::time::Instant::now();
    let (mut checked, mut units) = (0u64, 0u64);
    for job in jobs
        .iter_mut()
        .filter(|job| job.state == JobState::Done && job.summary.is_some())
    {
        checked += 1;
        units = units.saturating_add(job.units_total);
        match verdict(conn, path, &job.id, &job.spec, job.units_total)? {
            Verdict::Sound => {}
            Verdict::Rooted(root) => {
                if let Err(e) = store(conn, &job.id, &root) {
                    tracing::warn!(job = %job.id, error = %e, "journal: cannot store a done job's Merkle root; it is computed again at the next start");
                }
            }
            verdict => {
                let recount = verdict.recount(job.units_total);
                let why = match verdict {
                    Verdict::Altered => {
                        "its counts pass their checksums but not the Merkle root stored when it finished"
                    }
                    _ => "counts are missing or fail their checksums",
                };
                tracing::error!(
                    job = %job.id,
                    units = %UnitId::listed(&recount),
                    "journal: a done job is damaged ({why}); those units are counted again and the job is served as damaged until they are"
                );
                job.summary = None;
                job.recount = recount;
            }
        }
    }
    if checked > 0 {
        tracing::info!(
            jobs = checked,
            units,
            ms = started.elapsed().as_millis() as u64,
            "journal: checked the done jobs' counts against their Merkle roots"
        );
    }
    Ok(())
}

/// The units and spec of job `job_id`, read with the restore's own code.
fn job_spec(conn: &Connection, job_id: &JobId) -> rusqlite::Result<Option<(u64, JobSpec)>> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {} FROM jobs WHERE id = ?1",
        super::restore::JOB_COLUMNS
    ))?;
    let found = stmt
        .query_row([job_id.as_str()], |row| {
            Ok(super::restore::job_row(row, Path::new("journal")).ok())
        })
        .optional()?
        .flatten();
    Ok(found.map(|job| (job.units_total, job.spec)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id() -> JobId {
        JobId::parse("0123456789ab").unwrap()
    }

    #[test]
    fn a_stored_root_reads_back_and_a_flipped_bit_is_refused() {
        let root = [7u8; 32];
        let blob = stored(&id(), &root);
        assert_eq!(parse(&id(), &blob), Some(root));
        for i in 0..blob.len() {
            let mut flipped = blob.clone();
            flipped[i] ^= 0x04;
            assert_eq!(parse(&id(), &flipped), None, "bit flipped in byte {i}");
        }
        assert_eq!(parse(&id(), &blob[..39]), None);
        assert_eq!(parse(&JobId::parse("ba9876543210").unwrap(), &blob), None);
    }

    #[test]
    fn the_verdict_tells_damaged_counts_from_a_damaged_root() {
        let scrubbed = |damaged: Vec<UnitId>| Scrubbed {
            root: [1; 32],
            damaged,
        };
        assert_eq!(judge(scrubbed(vec![]), Some([1; 32])), Verdict::Sound);
        assert_eq!(judge(scrubbed(vec![]), None), Verdict::Rooted([1; 32]));
        assert_eq!(judge(scrubbed(vec![]), Some([2; 32])), Verdict::Altered);
        assert_eq!(
            judge(scrubbed(vec![UnitId(3)]), Some([1; 32])),
            Verdict::Damaged(vec![UnitId(3)])
        );
        assert_eq!(Verdict::Altered.recount(3), [UnitId(0), UnitId(1), UnitId(2)]);
        assert!(Verdict::Rooted([0; 32]).recount(3).is_empty());
    }

    #[test]
    fn a_leaf_sees_its_index_its_count_and_its_deciders() {
        let base = leaf(1, b"count", "alice");
        assert_ne!(base, leaf(2, b"count", "alice"));
        assert_ne!(base, leaf(1, b"counT", "alice"));
        assert_ne!(base, leaf(1, b"count", "alicE"));
        assert_ne!(base, leaf(1, b"coun", "talice"));
    }
}
