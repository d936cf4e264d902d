//! Idle sockets against a real coordinator process run with 1,024 open
//! files: connections past the caps are closed at once, silent ones after
//! the idle timeout, and a failing accept (no descriptor left) neither
//! spins nor floods the log, while `perft list` from elsewhere answers.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{PERFT, Running, perft};
use tokio::io::AsyncReadExt;
use tokio::net::{TcpSocket, TcpStream};

/// Idle connections opened by the attacker.
const ATTACKERS: usize = 1200;

/// `perft serve` with an open-file limit of 1,024 (soft and hard, so it
/// cannot raise it), the default log filter, stderr into `log`; returns
/// it and its gRPC address.
fn serve_at_1024_files(data: &Path, log: &Path, extra: &[&str]) -> (Running, SocketAddr) {
    let mut command = Command::new("bash");
    command
        .args(["-c", "ulimit -n 1024 && exec \"$@\"", "bash", PERFT, "serve"])
        .args(["--listen", "127.0.0.1:0", "--data-dir", data.to_str().unwrap()])
        .args(extra)
        .env_remove("PERFT_TOKEN")
        .env_remove("RUST_LOG")
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(log).unwrap());
    let mut server = Running(command.spawn().expect("perft serve starts"));
    let mut line = String::new();
    BufReader::new(server.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let address = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("no address: {line:?}"))
        .parse()
        .unwrap();
    (server, address)
}

/// CPU seconds (user + system) the process `pid` has used.
fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name (which is in parentheses): state is
    // field 3, utime 14 and stime 15.
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after.split(' ').collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    // USER_HZ, 100 on every Linux architecture this runs on.
    ticks as f64 / 100.0
}

fn file_bytes(path: &Path) -> u64 {
    std::fs::metadata(path).unwrap().len()
}

/// Our own descriptor limit must fit the attack.
fn raise_own_file_limit() {
    let limit = rlimit::increase_nofile_limit(u64::MAX).unwrap();
    assert!(
        limit >= ATTACKERS as u64 + 256,
        "this test opens {ATTACKERS} sockets and the hard open-file limit is {limit}"
    );
}

/// `count` idle connections to `address` from the loopback address `from`.
async fn open_idle(address: SocketAddr, from: &str, count: usize) -> Vec<TcpStream> {
    let mut streams = Vec::with_capacity(count);
    for _ in 0..count {
        let socket = TcpSocket::new_v4().unwrap();
        socket.bind(format!("{from}:0").parse().unwrap()).unwrap();
        let stream = tokio::time::timeout(Duration::from_secs(10), socket.connect(address))
            .await
            .expect("the kernel completes the handshake")
            .unwrap();
        streams.push(stream);
    }
    streams
}

/// How many of `streams` the server has closed (EOF or reset).
async fn closed(streams: &mut [TcpStream]) -> usize {
    let mut closed = 0;
    for stream in streams {
        let mut buf = [0u8; 256];
        // A served connection may get the server's HTTP/2 settings.
        while let Ok(read) = tokio::time::timeout(Duration::from_millis(5), stream.read(&mut buf)).await {
            if !matches!(read, Ok(1..)) {
                closed += 1;
                break;
            }
        }
    }
    closed
}

/// `perft list` against `address`, timed.
fn list(address: SocketAddr) -> (bool, Duration) {
    let start = Instant::now();
    let output = perft(&format!("http://{address}"), &["list"]);
    (output.status.success(), start.elapsed())
}

/// The CPU share the process used over `seconds`.
fn cpu_share(pid: u32, seconds: f64) -> f64 {
    let before = cpu_seconds(pid);
    std::thread::sleep(Duration::from_secs_f64(seconds));
    (cpu_seconds(pid) - before) / seconds
}

