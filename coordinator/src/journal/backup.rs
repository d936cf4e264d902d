//! Online copies of the journal for the operator (`perft backup DIR`): a
//! consistent copy written while the coordinator serves, into a directory
//! of the coordinator's machine, with a commit mark of its own, so `perft
//! serve --data-dir DIR` starts from it as from the data dir.
//!
//! The copy is SQLite's `VACUUM INTO`, run on a read-only connection of its
//! own: one read transaction, so in WAL mode it is a snapshot that holds
//! every commit before it and none after it (none half), and it takes no
//! lock a commit waits for. The journal's thread goes on committing while
//! the copy is written (a checkpoint meanwhile is partial, the log grows
//! until the next one). The copy's mark is the sequence the copy itself
//! holds (read from the copy), and the copy holds nothing but the
//! database and its mark: no lock file, no write-ahead log.

use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant};

use rusqlite::{Connection, OpenFlags};

use super::mark;

/// The longest directory name taken (bytes).
const MAX_DIR_BYTES: usize = 4096;

/// What was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Backup {
    /// The directory holding the copy, as resolved on this machine.
    pub dir: PathBuf,
    /// The commit sequence the copy holds (and its mark says).
    pub sequence: u64,
    /// The copy's database, in bytes.
    pub bytes: u64,
    /// How long the copy took.
    pub took: Duration,
}

/// Why no copy was written.
#[derive(Debug, thiserror::Error)]
pub enum BackupError {
    /// The directory asked for cannot take a copy (the caller's to fix).
    #[error("backup directory '{dir}' refused: {reason}")]
    Target { dir: String, reason: String },
    #[error("cannot write the copy in {}: {what}: {source}", .dir.display())]
    Io {
        dir: PathBuf,
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot copy the journal into {}: {what}: {source}", .dir.display())]
    Sql {
        dir: PathBuf,
        what: &'static str,
        #[source]
        source: rusqlite::Error,
    },
    #[error("the copy in {} cannot be read back: {source}", .dir.display())]
    ReadBack {
        dir: PathBuf,
        #[source]
        source: Box<super::JournalError>,
    },
}

/// Where a copy goes: checked, and whether it must still be created.
#[derive(Debug)]
pub(super) struct Target {
    pub(super) dir: PathBuf,
    pub(super) create: bool,
}

/// Checks `raw` (a caller's text: hostile) as a directory for a copy of
/// the data dir `data_dir`: an absolute path without `..`, whose parent
/// exists, that is not a symbolic link, does not exist or is an empty
/// directory, and is neither the data dir nor inside it (symbolic links
/// in its parent resolved).
pub(super) fn target(data_dir: &Path, raw: &str) -> Result<Target, BackupError> {
    let refuse = |reason: String| BackupError::Target {
        dir: perft_core::echoed(raw),
        reason,
    };
    if raw.is_empty() {
        return Err(refuse("no directory given".to_owned()));
    }
    if raw.len() > MAX_DIR_BYTES {
        return Err(refuse(format!("longer than {MAX_DIR_BYTES} bytes")));
    }
    if raw.chars().any(char::is_control) {
        return Err(refuse("it holds control characters".to_owned()));
    }
    let path = Path::new(raw);
    if !path.is_absolute() {
        return Err(refuse(
            "not an absolute path (the coordinator writes the copy on its own machine: name the directory there, from /)"
                .to_owned(),
        ));
    }
    if path.components().any(|c| c == Component::ParentDir) {
        return Err(refuse("it holds '..'".to_owned()));
    }
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(refuse("the root directory is not empty".to_owned()));
    };
    let parent = parent
        .canonicalize()
        .map_err(|e| refuse(format!("its parent directory cannot be used: {e}")))?;
    let dir = parent.join(name);
    let data = data_dir
        .canonicalize()
        .map_err(|e| refuse(format!("the data dir cannot be resolved: {e}")))?;
    if dir == data {
        return Err(refuse("it is the data dir itself".to_owned()));
    }
    if dir.starts_with(&data) {
        return Err(refuse("it is inside the data dir".to_owned()));
    }
    let create = match std::fs::symlink_metadata(&dir) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
        Err(e) => return Err(refuse(format!("cannot look at it: {e}"))),
        Ok(meta) if meta.file_type().is_symlink() => {
            return Err(refuse(
                "it is a symbolic link (name the directory itself)".to_owned(),
            ));
        }
        Ok(meta) if !meta.is_dir() => return Err(refuse("it exists and is not a directory".to_owned())),
        Ok(_) => {
            let mut entries = std::fs::read_dir(&dir).map_err(|e| refuse(format!("cannot list it: {e}")))?;
            if entries.next().is_some() {
                return Err(refuse(
                    "it is not empty (a copy goes into a new or empty directory)".to_owned(),
                ));
            }
            false
        }
    };
    Ok(Target { dir, create })
}

