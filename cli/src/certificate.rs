//! `perft certificate JOB`: a done cluster job's certificate, streamed
//! from a running coordinator or made from a stopped one's data dir, read
//! back before it is written so that no unreadable file is left.

use std::path::{Path, PathBuf};

use perft_certificate::Certificate;
use perft_coordinator::certify::{CertifyError, certificate_offline};
use perft_coordinator::journal::{FinishedError, JournalError};
use perft_proto as pb;

use crate::args::{CertificateArgs, CoordinatorArg};
use crate::client::{connect, status_error};
use crate::cluster::runtime;
use crate::error::CliError;

/// The largest certificate accepted from a coordinator: far above a
/// record job's (10 million units at about 30 bytes each).
const MAX_CERTIFICATE_BYTES: u64 = 16 << 30;

/// Streams job `job`'s certificate from the coordinator, checking that the
/// chunks come in order and add up to the announced length.
async fn fetch(coordinator: &CoordinatorArg, job: &str) -> Result<Vec<u8>, CliError> {
    let mut client = connect(coordinator).await?;
    let mut stream = client
        .get_certificate(pb::GetCertificateRequest {
            job_id: job.to_owned(),
        })
        .await
        .map_err(status_error)?
        .into_inner();
    let broken =
        |why: String| CliError::Failed(format!("the coordinator's certificate stream is broken: {why}"));
    let mut bytes: Vec<u8> = Vec::new();
    let mut total: Option<u64> = None;
    while let Some(chunk) = stream.message().await.map_err(status_error)? {
        let announced = *total.get_or_insert(chunk.total_bytes);
        if announced != chunk.total_bytes {
            return Err(broken(format!(
                "a chunk says the file is {} bytes, the first said {announced}",
                chunk.total_bytes
            )));
        }
        if announced > MAX_CERTIFICATE_BYTES {
            return Err(broken(format!(
                "a file of {announced} bytes, more than the {MAX_CERTIFICATE_BYTES} accepted"
            )));
        }
        if chunk.offset != bytes.len() as u64 {
            return Err(broken(format!(
                "a chunk at byte {} where byte {} was due",
                chunk.offset,
                bytes.len()
            )));
        }
        if bytes.len() as u64 + chunk.data.len() as u64 > announced {
            return Err(broken(format!("more than the {announced} bytes announced")));
        }
        if bytes.is_empty() {
            bytes.reserve(announced.min(64 << 20) as usize);
        }
        bytes.extend_from_slice(&chunk.data);
    }
    match total {
        Some(total) if total == bytes.len() as u64 => Ok(bytes),
        Some(total) => Err(broken(format!("it ended at byte {} of {total}", bytes.len()))),
        None => Err(broken("it sent nothing".to_owned())),
    }
}

/// An offline failure: the user's to fix (exit 2) unless the journal is
/// damaged or unreadable.
fn offline_error(e: CertifyError) -> CliError {
    match &e {
        CertifyError::UnitList { .. }
        | CertifyError::Finished(
            FinishedError::NotFound(_)
            | FinishedError::NotDone { .. }
            | FinishedError::Journal(
                JournalError::Locked { .. } | JournalError::Newer { .. } | JournalError::Older { .. },
            ),
        ) => CliError::Usage(e.to_string()),
        _ => CliError::Failed(e.to_string()),
    }
}

/// `JOB.cert` when the id is a plain one (no path in it), else nothing.
fn default_path(job: &str) -> Option<PathBuf> {
    let plain = !job.is_empty()
        && job.len() <= 64
        && job
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    plain.then(|| PathBuf::from(format!("{job}.cert")))
}

/// Writes `bytes` to `path` through a file beside it, renamed once
/// complete: a reader never sees half a certificate.
fn write_whole(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    let mut partial = path.as_os_str().to_owned();
    partial.push(".partial");
    let partial = PathBuf::from(partial);
    let failed = |e: std::io::Error| CliError::Failed(format!("cannot write '{}': {e}", path.display()));
    std::fs::write(&partial, bytes).map_err(failed)?;
    std::fs::rename(&partial, path).map_err(|e| {
        let _ = std::fs::remove_file(&partial);
        failed(e)
    })
}

/// `perft certificate`.
pub fn certificate(args: &CertificateArgs) -> Result<(), CliError> {
    let path = match &args.output {
        Some(path) => path.clone(),
        None => default_path(&args.job).ok_or_else(|| {
            CliError::Usage(format!(
                "'{}' is not a job id: ids are 1 to 64 letters, digits, '-' or '_'",
                perft_core::echoed(&args.job)
            ))
        })?,
    };
    let bytes = match &args.data_dir {
        Some(dir) => certificate_offline(dir, &args.job).map_err(offline_error)?,
        None => runtime()?.block_on(fetch(&args.coordinator, &args.job))?,
    };
    let cert = Certificate::decode(&bytes).map_err(|e| {
        CliError::Failed(format!(
            "the certificate made of job {} cannot be read back: {e}",
            args.job
        ))
    })?;
    write_whole(&path, &bytes)?;
    let convention = cert
        .header
        .convention
        .map_or(String::new(), |c| format!(" ({c} convention)"));
    let units = cert.units.len();
    outln!(
        "certificate of job {}: {}{convention}, depth {}, split depth {}, {units} units, total {}, {} bytes ({:.1} bytes a unit), written to {}",
        args.job,
        cert.header.game,
        cert.header.depth,
        cert.header.split_depth,
        cert.total.leaves,
        bytes.len(),
        bytes.len() as f64 / units.max(1) as f64,
        path.display()
    )?;
    Ok(())
}
