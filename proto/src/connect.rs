//! How clients and workers reach a coordinator, and how the coordinator
//! checks them: one bearer token shared by everyone, TLS when asked.

use std::io::Read;
use std::path::Path;
use std::time::Duration;

use subtle::ConstantTimeEq;
use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::Interceptor;
use tonic::transport::{Certificate, Channel, ClientTlsConfig, Endpoint};
use tonic::{Request, Status};

/// Why a connection could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum ConnectError {
    #[error("invalid coordinator URL '{}': {reason}", perft_core::echoed(.url))]
    BadUrl { url: String, reason: String },
    #[error("the token is empty")]
    EmptyToken,
    #[error("the token must be printable ASCII without spaces")]
    BadToken,
    #[error("TLS: {0}")]
    Tls(String),
}

/// The most bytes a PEM file (a certificate chain, a key, a CA) may hold:
/// real ones hold a few KiB.
pub const MAX_PEM_BYTES: u64 = 1 << 20;

/// The most bytes a file holding a token may hold.
pub const MAX_TOKEN_FILE_BYTES: u64 = 64 << 10;

/// The bytes of the file at `path`, a credential or TLS file the
/// operator named, refused past `max_bytes` before it fills memory (a
/// device such as `/dev/zero` never ends).
pub fn read_bounded(path: &Path, max_bytes: u64) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(max_bytes + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "it holds more than {} KiB, more than such a file does",
                max_bytes >> 10
            ),
        ));
    }
    Ok(bytes)
}

/// A shared secret in `authorization: Bearer <token>`.
#[derive(Clone)]
pub struct Token(MetadataValue<Ascii>);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never printed, not even in debug output.
        f.write_str("Token(<redacted>)")
    }
}

impl Token {
    /// A token from its text (surrounding white space ignored).
    pub fn new(secret: &str) -> Result<Token, ConnectError> {
        let secret = secret.trim();
        if secret.is_empty() {
            return Err(ConnectError::EmptyToken);
        }
        if !secret.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(ConnectError::BadToken);
        }
        MetadataValue::try_from(format!("Bearer {secret}"))
            .map(Token)
            .map_err(|_| ConnectError::BadToken)
    }

    /// Whether `header` is this token's `authorization` value (`Bearer
    /// <token>`), compared in constant time: for HTTP servers beside gRPC.
    pub fn matches_header(&self, header: &[u8]) -> bool {
        bool::from(header.ct_eq(self.0.as_bytes()))
    }

    /// Whether `secret` is this token's text, compared in constant time.
    pub fn matches_secret(&self, secret: &[u8]) -> bool {
        let mut header = Vec::with_capacity(secret.len() + 7);
        header.extend_from_slice(b"Bearer ");
        header.extend_from_slice(secret);
        self.matches_header(&header)
    }
}

/// Adds the protocol version and the token (when there is one) to every
/// call.
#[derive(Clone, Debug, Default)]
pub struct AddToken(Option<Token>);

impl Interceptor for AddToken {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        request.metadata_mut().insert(
            crate::PROTOCOL_HEADER,
            MetadataValue::from(crate::PROTOCOL_VERSION),
        );
        if let Some(Token(value)) = &self.0 {
            request.metadata_mut().insert("authorization", value.clone());
        }
        Ok(request)
    }
}

/// FAILED_PRECONDITION for a caller of another protocol version, naming the
/// one this side speaks.
pub fn wrong_protocol(given: Option<&str>) -> Status {
    let theirs = match given {
        Some(v) => format!("protocol {}", perft_core::echoed(v)),
        None => "no protocol version (a perft.v1 client or a bare gRPC tool)".to_owned(),
    };
    Status::failed_precondition(format!(
        "the caller speaks {theirs}, this coordinator speaks {} protocol {}: use a perft release of the same protocol, or send the '{}: {}' header",
        crate::PACKAGE,
        crate::PROTOCOL_VERSION,
        crate::PROTOCOL_HEADER,
        crate::PROTOCOL_VERSION
    ))
}