/// What the copy wrote, removed again when it fails.
struct Written<'a> {
    target: &'a Target,
    done: bool,
}

impl Drop for Written<'_> {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        let dir = &self.target.dir;
        for name in [DB_FILE, mark::MARK_FILE, "journal.mark.new"] {
            let _ = std::fs::remove_file(dir.join(name));
        }
        if self.target.create {
            let _ = std::fs::remove_dir(dir);
        }
    }
}

const DB_FILE: &str = "journal.sqlite";

/// Writes a copy of the journal `db` (serving) into `target`: the copy's
/// database, fsynced, then its mark, fsynced, then the directory, fsynced.
/// Blocking: run it off the async threads. On failure nothing of the copy
/// is left.
pub(super) fn copy(db: &Path, target: &Target) -> Result<Backup, BackupError> {
    let started = Instant::now();
    let dir = target.dir.clone();
    let io = |what: &'static str| {
        let dir = dir.clone();
        move |source: std::io::Error| BackupError::Io { dir, what, source }
    };
    let sql = |what: &'static str| {
        let dir = dir.clone();
        move |source: rusqlite::Error| BackupError::Sql { dir, what, source }
    };
    if target.create {
        let mut builder = std::fs::DirBuilder::new();
        // The copy holds the lease key and the credentials' hashes.
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&dir).map_err(io("creating the directory"))?;
    }
    let mut written = Written { target, done: false };
    let copy_db = dir.join(DB_FILE);
    let copy_text = copy_db.to_str().ok_or_else(|| BackupError::Target {
        dir: perft_core::echoed(&dir.to_string_lossy()),
        reason: "its resolved path is not UTF-8".to_owned(),
    })?;
    // Read-only, and no URI names: the copy's name is only a file name.
    let source = Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(sql("opening the journal"))?;
    source
        .busy_timeout(Duration::from_secs(10))
        .map_err(sql("opening the journal"))?;
    source
        .execute("VACUUM INTO ?1", [copy_text])
        .map_err(sql("copying"))?;
    drop(source);
    let sequence = {
        let copy = Connection::open_with_flags(
            &copy_db,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(sql("reading the copy back"))?;
        let sequence = mark::journal_sequence(&copy, &copy_db).map_err(|e| BackupError::ReadBack {
            dir: dir.clone(),
            source: Box::new(e),
        })?;
        sequence.unwrap_or(0)
    };
    let file = std::fs::File::open(&copy_db).map_err(io("opening the copy to sync it"))?;
    file.sync_all().map_err(io("syncing the copy"))?;
    let bytes = file.metadata().map_err(io("reading the copy's size"))?.len();
    drop(file);
    mark::write(&dir.join(mark::MARK_FILE), sequence).map_err(io("writing the copy's mark"))?;
    sync_dir(&dir).map_err(io("syncing the directory"))?;
    if target.create
        && let Some(parent) = dir.parent()
    {
        sync_dir(parent).map_err(io("syncing the parent directory"))?;
    }
    written.done = true;
    Ok(Backup {
        dir,
        sequence,
        bytes,
        took: started.elapsed(),
    })
}

/// Makes a directory's entries (a new file, a rename) durable.
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests;
