//! One cluster of real processes for a test: a coordinator on a data dir it
//! owns, the participants it was started with, the workers a test adds, and
//! clients run as any participant. Dropping it kills the workers, then the
//! coordinator (only the processes it started), then removes its dirs.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use super::jobs::JobStatus;
use super::{
    Running, add_participant, free_port, perft, perft_as, serve_with_dashboard, try_serve_with, worker_with,
};

/// What [`Cluster::start`] starts: set with the methods, then
/// [`ClusterBuilder::start`].
#[derive(Debug, Default)]
pub struct ClusterBuilder {
    participants: Vec<(String, String)>,
    serve_args: Vec<String>,
    dashboard: bool,
    tls: bool,
    log: Option<String>,
    metrics: bool,
}

impl ClusterBuilder {
    /// Adds participant `name` with `role` before the coordinator starts;
    /// its secret is [`Cluster::secret`]`(name)`.
    pub fn participant(mut self, name: &str, role: &str) -> Self {
        self.participants.push((name.to_owned(), role.to_owned()));
        self
    }

    /// Worker participants named `names`, in order: the secret of the
    /// `i`th is [`Cluster::worker_secret`]`(i)`.
    pub fn workers(mut self, names: &[&str]) -> Self {
        for name in names {
            self = self.participant(name, "worker");
        }
        self
    }

    /// [`ClusterBuilder::participant`] for each (name, role).
    pub fn participants(mut self, all: &[(&str, &str)]) -> Self {
        for (name, role) in all {
            self = self.participant(name, role);
        }
        self
    }

    /// Arguments to `perft serve` after the listen address and data dir.
    pub fn serve_args(mut self, args: &[&str]) -> Self {
        self.serve_args.extend(args.iter().map(|s| (*s).to_owned()));
        self
    }

    /// Serves the web dashboard too, on a free loopback port.
    pub fn dashboard(mut self) -> Self {
        self.dashboard = true;
        self
    }

    /// Serves over TLS with a self-signed certificate for 127.0.0.1 (its
    /// files in [`Cluster::tls`]); the URL is `https://`, and workers trust it.
    pub fn tls(mut self) -> Self {
        self.tls = true;
        self
    }

    /// The coordinator logs JSON at `level` into [`Cluster::log`] (default:
    /// errors only, on the test's stderr). Not with the dashboard.
    pub fn log_to_file(mut self, level: &str) -> Self {
        self.log = Some(level.to_owned());
        self
    }

    /// Serves metrics on a free loopback port, a new one each start
    /// ([`Cluster::metrics_port`]).
    pub fn metrics(mut self) -> Self {
        self.metrics = true;
        self
    }

    /// Adds the participants, then starts the coordinator and waits for
    /// the address it prints.
    pub fn start(self) -> Cluster {
        let data = tempfile::tempdir().unwrap();
        let files = tempfile::tempdir().unwrap();
        for (name, role) in &self.participants {
            add_participant(data.path(), files.path(), name, role);
        }
        let mut serve_args = self.serve_args;
        let tls = self.tls.then(|| {
            let tls = Tls::self_signed(files.path());
            serve_args.extend([
                "--tls-cert".to_owned(),
                tls.cert.to_str().unwrap().to_owned(),
                "--tls-key".to_owned(),
                tls.key.to_str().unwrap().to_owned(),
            ]);
            tls
        });
        let worker_names = self
            .participants
            .iter()
            .filter(|(_, role)| role == "worker")
            .map(|(name, _)| name.clone())
            .collect();
        let mut cluster = Cluster {
            worker_names,
            url: String::new(),
            address: String::new(),
            dashboard: None,
            server: None,
            workers: Vec::new(),
            serve_args,
            with_dashboard: self.dashboard,
            log: self.log.map(|level| (files.path().join("serve.log"), level)),
            metrics: self.metrics.then_some(0),
            tls,
            data,
            files,
        };
        cluster.serve("127.0.0.1:0");
        cluster
    }
}

/// The self-signed certificate of a TLS cluster, as PEM files.
#[derive(Debug)]
pub struct Tls {
    pub cert: PathBuf,
    pub key: PathBuf,
    /// The certificate's PEM text, for a client that must trust it.
    pub ca_pem: String,
}

impl Tls {
    fn self_signed(dir: &Path) -> Tls {
        let cert =
            rcgen::generate_simple_self_signed(vec!["127.0.0.1".to_owned(), "localhost".to_owned()]).unwrap();
        let (pem, key) = (dir.join("cert.pem"), dir.join("key.pem"));
        std::fs::write(&pem, cert.cert.pem()).unwrap();
        std::fs::write(&key, cert.signing_key.serialize_pem()).unwrap();
        Tls {
            cert: pem,
            key,
            ca_pem: cert.cert.pem(),
        }
    }
}

