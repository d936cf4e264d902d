//! The harness of the integration tests: real `perft` processes on
//! loopback, killed when a test ends however it ends.

#![allow(dead_code)]

pub mod cluster;
pub mod http;
pub mod jobs;
pub mod local;
pub mod tamper;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

/// The `perft` program under test (this package's copy of the CLI's bin).
pub const PERFT: &str = env!("CARGO_BIN_EXE_perft-under-test");

/// A child process killed (SIGKILL) and reaped when dropped.
pub struct Running(pub Child);

impl Drop for Running {
    fn drop(&mut self) {
        self.kill();
    }
}

impl Running {
    /// SIGKILL: no chance to clean up, as when a machine dies.
    pub fn kill(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }

    /// SIGTERM, the polite stop: it may drain and clean up. Panics if the
    /// signal could not be sent; the caller waits for the exit.
    pub fn terminate(&self) {
        let pid = self.0.id().to_string();
        assert!(
            Command::new("kill")
                .args(["-TERM", &pid])
                .status()
                .unwrap()
                .success()
        );
    }
}

/// `perft serve` on `listen` and `data`, not yet started, for a test that
/// sets up the rest of the command itself.
pub fn serve_command(listen: &str, data: &Path) -> Command {
    let mut command = Command::new(PERFT);
    command.args(["serve", "--listen", listen, "--data-dir", data.to_str().unwrap()]);
    command
}

/// The path of `name` in `core/data` (suites, published counts).
pub fn core_data(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../core/data")
        .join(name)
        .display()
        .to_string()
}

/// Starts `perft serve` on `listen` with `extra` arguments; returns it and
/// the address it printed, or `None` if it did not start.
pub fn try_serve(listen: &str, data: &Path, extra: &[&str], log: &str) -> Option<(Running, String)> {
    try_serve_with(listen, data, extra, |serve| {
        serve.env("RUST_LOG", log);
    })
}

/// [`try_serve`] with the command adjusted by `configure` (environment,
/// stderr) before it starts.
pub fn try_serve_with(
    listen: &str,
    data: &Path,
    extra: &[&str],
    configure: impl FnOnce(&mut Command),
) -> Option<(Running, String)> {
    let mut command = serve_command(listen, data);
    command
        .args(extra)
        .env_remove("PERFT_TOKEN")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    configure(&mut command);
    let mut server = Running(command.spawn().expect("perft serve starts"));
    let mut line = String::new();
    let mut stdout = BufReader::new(server.0.stdout.take().unwrap());
    stdout.read_line(&mut line).ok()?;
    // Keep reading what it prints later (a dashboard's address): a pipe
    // closed under it would make the coordinator exit on its next line.
    std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
    let address = line.trim().strip_prefix("listening on ")?.to_owned();
    Some((server, address))
}

/// A coordinator with its web dashboard, both on free loopback ports, plus
/// `extra`; returns it, its gRPC address and the dashboard's URL as printed.
pub fn serve_with_dashboard(data: &Path, extra: &[&str]) -> (Running, String, String) {
    let mut command = Command::new(PERFT);
    command
        .args(["serve", "--listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0"])
        .args(["--data-dir", data.to_str().unwrap()])
        .args(extra)
        .env_remove("PERFT_TOKEN")
        .env("RUST_LOG", "error")
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    let mut server = Running(command.spawn().expect("perft serve starts"));
    let mut lines = BufReader::new(server.0.stdout.take().unwrap()).lines();
    let mut next = || lines.next().expect("a line").expect("text");
    let first = next();
    let address = first.strip_prefix("listening on ").expect(&first).to_owned();
    let second = next();
    let dashboard = second.strip_prefix("dashboard on ").expect(&second).to_owned();
    (server, address, dashboard)
}

/// A loopback port nobody listens on now (for a listener a test names
/// before it starts: the dashboard, metrics).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A coordinator on a free loopback port; returns it and its http URL.
pub fn serve(data: &Path, extra: &[&str]) -> (Running, String) {
    let (server, address) =
        try_serve("127.0.0.1:0", data, extra, "error").expect("perft serve prints its address");
    (server, format!("http://{address}"))
}

