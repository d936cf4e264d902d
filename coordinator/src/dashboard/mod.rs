//! The coordinator's read-only web dashboard (`perft serve --http-listen`):
//! the job list, a page per job, the workers, the participants, and the
//! JSON they poll. The
//! pages, script and styles are embedded in the binary; nothing is fetched
//! from elsewhere. Served over TLS when the coordinator is, and behind its
//! token when it has one.

mod api;
mod auth;
pub(crate) use auth::Sessions;
mod pages;
mod rates;
mod roster;
mod source;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::Request;
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use crate::Coordinator;
use crate::connections::{Acceptor, ConnectionLimits, Gate};

/// Connections served at once (at most; the coordinator's own caps apply
/// too); more are closed at once.
const MAX_CONNECTIONS: usize = 256;
/// A request's head must arrive within this, and a TLS handshake finish.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);
/// A connection lasts at most this long, so a client that stops reading
/// its responses cannot keep a slot for ever (pages reconnect at once).
const CONNECTION_LIFETIME: Duration = Duration::from_secs(120);
/// Longest request head read (request line and headers).
const MAX_HEAD_BYTES: usize = 16 * 1024;
/// Longest URL accepted, in bytes.
const MAX_URL_BYTES: usize = 2048;

/// What the dashboard's handlers share.
#[derive(Debug)]
struct Dash {
    coordinator: Arc<Coordinator>,
    rates: rates::Rates,
    /// Served over TLS: the session cookie is Secure.
    tls: bool,
}

/// A refusal: the status and one line naming what is wrong.
fn refuse(status: StatusCode, why: &str) -> Response {
    let line = why.replace(['\n', '\r'], " ");
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        format!("{line}\n"),
    )
        .into_response()
}

