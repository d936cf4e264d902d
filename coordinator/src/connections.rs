//! The connections the coordinator accepts, for gRPC and the dashboard
//! alike: a cap per peer address and one in total (beyond them a new
//! connection is closed at once), a close after idle time, and an accept
//! loop that backs off on errors (out of file descriptors) and logs each
//! burst of them once, so a flood of sockets costs neither CPU nor log.

use std::io;
use std::net::{IpAddr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use dashmap::DashMap;
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::time::{Instant, Sleep};

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
}

impl Default for ConnectionLimits {
    fn default() -> ConnectionLimits {
        ConnectionLimits {
            idle_timeout: Duration::from_secs(30),
            max_total: 4096,
            max_per_peer: 64,
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

/// The count of open connections, in total and per peer.
#[derive(Debug)]
pub(crate) struct Gate {
    limits: ConnectionLimits,
    total: AtomicUsize,
    per_peer: DashMap<IpAddr, usize>,
}

/// What a peer is counted as: its address, an IPv6 one by its /64.
fn peer_key(ip: IpAddr) -> IpAddr {
    match ip.to_canonical() {
        IpAddr::V6(v6) => {
            let network = u128::from(v6) & !((1u128 << 64) - 1);
            IpAddr::V6(Ipv6Addr::from(network))
        }
        v4 => v4,
    }
}

/// Why a connection was not admitted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Full {
    Total,
    Peer,
}

impl Gate {
    pub(crate) fn new(limits: ConnectionLimits) -> Arc<Gate> {
        Arc::new(Gate {
            limits,
            total: AtomicUsize::new(0),
            per_peer: DashMap::new(),
        })
    }

    /// A slot for a connection from `peer`, or why there is none.
    fn admit(self: &Arc<Gate>, peer: IpAddr) -> Result<Slot, Full> {
        let key = peer_key(peer);
        if self.total.fetch_add(1, Ordering::AcqRel) >= self.limits.max_total {
            self.total.fetch_sub(1, Ordering::AcqRel);
            return Err(Full::Total);
        }
        let mut count = self.per_peer.entry(key).or_insert(0);
        if *count >= self.limits.max_per_peer {
            drop(count);
            self.total.fetch_sub(1, Ordering::AcqRel);
            return Err(Full::Peer);
        }
        *count += 1;
        Ok(Slot {
            gate: Arc::clone(self),
            key,
        })
    }

    /// Connections open now.
    pub(crate) fn open(&self) -> usize {
        self.total.load(Ordering::Acquire)
    }
}

/// A counted connection; dropping it frees its place.
#[derive(Debug)]
struct Slot {
    gate: Arc<Gate>,
    key: IpAddr,
}

impl Drop for Slot {
    fn drop(&mut self) {
        if let Some(mut count) = self.gate.per_peer.get_mut(&self.key) {
            *count = count.saturating_sub(1);
        }
        // An address with no connection left leaves the map.
        self.gate.per_peer.remove_if(&self.key, |_, count| *count == 0);
        self.gate.total.fetch_sub(1, Ordering::AcqRel);
    }
}

/// An admitted TCP connection: counted until dropped, and failing its
/// reads once it has been silent both ways for the idle timeout (the
/// server then closes it).
#[derive(Debug)]
pub(crate) struct Connection {
    stream: TcpStream,
    idle_timeout: Duration,
    last_active: Instant,
    deadline: Pin<Box<Sleep>>,
    _slot: Slot,
}

impl Connection {
    fn new(stream: TcpStream, idle_timeout: Duration, slot: Slot) -> Connection {
        let now = Instant::now();
        Connection {
            stream,
            idle_timeout,
            last_active: now,
            deadline: Box::pin(tokio::time::sleep_until(now + idle_timeout)),
            _slot: slot,
        }
    }

    /// Ready with an error once the connection has been idle too long.
    fn poll_idle(&mut self, cx: &mut Context<'_>) -> Poll<io::Error> {
        loop {
            if self.deadline.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            let due = self.last_active + self.idle_timeout;
            if due <= Instant::now() {
                return Poll::Ready(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!(
                        "no byte either way for {} s: connection closed",
                        self.idle_timeout.as_secs_f64()
                    ),
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
            Poll::Pending => this.poll_idle(cx).map(Err),
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

impl tonic::transport::server::Connected for Connection {
    type ConnectInfo = tonic::transport::server::TcpConnectInfo;

    fn connect_info(&self) -> Self::ConnectInfo {
        self.stream.connect_info()
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
                    return (Connection::new(stream, self.gate.limits.idle_timeout, slot), peer);
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
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
    use std::time::Duration;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::{Acceptor, ConnectionLimits, Full, Gate, peer_key};

    fn limits(max_total: usize, max_per_peer: usize) -> ConnectionLimits {
        ConnectionLimits {
            idle_timeout: Duration::from_secs(30),
            max_total,
            max_per_peer,
        }
    }

    #[test]
    fn caps_count_per_peer_and_in_all_and_free_on_drop() {
        let gate = Gate::new(limits(3, 2));
        let a = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
        let b = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2));
        let a1 = gate.admit(a).unwrap();
        let _a2 = gate.admit(a).unwrap();
        assert_eq!(gate.admit(a).unwrap_err(), Full::Peer);
        let _b1 = gate.admit(b).unwrap();
        assert_eq!(gate.admit(b).unwrap_err(), Full::Total);
        assert_eq!(gate.open(), 3);
        drop(a1);
        assert_eq!(gate.open(), 2);
        let _a3 = gate.admit(a).unwrap();
        drop(_b1);
        // An address with nothing open is forgotten.
        assert!(gate.per_peer.get(&b).is_none());
    }

    #[test]
    fn an_ipv6_peer_counts_by_its_network() {
        let one: Ipv6Addr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let other: Ipv6Addr = "2001:db8:1:2:bbbb::9".parse().unwrap();
        assert_eq!(peer_key(IpAddr::V6(one)), peer_key(IpAddr::V6(other)));
        let mapped: Ipv6Addr = "::ffff:10.0.0.1".parse().unwrap();
        assert_eq!(
            peer_key(IpAddr::V6(mapped)),
            IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1))
        );
    }

    #[tokio::test]
    async fn a_silent_connection_is_closed_and_a_talking_one_is_not() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        let gate = Gate::new(ConnectionLimits {
            idle_timeout: Duration::from_millis(300),
            ..ConnectionLimits::default()
        });
        let mut acceptor = Acceptor::new(listener, gate, "test");
        // An echo server over the acceptor's connections.
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
}
