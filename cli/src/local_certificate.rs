//! `perft run --certificate FILE`: the certificate of a local count, made
//! by the plain and the statistics counts alike and decided by the one
//! decider `local`.

use crate::error::CliError;

/// Writes to `path` the certificate `make` makes of a local count, decided
/// by the one decider `local`.
pub(crate) fn write_certificate(
    path: &std::path::Path,
    make: impl FnOnce(
        &[perft_certificate::DeciderName],
    ) -> Result<perft_certificate::Certificate, perft_certificate::BuildError>,
) -> Result<(), CliError> {
    let local = [perft_certificate::DeciderName::local()];
    let cert = make(&local).map_err(|e| CliError::Failed(format!("cannot make the certificate: {e}")))?;
    Ok(perft_certificate::file::write(path, &cert.encode())?)
}
