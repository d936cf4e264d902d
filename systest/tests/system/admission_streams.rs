//! The admission layer against floods of connections and streams (issue
//! 40), on real processes: a health-watch flood and silent connections
//! against a `perft serve` on loopback, from the attacker's own address,
//! while honest callers from the same address are still served.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::common::jobs::words;
use crate::common::{client_config_as, join_all, ok, wait_for, wait_for_async};
use tonic::Code;
use tonic::transport::{Channel, Endpoint};
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_client::HealthClient;

use super::admission::{Attacked, Honest, rss_kib};

/// A health client over `channel` with no credential.
fn anonymous_health(channel: &Channel) -> HealthClient<Channel> {
    HealthClient::new(channel.clone())
}

fn watch_all() -> HealthCheckRequest {
    HealthCheckRequest {
        service: String::new(),
    }
}

/// Attack 2: health watches without a credential, many per connection
/// over several connections. One address holds at most its 8; the rest
/// are refused with RESOURCE_EXHAUSTED, a closed watch gives its place
/// back, and one connection cannot hold more than 128 streams at once
/// even for a participant whose budget would allow it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_health_watch_flood_holds_a_bounded_number_of_streams() {
    let c = Attacked::start(&[], &[]);
    let job = c.honest_job();
    let pid = c.pid();
    let rss_before = rss_kib(pid);
    let mut connections = Vec::new();
    for _ in 0..8 {
        connections.push(
            Endpoint::from_shared(c.url.clone())
                .unwrap()
                .connect()
                .await
                .unwrap(),
        );
    }
    // 32 callers, 4 a connection, watch again and again until the honest
    // side is done (and at least 10,000 times in all).
    const ATTEMPTS: usize = 10_000;
    let stop = Arc::new(AtomicBool::new(false));
    let attempts = Arc::new(AtomicUsize::new(0));
    let held = Arc::new(std::sync::Mutex::new(Vec::new()));
    let started = Instant::now();
    let flood: Vec<_> = (0..32)
        .map(|i| {
            let mut client = anonymous_health(&connections[i % connections.len()]);
            let (stop, attempts, held) = (Arc::clone(&stop), Arc::clone(&attempts), Arc::clone(&held));
            tokio::spawn(async move {
                let mut exhausted = 0;
                while !stop.load(Ordering::Relaxed) || attempts.load(Ordering::Relaxed) < ATTEMPTS {
                    attempts.fetch_add(1, Ordering::Relaxed);
                    match client.watch(watch_all()).await {
                        Ok(stream) => held.lock().unwrap().push(stream.into_inner()),
                        Err(status) if status.code() == Code::ResourceExhausted => {
                            assert!(
                                status
                                    .message()
                                    .contains("127.0.0.1 holds 8 open streams without a credential"),
                                "{status:?}"
                            );
                            exhausted += 1;
                        }
                        Err(status) => panic!("{status:?}"),
                    }
                }
                exhausted
            })
        })
        .collect();
    assert!(
        wait_for_async(Duration::from_secs(20), || attempts.load(Ordering::Relaxed)
            >= 1000)
        .await,
        "the flood did not start"
    );
    let mut honest = Honest::default();
    honest.work(&c, &job).await;
    stop.store(true, Ordering::Relaxed);
    let exhausted: usize = join_all(flood).await.into_iter().sum();
    let flood_took = started.elapsed();
    let attempts = attempts.load(Ordering::Relaxed);
    let mut open = std::mem::take(&mut *held.lock().unwrap());
    assert_eq!(open.len(), 8, "an address without a credential holds 8 streams");
    assert_eq!(exhausted, attempts - 8);
    // The watches held are live: each has its first answer.
    for stream in &mut open {
        let first = stream.message().await.unwrap().expect("a status");
        assert_eq!(first.status, 1, "SERVING");
    }
    let rss_flooded = rss_kib(pid);
    // A closed watch gives its place back.
    open.truncate(5);
    let mut again = Vec::new();
    let start = Instant::now();
    while again.len() < 3 {
        match anonymous_health(&connections[0]).watch(watch_all()).await {
            Ok(stream) => again.push(stream.into_inner()),
            Err(status) => assert_eq!(status.code(), Code::ResourceExhausted),
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "closed watches held their places"
        );
        if again.len() < 3 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    let status = anonymous_health(&connections[1])
        .watch(watch_all())
        .await
        .unwrap_err();
    assert_eq!(status.code(), Code::ResourceExhausted, "{status:?}");

    // One connection: at most 128 streams at once, whatever the budget.
    ok(c.as_("root", &["participant", "budget", "root", "--streams", "1000"]));
    let config = client_config_as(&c.url, &c.secret("root"));
    let channel = config.endpoint().unwrap().connect().await.unwrap();
    let client = HealthClient::with_interceptor(channel, config.interceptor());
    // One call first: the server's HTTP/2 settings (its stream limit) are
    // known to the client before the burst.
    client.clone().check(watch_all()).await.unwrap();
    let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel();
    let calls: Vec<_> = (0..200)
        .map(|_| {
            let (mut client, sender) = (client.clone(), sender.clone());
            tokio::spawn(async move {
                let _ = sender.send(client.watch(watch_all()).await.map(tonic::Response::into_inner));
            })
        })
        .collect();
    let mut held = Vec::new();
    while held.len() < 128 {
        let answer = tokio::time::timeout(Duration::from_secs(20), receiver.recv())
            .await
            .expect("128 watches open within 20 s")
            .unwrap();
        held.push(answer.expect("a watch within the participant's budget"));
    }
    honest.work(&c, &job).await;
    // The other 72 wait for a stream of the connection; none is open.
    assert_eq!(c.budget("root", "streams").0, 128);
    assert!(
        receiver.try_recv().is_err(),
        "a 129th stream opened on one connection"
    );
    let rss_streams = rss_kib(pid);
    // Streams freed on the connection let the waiting calls in.
    held.truncate(100);
    let mut late = 0;
    while late < 28 {
        let answer = tokio::time::timeout(Duration::from_secs(20), receiver.recv())
            .await
            .expect("waiting watches open as others close")
            .unwrap();
        held.push(answer.expect("a watch within the participant's budget"));
        late += 1;
    }
    assert!(wait_for(Duration::from_secs(10), || c
        .budget("root", "streams")
        .0
        == 128));
    for call in calls {
        call.abort();
    }
    drop((held, open, again));
    assert!(
        wait_for(Duration::from_secs(10), || c.budget("root", "streams").0 == 0),
        "closed watches are no longer charged"
    );
    let rss_after = rss_kib(pid);
    eprintln!(
        "health flood: {attempts} anonymous watches in {flood_took:?}, {exhausted} refused; RSS {rss_before} KiB before, \
         {rss_flooded} KiB flooded, {rss_streams} KiB with 128 streams on one connection, {rss_after} KiB after; honest {honest:?}"
    );
    assert!(
        rss_flooded < rss_before + 64 * 1024,
        "the flood grew the coordinator from {rss_before} to {rss_flooded} KiB"
    );
}

