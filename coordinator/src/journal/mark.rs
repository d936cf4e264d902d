//! The journal's commit sequence and its mark: every write transaction
//! bumps a counter kept in the journal's `meta` table, and once the
//! transaction is durable the counter is also written (and fsynced) to
//! `journal.mark` beside it. The mark may lag the journal (a crash between
//! the commit and the mark), never lead it; so a journal whose sequence is
//! behind its mark lost committed transactions (its write-ahead log was
//! damaged, cut or deleted: SQLite drops a log's frames from the first bad
//! one on, silently), and is refused.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension};

use super::JournalError;

/// The file beside the journal.
pub(super) const MARK_FILE: &str = "journal.mark";

/// The first line of a mark file.
const HEADER: &str = "deep-perft journal mark 1";

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

/// Writes the mark durably: a new file, fsynced, renamed over the old one
/// (a crash leaves the old mark or the new one, never half of one; the
/// rename itself may be lost with the crash, which leaves the mark behind
/// the journal, as allowed).
pub(super) fn write(path: &Path, sequence: u64) -> std::io::Result<()> {
    let mut fresh = path.as_os_str().to_owned();
    fresh.push(".new");
    let fresh = PathBuf::from(fresh);
    let mut file = std::fs::File::create(&fresh)?;
    file.write_all(format!("{HEADER}\nsequence {sequence}\n").as_bytes())?;
    file.sync_all()?;
    drop(file);
    std::fs::rename(&fresh, path)
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
        for bad in [
            &b""[..],
            b"deep-perft journal mark 1\n",
            b"deep-perft journal mark 1\nsequence \n",
            b"deep-perft journal mark 1\nsequence -1\n",
            b"deep-perft journal mark 1\nsequence 99999999999999999999\n",
            b"deep-perft journal mark 1\nsequence 4\nmore\n",
            b"deep-perft journal mark 1\nsequence 4",
            b"\xff\xfe",
        ] {
            std::fs::write(&path, bad).unwrap();
            assert!(matches!(read(&path), Err(MarkError::Garbled(_))), "{bad:?}");
        }
        std::fs::write(&path, vec![b'a'; 1000]).unwrap();
        assert!(matches!(read(&path), Err(MarkError::Garbled(_))));
    }

    /// What the mark costs a commit: 1,000 small commits (WAL,
    /// `synchronous=FULL`, as the journal) without and with the mark.
    /// `cargo test -p perft-coordinator --release mark_cost -- --ignored --nocapture`
    #[test]
    #[ignore]
    fn mark_cost() {
        let dir = tempfile::tempdir().unwrap();
        let conn = Connection::open(dir.path().join("bench.sqlite")).unwrap();
        conn.pragma_update(None, "journal_mode", "WAL").unwrap();
        conn.pragma_update(None, "synchronous", "FULL").unwrap();
        conn.execute_batch("CREATE TABLE meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL)")
            .unwrap();
        let mark = dir.path().join(MARK_FILE);
        let mut n = 0;
        for with_mark in [false, true, false, true] {
            let start = std::time::Instant::now();
            for _ in 0..1000 {
                n += 1;
                let tx = conn.unchecked_transaction().unwrap();
                set_sequence(&tx, n).unwrap();
                tx.commit().unwrap();
                if with_mark {
                    write(&mark, n).unwrap();
                }
            }
            let took = start.elapsed();
            eprintln!(
                "1000 commits, mark {with_mark}: {took:?} ({:?} a commit)",
                took / 1000
            );
        }
        let start = std::time::Instant::now();
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .unwrap();
        eprintln!("checkpoint of 4000 commits: {:?}", start.elapsed());
    }
}
