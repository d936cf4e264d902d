//! The door of every gRPC service but health: the caller's credential
//! names its participant and role (put in the request's extensions as a
//! [`Caller`]); a call of another protocol version is refused.

use std::sync::Arc;

use tonic::metadata::MetadataValue;
use tonic::service::Interceptor;
use tonic::{Request, Status};

use super::Participants;

/// Authenticates every call; with `protocol`, also checks the
/// `perft-protocol` header (server reflection is called by generic tools
/// without it).
#[derive(Clone, Debug)]
pub(crate) struct Authenticate {
    participants: Arc<Participants>,
    protocol: bool,
}

impl Authenticate {
    pub(crate) fn new(participants: Arc<Participants>, protocol: bool) -> Authenticate {
        Authenticate {
            participants,
            protocol,
        }
    }
}

impl Interceptor for Authenticate {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        // The version first: a caller of another release learns what to
        // upgrade to, whatever its credential.
        if self.protocol {
            let version = request
                .metadata()
                .get(perft_proto::PROTOCOL_HEADER)
                .map(|v| v.to_str().unwrap_or("(not text)"));
            if version != Some(perft_proto::PROTOCOL_VERSION.to_string().as_str()) {
                return Err(perft_proto::connect::wrong_protocol(version));
            }
        }
        let header = request
            .metadata()
            .get("authorization")
            .map(MetadataValue::as_bytes);
        let caller = self.participants.authenticate(header)?;
        request.extensions_mut().insert(caller);
        Ok(request)
    }
}