/// Refuses every call without the right token (compared in constant time)
/// or of another protocol version.
#[derive(Clone, Debug)]
pub struct CheckToken(Option<Token>, bool);

impl CheckToken {
    /// Checks against `token` (everything passes without one) and the
    /// protocol version.
    pub fn new(token: Option<Token>) -> CheckToken {
        CheckToken(token, true)
    }

    /// Checks the token only: for services outside the contract (server
    /// reflection), which generic tools call without our header.
    pub fn token_only(token: Option<Token>) -> CheckToken {
        CheckToken(token, false)
    }
}

impl Interceptor for CheckToken {
    fn call(&mut self, request: Request<()>) -> Result<Request<()>, Status> {
        if let CheckToken(Some(Token(expected)), _) = self {
            let given = request
                .metadata()
                .get("authorization")
                .map(MetadataValue::as_bytes)
                .unwrap_or_default();
            if !bool::from(given.ct_eq(expected.as_bytes())) {
                return Err(Status::unauthenticated(
                    "missing or wrong token: give the coordinator's token (--token-file or PERFT_TOKEN)",
                ));
            }
        }
        if !self.1 {
            return Ok(request);
        }
        let version = request
            .metadata()
            .get(crate::PROTOCOL_HEADER)
            .map(|v| v.to_str().unwrap_or("(not text)"));
        if version != Some(crate::PROTOCOL_VERSION.to_string().as_str()) {
            return Err(wrong_protocol(version));
        }
        Ok(request)
    }
}

/// Everything a client or worker needs to reach the coordinator.
#[derive(Clone, Debug)]
pub struct ClientConfig {
    /// `http://host:port`, or `https://host:port` with TLS.
    pub url: String,
    pub token: Option<Token>,
    /// PEM of the CA that signed the coordinator's certificate.
    pub tls_ca: Option<Vec<u8>>,
}

impl ClientConfig {
    /// The endpoint with keepalive (so a silently dropped connection is
    /// noticed) and TLS when a CA is given.
    pub fn endpoint(&self) -> Result<Endpoint, ConnectError> {
        let bad = |reason: String| ConnectError::BadUrl {
            url: self.url.clone(),
            reason,
        };
        if !self.url.contains("://") {
            return Err(bad(format!(
                "it names no scheme: write http://{} (or https:// with --tls-ca)",
                perft_core::echoed(&self.url)
            )));
        }
        let mut endpoint = Endpoint::from_shared(self.url.clone())
            .map_err(|e| bad(e.to_string()))?
            .connect_timeout(Duration::from_secs(5))
            .http2_keep_alive_interval(Duration::from_secs(10))
            .keep_alive_timeout(Duration::from_secs(20))
            .keep_alive_while_idle(true);
        if let Some(ca) = &self.tls_ca {
            let tls = ClientTlsConfig::new().ca_certificate(Certificate::from_pem(ca));
            endpoint = endpoint
                .tls_config(tls)
                .map_err(|e| ConnectError::Tls(e.to_string()))?;
        } else if self.url.starts_with("https://") {
            return Err(bad(
                "https needs the coordinator's CA certificate (--tls-ca)".to_owned()
            ));
        }
        Ok(endpoint)
    }

    /// The interceptor that adds this config's token.
    pub fn interceptor(&self) -> AddToken {
        AddToken(self.token.clone())
    }

    /// The endpoint and the interceptor its calls carry: what a client
    /// needs to connect, in one call.
    pub fn connection(&self) -> Result<(Endpoint, AddToken), ConnectError> {
        Ok((self.endpoint()?, self.interceptor()))
    }
}

/// A channel whose calls carry the token.
pub type AuthChannel = tonic::service::interceptor::InterceptedService<Channel, AddToken>;
