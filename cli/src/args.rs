//! Command-line arguments of every `perft` subcommand.

use clap::{Args, Parser, Subcommand, ValueEnum};
use perft_core::{Convention, GameKind};

/// Deep Perft: exact perft and divide counts for Reversi, checkers and chess.
#[derive(Debug, Parser)]
#[command(name = "perft", version, about)]
pub struct Cli {
    /// Log format on stderr (filter with RUST_LOG, e.g. RUST_LOG=info).
    #[arg(long, value_enum, global = true, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
    #[command(subcommand)]
    pub command: Command,
}

/// How logs are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line, for log collectors.
    Json,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Count a perft on this machine and print the divide table.
    Run(RunArgs),
    /// Speak perftree's protocol: `perft perftree DEPTH FEN [MOVES]` prints
    /// `move count` lines, a blank line and the total, as Stockfish does.
    Perftree(PerftreeArgs),
    /// Measure the engine on fixed cases (medians of several runs).
    Bench(BenchArgs),
    /// Run a coordinator: plans jobs, leases units to workers, sums results.
    Serve(ServeArgs),
    /// Run a worker: counts units leased from a coordinator.
    Worker(WorkerArgs),
    /// Submit a job to a coordinator; prints the job id.
    Submit(SubmitArgs),
    /// Follow a job's progress until it ends (exit 0 only when done).
    Watch(JobArgs),
    /// Print a job's divide table, as `perft run` prints one.
    Divide(DivideArgs),
    /// List the coordinator's jobs.
    List(ListArgs),
    /// Show one job.
    Status(JobArgs),
    /// Cancel a job.
    Cancel(JobArgs),
    /// Queue a failed job's open units again, keeping its accepted counts.
    Resume(JobArgs),
    /// Remove a finished (done, failed or cancelled) job entirely, from the
    /// list and the journal.
    Delete(JobArgs),
    /// Count and compare with the published tables (exit 1 on a mismatch).
    Verify(VerifyArgs),
    /// Check a certificate: re-plan, re-sum, and recount a random sample
    /// of its units (exit 1 on a mismatch, 2 on a bad file).
    Audit(AuditArgs),
    /// Write a done job's certificate (every unit with its count and who
    /// decided it), from a coordinator or a stopped one's --data-dir.
    Certificate(CertificateArgs),
    /// Predict a perft's leaves, CPU time and journal size before running
    /// it, from a random sample of its units timed on this machine.
    Estimate(EstimateArgs),
    /// Count every position of an EPD perft suite (`POSITION ;D1 n ;D2 n`
    /// lines) and print a table, mismatches first (exit 1 on a mismatch).
    Suite(SuiteArgs),
    /// Compare another engine's divides with ours and print the move path
    /// to where their move lists differ (exit 1 when they differ).
    Check(CheckArgs),
    /// Load-test a coordinator with many simulated workers and tiny units.
    Loadgen(LoadgenArgs),
    /// Ask a coordinator's gRPC health service; exit 0 when it serves.
    Health(HealthArgs),
    /// Manage participants: who may work, submit and read, each with its
    /// own secret (admin credential, or offline with --data-dir).
    #[command(subcommand)]
    Participant(ParticipantCommand),
    /// Print a completion script for SHELL on stdout, e.g.
    /// `perft completions bash > ~/.local/share/bash-completion/completions/perft`.
    Completions(CompletionsArgs),
    /// Print the man page (roff) on stdout, e.g. `perft man > perft.1`, or
    /// a subcommand's, e.g. `perft man serve > perft-serve.1`.
    Man(ManArgs),
    /// One benchmark measurement, for `perft bench` (internal).
    #[command(hide = true)]
    BenchCase(BenchCaseArgs),
}

/// Arguments of `perft completions`.
#[derive(Debug, Clone, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Arguments of `perft man`.
#[derive(Debug, Clone, Args)]
pub struct ManArgs {
    /// The subcommand whose page to print (default: the page of `perft`).
    pub subcommand: Option<String>,
}

/// Parses `--game` against the game registry, listing each game with its
/// [`Game::ABOUT`](perft_core::Game::ABOUT) in the help.
#[derive(Debug, Clone, Copy)]
pub struct GameParser;

