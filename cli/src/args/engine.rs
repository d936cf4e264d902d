//! How the engine counts on this machine: threads and the table, sized by
//! option or from the memory available.

use clap::Args;

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

impl TableChoice {
    /// The bytes of a local count's table: the option's, or by default
    /// sized to the `stored` positions the work promises (worked out only
    /// then) in entries of `entry_bytes`, within half the available memory,
    /// so that a small count does not pay for zeroing a big table. `None`:
    /// no table.
    pub fn local_bytes(self, stored: impl FnOnce() -> u128, entry_bytes: u64) -> Option<u64> {
        use perft_core::table_size::{local_table_cap, table_bytes_for_work};
        match self {
            TableChoice::Off => None,
            TableChoice::Bytes(bytes) => Some(bytes),
            TableChoice::Default => Some(table_bytes_for_work(
                stored(),
                entry_bytes,
                local_table_cap(perft_worker::available_memory_bytes()),
            )),
        }
    }
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

/// A table size that is none, or too small.
#[derive(Debug, thiserror::Error)]
enum TableSizeRefused {
    #[error("'{echoed}' is not a size such as 512M or 4G ({source})")]
    NotASize {
        echoed: String,
        #[source]
        source: parse_size::Error,
    },
    #[error("'{echoed}' is below the smallest table, 64K")]
    TooSmall { echoed: String },
}

/// Parses `512M`, `4G`, `65536` (bytes); K, M, G and T are binary units.
fn parse_table_size(text: &str) -> Result<u64, TableSizeRefused> {
    let bytes = parse_size::Config::new()
        .with_binary()
        .parse_size(text)
        .map_err(|source| TableSizeRefused::NotASize {
            echoed: perft_core::echoed(text),
            source,
        })?;
    if bytes < 1 << 16 {
        return Err(TableSizeRefused::TooSmall {
            echoed: perft_core::echoed(text),
        });
    }
    Ok(bytes)
}
