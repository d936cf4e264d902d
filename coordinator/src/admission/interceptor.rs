//! The door of every gRPC service but health: the admission layer checked
//! the caller's credential ([`Verdict`]); this
//! puts the caller it proved in the request's extensions as a [`Caller`],
//! or refuses the call, and refuses a call of another protocol version.

use tonic::service::Interceptor;
use tonic::{Request, Status};

use super::layer::Verdict;

/// Lets through calls the admission layer found a credential for; with
/// `protocol`, also checks the `perft-protocol` header (server reflection
/// is called by generic tools without it).
#[derive(Clone, Debug)]
pub(crate) struct Authenticate {
    protocol: bool,
}

impl Authenticate {
    pub(crate) fn new(protocol: bool) -> Authenticate {
        Authenticate { protocol }
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
        let Some(Verdict(verdict)) = request.extensions_mut().remove::<Verdict>() else {
            return Err(Status::unauthenticated("no credential was checked for this call"));
        };
        request.extensions_mut().insert(verdict?);
        Ok(request)
    }
}
