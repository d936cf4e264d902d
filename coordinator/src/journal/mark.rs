//! The journal's commit sequence and its mark: every write transaction
//! bumps a counter kept in the journal's `meta` table, and once the
//! transaction is durable the counter is also written (and fsynced) to
//! `journal.mark` beside it. The mark may lag the journal (a crash between
//! the commit and the mark), never lead it; so a journal whose sequence is
//! behind its mark lost committed transactions (its write-ahead log was
//! damaged, cut or deleted: SQLite drops a log's frames from the first bad
//! one on, silently), and is refused.
//!
//! The file holds two 32-byte slots, each a magic, a sequence and a
//! checksum; a commit rewrites slot `sequence % 2` in place and syncs its
//! data (one device flush, no new inode, no rename: the mark's cost per
//! group commit). A write torn by a crash spoils one slot; the other still
//! holds the sequence before, a mark that lags, as allowed. Marks of the
//! first format (two lines of text) are still read.

use std::io::{Read, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension};

use super::JournalError;

/// The file beside the journal.
pub(super) const MARK_FILE: &str = "journal.mark";

/// The first line of a mark file of the first format.
const HEADER: &str = "deep-perft journal mark 1";
/// The start of each slot of the second format.
const SLOT_MAGIC: &[u8; 8] = b"DPMARK02";
/// A slot: magic, sequence (little endian), 16 bytes of checksum.
const SLOT_BYTES: usize = 32;
/// A mark file of the second format: two slots.
const MARK_BYTES: usize = 2 * SLOT_BYTES;

/// A mark file is a few dozen bytes; more is not one.
const MAX_MARK_BYTES: u64 = 256;

/// The fix named in every refusal.
const FIX: &str =
    "restore the data dir from a backup, or start with --accept-journal-loss to go on without the lost work";

/// The journal's sequence, `None` in a journal from before the mark.
pub(super) fn journal_sequence(conn: &Connection, path: &Path) -> Result<Option<u64>, JournalError> {
    let value: Option<i64> = conn
        .query_row("SELECT value FROM meta WHERE key = 'sequence'", [], |row| {
            row.get(0)
        })
        .optional()
        .map_err(|e| JournalError::Corrupt {
            path: path.to_owned(),
            reason: format!("cannot read the commit sequence: {e}"),
        })?;
    value
        .map(|v| {
            u64::try_from(v).map_err(|_| JournalError::Corrupt {
                path: path.to_owned(),
                reason: format!("the commit sequence is negative ({v})"),
            })
        })
        .transpose()
}

/// Sets the sequence inside the caller's transaction.
pub(super) fn set_sequence(conn: &Connection, sequence: u64) -> rusqlite::Result<()> {
    conn.execute(
        "INSERT OR REPLACE INTO meta (key, value) VALUES ('sequence', ?1)",
        [i64::try_from(sequence).unwrap_or(i64::MAX)],
    )
    .map(drop)
}

/// Why a mark file cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum MarkError {
    #[error("cannot read it: {0}")]
    Io(#[source] std::io::Error),
    #[error("it is not a journal mark ({0})")]
    Garbled(String),
}

/// Reads the mark: `None` when there is none.
pub(super) fn read(path: &Path) -> Result<Option<u64>, MarkError> {
    let file = match std::fs::File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(MarkError::Io(e)),
    };
    let mut bytes = Vec::new();
    file.take(MAX_MARK_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(MarkError::Io)?;
    if bytes.len() as u64 > MAX_MARK_BYTES {
        return Err(MarkError::Garbled(format!("more than {MAX_MARK_BYTES} bytes")));
    }
    parse(&bytes).map(Some)
}

fn parse(bytes: &[u8]) -> Result<u64, MarkError> {
    if bytes.starts_with(SLOT_MAGIC) || bytes.len() == MARK_BYTES {
        return parse_slots(bytes);
    }
    parse_text(bytes)
}

/// The sequence of the newest slot whose checksum holds.
fn parse_slots(bytes: &[u8]) -> Result<u64, MarkError> {
    if bytes.len() != MARK_BYTES {
        return Err(MarkError::Garbled(format!(
            "{} bytes, not {MARK_BYTES}",
            bytes.len()
        )));
    }
    bytes
        .chunks_exact(SLOT_BYTES)
        .filter_map(parse_slot)
        .max()
        .ok_or_else(|| MarkError::Garbled("neither slot holds a valid sequence".to_owned()))
}

fn slot_checksum(sequence: u64) -> [u8; 16] {
    let mut hasher = blake3::Hasher::new_derive_key("deep-perft journal mark slot v2");
    hasher.update(SLOT_MAGIC);
    hasher.update(&sequence.to_le_bytes());
    let mut sum = [0u8; 16];
    sum.copy_from_slice(&hasher.finalize().as_bytes()[..16]);
    sum
}