impl GameParser {
    fn values() -> impl Iterator<Item = clap::builder::PossibleValue> {
        GameKind::ALL
            .iter()
            .map(|kind| clap::builder::PossibleValue::new(kind.name()).help(kind.facts().about))
    }

    fn names() -> clap::builder::PossibleValuesParser {
        clap::builder::PossibleValuesParser::new(Self::values())
    }
}

impl clap::builder::TypedValueParser for GameParser {
    type Value = GameKind;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<GameKind, clap::Error> {
        let name = Self::names().parse_ref(cmd, arg, value)?;
        name.parse()
            .map_err(|e| clap::Error::raw(clap::error::ErrorKind::InvalidValue, e))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(Self::values()))
    }
}

/// Parses `--convention` (`bik` or `oeis`), listing each with its rule.
fn convention_values() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        Convention::ALL.map(|c| clap::builder::PossibleValue::new(c.name()).help(c.about())),
    )
}

/// [`convention_values`] mapped to the [`Convention`].
pub fn convention_parser() -> impl clap::builder::TypedValueParser<Value = Convention> {
    clap::builder::TypedValueParser::try_map(convention_values(), |name| name.parse::<Convention>())
}

/// How a result is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// `move: count` lines, a blank line, the total and the timing.
    Text,
    /// One JSON object; every count a decimal string.
    Json,
    /// `move,leaves,full_depth,higher` rows (and a column per kind with
    /// `--stats`) and a final `total` row.
    Csv,
}

/// How the engine counts on this machine: threads and table.
#[derive(Debug, Clone, Args)]
pub struct EngineArgs {
    /// Counting threads (default: every core).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: Option<u32>,
    /// Transposition table size, e.g. 512M or 4G (binary units). Default:
    /// `perft run` sizes it to the count (estimated from its first plies)
    /// within half the available memory; a worker takes a quarter of the
    /// available memory.
    #[arg(long, value_name = "SIZE", value_parser = parse_table_size)]
    pub hash: Option<u64>,
    /// Count without a transposition table.
    #[arg(long, conflicts_with = "hash")]
    pub no_hash: bool,
}

/// The table the options ask for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableChoice {
    /// `--no-hash`.
    Off,
    /// `--hash SIZE`, in bytes.
    Bytes(u64),
    /// No option: the default size, which depends on the work and memory.
    Default,
}

impl EngineArgs {
    /// Threads to use: the option, else every core the OS gives us.
    pub fn threads(&self) -> usize {
        self.threads.map_or_else(Self::default_threads, |n| n as usize)
    }

    /// Every core the OS gives us.
    pub fn default_threads() -> usize {
        std::thread::available_parallelism().map_or(1, usize::from)
    }

    /// The table asked for.
    pub fn table(&self) -> TableChoice {
        match (self.no_hash, self.hash) {
            (true, _) => TableChoice::Off,
            (false, Some(bytes)) => TableChoice::Bytes(bytes),
            (false, None) => TableChoice::Default,
        }
    }

    /// Table bytes for work whose size is not known up front (an audit's
    /// sample, an estimate's timing): `--hash`, else `default`, `None` with
    /// `--no-hash`.
    pub fn table_bytes_or(&self, default: u64) -> Option<u64> {
        match self.table() {
            TableChoice::Off => None,
            TableChoice::Bytes(bytes) => Some(bytes),
            TableChoice::Default => Some(default),
        }
    }
}

/// Bytes of memory the system can give without swapping (Linux's
/// `MemAvailable`); 4 GiB where that cannot be read, so the defaults are
/// those of a small machine.
pub fn available_memory_bytes() -> u64 {
    const FALLBACK: u64 = 4 << 30;
    let read = || -> Option<u64> {
        let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
        let line = meminfo.lines().find(|line| line.starts_with("MemAvailable:"))?;
        let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        kib.checked_mul(1024)
    };
    read().unwrap_or(FALLBACK)
}