/// Attack 3: a registered session sends thousands of one-result reports
/// whose lease tags are forged. Every one is refused and counted in
/// metrics; the log gets one line an interval, which sums the reports it
/// stands for.
/// An HTTP/2 connection that completes the handshake and answers the
/// server's pings but never sends a request; `None` if it could not be
/// opened, else how long it stayed open until the server closed it.
async fn silent_connection(address: SocketAddr, handshakes: &AtomicUsize) -> Option<Duration> {
    let tcp = tokio::net::TcpStream::connect(address).await.ok()?;
    let (send, connection) = h2::client::handshake(tcp).await.ok()?;
    let opened = Instant::now();
    handshakes.fetch_add(1, Ordering::Relaxed);
    // Drives the connection (pings answered) until the server closes it.
    let _ = connection.await;
    drop(send);
    Some(opened.elapsed())
}

/// Attack 5: connections that answer pings but never send a request.
/// They are closed after --first-request-seconds; an attacker reopening
/// them at the per-peer cap cannot lock out a `perft list` or a worker
/// from its own address, and the coordinator makes room by closing the
/// oldest silent ones.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_connections_are_closed_and_cannot_lock_out_their_address() {
    let c = Attacked::start(
        &[],
        &words("--max-connections 64 --max-connections-per-peer 32 --first-request-seconds 2"),
    );
    let job = c.honest_job();
    let address: SocketAddr = c.url.strip_prefix("http://").unwrap().parse().unwrap();
    // Fewer than the unproven half: each lasts the first-request timeout.
    let lasted: Vec<Duration> = join_all(
        (0..10)
            .map(|_| tokio::spawn(async move { silent_connection(address, &AtomicUsize::new(0)).await }))
            .collect(),
    )
    .await
    .into_iter()
    .map(|open| open.expect("a silent connection is admitted"))
    .collect();
    for open in &lasted {
        assert!(
            *open >= Duration::from_millis(1500) && *open < Duration::from_secs(6),
            "a silent connection was closed after {open:?}; the first-request timeout is 2 s"
        );
    }

    // The attacker holds more than the per-peer cap and reopens each one
    // closed, for longer than the first-request timeout: 40 callers for
    // 32 places, each reopening 200 to 300 ms after its last was closed (a
    // steady stream of newcomers, each closing the oldest silent one
    // whatever the timing: there are always more than the cap allows).
    let stop = Arc::new(AtomicBool::new(false));
    let handshakes = Arc::new(AtomicUsize::new(0));
    let closed = Arc::new(AtomicUsize::new(0));
    let attackers: Vec<_> = (0..40u64)
        .map(|i| {
            let (stop, handshakes, closed) =
                (Arc::clone(&stop), Arc::clone(&handshakes), Arc::clone(&closed));
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(8 * i)).await;
                while !stop.load(Ordering::Relaxed) {
                    if silent_connection(address, &handshakes).await.is_some() {
                        closed.fetch_add(1, Ordering::Relaxed);
                    }
                    tokio::time::sleep(Duration::from_millis(200 + i * 37 % 100)).await;
                }
            })
        })
        .collect();
    assert!(
        wait_for_async(Duration::from_secs(10), || handshakes.load(Ordering::Relaxed)
            >= 32)
        .await,
        "the attacker could not open its connections"
    );
    // How many connections the coordinator holds (the attacker's and the
    // honest side's), read from /proc every 10 ms.
    let port = address.port();
    let pid = c.pid();
    let sampler = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || {
            let mut samples = Vec::new();
            while !stop.load(Ordering::Relaxed) {
                samples.push(held_connections(pid, port));
                std::thread::sleep(Duration::from_millis(10));
            }
            samples
        })
    };
    let mut honest = Honest::default();
    let attack = Instant::now();
    while attack.elapsed() < Duration::from_secs(5) {
        honest.work(&c, &job).await;
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let evicted = c.metric("perft_connections_evicted_total").unwrap_or(0.0);
    stop.store(true, Ordering::Relaxed);
    let mut held = sampler.join().unwrap();
    for attacker in attackers {
        attacker.abort();
    }
    let handshakes = handshakes.load(Ordering::Relaxed);
    held.sort_unstable();
    let (median_held, most_held) = (held[held.len() / 2], held[held.len() - 1]);
    // Every assertion names the whole run, so a failure elsewhere says why.
    let run = format!(
        "silent sockets: closed after {:?}..{:?}; the attacker opened {handshakes} connections in {:?}, the coordinator \
         held {median_held} connections (median of {} samples, at most {most_held}), {evicted} evicted; honest {honest:?}",
        lasted.iter().min().unwrap(),
        lasted.iter().max().unwrap(),
        attack.elapsed(),
        held.len(),
    );
    eprintln!("{run}");
    assert!(
        evicted > 0.0,
        "no silent connection was closed to make room: {run}"
    );
    assert!(handshakes > 64, "the attacker did not keep reopening: {run}");
    // At most the per-peer cap of 32: unproven connections younger than
    // the 2 s grace may pass the unproven half (a burst of honest clients
    // is not cut down before it could call), and at the full cap the
    // oldest unproven one makes room for a newcomer. An evicted
    // connection's descriptor closes a moment after its place is given
    // away (once the server polls it), so a sample may catch a few more;
    // the median does not.
    assert!(median_held <= 34, "its address may hold 32 connections: {run}");
    assert!(
        honest.slowest_list < Duration::from_secs(5),
        "perft list took too long: {run}"
    );
}

/// Established TCP connections on local port `port` that process `pid`
/// holds open (accepted: in its descriptor table).
fn held_connections(pid: u32, port: u16) -> usize {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return 0;
    };
    let sockets: std::collections::HashSet<String> = fds
        .filter_map(|fd| std::fs::read_link(fd.ok()?.path()).ok())
        .filter_map(|target| {
            let target = target.to_str()?;
            Some(target.strip_prefix("socket:[")?.strip_suffix(']')?.to_owned())
        })
        .collect();
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap();
    let local = format!(":{port:04X}");
    table
        .lines()
        .skip(1)
        .filter(|line| {
            // sl local_address rem_address st ... uid timeout inode
            let fields: Vec<&str> = line.split_whitespace().collect();
            fields.len() > 9
                && fields[1].ends_with(&local)
                && fields[3] == "01"
                && sockets.contains(fields[9])
        })
        .count()
}