/// A worker a [`Cluster`] started: its index among them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WorkerId(usize);

/// A coordinator and the workers started for one test; see the module doc.
pub struct Cluster {
    /// The coordinator's gRPC URL (`https://` with TLS).
    pub url: String,
    /// The address it printed (`127.0.0.1:PORT`).
    pub address: String,
    /// The dashboard's URL as printed, when it serves one.
    pub dashboard: Option<String>,
    server: Option<Running>,
    workers: Vec<Option<Running>>,
    /// The participants of role worker it was started with, in order.
    worker_names: Vec<String>,
    serve_args: Vec<String>,
    with_dashboard: bool,
    /// The log file and its level, when logs go to a file.
    log: Option<(PathBuf, String)>,
    /// The metrics port, when metrics are served.
    metrics: Option<u16>,
    tls: Option<Tls>,
    data: tempfile::TempDir,
    files: tempfile::TempDir,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster")
            .field("url", &self.url)
            .finish_non_exhaustive()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        for worker in self.workers.iter_mut().flatten() {
            worker.kill();
        }
        if let Some(server) = &mut self.server {
            server.kill();
        }
    }
}

impl Cluster {
    /// A cluster to set up: participants, serve arguments, dashboard, TLS.
    pub fn builder() -> ClusterBuilder {
        ClusterBuilder::default()
    }

    /// A plain coordinator with `serve_args` and no participants.
    pub fn start(serve_args: &[&str]) -> Cluster {
        Cluster::builder().serve_args(serve_args).start()
    }

    /// Starts the coordinator on `listen`; panics if it prints no address.
    fn serve(&mut self, listen: &str) {
        let mut args: Vec<String> = Vec::new();
        if self.log.is_some() {
            args.extend(["--log-format".to_owned(), "json".to_owned()]);
        }
        if let Some(port) = &mut self.metrics {
            *port = free_port();
            args.extend(["--metrics-listen".to_owned(), format!("127.0.0.1:{port}")]);
        }
        args.extend(self.serve_args.iter().cloned());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (server, address) = if self.with_dashboard {
            assert_eq!(listen, "127.0.0.1:0", "a dashboard cluster restarts elsewhere");
            let (server, address, dashboard) = serve_with_dashboard(self.data.path(), &args);
            self.dashboard = Some(dashboard);
            (server, address)
        } else {
            let log = self.log.clone();
            try_serve_with(listen, self.data.path(), &args, |serve| match log {
                Some((file, level)) => {
                    let file = std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(file)
                        .unwrap();
                    serve.env("RUST_LOG", level).stderr(Stdio::from(file));
                }
                None => {
                    serve.env("RUST_LOG", "error");
                }
            })
            .expect("perft serve prints its address")
        };
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        self.url = format!("{scheme}://{address}");
        self.address = address;
        self.server = Some(server);
    }

    /// Kills the coordinator (SIGKILL, as a crash would); its workers run on.
    pub fn kill(&mut self) {
        if let Some(mut server) = self.server.take() {
            server.kill();
        }
    }

    /// Kills the coordinator if it runs and starts it again on the same
    /// data, arguments and address (workers reconnect to the same URL).
    pub fn restart(&mut self) {
        self.kill();
        let address = self.address.clone();
        self.serve(&address);
    }

    /// As [`Cluster::restart`], on a new free port (and a new URL).
    pub fn restart_elsewhere(&mut self) {
        self.kill();
        self.serve("127.0.0.1:0");
    }

    /// The running coordinator's process.
    pub fn server(&mut self) -> &mut Running {
        self.server.as_mut().expect("the coordinator runs")
    }

    /// The coordinator's process id.
    pub fn pid(&self) -> u32 {
        self.server.as_ref().expect("the coordinator runs").0.id()
    }

    /// The coordinator's data dir.
    pub fn data(&self) -> &Path {
        self.data.path()
    }

    /// A dir of the cluster's for secrets and whatever else a test writes.
    pub fn files(&self) -> &Path {
        self.files.path()
    }

    /// The secret file of participant `name`.
    pub fn secret(&self, name: &str) -> PathBuf {
        self.files.path().join(format!("{name}.secret"))
    }

    /// The worker participants it was started with, in order.
    pub fn worker_names(&self) -> &[String] {
        &self.worker_names
    }

    /// The secret file of the `i`th worker participant.
    pub fn worker_secret(&self, i: usize) -> PathBuf {
        self.secret(&self.worker_names[i])
    }