/// Parses `512M`, `4G`, `65536` (bytes); K, M, G and T are binary units.
fn parse_table_size(text: &str) -> Result<u64, String> {
    let bytes = parse_size::Config::new()
        .with_binary()
        .parse_size(text)
        .map_err(|e| format!("'{text}' is not a size such as 512M or 4G ({e})"))?;
    if bytes < 1 << 16 {
        return Err(format!("'{text}' is below the smallest table, 64K"));
    }
    Ok(bytes)
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The game.
    #[arg(long, value_parser = GameParser)]
    pub game: GameKind,
    /// Plies to count below the position.
    #[arg(long, allow_negative_numbers = true)]
    pub depth: u32,
    /// The root position (default: the game's start). Reversi positions
    /// often begin with `-`, so hyphens are taken as part of the value.
    #[arg(long, allow_hyphen_values = true)]
    pub position: Option<String>,
    /// Moves played from the position before counting, in the game's
    /// notation (`--moves e2e4 e7e5`).
    #[arg(long, num_args = 1.., value_name = "MOVE")]
    pub moves: Vec<String>,
    /// Reversi's counting convention (default: bik); refused for other games.
    #[arg(long, value_parser = convention_parser())]
    pub convention: Option<Convention>,
    /// Chess: write and read castling as the king taking its rook (`e1h1`),
    /// as engines do with UCI_Chess960. Chess960 placements use it anyway.
    #[arg(long)]
    pub chess960: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    /// Write the certificate of the count to FILE: every unit of the plan
    /// with its count ("local" decided it), the divide table, the total
    /// and the Merkle root (`perft audit FILE` checks it).
    #[arg(long, value_name = "FILE", conflicts_with = "raw")]
    pub certificate: Option<std::path::PathBuf>,
    /// Plies expanded into units (default: enough units for the threads).
    #[arg(long, conflicts_with = "raw")]
    pub split_depth: Option<u32>,
    /// The bare move generator: one thread, no table, no merging of
    /// transposed or symmetric positions, bulk counting at the last ply.
    /// The mode to compare with other engines' published speeds.
    #[arg(long, conflicts_with_all = ["threads", "hash", "no_hash"])]
    pub raw: bool,
    /// Also count the leaves by kind, in total and per first move. Chess:
    /// captures, en passant, castles, promotions, checks and mates (each
    /// split direct / discovered / double); Reversi: passes and game
    /// overs; checkers: captures, multi-jumps and crownings. Slower: every
    /// last-ply move is classified, none bulk-counted.
    #[arg(long, conflicts_with = "certificate")]
    pub stats: bool,
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// What perftree passes: `./script "$depth" "$fen" "$moves"`.
#[derive(Debug, Args)]
pub struct PerftreeArgs {
    /// Plies to count below the position after the moves.
    pub depth: u32,
    /// The root position (chess: FEN).
    #[arg(allow_hyphen_values = true)]
    pub fen: String,
    /// Moves played first, space-separated (UCI for chess); may be empty.
    #[arg(default_value = "", allow_hyphen_values = true)]
    pub moves: String,
    /// The game.
    #[arg(long, value_parser = GameParser, default_value = "chess")]
    pub game: GameKind,
    /// Chess: castling as the king taking its rook (UCI_Chess960).
    #[arg(long)]
    pub chess960: bool,
    #[command(flatten)]
    pub engine: EngineArgs,
}

#[derive(Debug, Args)]
pub struct BenchArgs {
    /// Only this game's cases.
    #[arg(long, value_parser = GameParser)]
    pub game: Option<GameKind>,
    /// Only Reversi's cases in this convention (default: both).
    #[arg(long, value_parser = convention_parser())]
    pub convention: Option<Convention>,
    /// Threads for the table cases, measured beside one thread (default:
    /// every core). Raw cases always use one thread.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    pub threads: Option<u32>,
    /// Runs per case; the medians are reported.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=100))]
    pub runs: u64,
    /// The cases of the speed targets (each game's `Game::BENCH.full`):
    /// minutes per run.
    #[arg(long)]
    pub full: bool,
    /// Output format (csv prints the text table).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct BenchCaseArgs {
    #[arg(long, value_parser = GameParser)]
    pub game: GameKind,
    #[arg(long, value_parser = convention_parser())]
    pub convention: Option<Convention>,
    #[arg(long)]
    pub depth: u32,
    /// The bare generator, as `perft run --raw` counts.
    #[arg(long)]
    pub raw: bool,
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// The coordinator a client or worker talks to.
#[derive(Debug, Clone, Args)]
pub struct CoordinatorArg {
    /// Coordinator URL (https:// with --tls-ca).
    #[arg(long, env = "PERFT_COORDINATOR", default_value = "http://127.0.0.1:50051")]
    pub coordinator: String,
    #[command(flatten)]
    pub token: TokenArg,
    /// PEM file of the CA that signed the coordinator's TLS certificate.
    #[arg(long, value_name = "PEM")]
    pub tls_ca: Option<std::path::PathBuf>,
}

/// The caller's credential: from a file, or else from `PERFT_TOKEN`.
#[derive(Clone, Args)]
pub struct TokenArg {
    /// File holding your credential: a participant's secret (from `perft
    /// participant add`) or, on `serve`, the shared admin token.
    #[arg(long, value_name = "FILE")]
    pub token_file: Option<std::path::PathBuf>,
    /// The shared token itself (prefer --token-file: the environment is
    /// visible to other processes of the same user).
    #[arg(long = "token", env = "PERFT_TOKEN", hide_env_values = true, hide = true)]
    pub token: Option<String>,
}

impl std::fmt::Debug for TokenArg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenArg")
            .field("token_file", &self.token_file)
            .finish_non_exhaustive()
    }
}