/// A worker of `url` with one thread and a small table, plus `extra`.
pub fn worker(url: &str, name: &str, extra: &[&str]) -> Running {
    worker_with(url, name, extra, |_| {})
}

/// [`worker`] with the command adjusted by `configure` (environment,
/// stderr) before it starts.
pub fn worker_with(url: &str, name: &str, extra: &[&str], configure: impl FnOnce(&mut Command)) -> Running {
    let mut command = Command::new(PERFT);
    command
        .args([
            "worker",
            "--coordinator",
            url,
            "--threads",
            "1",
            "--hash",
            "16M",
            "--name",
            name,
        ])
        .args(extra)
        .env("RUST_LOG", "error")
        .env_remove("PERFT_FAULT_EVERY")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit());
    configure(&mut command);
    Running(command.spawn().expect("perft worker starts"))
}

/// Runs `perft args` against the coordinator at `url`.
pub fn perft(url: &str, args: &[&str]) -> Output {
    Command::new(PERFT)
        .args(args)
        .env("PERFT_COORDINATOR", url)
        .env_remove("PERFT_TOKEN")
        .output()
        .expect("perft runs")
}

/// The stdout of a command that must succeed.
pub fn ok(output: Output) -> String {
    assert!(
        output.status.success(),
        "perft failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout).unwrap()
}

/// The stderr of a command refused for its input: exit 2, one line.
pub fn refused(output: &Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(2), "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    stderr
}

/// Divide lines of a JSON report as (move, leaves), sorted by move.
pub fn divide_lines(report: &serde_json::Value) -> Vec<(String, String)> {
    let mut lines: Vec<(String, String)> = report["divide"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["move"].as_str().unwrap().to_owned(),
                e["leaves"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    lines.sort();
    lines
}

/// The client settings of a plain, tokenless coordinator at `url`.
pub fn client_config(url: &str) -> perft_proto::connect::ClientConfig {
    perft_proto::connect::ClientConfig {
        url: url.to_owned(),
        token: None,
        tls_ca: None,
    }
}

/// A raw `PerftService` client of `url` whose calls carry the protocol
/// version header, as the CLI's do.
pub async fn perft_client(
    url: &str,
) -> perft_proto::perft_service_client::PerftServiceClient<perft_proto::connect::AuthChannel> {
    let config = client_config(url);
    let channel = config.endpoint().unwrap().connect().await.unwrap();
    perft_proto::perft_service_client::PerftServiceClient::with_interceptor(channel, config.interceptor())
}

/// A raw `WorkerService` client of `url` whose calls carry the protocol
/// version header, as the worker's do.
pub async fn worker_client(
    url: &str,
) -> perft_proto::worker_service_client::WorkerServiceClient<perft_proto::connect::AuthChannel> {
    let config = client_config(url);
    let channel = config.endpoint().unwrap().connect().await.unwrap();
    perft_proto::worker_service_client::WorkerServiceClient::with_interceptor(channel, config.interceptor())
}

/// Adds participant `name` with `role` to the journal in `data` (its
/// coordinator not running yet), writing its secret to a file in
/// `secrets`; returns the file.
pub fn add_participant(data: &Path, secrets: &Path, name: &str, role: &str) -> std::path::PathBuf {
    let file = secrets.join(format!("{name}.secret"));
    let output = Command::new(PERFT)
        .args(["participant", "add", name, "--role", role, "--data-dir"])
        .arg(data)
        .arg("--secret-file")
        .arg(&file)
        .env_remove("PERFT_TOKEN")
        .output()
        .expect("perft participant add runs");
    assert!(
        output.status.success(),
        "participant add: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    file
}

/// Runs `perft args` against `url` with the credential in `secret_file`.
pub fn perft_as(url: &str, secret_file: &Path, args: &[&str]) -> Output {
    Command::new(PERFT)
        .args(args)
        .env("PERFT_COORDINATOR", url)
        .env(
            "PERFT_TOKEN",
            std::fs::read_to_string(secret_file).unwrap().trim(),
        )
        .output()
        .expect("perft runs")
}

/// A worker of `url` with one thread, a small table and the credential in
/// `secret_file`, plus `extra`.
pub fn worker_as(url: &str, name: &str, secret_file: &Path, extra: &[&str]) -> Running {
    let mut all = vec!["--token-file", secret_file.to_str().unwrap()];
    all.extend_from_slice(extra);
    worker(url, name, &all)
}

/// The client settings of `url` with the credential in `secret_file`.
pub fn client_config_as(url: &str, secret_file: &Path) -> perft_proto::connect::ClientConfig {
    perft_proto::connect::ClientConfig {
        url: url.to_owned(),
        token: Some(
            perft_proto::connect::Token::new(&std::fs::read_to_string(secret_file).unwrap()).unwrap(),
        ),
        tls_ca: None,
    }
}

/// A raw `PerftService` client of `url` carrying the credential in
/// `secret_file`, as the CLI run by that participant calls.
pub async fn perft_client_as(
    url: &str,
    secret_file: &Path,
) -> perft_proto::perft_service_client::PerftServiceClient<perft_proto::connect::AuthChannel> {
    let config = client_config_as(url, secret_file);
    let channel = config.endpoint().unwrap().connect().await.unwrap();
    perft_proto::perft_service_client::PerftServiceClient::with_interceptor(channel, config.interceptor())
}

/// A raw `WorkerService` client of `url` carrying the credential in
/// `secret_file`, as a worker (or an attacker holding it) calls.
pub async fn worker_client_as(
    url: &str,
    secret_file: &Path,
) -> perft_proto::worker_service_client::WorkerServiceClient<perft_proto::connect::AuthChannel> {
    let config = client_config_as(url, secret_file);
    let channel = config.endpoint().unwrap().connect().await.unwrap();
    perft_proto::worker_service_client::WorkerServiceClient::with_interceptor(channel, config.interceptor())
}

/// Waits up to `limit` for `done()`, checking every 100 ms; false if it
/// never held.
pub fn wait_for(limit: std::time::Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = std::time::Instant::now();
    while start.elapsed() < limit {
        if done() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    false
}

/// The Grand Chess Tree's statistics of the start position at `depth`
/// (`core/data/chess-start-stats.tsv`): (column, value) pairs after the
/// depth column, leaves first.
pub fn published_stats_row(depth: u32) -> Vec<(&'static str, u128)> {
    const START_STATS: &str = include_str!("../../../../core/data/chess-start-stats.tsv");
    let mut lines = START_STATS.lines().filter(|line| !line.starts_with('#'));
    let header: Vec<&str> = lines.next().expect("a header").split('\t').collect();
    let row = lines
        .map(|line| line.split('\t').collect::<Vec<&str>>())
        .find(|fields| fields[0] == depth.to_string())
        .expect("the depth is published");
    header
        .into_iter()
        .zip(row)
        .skip(1)
        .map(|(column, value)| (column, value.parse().expect("a number")))
        .collect()
}

/// The published checkers perft(`depth`), as the CLI prints it.
pub fn published_checkers(depth: u32) -> String {
    use perft_core::GameKind;
    GameKind::Checkers
        .fns()
        .published(depth)
        .expect("a published checkers count")
        .total
        .leaves
        .to_string()
}

/// Registers a worker of one thread named `name` on a raw client; returns
/// its id.
pub async fn register_worker(
    workers: &mut perft_proto::worker_service_client::WorkerServiceClient<perft_proto::connect::AuthChannel>,
    name: &str,
) -> String {
    workers
        .register(perft_proto::RegisterRequest {
            name: name.to_owned(),
            threads: 1,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .worker_id
}

/// The results of `tasks`, in order.
pub async fn join_all<T>(tasks: Vec<tokio::task::JoinHandle<T>>) -> Vec<T> {
    let mut all = Vec::with_capacity(tasks.len());
    for task in tasks {
        all.push(task.await.unwrap());
    }
    all
}

/// Waits up to `limit` for `done()`, checking every 50 ms without
/// blocking the runtime; false if it never held.
pub async fn wait_for_async(limit: std::time::Duration, mut done: impl FnMut() -> bool) -> bool {
    let start = std::time::Instant::now();
    while start.elapsed() < limit {
        if done() {
            return true;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    false
}