fn slot(sequence: u64) -> [u8; SLOT_BYTES] {
    let mut slot = [0u8; SLOT_BYTES];
    slot[..8].copy_from_slice(SLOT_MAGIC);
    slot[8..16].copy_from_slice(&sequence.to_le_bytes());
    slot[16..].copy_from_slice(&slot_checksum(sequence));
    slot
}

fn parse_slot(slot: &[u8]) -> Option<u64> {
    if &slot[..8] != SLOT_MAGIC {
        return None;
    }
    let sequence = u64::from_le_bytes(slot[8..16].try_into().ok()?);
    (slot[16..] == slot_checksum(sequence)).then_some(sequence)
}

/// A mark of the first format: two lines of text.
fn parse_text(bytes: &[u8]) -> Result<u64, MarkError> {
    let garbled = |what: &str| MarkError::Garbled(what.to_owned());
    let text = std::str::from_utf8(bytes).map_err(|_| garbled("not text"))?;
    let mut lines = text.split('\n');
    if lines.next() != Some(HEADER) {
        return Err(garbled("no header"));
    }
    let digits = lines
        .next()
        .and_then(|line| line.strip_prefix("sequence "))
        .ok_or_else(|| garbled("no sequence line"))?;
    if digits.is_empty() || digits.len() > 19 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(garbled("the sequence is not a number"));
    }
    if lines.next() != Some("") || lines.next().is_some() {
        return Err(garbled("trailing bytes"));
    }
    digits
        .parse()
        .map_err(|_| garbled("the sequence is not a number"))
}

/// Writes a new mark durably: a new file with both slots, fsynced,
/// renamed over the old one (a crash leaves the old mark or the new one,
/// never half of one; the rename itself may be lost with the crash, which
/// leaves the mark behind the journal, as allowed). At open; commits
/// rewrite a slot in place ([`MarkFile`]).
pub(super) fn write(path: &Path, sequence: u64) -> std::io::Result<()> {
    let mut fresh = path.as_os_str().to_owned();
    fresh.push(".new");
    let fresh = PathBuf::from(fresh);
    let mut file = std::fs::File::create(&fresh)?;
    file.write_all(&slot(sequence))?;
    file.write_all(&slot(sequence))?;
    file.sync_all()?;
    drop(file);
    std::fs::rename(&fresh, path)
}

/// The mark file held open by the journal's writer: each commit rewrites
/// one slot in place.
#[derive(Debug)]
pub(super) struct MarkFile(std::fs::File);

impl MarkFile {
    /// Opens the mark [`write`] made.
    pub(super) fn open(path: &Path) -> std::io::Result<MarkFile> {
        let file = std::fs::OpenOptions::new().read(true).write(true).open(path)?;
        if file.metadata()?.len() != MARK_BYTES as u64 {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                "the mark is not of two slots",
            ));
        }
        Ok(MarkFile(file))
    }

    /// Rewrites slot `sequence % 2` and flushes it to the device.
    pub(super) fn set(&mut self, sequence: u64) -> std::io::Result<()> {
        let offset = (sequence % 2) * SLOT_BYTES as u64;
        self.0.write_all_at(&slot(sequence), offset)?;
        self.0.sync_data()
    }
}

/// Whether the journal holds anything a client put there.
fn holds_work(conn: &Connection) -> bool {
    ["jobs", "participants"].iter().any(|table| {
        conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |row| {
            row.get::<_, i64>(0)
        })
        .map_or(true, |n| n > 0)
    })
}

