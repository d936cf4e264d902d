//! How a coordinator runs: its [`Config`] (leases, trust, budgets,
//! splitting, credentials, TLS, connections) with the defaults `perft
//! serve` starts from, and the limits a plan and a message keep to.

use std::time::Duration;

use crate::connections::ConnectionLimits;
use crate::{admission, jobs};

/// How the coordinator runs.
#[derive(Clone, Debug)]
pub struct Config {
    /// A worker session lives this long without a call.
    pub lease_ttl: Duration,
    /// A lease of a unit of average size must bring its count within
    /// this time (a larger unit gets proportionally longer), or it lapses
    /// and the unit goes back to the queue: a heartbeat keeps the session,
    /// not its units, and nothing but the unit's count or its hand-back
    /// ends the lease.
    pub progress_timeout: Duration,
    /// A participant whose counts lost this many majority votes leases
    /// nothing more, its counts are refused, and what it decided alone is
    /// counted again.
    pub quarantine_after: Option<u64>,
    /// A participant whose leases lapsed in this many separate events
    /// (fading one an hour) leases nothing more until an admin lifts it.
    pub lapse_limit: u64,
    /// What each participant, and each address without a credential,
    /// may hold at once (an admin overrides a participant's figures).
    pub budgets: admission::Budgets,
    /// Most threads of one participant that count toward an automatic
    /// split (threads count only once their session returned a count).
    pub split_threads_per_participant: usize,
    /// Workers heartbeat this often (a third of the lease time by default).
    pub heartbeat_interval: Duration,
    /// An automatic split gives at least this many units, or this many per
    /// registered worker thread times 32 if that is more.
    pub min_units: usize,
    /// Past `min_units`, an automatic split goes a level deeper while that
    /// level's units would still count this many leaves each (estimated).
    pub min_unit_leaves: f64,
    /// A plan with more units is refused.
    pub max_units: usize,
    /// The shared token: one admin credential (health checks need none).
    pub token: Option<perft_proto::connect::Token>,
    /// PEM certificate chain and private key: serve over TLS.
    pub tls: Option<(Vec<u8>, Vec<u8>)>,
    /// Connection caps and idle timeout, of the gRPC port and the dashboard.
    pub connections: ConnectionLimits,
    /// Open a journal that lost committed work (or whose mark is missing
    /// or unreadable) anyway, logging what was lost, instead of refusing.
    pub accept_journal_loss: bool,
    /// The program a done job's certificate names as its maker: the
    /// serving binary's name and version (`perft 0.1.0`).
    pub program: String,
}

/// Default unit limit of one plan: record scale (checkers perft(29),
/// chess perft(11) split 6), and what the deploy files size memory and
/// disk for (BENCHMARKS.md: at most about 180 bytes a unit to plan, 90 to
/// keep open, 160 on disk with results).
pub const MAX_UNITS: usize = 10_000_000;

/// Default unit size an automatic split keeps to, in estimated leaves:
/// deeper levels merge transpositions exactly, so two workers with their
/// own tables stop counting the same deep positions (chess perft(9) on two
/// workers: split 4 took 8% less CPU than split 2). A level that closes
/// its units to the table may have units 16 times smaller (chess perft(9)
/// split at 5 took 1.21x less CPU than at 4, once workers batched such
/// small units; BENCHMARKS.md). Chess perft(7) splits at 2, perft(8) at 4,
/// perft(9) at 5, perft(10) and perft(11) at 6 under it.
pub const MIN_UNIT_LEAVES: f64 = (1u64 << 22) as f64;

/// HTTP/2 streams one connection may have open at once (calls in flight;
/// a client's own calls wait their turn past it).
pub const MAX_STREAMS_PER_CONNECTION: u32 = 128;

/// Largest gRPC message accepted, either way: a report of 1024 units or a
/// lease of 1024 units is well under it.
pub const MAX_MESSAGE_BYTES: usize = 4 << 20;

impl Config {
    /// How the job table judges participants and leases.
    pub fn policy(&self) -> jobs::Policy {
        let progress_ms = self.progress_timeout.as_millis().min(u128::from(u64::MAX)) as u64;
        jobs::Policy {
            standing: jobs::Standing {
                quarantine_after: self.quarantine_after,
                lapse_limit: self.lapse_limit.max(1),
                // A parker's lapses come a deadline apart: a strike lasts
                // at least two of them.
                strike_fade_ms: jobs::STRIKE_FADE_MS.max(progress_ms.saturating_mul(2)),
            },
            progress_ms,
        }
    }
}

impl Default for Config {
    fn default() -> Config {
        Config {
            lease_ttl: Duration::from_secs(15),
            progress_timeout: Duration::from_secs(1800),
            quarantine_after: None,
            lapse_limit: jobs::DEFAULT_LAPSE_LIMIT,
            budgets: admission::Budgets::default(),
            split_threads_per_participant: 1024,
            heartbeat_interval: Duration::from_secs(5),
            min_units: 256,
            min_unit_leaves: MIN_UNIT_LEAVES,
            max_units: MAX_UNITS,
            token: None,
            tls: None,
            connections: ConnectionLimits::default(),
            accept_journal_loss: false,
            program: format!("perft-coordinator {}", env!("CARGO_PKG_VERSION")),
        }
    }
}
