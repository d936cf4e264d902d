//! The retired `perft.v1` services: every call gets FAILED_PRECONDITION
//! naming the protocol this coordinator speaks, rather than a bare
//! UNIMPLEMENTED that leaves an old client's user guessing.

use std::convert::Infallible;
use std::marker::PhantomData;
use std::task::{Context, Poll};

use tonic::body::Body;
use tonic::server::NamedService;

/// The name of a retired service.
pub(crate) trait Retired: Send + Sync + 'static {
    const NAME: &'static str;
}

/// `perft.v1.PerftService`.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct PerftV1;

impl Retired for PerftV1 {
    const NAME: &'static str = "perft.v1.PerftService";
}

/// `perft.v1.WorkerService`.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct WorkerV1;

impl Retired for WorkerV1 {
    const NAME: &'static str = "perft.v1.WorkerService";
}

/// Answers every call of the retired service `R` with the version needed.
#[derive(Debug)]
pub(crate) struct RetiredService<R>(PhantomData<R>);

impl<R> Default for RetiredService<R> {
    fn default() -> Self {
        RetiredService(PhantomData)
    }
}

impl<R> Clone for RetiredService<R> {
    fn clone(&self) -> Self {
        RetiredService(PhantomData)
    }
}

impl<R: Retired> NamedService for RetiredService<R> {
    const NAME: &'static str = R::NAME;
}

impl<R: Retired> tower_service::Service<http::Request<Body>> for RetiredService<R> {
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = std::future::Ready<Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, _request: http::Request<Body>) -> Self::Future {
        let status = perft_proto::connect::wrong_protocol(Some(&format!("1 ({})", R::NAME)));
        std::future::ready(Ok(status.into_http()))
    }
}
