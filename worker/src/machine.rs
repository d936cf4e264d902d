//! What a worker takes from the machine it runs on before it starts: the
//! name it registers under, the size of its table when none is given, the
//! table's memory made ready, and the endpoint its Prometheus metrics are
//! scraped from.

use std::fmt;
use std::net::SocketAddr;

/// Longest worker name accepted, in bytes.
const MAX_NAME_BYTES: usize = 64;

/// The name a worker registers under: a label for people, 1 to 64 bytes
/// without control characters. Verification goes by the participant its
/// credential proves, never by this name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkerName(String);

/// A worker name that is empty, too long or holds control characters.
#[derive(Debug, thiserror::Error)]
#[error("the worker name '{echoed}' must be 1 to {MAX_NAME_BYTES} bytes of printable characters")]
pub struct BadWorkerName {
    /// The name as given, cut short and escaped.
    pub echoed: String,
}

impl WorkerName {
    /// `name` if a worker may register under it.
    pub fn parse(name: &str) -> Result<WorkerName, BadWorkerName> {
        if name.is_empty() || name.len() > MAX_NAME_BYTES || name.chars().any(char::is_control) {
            return Err(BadWorkerName {
                echoed: perft_core::echoed(name),
            });
        }
        Ok(WorkerName(name.to_owned()))
    }

    /// The host's name, the default: a restarted worker is the same
    /// machine, and so are several workers on one host.
    pub fn of_host() -> Result<WorkerName, BadWorkerName> {
        WorkerName::parse(&gethostname::gethostname().to_string_lossy())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<WorkerName> for String {
    fn from(name: WorkerName) -> String {
        name.0
    }
}

impl fmt::Display for WorkerName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A worker's table when no size is given: the share of the memory
/// available now that `perft_core::table_size::worker_table_bytes` allows
/// (a worker cannot know the work it will lease).
pub fn default_table_bytes() -> u64 {
    perft_core::table_size::worker_table_bytes(perft_local::available_memory_bytes())
}

/// Makes the table's memory ready on `threads` threads before the worker
/// asks for work, and says so: otherwise the first job pays for faulting
/// every page in while it counts (seconds per GiB on a VM).
pub async fn prepare_table(bytes: u64, threads: usize) -> perft_core::PreparedTable {
    const GIB: f64 = (1u64 << 30) as f64;
    let gib = format!("{:.2}", bytes as f64 / GIB);
    tracing::info!(
        gib,
        "preparing the table: touching its memory before asking for work"
    );
    let started = std::time::Instant::now();
    let prepared =
        tokio::task::spawn_blocking(move || perft_core::PreparedTable::allocate(bytes, threads)).await;
    let table = match prepared {
        Ok(table) => table,
        Err(e) => std::panic::resume_unwind(e.into_panic()),
    };
    tracing::info!(
        gib,
        seconds = format!("{:.2}", started.elapsed().as_secs_f64()),
        "table ready"
    );
    table
}

/// The metrics endpoint could not be started.
#[derive(Debug, thiserror::Error)]
#[error("cannot serve metrics on {address}: {source}")]
pub struct MetricsError {
    pub address: SocketAddr,
    #[source]
    pub source: metrics_exporter_prometheus::BuildError,
}

/// Serves the worker's Prometheus metrics over HTTP on `address`. Call it
/// inside the tokio runtime the worker runs on: the endpoint is served
/// there.
pub fn serve_metrics(address: SocketAddr) -> Result<(), MetricsError> {
    metrics_exporter_prometheus::PrometheusBuilder::new()
        .with_http_listener(address)
        .install()
        .map_err(|source| MetricsError { address, source })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_one_to_64_bytes_without_control_characters() {
        assert_eq!(WorkerName::parse("rack-7").unwrap().as_str(), "rack-7");
        assert!(WorkerName::parse(&"a".repeat(64)).is_ok());
        for bad in ["", "a\nb", "\u{1b}[31m"] {
            assert!(WorkerName::parse(bad).is_err(), "{bad:?}");
        }
        let long = WorkerName::parse(&"a".repeat(65)).unwrap_err();
        assert!(long.to_string().starts_with("the worker name 'aaaa"));
        assert!(
            long.to_string()
                .ends_with("must be 1 to 64 bytes of printable characters")
        );
    }
}
