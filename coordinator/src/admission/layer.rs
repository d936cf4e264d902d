//! The gRPC side of admission, one tower layer in front of every service:
//! it checks the caller's credential once (the services' interceptor takes
//! the verdict), marks the connection as having made a request and, with
//! a valid credential, as proven (see `connections::gate`), and charges
//! every streaming call to its principal until the stream ends.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use tonic::Status;
use tonic::body::Body;
use tonic::transport::server::TlsConnectInfo;

use super::{Admission, Principal, StreamPermit};
use crate::connections::Arrival;
use crate::participants::{Caller, Participants};

/// The credential check's verdict, put in the request's extensions for
/// the services' interceptor.
#[derive(Clone, Debug)]
pub(crate) struct Verdict(pub Result<Caller, Status>);

/// The calls whose answer is a stream: each holds one of its principal's
/// streams while open.
const STREAMING: [&str; 4] = [
    "/perft.v2.PerftService/WatchJob",
    "/perft.v2.PerftService/GetCertificate",
    "/grpc.health.v1.Health/Watch",
    "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
];

/// Installs [`Admit`] around the services.
#[derive(Clone, Debug)]
pub(crate) struct AdmissionLayer {
    admission: Arc<Admission>,
    participants: Arc<Participants>,
}

impl AdmissionLayer {
    pub(crate) fn new(admission: Arc<Admission>, participants: Arc<Participants>) -> AdmissionLayer {
        AdmissionLayer {
            admission,
            participants,
        }
    }
}

impl<S> tower_layer::Layer<S> for AdmissionLayer {
    type Service = Admit<S>;

    fn layer(&self, inner: S) -> Admit<S> {
        Admit {
            inner,
            admission: Arc::clone(&self.admission),
            participants: Arc::clone(&self.participants),
        }
    }
}

/// The admission check of every gRPC call.
#[derive(Clone, Debug)]
pub(crate) struct Admit<S> {
    inner: S,
    admission: Arc<Admission>,
    participants: Arc<Participants>,
}

fn arrival<B>(request: &http::Request<B>) -> Option<&Arrival> {
    let extensions = request.extensions();
    extensions.get::<Arrival>().or_else(|| {
        extensions
            .get::<TlsConnectInfo<Arrival>>()
            .map(TlsConnectInfo::get_ref)
    })
}

type Answer<E> = Pin<Box<dyn Future<Output = Result<http::Response<Body>, E>> + Send>>;

impl<S, B> tower_service::Service<http::Request<B>> for Admit<S>
where
    S: tower_service::Service<http::Request<B>, Response = http::Response<Body>> + Send,
    S::Future: Send + 'static,
    B: Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = S::Error;
    type Future = Answer<S::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: http::Request<B>) -> Self::Future {
        let header = request
            .headers()
            .get(http::header::AUTHORIZATION)
            .map(|v| v.as_bytes().to_vec());
        let verdict = self.participants.authenticate(header.as_deref());
        let peer = arrival(&request).map(|arrival| {
            arrival.state.mark_requested();
            // A credential proves the connection; so does any call to an
            // open coordinator, whose every caller is its admin.
            if verdict.is_ok() {
                arrival.gate.prove(&arrival.state);
            }
            arrival.state.peer()
        });
        let principal = match (&verdict, peer) {
            (Ok(caller), _) => Some(Principal::Participant(caller.participant.clone())),
            (Err(_), Some(ip)) => Some(Principal::Address(ip)),
            (Err(_), None) => None,
        };
        let permit = match principal {
            Some(principal) if STREAMING.contains(&request.uri().path()) => {
                match self.admission.open_stream(principal) {
                    Ok(permit) => Some(permit),
                    Err(status) => {
                        let answer = status.into_http::<Body>();
                        return Box::pin(async move { Ok(answer) });
                    }
                }
            }
            _ => None,
        };
        request.extensions_mut().insert(Verdict(verdict));
        let answer = self.inner.call(request);
        Box::pin(async move {
            let response = answer.await?;
            Ok(match permit {
                Some(permit) => response.map(|body| {
                    Body::new(Charged {
                        body,
                        _permit: permit,
                    })
                }),
                None => response,
            })
        })
    }
}

/// A stream's body, charged to its principal until it ends or is dropped.
struct Charged {
    body: Body,
    _permit: StreamPermit,
}

impl http_body::Body for Charged {
    type Data = Bytes;
    type Error = Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, Status>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}