/// Compares the journal's sequence with its mark at open, and returns the
/// sequence to go on from. Refuses a journal behind its mark, a journal
/// with a sequence but no mark, and a mark that cannot be read, unless
/// `accept_loss`: then what was lost is logged and the mark is rewritten.
/// A journal without a sequence (from before the mark) is upgraded.
pub(super) fn check(
    conn: &Connection,
    path: &Path,
    mark_path: &Path,
    accept_loss: bool,
) -> Result<u64, JournalError> {
    let journal = journal_sequence(conn, path)?;
    let refuse = |error: JournalError| -> Result<(), JournalError> {
        if accept_loss {
            tracing::error!(
                error = %error,
                "journal: --accept-journal-loss given: going on with what the journal holds; the mark is rewritten"
            );
            Ok(())
        } else {
            Err(error)
        }
    };
    let mark = match read(mark_path) {
        Ok(mark) => mark,
        Err(e) => {
            refuse(JournalError::Mark {
                path: mark_path.to_owned(),
                fix: FIX,
                source: e,
            })?;
            return Ok(journal.unwrap_or(0));
        }
    };
    match (journal, mark) {
        (Some(journal), Some(mark)) if journal < mark => refuse(JournalError::RolledBack {
            path: path.to_owned(),
            journal,
            mark,
            fix: FIX,
        })?,
        (Some(_), Some(_)) => {}
        (Some(journal), None) => refuse(JournalError::MarkMissing {
            path: mark_path.to_owned(),
            journal,
            fix: FIX,
        })?,
        (None, Some(mark)) if mark > 0 => refuse(JournalError::RolledBack {
            path: path.to_owned(),
            journal: 0,
            mark,
            fix: FIX,
        })?,
        (None, _) => {
            if holds_work(conn) {
                tracing::info!(
                    journal = %path.display(),
                    "journal: from before the commit mark; upgraded (its sequence starts now, in {MARK_FILE} beside it)"
                );
            }
        }
    }
    Ok(journal.unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_mark_reads_back_and_anything_else_is_garbled() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(MARK_FILE);
        assert!(read(&path).unwrap().is_none());
        write(&path, 42).unwrap();
        assert_eq!(read(&path).unwrap(), Some(42));
        let mut held = MarkFile::open(&path).unwrap();
        held.set(43).unwrap();
        assert_eq!(read(&path).unwrap(), Some(43));
        held.set(44).unwrap();
        assert_eq!(read(&path).unwrap(), Some(44));
        // A torn write spoils one slot: the other holds the mark before.
        let mut bytes = std::fs::read(&path).unwrap();
        bytes[8] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(read(&path).unwrap(), Some(43));
        bytes[SLOT_BYTES + 9] ^= 1;
        std::fs::write(&path, &bytes).unwrap();
        assert!(matches!(read(&path), Err(MarkError::Garbled(_))));
        // The first format is still read.
        std::fs::write(&path, b"deep-perft journal mark 1\nsequence 7\n").unwrap();
        assert_eq!(read(&path).unwrap(), Some(7));
        for bad in [
            &b""[..],
            b"deep-perft journal mark 1\n",
            b"deep-perft journal mark 1\nsequence \n",
            b"deep-perft journal mark 1\nsequence -1\n",
            b"deep-perft journal mark 1\nsequence 99999999999999999999\n",
            b"deep-perft journal mark 1\nsequence 4\nmore\n",
            b"deep-perft journal mark 1\nsequence 4",
            b"\xff\xfe",
            b"DPMARK02",
            &[0u8; MARK_BYTES],
        ] {
            std::fs::write(&path, bad).unwrap();
            assert!(matches!(read(&path), Err(MarkError::Garbled(_))), "{bad:?}");
        }
        std::fs::write(&path, vec![b'a'; 1000]).unwrap();
        assert!(matches!(read(&path), Err(MarkError::Garbled(_))));
    }

    /// What the mark costs a commit: small commits (WAL,
    /// `synchronous=FULL`, as the journal) with no mark, with a new file
    /// renamed over the mark (the first format's way), and with a slot
    /// rewritten in place, alternating; prints each mode's median.
    /// `cargo test -p perft-coordinator --release mark_cost -- --ignored --nocapture`
    #[test]
    #[ignore = "a measurement, not a check: run by hand"]
    fn mark_cost() {
        let dir = tempfile::tempdir().unwrap();
        let conn = Connection::open(dir.path().join("bench.sqlite")).unwrap();
        conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        conn.pragma_update(None, "synchronous", "FULL").unwrap();
        conn.execute_batch("CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL)")
            .unwrap();
        let mark = dir.path().join(MARK_FILE);
        write(&mark, 0).unwrap();
        let mut held = MarkFile::open(&mark).unwrap();
        let renamed = dir.path().join("renamed.mark");
        let mut n = 0;
        let mut took: [Vec<std::time::Duration>; 3] = Default::default();
        for _round in 0..5 {
            for (mode, times) in took.iter_mut().enumerate() {
                let start = std::time::Instant::now();
                for _ in 0..200 {
                    n += 1;
                    let tx = conn.unchecked_transaction().unwrap();
                    set_sequence(&tx, n).unwrap();
                    tx.commit().unwrap();
                    match mode {
                        1 => write(&renamed, n).unwrap(),
                        2 => held.set(n).unwrap(),
                        _ => {}
                    }
                }
                times.push(start.elapsed() / 200);
            }
        }
        for (mode, mut times) in ["no mark", "new file renamed", "slot in place"].iter().zip(took) {
            times.sort();
            eprintln!("{mode}: median {:?} a commit", times[times.len() / 2]);
        }
    }
}
