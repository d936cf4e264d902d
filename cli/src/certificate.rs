//! `perft certificate JOB`: a done cluster job's certificate, streamed
//! from a running coordinator or made from a stopped one's data dir, read
//! back before it is written so that no unreadable file is left.

use std::path::PathBuf;

use perft_certificate::Certificate;
use perft_coordinator::offline;

use crate::args::CertificateArgs;
use crate::client::{connect, job_id};
use crate::cluster::runtime;
use crate::error::CliError;

/// `JOB.cert` when the id is a plain one (no path in it), else nothing.
fn default_path(job: &str) -> Option<PathBuf> {
    let plain = !job.is_empty()
        && job.len() <= 64
        && job
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    plain.then(|| PathBuf::from(format!("{job}.cert")))
}

/// `perft certificate`.
pub fn certificate(args: &CertificateArgs) -> Result<(), CliError> {
    let path = match &args.output {
        Some(path) => path.clone(),
        None => default_path(&args.job).ok_or_else(|| {
            CliError::usage(format!(
                "'{}' is not a job id: ids are 1 to 64 letters, digits, '-' or '_'",
                perft_core::echoed(&args.job)
            ))
        })?,
    };
    let id = job_id(&args.job)?;
    let bytes = match &args.data_dir {
        None => runtime()?.block_on(async {
            connect(&args.coordinator)
                .await?
                .certificate(&id)
                .await
                .map_err(CliError::from)
        })?,
        Some(dir) => offline::DoneJob {
            data_dir: dir,
            id: &id,
        }
        .certificate(&crate::args::program())?,
    };
    // The job is the one the user named: the message need not repeat it.
    let cert = Certificate::decode(&bytes).map_err(|e| {
        CliError::failed_by(
            format!("the certificate made for this job cannot be read back: {e}"),
            e,
        )
    })?;
    perft_certificate::file::write(&path, &bytes)?;
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
