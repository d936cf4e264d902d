//! A caller's credential and the coordinator's CA certificate, read from
//! where users keep them (a file, or `PERFT_TOKEN`) and checked before
//! anything is sent: an empty token or a CA file without a certificate
//! would otherwise fail later with an error that hides the real cause.

use std::path::{Path, PathBuf};

use perft_core::echoed;
use perft_proto::connect::{ConnectError, MAX_PEM_BYTES, MAX_TOKEN_FILE_BYTES, Token, read_bounded};
use rustls_pki_types::CertificateDer;
use rustls_pki_types::pem::PemObject;

/// Why a credential or a CA file cannot be used; every case is the
/// user's to fix and names the file or variable.
#[derive(Debug, thiserror::Error)]
pub enum CredentialError {
    #[error("cannot read the token file '{}': {source}", .path.display())]
    UnreadableTokenFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "the token file '{}' is empty: it should hold your participant secret (from `perft participant add`) or the coordinator's token",
        echoed(&.0.display().to_string())
    )]
    EmptyTokenFile(PathBuf),
    #[error("the token file '{}' must hold printable ASCII without spaces", echoed(&.0.display().to_string()))]
    MalformedTokenFile(PathBuf),
    #[error("{0} is set but empty: unset it, or give your credential with --token-file FILE")]
    EmptyVariable(&'static str),
    #[error("{0} must be printable ASCII without spaces (a participant's secret or the coordinator's token)")]
    MalformedVariable(&'static str),
    #[error("cannot read '{}': {source}", .path.display())]
    UnreadablePem {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "--tls-ca '{}' holds no PEM certificate (-----BEGIN CERTIFICATE-----): give the coordinator's CA certificate, from its admin",
        echoed(&.0.display().to_string())
    )]
    NoCertificate(PathBuf),
}

/// The variable a credential may come from instead of a file.
pub const TOKEN_VARIABLE: &str = "PERFT_TOKEN";

/// The token in the file at `path` (surrounding white space ignored).
pub fn token_from_file(path: &Path) -> Result<Token, CredentialError> {
    let unreadable = |source| CredentialError::UnreadableTokenFile {
        path: path.to_owned(),
        source,
    };
    let bytes = read_bounded(path, MAX_TOKEN_FILE_BYTES).map_err(unreadable)?;
    let text = String::from_utf8(bytes)
        .map_err(|e| unreadable(std::io::Error::new(std::io::ErrorKind::InvalidData, e)))?;
    Token::new(&text).map_err(|e| match e {
        ConnectError::EmptyToken => CredentialError::EmptyTokenFile(path.to_owned()),
        _ => CredentialError::MalformedTokenFile(path.to_owned()),
    })
}

/// The token given in [`TOKEN_VARIABLE`], whose value is `value`.
pub fn token_from_variable(value: &str) -> Result<Token, CredentialError> {
    Token::new(value).map_err(|e| match e {
        ConnectError::EmptyToken => CredentialError::EmptyVariable(TOKEN_VARIABLE),
        _ => CredentialError::MalformedVariable(TOKEN_VARIABLE),
    })
}

/// The bytes of a PEM file (a certificate chain or a key), at most
/// [`MAX_PEM_BYTES`].
pub fn read_pem(path: &Path) -> Result<Vec<u8>, CredentialError> {
    read_bounded(path, MAX_PEM_BYTES).map_err(|source| CredentialError::UnreadablePem {
        path: path.to_owned(),
        source,
    })
}

/// The coordinator's CA certificate file, which must hold at least one PEM
/// certificate and nothing unreadable.
pub fn read_ca(path: &Path) -> Result<Vec<u8>, CredentialError> {
    let pem = read_pem(path)?;
    let certificates: Result<Vec<_>, _> = CertificateDer::pem_slice_iter(&pem).collect();
    if !certificates.is_ok_and(|c| !c.is_empty()) {
        return Err(CredentialError::NoCertificate(path.to_owned()));
    }
    Ok(pem)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_bad_credential_names_its_source_and_what_is_wrong() {
        let dir = tempfile::tempdir().unwrap();
        let empty = dir.path().join("empty");
        std::fs::write(&empty, "  \n").unwrap();
        let err = token_from_file(&empty).unwrap_err().to_string();
        assert!(
            err.starts_with("the token file '") && err.contains("is empty"),
            "{err}"
        );
        let spaced = dir.path().join("spaced");
        std::fs::write(&spaced, "two words").unwrap();
        let err = token_from_file(&spaced).unwrap_err().to_string();
        assert!(err.ends_with("must hold printable ASCII without spaces"), "{err}");
        let missing = dir.path().join("missing");
        assert!(matches!(
            token_from_file(&missing),
            Err(CredentialError::UnreadableTokenFile { .. })
        ));
        assert_eq!(
            token_from_variable("").unwrap_err().to_string(),
            "PERFT_TOKEN is set but empty: unset it, or give your credential with --token-file FILE"
        );
        assert!(token_from_variable("a\u{7}b").is_err());
        assert!(token_from_variable(" secret \n").is_ok());
        // A file that never ends is refused, not read into memory.
        let endless = std::path::Path::new("/dev/zero");
        let err = token_from_file(endless).unwrap_err().to_string();
        assert!(err.contains("more than 64 KiB"), "{err}");
        let err = read_ca(endless).unwrap_err().to_string();
        assert!(err.contains("more than 1024 KiB"), "{err}");
        let not_pem = dir.path().join("ca.pem");
        std::fs::write(&not_pem, "no certificate here").unwrap();
        let err = read_ca(&not_pem).unwrap_err().to_string();
        assert!(
            err.starts_with("--tls-ca '") && err.contains("holds no PEM certificate"),
            "{err}"
        );
    }
}
