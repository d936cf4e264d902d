//! Certificate files: the one place a certificate meets the file system.
//! A file is read whole and decoded (the decoder bounds what it expands
//! to), and written through a file beside it, renamed once complete, so
//! that a reader never sees half a certificate.

use std::io;
use std::path::{Path, PathBuf};

use crate::{Certificate, DecodeError};

/// A certificate file that cannot be read, decoded or written.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("cannot read '{}': {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("'{}': {source}", path.display())]
    Decode {
        path: PathBuf,
        #[source]
        source: DecodeError,
    },
    #[error("cannot write '{}': {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

impl FileError {
    /// Whether the file given is at fault (unreadable, or no certificate),
    /// as opposed to the place it was to be written.
    pub fn is_bad_file(&self) -> bool {
        !matches!(self, FileError::Write { .. })
    }
}

/// The certificate in the file at `path`, and the file's size in bytes.
pub fn read(path: &Path) -> Result<(Certificate, u64), FileError> {
    let bytes = std::fs::read(path).map_err(|source| FileError::Read {
        path: path.to_owned(),
        source,
    })?;
    let cert = Certificate::decode(&bytes).map_err(|source| FileError::Decode {
        path: path.to_owned(),
        source,
    })?;
    Ok((cert, bytes.len() as u64))
}

/// Writes a certificate's `bytes` (as [`Certificate::encode`] makes them)
/// to `path` through `path.partial`, renamed over `path` once complete.
pub fn write(path: &Path, bytes: &[u8]) -> Result<(), FileError> {
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    let failed = |source| FileError::Write {
        path: path.to_owned(),
        source,
    };
    std::fs::write(&partial, bytes).map_err(failed)?;
    std::fs::rename(&partial, path).map_err(|e| {
        let _ = std::fs::remove_file(&partial);
        failed(e)
    })
}