/// Why the dashboard cannot serve TLS with the coordinator's identity.
#[derive(Debug, thiserror::Error)]
pub enum TlsIdentityError {
    #[error("the certificate cannot be read: {0}")]
    Certificate(#[source] rustls::pki_types::pem::Error),
    #[error("the key cannot be read: {0}")]
    Key(#[source] rustls::pki_types::pem::Error),
    #[error(transparent)]
    Rustls(#[from] rustls::Error),
}

/// The certificate and key as a TLS acceptor speaking HTTP/1.1.
fn acceptor(cert_pem: &[u8], key_pem: &[u8]) -> Result<TlsAcceptor, TlsIdentityError> {
    let chain = CertificateDer::pem_slice_iter(cert_pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(TlsIdentityError::Certificate)?;
    let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(TlsIdentityError::Key)?;
    let mut config =
        rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_single_cert(chain, key)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// Refuses over-long URLs, then adds the headers every answer carries: no
/// caching, no framing, nothing loaded from elsewhere.
async fn limits_and_headers(request: Request, next: Next) -> Response {
    let length = request.uri().to_string().len();
    let mut response = if length > MAX_URL_BYTES {
        refuse(
            StatusCode::URI_TOO_LONG,
            &format!("the URL is {length} bytes; at most {MAX_URL_BYTES} are accepted"),
        )
    } else {
        next.run(request).await
    };
    let headers = response.headers_mut();
    for (name, value) in [
        (header::CACHE_CONTROL, "no-store"),
        (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        (header::X_FRAME_OPTIONS, "DENY"),
        (header::REFERRER_POLICY, "no-referrer"),
        (
            header::CONTENT_SECURITY_POLICY,
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; frame-ancestors 'none'",
        ),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    response
}

async fn not_found(request: Request) -> Response {
    refuse(
        StatusCode::NOT_FOUND,
        &format!(
            "no page '{}': the dashboard has /, /jobs/ID, /workers, /participants and /api/jobs, /api/jobs/ID, /api/jobs/ID/certificate, /api/workers, /api/participants",
            perft_core::echoed(request.uri().path())
        ),
    )
}

async fn read_only() -> Response {
    refuse(
        StatusCode::METHOD_NOT_ALLOWED,
        "the dashboard is read-only: only GET and HEAD are answered",
    )
}

fn router(dash: Arc<Dash>) -> Router {
    Router::new()
        .route("/", get(pages::index))
        .route("/jobs/{id}", get(pages::job))
        .route("/workers", get(pages::workers))
        .route("/participants", get(pages::participants))
        .route("/assets/dashboard.js", get(pages::script))
        .route("/assets/dashboard.css", get(pages::style))
        .route("/api/jobs", get(api::jobs))
        .route("/api/jobs/{id}", get(api::job))
        .route("/api/jobs/{id}/certificate", get(api::certificate))
        .route("/api/workers", get(roster::workers))
        .route("/api/participants", get(roster::participants))
        .fallback(not_found)
        .method_not_allowed_fallback(read_only)
        .layer(middleware::from_fn_with_state(Arc::clone(&dash), auth::guard))
        .layer(middleware::from_fn(limits_and_headers))
        .with_state(dash)
}

/// Notes every job's and worker's counts once a second, for rates.
async fn sample(dash: Arc<Dash>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let mut start = 0;
        loop {
            let (views, next) = source::jobs_for_sampling(&dash.coordinator, start, 500).await;
            dash.rates.sample_jobs(&views);
            match next {
                Some(n) => start = n,
                None => break,
            }
        }
        dash.rates.sample_workers(&source::workers(&dash.coordinator));
    }
}

/// Starts the dashboard on `listener`: checks its TLS identity now (so a
/// bad one fails the start), then serves until the task is aborted.
pub(crate) fn start(
    coordinator: Arc<Coordinator>,
    listener: TcpListener,
) -> Result<tokio::task::JoinHandle<()>, TlsIdentityError> {
    let tls = source::tls(&coordinator)
        .map(|(cert, key)| acceptor(cert, key))
        .transpose()?;
    let dash = Arc::new(Dash {
        coordinator,
        rates: rates::Rates::default(),
        tls: tls.is_some(),
    });
    Ok(tokio::spawn(accept_loop(dash, listener, tls)))
}

async fn accept_loop(dash: Arc<Dash>, listener: TcpListener, tls: Option<TlsAcceptor>) {
    let sampler = tokio::spawn(sample(Arc::clone(&dash)));
    // Aborting this task drops the guard, which stops the sampler.
    let _sampler = AbortOnDrop(sampler);
    let limits = dash.coordinator.config.connections;
    let app = router(dash);
    let gate = Gate::new(ConnectionLimits {
        max_total: limits.max_total.min(MAX_CONNECTIONS),
        ..limits
    });
    let mut acceptor = Acceptor::new(listener, gate, "dashboard");
    loop {
        let (stream, peer) = acceptor.next().await;
        // The connection's standing, for the door to mark and prove.
        let arrival = tonic::transport::server::Connected::connect_info(&stream);
        let app = app.clone().layer(axum::Extension(arrival));
        let tls = tls.clone();
        tokio::spawn(async move {
            let service = TowerToHyperService::new(app);
            let mut http = hyper::server::conn::http1::Builder::new();
            http.timer(TokioTimer::new())
                .header_read_timeout(HEAD_TIMEOUT)
                .max_buf_size(MAX_HEAD_BYTES);
            let served = match tls {
                Some(acceptor) => match tokio::time::timeout(HEAD_TIMEOUT, acceptor.accept(stream)).await {
                    Ok(Ok(stream)) => {
                        let connection = http.serve_connection(TokioIo::new(stream), service);
                        tokio::time::timeout(CONNECTION_LIFETIME, connection).await
                    }
                    Ok(Err(e)) => {
                        tracing::debug!(%peer, error = %e, "dashboard TLS handshake failed");
                        return;
                    }
                    Err(_) => {
                        tracing::debug!(%peer, "dashboard TLS handshake timed out");
                        return;
                    }
                },
                None => {
                    let connection = http.serve_connection(TokioIo::new(stream), service);
                    tokio::time::timeout(CONNECTION_LIFETIME, connection).await
                }
            };
            match served {
                Ok(Ok(())) => {}
                Ok(Err(e)) => tracing::debug!(%peer, error = %e, "dashboard connection ended"),
                Err(_) => tracing::debug!(%peer, "dashboard connection closed at the end of its lifetime"),
            }
        });
    }
}

/// Aborts a task when dropped.
#[derive(Debug)]
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}
