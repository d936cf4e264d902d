//! Checks the coordinator's TLS certificate and key before it serves, so a
//! bad pair fails at start with its cause named, not at the first client's
//! handshake with a bare "transport error".

use rustls::crypto::ring::default_provider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::sign::CertifiedKey;

/// Why a certificate and key cannot serve TLS.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TlsError {
    #[error("the certificate file holds no PEM certificate")]
    NoCertificate,
    #[error("the certificate file cannot be read as PEM: {0}")]
    BadCertificate(String),
    #[error("the key file holds no PEM private key: {0}")]
    BadKey(String),
    #[error(
        "the certificate is a CA certificate (basicConstraints CA:TRUE): clients refuse it as a server's; serve a certificate that CA issued for this host"
    )]
    CaCertificate,
    #[error("the private key does not match the certificate")]
    KeyMismatch,
    #[error("the certificate and key cannot serve TLS: {0}")]
    Unusable(String),
}

/// Checks that `cert_pem` (a chain, the server's first) and `key_pem` can
/// serve TLS: both parse, the key is the certificate's, and the certificate
/// is not a CA's.
pub fn check_identity(cert_pem: &[u8], key_pem: &[u8]) -> Result<(), TlsError> {
    let chain = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| TlsError::BadCertificate(e.to_string()))?;
    let Some(leaf) = chain.first() else {
        return Err(TlsError::NoCertificate);
    };
    let (_, parsed) =
        x509_parser::parse_x509_certificate(leaf).map_err(|e| TlsError::BadCertificate(e.to_string()))?;
    if let Ok(Some(constraints)) = parsed.basic_constraints()
        && constraints.value.ca
    {
        return Err(TlsError::CaCertificate);
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| TlsError::BadKey(e.to_string()))?;
    // Building the certified key compares the key with the certificate.
    let checked = CertifiedKey::from_der(chain, key, &default_provider()).and_then(|c| c.keys_match());
    checked.map_err(|e| match e {
        rustls::Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch) => TlsError::KeyMismatch,
        other => TlsError::Unusable(other.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rcgen::{BasicConstraints, CertificateParams, IsCa, KeyPair};

    fn pair(ca: bool) -> (String, String) {
        let mut params = CertificateParams::new(vec!["localhost".to_owned()]).unwrap();
        if ca {
            params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        }
        let key = KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        (cert.pem(), key.serialize_pem())
    }

    #[test]
    fn a_good_pair_passes() {
        let (cert, key) = pair(false);
        assert_eq!(check_identity(cert.as_bytes(), key.as_bytes()), Ok(()));
    }

    #[test]
    fn each_bad_pair_names_its_cause() {
        let (cert, key) = pair(false);
        let (ca_cert, ca_key) = pair(true);
        let (_, other_key) = pair(false);
        assert_eq!(
            check_identity(ca_cert.as_bytes(), ca_key.as_bytes()),
            Err(TlsError::CaCertificate)
        );
        assert_eq!(
            check_identity(cert.as_bytes(), other_key.as_bytes()),
            Err(TlsError::KeyMismatch)
        );
        assert_eq!(check_identity(b"", key.as_bytes()), Err(TlsError::NoCertificate));
        assert!(matches!(
            check_identity(cert.as_bytes(), cert.as_bytes()),
            Err(TlsError::BadKey(_))
        ));
    }
}