#[derive(Debug, Args)]
pub struct ServeArgs {
    #[command(flatten)]
    pub token: TokenArg,
    /// PEM certificate chain: serve over TLS (with --tls-key).
    #[arg(long, value_name = "PEM", requires = "tls_key")]
    pub tls_cert: Option<std::path::PathBuf>,
    /// PEM private key of --tls-cert.
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    pub tls_key: Option<std::path::PathBuf>,
    /// Most units one job may be planned into (planning costs up to about
    /// 180 bytes a unit of memory, an open job about 90).
    #[arg(long, default_value_t = perft_coordinator::MAX_UNITS)]
    pub max_units: usize,
    /// Serve Prometheus metrics over HTTP on this address (e.g. 0.0.0.0:9090).
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// Address to listen on (port 0: any free port, printed at start).
    #[arg(long, default_value = "0.0.0.0:50051")]
    pub listen: String,
    /// Serve the read-only web dashboard on this address (e.g.
    /// 127.0.0.1:8080; port 0: any free port, printed at start). Off by
    /// default; behind the token and over TLS when the coordinator is.
    #[arg(long, value_name = "ADDR")]
    pub http_listen: Option<String>,
    /// Directory for the coordinator's state.
    #[arg(long, default_value = "perft-data")]
    pub data_dir: std::path::PathBuf,
    /// Seconds a worker session lives without a call (it heartbeats three
    /// times in this time).
    #[arg(long, default_value_t = 15, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub lease_seconds: u64,
    /// Seconds a worker session holding units may go without reporting a
    /// count or handing one back before its leases go back to the queue (a
    /// heartbeat keeps the session, not its units).
    #[arg(long, default_value_t = 1800, value_parser = clap::value_parser!(u64).range(1..=7 * 86_400))]
    pub progress_seconds: u64,
    /// Quarantine a participant once this many of its counts lost a
    /// majority vote: it leases nothing more, and every unit it decided
    /// alone is counted again.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub quarantine_after: Option<u64>,
    /// Seconds a connection may send and receive nothing before it is
    /// closed (live clients answer the server's pings well within it).
    #[arg(long, value_name = "SECONDS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub idle_timeout: u64,
    /// Connections served at once, from everyone (gRPC; the dashboard
    /// serves at most 256); more are closed at once.
    #[arg(long, value_name = "N", default_value_t = 4096, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_connections: u64,
    /// Connections served at once from one address (an IPv6 /64); more
    /// are closed at once.
    #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub max_connections_per_peer: u64,
}

#[derive(Debug, Args)]
pub struct WorkerArgs {
    #[command(flatten)]
    pub coordinator: CoordinatorArg,
    /// Serve Prometheus metrics over HTTP on this address.
    #[arg(long, value_name = "ADDR")]
    pub metrics_listen: Option<std::net::SocketAddr>,
    /// The machine's name (default: the host name): its identity for
    /// `--verify`. Give every machine its own; workers sharing a name are
    /// one machine, whose counts never confirm each other.
    #[arg(long)]
    pub name: Option<String>,
    #[command(flatten)]
    pub engine: EngineArgs,
}

