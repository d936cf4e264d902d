//! The connections the coordinator accepts, for gRPC and the dashboard
//! alike: a cap per peer address and one in total, half of each kept for
//! connections that proved a credential ([`gate`]); a close after idle
//! time, and after a few seconds without a first request; and an accept
//! loop that backs off on errors (out of file descriptors) and logs each
//! burst of them once, so a flood of sockets costs neither CPU nor log.

mod gate;

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::{Instant, Sleep};

pub(crate) use gate::{ConnState, Gate};
use gate::{Full, Slot};

/// How many connections are served, and for how long one may stay silent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// A connection that neither sends nor receives a byte for this long is
    /// closed (live gRPC clients answer the server's HTTP/2 pings well
    /// within it).
    pub idle_timeout: Duration,
    /// Connections served at once, from everyone.
    pub max_total: usize,
    /// Connections served at once from one peer address (an IPv6 peer's
    /// /64 network counts as one address).
    pub max_per_peer: usize,
    /// A connection that has sent no request (a health check counts)
    /// this long after it was accepted is closed.
    pub first_request_timeout: Duration,
    /// An unproven connection may be closed to make room for a new one
    /// once it called without a credential, or this long after it was
    /// accepted (an honest client calls within milliseconds).
    pub unproven_grace: Duration,
}

impl Default for ConnectionLimits {
    fn default() -> ConnectionLimits {
        ConnectionLimits {
            idle_timeout: Duration::from_secs(30),
            max_total: 4096,
            max_per_peer: 64,
            first_request_timeout: Duration::from_secs(10),
            unproven_grace: Duration::from_secs(2),
        }
    }
}

impl ConnectionLimits {
    /// The HTTP/2 ping interval and ack timeout: a live client's ping
    /// answers reach the server well before the idle timeout, and a peer
    /// that vanished is noticed within interval + timeout.
    pub fn keepalive(&self) -> (Duration, Duration) {
        let third = (self.idle_timeout / 3).max(Duration::from_secs(1));
        (
            third.min(Duration::from_secs(10)),
            third.min(Duration::from_secs(20)),
        )
    }
}

/// An admitted TCP connection: counted until dropped, and failing its
/// reads (the server then closes it) once it has been silent both ways for
/// the idle timeout, has sent no request within the first-request timeout,
/// or was evicted by its gate to make room.
#[derive(Debug)]
pub(crate) struct Connection {
    stream: TcpStream,
    limits: ConnectionLimits,
    accepted: Instant,
    last_active: Instant,
    deadline: Pin<Box<Sleep>>,
    slot: Slot,
}

impl Connection {
    fn new(stream: TcpStream, limits: ConnectionLimits, slot: Slot) -> Connection {
        let now = Instant::now();
        let first = limits.first_request_timeout.min(limits.idle_timeout);
        Connection {
            stream,
            limits,
            accepted: now,
            last_active: now,
            deadline: Box::pin(tokio::time::sleep_until(now + first)),
            slot,
        }
    }

    /// When the connection is closed unless something happens first.
    fn due(&self) -> (Instant, &'static str) {
        let idle = (self.last_active + self.limits.idle_timeout, "no byte either way");
        if self.slot.state.requested() {
            return idle;
        }
        let first = (self.accepted + self.limits.first_request_timeout, "no request");
        if first.0 < idle.0 { first } else { idle }
    }

    /// Ready with an error once the connection must close.
    fn poll_close(&mut self, cx: &mut Context<'_>) -> Poll<io::Error> {
        if self.slot.state.evicted(cx.waker()) {
            return Poll::Ready(io::Error::new(
                io::ErrorKind::ConnectionAborted,
                "closed to make room: it had proven no credential",
            ));
        }
        loop {
            if self.deadline.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            let (due, what) = self.due();
            if due <= Instant::now() {
                let after = if what == "no request" {
                    self.limits.first_request_timeout
                } else {
                    self.limits.idle_timeout
                };
                tracing::debug!(
                    peer = %self.slot.state.peer(),
                    open_for_ms = self.accepted.elapsed().as_millis() as u64,
                    requested = self.slot.state.requested(),
                    "connection closed: {what} for {} s",
                    after.as_secs_f64()
                );
                return Poll::Ready(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("{what} for {} s: connection closed", after.as_secs_f64()),
                ));
            }
            self.deadline.as_mut().reset(due);
        }
    }

    fn active<T>(&mut self, moved: bool, result: Poll<T>) -> Poll<T> {
        if moved {
            self.last_active = Instant::now();
        }
        result
    }
}