    /// The coordinator's log file ([`ClusterBuilder::log_to_file`]).
    pub fn log(&self) -> &Path {
        &self.log.as_ref().expect("logs go to a file").0
    }

    /// The metrics port ([`ClusterBuilder::metrics`]).
    pub fn metrics_port(&self) -> u16 {
        self.metrics.expect("metrics are served")
    }

    /// The TLS files ([`ClusterBuilder::tls`]).
    pub fn tls(&self) -> &Tls {
        self.tls.as_ref().expect("the cluster serves TLS")
    }

    /// Runs `perft args` without a credential against the coordinator.
    pub fn perft(&self, args: &[&str]) -> Output {
        perft(&self.url, args)
    }

    /// Runs `perft args` as participant `name`.
    pub fn perft_as(&self, name: &str, args: &[&str]) -> Output {
        perft_as(&self.url, &self.secret(name), args)
    }

    /// `perft submit args` as participant `name`; returns the job's id.
    pub fn submit_as(&self, name: &str, args: &[&str]) -> String {
        let mut all = vec!["submit"];
        all.extend_from_slice(args);
        super::ok(self.perft_as(name, &all)).trim().to_owned()
    }

    /// [`Cluster::submit_as`], then `perft watch` to the job's end, which
    /// must be done; returns its id.
    pub fn run_job_as(&self, name: &str, args: &[&str]) -> String {
        let id = self.submit_as(name, args);
        let watched = super::ok(self.perft_as(name, &["watch", &id]));
        assert!(watched.starts_with(&format!("job {id} done: ")), "{watched}");
        id
    }

    /// `perft status job` as participant `name`.
    pub fn status_as(&self, name: &str, job: &str) -> JobStatus {
        JobStatus::parse(&super::ok(self.perft_as(name, &["status", job])))
    }

    /// `perft divide job --format json` as participant `name`.
    pub fn divide_as(&self, name: &str, job: &str) -> serde_json::Value {
        let text = super::ok(self.perft_as(name, &["divide", job, "--format", "json"]));
        serde_json::from_str(&text).unwrap()
    }

    /// `name`'s row of `perft participant list --format json`, listed by
    /// participant `admin`.
    pub fn participant_row(&self, admin: &str, name: &str) -> serde_json::Value {
        let text = super::ok(self.perft_as(admin, &["participant", "list", "--format", "json"]));
        let all: serde_json::Value = serde_json::from_str(&text).unwrap();
        all.as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("no participant {name} in {text}"))
            .clone()
    }

    /// Starts a worker named `name` without a credential, plus `extra`.
    pub fn worker(&mut self, name: &str, extra: &[&str]) -> WorkerId {
        self.spawn_worker(name, None, extra)
    }

    /// Starts a worker named `name` as participant `participant`, plus `extra`.
    pub fn worker_as(&mut self, name: &str, participant: &str, extra: &[&str]) -> WorkerId {
        self.spawn_worker(name, Some(participant), extra)
    }

    /// [`Cluster::worker`] or [`Cluster::worker_as`] with the command
    /// adjusted by `configure` (environment, stderr) before it starts.
    pub fn worker_with(
        &mut self,
        name: &str,
        participant: Option<&str>,
        extra: &[&str],
        configure: impl FnOnce(&mut Command),
    ) -> WorkerId {
        let secret = participant.map(|p| self.secret(p));
        let ca = self.tls.as_ref().map(|tls| tls.cert.clone());
        let mut all: Vec<&str> = Vec::new();
        if let Some(secret) = &secret {
            all.extend(["--token-file", secret.to_str().unwrap()]);
        }
        if let Some(ca) = &ca {
            all.extend(["--tls-ca", ca.to_str().unwrap()]);
        }
        all.extend_from_slice(extra);
        self.workers
            .push(Some(worker_with(&self.url, name, &all, configure)));
        WorkerId(self.workers.len() - 1)
    }

    fn spawn_worker(&mut self, name: &str, participant: Option<&str>, extra: &[&str]) -> WorkerId {
        self.worker_with(name, participant, extra, |_| {})
    }

    /// Kills (SIGKILL) worker `id`; a second kill does nothing.
    pub fn kill_worker(&mut self, id: WorkerId) {
        if let Some(mut worker) = self.workers[id.0].take() {
            worker.kill();
        }
    }

    /// Kills (SIGKILL) every worker still running.
    pub fn kill_workers(&mut self) {
        for worker in self.workers.iter_mut().filter_map(Option::take) {
            let mut worker = worker;
            worker.kill();
        }
    }

    /// Worker `id`'s process, while it runs.
    pub fn worker_process(&mut self, id: WorkerId) -> &mut Running {
        self.workers[id.0].as_mut().expect("the worker runs")
    }
}