#[derive(Debug, Args)]
pub struct SubmitArgs {
    #[command(flatten)]
    pub coordinator: CoordinatorArg,
    /// The game.
    #[arg(long, value_parser = GameParser)]
    pub game: GameKind,
    /// Plies to count.
    #[arg(long, allow_negative_numbers = true)]
    pub depth: u32,
    /// The root position (default: the start).
    #[arg(long, allow_hyphen_values = true)]
    pub position: Option<String>,
    /// Plies expanded into units (default: chosen by the coordinator).
    #[arg(long)]
    pub split_depth: Option<u32>,
    /// Compute every unit on two different workers.
    #[arg(long)]
    pub verify: bool,
    /// Reversi's counting convention (default: bik); refused for other games.
    #[arg(long, value_parser = convention_parser())]
    pub convention: Option<Convention>,
}

#[derive(Debug, Args)]
pub struct JobArgs {
    #[command(flatten)]
    pub coordinator: CoordinatorArg,
    /// The job id printed by `perft submit`.
    pub job: String,
}

#[derive(Debug, Args)]
pub struct CertificateArgs {
    #[command(flatten)]
    pub coordinator: CoordinatorArg,
    /// The job id printed by `perft submit`; the job must be done.
    pub job: String,
    /// Write the certificate here (default: JOB.cert in this directory).
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<std::path::PathBuf>,
    /// Make it from this data dir's journal instead (its coordinator
    /// stopped), with no coordinator to ask.
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<std::path::PathBuf>,
}

#[derive(Debug, Args)]
pub struct DivideArgs {
    #[command(flatten)]
    pub coordinator: CoordinatorArg,
    /// The job id printed by `perft submit`.
    pub job: String,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    #[command(flatten)]
    pub coordinator: CoordinatorArg,
}

#[derive(Debug, Args)]
pub struct VerifyArgs {
    #[arg(long, value_parser = GameParser)]
    pub game: GameKind,
    #[arg(long, allow_negative_numbers = true)]
    pub depth: u32,
    /// Reversi's counting convention (default: bik), compared with its
    /// own published table.
    #[arg(long, value_parser = convention_parser())]
    pub convention: Option<Convention>,
    /// Count on this coordinator's cluster instead of locally.
    #[arg(long)]
    pub coordinator: Option<String>,
    #[command(flatten)]
    pub token: TokenArg,
    /// PEM file of the CA that signed the coordinator's TLS certificate.
    #[arg(long, value_name = "PEM")]
    pub tls_ca: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub engine: EngineArgs,
}

#[derive(Debug, Args)]
pub struct AuditArgs {
    /// The certificate file.
    pub file: std::path::PathBuf,
    /// Recount this many units, drawn at random.
    #[arg(long, conflicts_with = "fraction")]
    pub sample: Option<usize>,
    /// Recount this share of the units (0 to 1; default 0.01).
    #[arg(long, value_parser = parse_fraction)]
    pub fraction: Option<f64>,
    /// Seed of the draw (default: a fresh random one, printed), so that
    /// whoever made the certificate cannot know which units are checked.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Recount the sample on this coordinator's cluster, as jobs of the
    /// sampled units (submitter role), instead of on this machine.
    #[arg(long, value_name = "URL")]
    pub on: Option<String>,
    #[command(flatten)]
    pub token: TokenArg,
    /// With --on: PEM file of the CA that signed the coordinator's TLS
    /// certificate.
    #[arg(long, value_name = "PEM", requires = "on")]
    pub tls_ca: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub engine: EngineArgs,
}

#[derive(Debug, Args)]
pub struct SuiteArgs {
    /// The suite: one `POSITION ;D1 n ;D2 n ...` a line (the position is
    /// everything before the first `;`); blank and `#` lines are skipped.
    pub file: std::path::PathBuf,
    /// The game of every position.
    #[arg(long, value_parser = GameParser, default_value = "chess")]
    pub game: GameKind,
    /// Count no depth above this (default: every depth listed).
    #[arg(long)]
    pub max_depth: Option<u32>,
    /// Chess: castling as the king taking its rook (UCI_Chess960).
    #[arg(long)]
    pub chess960: bool,
    /// Count on this coordinator's cluster (submitter role) instead of on
    /// this machine: one job for each depth, of every line listing it.
    #[arg(long, value_name = "URL")]
    pub on: Option<String>,
    #[command(flatten)]
    pub token: TokenArg,
    /// With --on: PEM file of the CA that signed the coordinator's TLS
    /// certificate.
    #[arg(long, value_name = "PEM", requires = "on")]
    pub tls_ca: Option<std::path::PathBuf>,
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// Parses a share between 0 and 1.
fn parse_fraction(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
        _ => Err(format!(
            "'{}' is not a fraction between 0 and 1",
            perft_core::shown(text)
        )),
    }
}

