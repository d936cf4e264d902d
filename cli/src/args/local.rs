//! Arguments of the subcommands that count on this machine (some of them on
//! a cluster when asked): run, perftree, bench, verify, audit, suite,
//! estimate and check.

use clap::{Args, ValueEnum};
use perft_core::{Convention, GameKind};

use super::cluster::{CoordinatorArg, TokenArg};
use super::engine::EngineArgs;
use super::tree::TreeArgs;
use super::values::{Format, GameParser, convention_parser};

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub tree: TreeArgs,
    /// Moves played from the position before counting, in the game's
    /// notation (`--moves e2e4 e7e5`).
    #[arg(long, num_args = 1.., value_name = "MOVE")]
    pub moves: Vec<String>,
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
    /// last-ply move is classified, none bulk-counted. With
    /// --certificate, the certificate holds every count's kinds too.
    #[arg(long)]
    pub stats: bool,
    #[command(flatten)]
    pub engine: EngineArgs,
    #[command(flatten)]
    pub progress: super::ProgressArgs,
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
    /// Instead of our cases alone, ours beside the public engines
    /// (Egaroucid, Edax, DarkHorse, Gigantua, ellxor's perft,
    /// perft_cpu_2026), found in DIR or else on PATH, as the scripts in
    /// `bench/` build them: alternating pairs, one core, every count
    /// checked. A case whose engine is absent is skipped with a note.
    #[arg(long, value_name = "DIR", num_args = 0..=1, default_missing_value = "")]
    pub anchors: Option<std::path::PathBuf>,
    /// The CPU core the side-by-side runs are pinned to.
    #[arg(long, default_value_t = 1, requires = "anchors")]
    pub pin: usize,
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
    /// Count on this coordinator's cluster instead of locally (also read
    /// from PERFT_COORDINATOR, as every client verb does).
    #[arg(long, env = "PERFT_COORDINATOR")]
    pub coordinator: Option<String>,
    /// Count on this machine even when a coordinator is named.
    #[arg(long)]
    pub local: bool,
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
    /// sampled units (submitter role), instead of on this machine (also
    /// read from PERFT_COORDINATOR).
    #[arg(long, value_name = "URL", env = "PERFT_COORDINATOR")]
    pub on: Option<String>,
    /// Recount on this machine even when a coordinator is named.
    #[arg(long)]
    pub local: bool,
    #[command(flatten)]
    pub cluster: OnCluster,
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
    pub cluster: OnCluster,
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// How to reach the coordinator named by a command's `--on`: the
/// credential and the CA, shared by the commands that may count there.
#[derive(Debug, Args)]
pub struct OnCluster {
    #[command(flatten)]
    pub token: TokenArg,
    /// With --on: PEM file of the CA that signed the coordinator's TLS
    /// certificate.
    #[arg(long, value_name = "PEM", requires = "on")]
    pub tls_ca: Option<std::path::PathBuf>,
}

impl OnCluster {
    /// The coordinator at `url`, reached with these.
    pub fn coordinator(&self, url: &str) -> CoordinatorArg {
        CoordinatorArg {
            coordinator: url.to_owned(),
            token: self.token.clone(),
            tls_ca: self.tls_ca.clone(),
        }
    }
}

/// A share that is not one.
#[derive(Debug, thiserror::Error)]
#[error("'{echoed}' is not a fraction between 0 and 1")]
struct NotAFraction {
    echoed: String,
}

/// Parses a share between 0 and 1.
fn parse_fraction(text: &str) -> Result<f64, NotAFraction> {
    match text.trim().parse::<f64>() {
        Ok(f) if (0.0..=1.0).contains(&f) => Ok(f),
        _ => Err(NotAFraction {
            echoed: perft_core::echoed(text),
        }),
    }
}

#[derive(Debug, Args)]
pub struct EstimateArgs {
    #[command(flatten)]
    pub tree: TreeArgs,
    /// Plies expanded into units (default: the deepest level of at most
    /// 200,000 units, at least 2 plies above the depth).
    #[arg(long)]
    pub split_depth: Option<u32>,
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
    #[arg(long, value_enum, default_value_t = ProtocolArg::Perftree)]
    pub protocol: ProtocolArg,
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

/// `--protocol`: how the engine is asked, as clap lists it; the same
/// choices as [`perft_compare::Protocol`], which knows nothing of clap.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProtocolArg {
    /// A UCI engine, started once: `position fen FEN moves ...` and
    /// `go perft N`, read as Stockfish prints its divide (`move: count`).
    Uci,
    /// perftree's script protocol: `CMD DEPTH POSITION MOVES` per divide,
    /// printing `move count` lines (any game).
    Perftree,
    /// `CMD` per divide with three lines on stdin (depth, position, moves),
    /// printing `move count` lines (any game).
    Plain,
}

impl From<ProtocolArg> for perft_compare::Protocol {
    fn from(arg: ProtocolArg) -> perft_compare::Protocol {
        match arg {
            ProtocolArg::Uci => perft_compare::Protocol::Uci,
            ProtocolArg::Perftree => perft_compare::Protocol::Perftree,
            ProtocolArg::Plain => perft_compare::Protocol::Plain,
        }
    }
}