impl AsyncRead for Connection {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        match Pin::new(&mut this.stream).poll_read(cx, buf) {
            Poll::Ready(Ok(())) => {
                let moved = buf.filled().len() > before;
                this.active(moved, Poll::Ready(Ok(())))
            }
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            Poll::Pending => this.poll_close(cx).map(Err),
        }
    }
}

impl AsyncWrite for Connection {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = Pin::new(&mut this.stream).poll_write(cx, buf);
        let moved = matches!(written, Poll::Ready(Ok(n)) if n > 0);
        this.active(moved, written)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let written = Pin::new(&mut this.stream).poll_write_vectored(cx, bufs);
        let moved = matches!(written, Poll::Ready(Ok(n)) if n > 0);
        this.active(moved, written)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}

/// What a request learns of its connection: its standing with its gate (in the request's extensions; over
/// TLS inside a `TlsConnectInfo`).
#[derive(Clone, Debug)]
pub(crate) struct Arrival {
    pub(crate) state: Arc<ConnState>,
    pub(crate) gate: Arc<Gate>,
}

impl tonic::transport::server::Connected for Connection {
    type ConnectInfo = Arrival;

    fn connect_info(&self) -> Self::ConnectInfo {
        Arrival {
            state: Arc::clone(&self.slot.state),
            gate: Arc::clone(self.slot.gate()),
        }
    }
}

/// First and longest wait after a failed accept.
const FIRST_BACKOFF: Duration = Duration::from_millis(50);
const LONGEST_BACKOFF: Duration = Duration::from_secs(1);
/// At most one log line a this long about refused connections.
const REFUSALS_LOGGED_EVERY: Duration = Duration::from_secs(10);

/// Accepts connections on one listener within a gate's limits.
#[derive(Debug)]
pub(crate) struct Acceptor {
    listener: TcpListener,
    gate: Arc<Gate>,
    /// What listens, for the log: "gRPC" or "dashboard".
    what: &'static str,
    /// Accepts failed in a row (a burst is logged at its start and end).
    failures: u64,
    backoff: Duration,
    /// Connections closed at once for a full cap since the last log line.
    refused: u64,
    refusals_logged: Option<Instant>,
}

impl Acceptor {
    pub(crate) fn new(listener: TcpListener, gate: Arc<Gate>, what: &'static str) -> Acceptor {
        Acceptor {
            listener,
            gate,
            what,
            failures: 0,
            backoff: FIRST_BACKOFF,
            refused: 0,
            refusals_logged: None,
        }
    }

    /// The next connection within the limits. A connection past a cap is
    /// closed at once; a failed accept (no file descriptor left) waits,
    /// longer each time, and is logged once per burst.
    pub(crate) async fn next(&mut self) -> (Connection, SocketAddr) {
        loop {
            let (stream, peer) = match self.listener.accept().await {
                Ok(accepted) => accepted,
                Err(e) if is_per_connection(&e) => {
                    tracing::debug!(listener = self.what, error = %e, "a connection failed while accepted");
                    continue;
                }
                Err(e) => {
                    if self.failures == 0 {
                        tracing::warn!(
                            listener = self.what,
                            error = %e,
                            "cannot accept connections (out of file descriptors?): backing off; logged again when accepting works"
                        );
                    }
                    self.failures += 1;
                    tokio::time::sleep(self.backoff).await;
                    self.backoff = (self.backoff * 2).min(LONGEST_BACKOFF);
                    continue;
                }
            };
            if self.failures > 0 {
                tracing::warn!(
                    listener = self.what,
                    failed = self.failures,
                    open = self.gate.open(),
                    "accepting connections again"
                );
                self.failures = 0;
                self.backoff = FIRST_BACKOFF;
            }
            match self.gate.admit(peer.ip()) {
                Ok(slot) => {
                    let _ = stream.set_nodelay(true);
                    return (Connection::new(stream, self.gate.limits, slot), peer);
                }
                Err(full) => {
                    drop(stream);
                    self.refused(full, peer);
                }
            }
        }
    }