#[derive(Debug, Args)]
pub struct EstimateArgs {
    /// The game.
    #[arg(long, value_parser = GameParser)]
    pub game: GameKind,
    /// Plies to count.
    #[arg(long, allow_negative_numbers = true)]
    pub depth: u32,
    /// The root position (default: the start).
    #[arg(long, allow_hyphen_values = true)]
    pub position: Option<String>,
    /// Plies expanded into units (default: the deepest level of at most
    /// 200,000 units, at least 2 plies above the depth).
    #[arg(long)]
    pub split_depth: Option<u32>,
    /// Reversi's counting convention (default: bik).
    #[arg(long, value_parser = convention_parser())]
    pub convention: Option<Convention>,
    /// Units counted for the leaf estimate (below the split frontier, each
    /// unit's subtree estimated by random paths).
    #[arg(long, default_value_t = 2000)]
    pub sample: usize,
    /// Random paths per sampled unit.
    #[arg(long, default_value_t = 64)]
    pub paths: usize,
    /// CPU seconds spent timing exact counts of sampled units, and whole
    /// shallower runs for the table's sharing between units.
    #[arg(long, default_value_t = 10.0)]
    pub time_budget: f64,
    /// Seed of the draws.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Output format (text or json).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
    #[command(flatten)]
    pub engine: EngineArgs,
}

#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The engine's command line, e.g. `stockfish` (uci) or `./perftree.sh`
    /// (perftree); quotes are respected.
    #[arg(long)]
    pub engine: String,
    /// How the engine is asked for a divide.
    #[arg(long, value_enum, default_value_t = crate::engine::Protocol::Perftree)]
    pub protocol: crate::engine::Protocol,
    /// The game.
    #[arg(long, value_parser = GameParser, default_value = "chess")]
    pub game: GameKind,
    /// The position (default: the start); with --random, where playouts start.
    #[arg(long, allow_hyphen_values = true)]
    pub position: Option<String>,
    /// Moves played from the position first.
    #[arg(long, num_args = 1.., value_name = "MOVE")]
    pub moves: Vec<String>,
    /// Plies of the compared divides (with --suite: the most counted).
    #[arg(long, default_value_t = 3)]
    pub depth: u32,
    /// Check every position of this EPD suite instead.
    #[arg(long, conflicts_with_all = ["position", "moves", "random"])]
    pub suite: Option<std::path::PathBuf>,
    /// Check this many positions of random playouts, biased toward castling,
    /// en passant, promotions, multi-jumps, crownings and passes.
    #[arg(long)]
    pub random: Option<u32>,
    /// Seed of the random playouts.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Longest random playout, in plies.
    #[arg(long, default_value_t = 40)]
    pub plies: u32,
    /// Chess: castling as the king taking its rook; UCI engines get
    /// UCI_Chess960.
    #[arg(long)]
    pub chess960: bool,
    /// Also print the positions that agree.
    #[arg(long)]
    pub verbose: bool,
}

#[derive(Debug, Args)]
pub struct LoadgenArgs {
    #[command(flatten)]
    pub coordinator: CoordinatorArg,
    /// Simulated workers, each with its own connection.
    #[arg(long, default_value_t = 300)]
    pub workers: u32,
    /// Units leased (and reported) per call.
    #[arg(long, default_value_t = 8)]
    pub batch: u32,
    /// The game of the job.
    #[arg(long, default_value = "reversi", value_parser = GameParser)]
    pub game: GameKind,
    /// The job's depth; it is split one ply above, so units are one ply deep.
    #[arg(long, default_value_t = 10)]
    pub depth: u32,
    /// Give each simulated worker a participant of its own (added with
    /// this admin credential, named loadgen-JOB-N), as a shared cluster
    /// of many owners has.
    #[arg(long)]
    pub own_participants: bool,
    /// Write one line per report call: when it was sent (Unix ms) and how
    /// long its acknowledgement took (µs), to see latency during an event.
    #[arg(long, value_name = "FILE")]
    pub latency_log: Option<std::path::PathBuf>,
}