/// The coordinator's CPU share over 3 s, which must stay under 20% of a
/// core, and how much its log grew since it was `log_before` bytes long.
async fn cpu_and_log_growth(server: &Running, log: &Path, log_before: u64) -> (f64, u64) {
    let pid = server.0.id();
    let cpu = tokio::task::spawn_blocking(move || cpu_share(pid, 3.0))
        .await
        .unwrap();
    assert!(cpu < 0.2, "the coordinator used {:.0}% of a core", cpu * 100.0);
    (cpu, file_bytes(log) - log_before)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_from_one_peer_are_capped_and_others_are_served() {
    raise_own_file_limit();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("serve.log");
    let (server, address) = serve_at_1024_files(&dir.path().join("data"), &log, &[]);
    let log_before = file_bytes(&log);
    // The attacker is 127.0.0.2; `perft list` comes from 127.0.0.1.
    let mut attack = open_idle(address, "127.0.0.2", ATTACKERS).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    let closed_at_once = closed(&mut attack).await;
    assert!(
        closed_at_once >= ATTACKERS - 64,
        "{closed_at_once} of {ATTACKERS} closed; the per-peer cap is 64"
    );
    let (answered, took) = tokio::task::spawn_blocking(move || list(address)).await.unwrap();
    assert!(
        answered,
        "perft list failed while the attack held its connections"
    );
    assert!(took < Duration::from_secs(2), "perft list took {took:?}");
    let (cpu, grown) = cpu_and_log_growth(&server, &log, log_before).await;
    eprintln!(
        "{closed_at_once} of {ATTACKERS} closed at once; perft list in {took:?}; CPU {:.1}%; log +{grown} bytes",
        cpu * 100.0
    );
    assert!(grown < 100_000, "the log grew {grown} bytes");
    drop(attack);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accepts_failing_at_the_file_limit_back_off_and_log_once() {
    raise_own_file_limit();
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("serve.log");
    // No per-peer cap to save it: the descriptors run out.
    let (server, address) = serve_at_1024_files(
        &dir.path().join("data"),
        &log,
        &["--max-connections-per-peer", "5000", "--idle-timeout", "6"],
    );
    let log_before = file_bytes(&log);
    let attack = open_idle(address, "127.0.0.2", ATTACKERS).await;
    let (cpu, grown) = cpu_and_log_growth(&server, &log, log_before).await;
    assert!(grown < 100_000, "the log grew {grown} bytes");
    eprintln!("out of descriptors: CPU {:.1}%; log +{grown} bytes", cpu * 100.0);
    let text = std::fs::read_to_string(&log).unwrap();
    // One line per burst: a burst may end (the idle timeout frees
    // descriptors) and another begin while the attack is still opening, so
    // "cannot accept" lines must alternate with "accepting again" lines.
    let events: Vec<bool> = text
        .lines()
        .filter_map(|line| {
            if line.contains("cannot accept connections") {
                Some(true)
            } else if line.contains("accepting connections again") {
                Some(false)
            } else {
                None
            }
        })
        .collect();
    assert_eq!(events.first(), Some(&true), "no burst logged:\n{text}");
    assert!(
        events.windows(2).all(|pair| pair[0] != pair[1]),
        "one line per burst:\n{text}"
    );
    // The idle timeout gives the descriptors back, and the coordinator
    // serves again without a restart.
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let (answered, _) = tokio::task::spawn_blocking(move || list(address)).await.unwrap();
        if answered {
            break;
        }
        assert!(Instant::now() < deadline, "perft list never answered again");
    }
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.contains("accepting connections again"), "{text}");
    assert!(file_bytes(&log) - log_before < 100_000);
    drop(attack);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_silent_connection_is_closed_after_the_idle_timeout() {
    let dir = tempfile::tempdir().unwrap();
    let mut command = Command::new(PERFT);
    command
        .args(["serve", "--listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0"])
        .args(["--data-dir", dir.path().to_str().unwrap(), "--idle-timeout", "2"])
        .env_remove("PERFT_TOKEN")
        .env("RUST_LOG", "error")
        .stdout(Stdio::piped());
    let mut server = Running(command.spawn().unwrap());
    let mut lines = BufReader::new(server.0.stdout.take().unwrap()).lines();
    let grpc = lines.next().unwrap().unwrap();
    let grpc = grpc.strip_prefix("listening on ").unwrap().to_owned();
    let dashboard = lines.next().unwrap().unwrap();
    let dashboard = dashboard.strip_prefix("dashboard on http://").unwrap().to_owned();
    for address in [grpc, dashboard] {
        let mut silent = TcpStream::connect(&address).await.unwrap();
        let start = Instant::now();
        let mut buf = [0u8; 64];
        // The gRPC server may greet with its HTTP/2 settings first.
        let end = loop {
            match tokio::time::timeout(Duration::from_secs(10), silent.read(&mut buf)).await {
                Ok(Ok(0) | Err(_)) => break start.elapsed(),
                Ok(Ok(_)) => {}
                Err(_) => panic!("{address}: a silent connection is still open after 10 s"),
            }
        };
        assert!(
            end >= Duration::from_millis(1500) && end < Duration::from_secs(5),
            "{address}: closed after {end:?}, the idle timeout is 2 s"
        );
    }
}