    /// Notes a connection closed for a full cap: one warning at most every
    /// [`REFUSALS_LOGGED_EVERY`], with the count since the last.
    fn refused(&mut self, full: Full, peer: SocketAddr) {
        self.refused += 1;
        let now = Instant::now();
        if self
            .refusals_logged
            .is_some_and(|at| now.duration_since(at) < REFUSALS_LOGGED_EVERY)
        {
            return;
        }
        let limits = self.gate.limits;
        let cap = match full {
            Full::Total => format!("{} connections in all", limits.max_total),
            Full::Peer => format!("{} connections from {}", limits.max_per_peer, peer.ip()),
        };
        tracing::warn!(
            listener = self.what,
            refused = self.refused,
            "connection cap reached ({cap}): new connections are closed at once"
        );
        self.refused = 0;
        self.refusals_logged = Some(now);
    }
}

/// Errors of one connection that failed during the accept: nothing to
/// wait for.
fn is_per_connection(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionAborted
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::Interrupted
            | io::ErrorKind::WouldBlock
    )
}

/// The connections of `acceptor` as a stream for tonic's server, which
/// then never sees an accept error (it would retry at once and log each).
pub(crate) fn incoming(
    mut acceptor: Acceptor,
) -> tokio_stream::wrappers::ReceiverStream<Result<Connection, io::Error>> {
    let (sender, receiver) = tokio::sync::mpsc::channel(16);
    tokio::spawn(async move {
        loop {
            let (connection, _) = acceptor.next().await;
            if sender.send(Ok(connection)).await.is_err() {
                // The server stopped.
                return;
            }
        }
    });
    tokio_stream::wrappers::ReceiverStream::new(receiver)
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::{Acceptor, ConnectionLimits, Gate};

    /// An echo server over an acceptor's connections within `limits`.
    async fn echo_server(limits: ConnectionLimits) -> std::net::SocketAddr {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let mut acceptor = Acceptor::new(listener, Gate::new(limits), "test");
        tokio::spawn(async move {
            loop {
                let (mut connection, _) = acceptor.next().await;
                tokio::spawn(async move {
                    let mut buf = [0u8; 64];
                    while let Ok(n @ 1..) = connection.read(&mut buf).await {
                        if connection.write_all(&buf[..n]).await.is_err() {
                            return;
                        }
                    }
                });
            }
        });
        address
    }

    #[tokio::test]
    async fn a_silent_connection_is_closed_and_a_talking_one_is_not() {
        let address = echo_server(ConnectionLimits {
            idle_timeout: Duration::from_millis(300),
            ..ConnectionLimits::default()
        })
        .await;
        let mut silent = tokio::net::TcpStream::connect(address).await.unwrap();
        let mut talking = tokio::net::TcpStream::connect(address).await.unwrap();
        for _ in 0..6 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            talking.write_all(b"x").await.unwrap();
            let mut byte = [0u8; 1];
            talking.read_exact(&mut byte).await.unwrap();
        }
        let mut buf = [0u8; 1];
        let closed = tokio::time::timeout(Duration::from_secs(2), silent.read(&mut buf))
            .await
            .expect("the silent connection is closed");
        assert!(matches!(closed, Ok(0) | Err(_)), "{closed:?}");
    }

    #[tokio::test]
    async fn a_connection_that_talks_but_never_requests_is_closed() {
        let address = echo_server(ConnectionLimits {
            first_request_timeout: Duration::from_millis(300),
            ..ConnectionLimits::default()
        })
        .await;
        // Pings answered, no request: closed after the first-request timeout.
        let mut talking = tokio::net::TcpStream::connect(address).await.unwrap();
        let started = std::time::Instant::now();
        let mut byte = [0u8; 1];
        loop {
            tokio::time::sleep(Duration::from_millis(50)).await;
            if talking.write_all(b"x").await.is_err() {
                break;
            }
            match talking.read(&mut byte).await {
                Ok(1) => {}
                _ => break,
            }
            assert!(started.elapsed() < Duration::from_secs(5), "never closed");
        }
        assert!(started.elapsed() >= Duration::from_millis(250));
    }
}