/// `perft participant ...`.
#[derive(Debug, Subcommand)]
pub enum ParticipantCommand {
    /// Add a participant; prints its secret once (only a hash is kept).
    Add(ParticipantAddArgs),
    /// List participants with their credit and reliability.
    List(ParticipantListArgs),
    /// Revoke a participant: its sessions end, its leases are queued
    /// again, its undecided votes dropped.
    Revoke(ParticipantRevokeArgs),
}

/// Where a participant verb acts: a running coordinator (with an admin
/// credential), or a data dir whose coordinator is stopped.
#[derive(Debug, Args)]
pub struct ParticipantTarget {
    #[command(flatten)]
    pub coordinator: CoordinatorArg,
    /// Act on this data dir's journal directly (its coordinator stopped):
    /// how the first admin of a new cluster is made.
    #[arg(long, value_name = "DIR")]
    pub data_dir: Option<std::path::PathBuf>,
}

#[derive(Debug, Args)]
pub struct ParticipantAddArgs {
    /// 1 to 64 of A-Z a-z 0-9 . _ -
    pub name: String,
    /// worker (register, lease, report), submitter (submit, cancel and
    /// resume its own jobs, read), reader (read), admin (everything).
    #[arg(long, default_value = "worker", value_parser = ["worker", "submitter", "reader", "admin"])]
    pub role: String,
    /// Write the secret to this file (created with mode 0600) instead of
    /// printing it.
    #[arg(long, value_name = "FILE")]
    pub secret_file: Option<std::path::PathBuf>,
    /// With --secret-file: when the file exists already, do nothing (for
    /// provisioning steps that run at every start, as in deploy/compose.yaml).
    #[arg(long, requires = "secret_file")]
    pub keep_existing: bool,
    #[command(flatten)]
    pub target: ParticipantTarget,
}

#[derive(Debug, Args)]
pub struct ParticipantListArgs {
    #[command(flatten)]
    pub target: ParticipantTarget,
    /// `text` (a table) or `json` (counts as decimal strings).
    #[arg(long, default_value = "text", value_parser = ["text", "json"])]
    pub format: String,
}

#[derive(Debug, Args)]
pub struct ParticipantRevokeArgs {
    pub name: String,
    /// Also count again every unit whose verdict its counts were part of.
    #[arg(long)]
    pub recount: bool,
    #[command(flatten)]
    pub coordinator: CoordinatorArg,
}

#[derive(Debug, Args)]
pub struct HealthArgs {
    #[command(flatten)]
    pub coordinator: CoordinatorArg,
}

impl TokenArg {
    /// The token, if one is configured; an unreadable file or a malformed
    /// token is an error.
    pub fn token(&self) -> Result<Option<perft_proto::connect::Token>, crate::error::CliError> {
        use crate::error::CliError;
        let text = match (&self.token_file, &self.token) {
            (Some(path), _) => Some(std::fs::read_to_string(path).map_err(|e| {
                CliError::Usage(format!("cannot read the token file '{}': {e}", path.display()))
            })?),
            (None, Some(token)) => Some(token.clone()),
            (None, None) => None,
        };
        text.map(|t| perft_proto::connect::Token::new(&t).map_err(|e| CliError::Usage(e.to_string())))
            .transpose()
    }
}

/// Reads a PEM file named on the command line.
pub fn read_pem(path: &std::path::Path) -> Result<Vec<u8>, crate::error::CliError> {
    std::fs::read(path)
        .map_err(|e| crate::error::CliError::Usage(format!("cannot read '{}': {e}", path.display())))
}

impl CoordinatorArg {
    /// How to reach and authenticate to the coordinator.
    pub fn client_config(&self) -> Result<perft_proto::connect::ClientConfig, crate::error::CliError> {
        Ok(perft_proto::connect::ClientConfig {
            url: self.coordinator.clone(),
            token: self.token.token()?,
            tls_ca: self.tls_ca.as_deref().map(read_pem).transpose()?,
        })
    }
}
