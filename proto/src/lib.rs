//! The gRPC contract between the CLI, the coordinator and the workers
//! (`proto/perft/v2/perft.proto`), and conversions to the engine's types.
//!
//! It owns the wire: the messages, the protocol header every call
//! carries (`connect`) and every conversion between the vocabulary
//! (`perft-model`'s counts, `perft-core`'s games) and its wire form. It must not hold behaviour: no server or client logic
//! lives here, so both sides read the same contract.

#[allow(missing_docs, missing_debug_implementations, clippy::all, clippy::pedantic)]
pub mod v2 {
    tonic::include_proto!("perft.v2");
}

pub use v2::*;

pub mod connect;
mod participant;

pub use participant::ParticipantUnreadable;

/// The version every call carries in the [`PROTOCOL_HEADER`] metadata;
/// bumped on any change of meaning in the contract. 3 is `perft.v2`; 4
/// adds the counting convention, which a worker must honour (one of 3
/// would count every unit in the default convention); 5 adds statistics
/// jobs, whose counts a worker of 4 would send without their kinds.
pub const PROTOCOL_VERSION: u32 = 5;

/// The metadata key of the protocol version.
pub const PROTOCOL_HEADER: &str = "perft-protocol";

/// The package clients of this release speak, for error messages.
pub const PACKAGE: &str = "perft.v2";

/// The encoded descriptor set of `perft.v2`, for server reflection.
pub const FILE_DESCRIPTOR_SET: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/perft_descriptor.bin"));

impl From<u128> for U128 {
    fn from(n: u128) -> U128 {
        U128 {
            high: (n >> 64) as u64,
            low: n as u64,
        }
    }
}

impl From<U128> for u128 {
    fn from(n: U128) -> u128 {
        (u128::from(n.high) << 64) | u128::from(n.low)
    }
}

impl From<perft_core::Leaves> for Leaves {
    fn from(n: perft_core::Leaves) -> Leaves {
        Leaves {
            leaves: Some(n.leaves.into()),
            higher: Some(n.higher.into()),
            kinds: Vec::new(),
        }
    }
}

impl Leaves {
    /// A count with its leaves by kind, in the game's order of kinds.
    pub fn with_kinds(n: perft_core::Leaves, kinds: &[u128]) -> Leaves {
        Leaves {
            kinds: kinds.iter().map(|&k| k.into()).collect(),
            ..Leaves::from(n)
        }
    }

    /// The counts by kind, in the order sent.
    pub fn kind_counts(&self) -> Vec<u128> {
        self.kinds.iter().map(|&k| k.into()).collect()
    }

    /// The engine's form; a missing field reads as zero.
    pub fn to_core(&self) -> perft_core::Leaves {
        perft_core::Leaves {
            leaves: self.leaves.map_or(0, u128::from),
            higher: self.higher.map_or(0, u128::from),
        }
    }
}

impl From<&perft_model::Count> for Leaves {
    fn from(count: &perft_model::Count) -> Leaves {
        Leaves::with_kinds(count.leaves, count.kinds())
    }
}

impl From<perft_model::Count> for Leaves {
    fn from(count: perft_model::Count) -> Leaves {
        Leaves::from(&count)
    }
}

impl Leaves {
    /// The count this wire count is as a unit's count of a job of `game`
    /// that counts `kinds` kinds (0: a plain job); the error says what is
    /// wrong, for the sender.
    pub fn to_count(
        &self,
        game: &perft_core::GameFns,
        kinds: usize,
    ) -> Result<perft_model::Count, perft_model::CountRefused> {
        perft_model::Count::checked(self.to_core(), &self.kind_counts(), game, kinds)
    }
}

/// Heartbeats are never asked for more often than this: a coordinator's
/// reply of 0 would otherwise spin a worker (and stop `tokio`'s interval).
pub const MIN_HEARTBEAT_MS: u32 = 100;

impl RegisterResponse {
    /// How often the session must heartbeat, as the coordinator asks, but
    /// never more often than [`MIN_HEARTBEAT_MS`].
    pub fn heartbeat_every(&self) -> std::time::Duration {
        std::time::Duration::from_millis(u64::from(self.heartbeat_interval_ms.max(MIN_HEARTBEAT_MS)))
    }
}

impl Game {
    /// The wire's name for a game of the registry (`GAME_` and its name).
    pub fn from_kind(kind: perft_core::GameKind) -> Game {
        Game::from_str_name(&format!("GAME_{}", kind.name().to_ascii_uppercase()))
            .unwrap_or(Game::Unspecified)
    }

    /// The registry's game, or `None` for unspecified or unknown values.
    pub fn to_kind(self) -> Option<perft_core::GameKind> {
        let name = self.as_str_name().strip_prefix("GAME_")?;
        name.to_ascii_lowercase().parse().ok()
    }
}

impl JobState {
    /// The wire's value of a job state.
    pub fn from_model(state: perft_model::JobState) -> JobState {
        match state {
            perft_model::JobState::Queued => JobState::Queued,
            perft_model::JobState::Running => JobState::Running,
            perft_model::JobState::Done => JobState::Done,
            perft_model::JobState::Failed => JobState::Failed,
            perft_model::JobState::Cancelled => JobState::Cancelled,
        }
    }

    /// The vocabulary's job state, or `None` for unspecified.
    pub fn to_model(self) -> Option<perft_model::JobState> {
        Some(match self {
            JobState::Unspecified => return None,
            JobState::Queued => perft_model::JobState::Queued,
            JobState::Running => perft_model::JobState::Running,
            JobState::Done => perft_model::JobState::Done,
            JobState::Failed => perft_model::JobState::Failed,
            JobState::Cancelled => perft_model::JobState::Cancelled,
        })
    }
}

impl Role {
    /// The wire's value of a role.
    pub fn from_model(role: perft_model::Role) -> Role {
        match role {
            perft_model::Role::Worker => Role::Worker,
            perft_model::Role::Submitter => Role::Submitter,
            perft_model::Role::Reader => Role::Reader,
            perft_model::Role::Admin => Role::Admin,
        }
    }

    /// The vocabulary's role, or `None` for unspecified.
    pub fn to_model(self) -> Option<perft_model::Role> {
        Some(match self {
            Role::Unspecified => return None,
            Role::Worker => perft_model::Role::Worker,
            Role::Submitter => perft_model::Role::Submitter,
            Role::Reader => perft_model::Role::Reader,
            Role::Admin => perft_model::Role::Admin,
        })
    }
}

/// A raw enum value from the wire that names nothing this build knows.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UnknownValue {
    #[error("unknown game {raw}: expected one of {}", perft_core::GameKind::names().join(", "))]
    Game { raw: i32 },
    #[error("unknown convention {raw}: expected bik or oeis")]
    Convention { raw: i32 },
    #[error("unknown job state {raw}")]
    JobState { raw: i32 },
    #[error("unknown role {raw}: expected worker, submitter, reader or admin")]
    Role { raw: i32 },
}

/// The role of a raw enum value from the wire, or an error naming it.
pub fn role(raw: i32) -> Result<perft_model::Role, UnknownValue> {
    Role::try_from(raw)
        .ok()
        .and_then(Role::to_model)
        .ok_or(UnknownValue::Role { raw })
}

/// The game of a raw enum value from the wire, or an error naming it.
pub fn game_kind(raw: i32) -> Result<perft_core::GameKind, UnknownValue> {
    Game::try_from(raw)
        .ok()
        .and_then(Game::to_kind)
        .ok_or(UnknownValue::Game { raw })
}

impl Convention {
    /// The wire's value of a job's convention (`None`: unspecified).
    pub fn from_core(convention: Option<perft_core::Convention>) -> Convention {
        match convention {
            None => Convention::Unspecified,
            Some(perft_core::Convention::Bik) => Convention::Bik,
            Some(perft_core::Convention::Oeis) => Convention::Oeis,
        }
    }
}

/// The convention of a raw enum value from the wire (`None`: unspecified,
/// the game's default), or an error naming it.
pub fn convention(raw: i32) -> Result<Option<perft_core::Convention>, UnknownValue> {
    match Convention::try_from(raw) {
        Ok(Convention::Unspecified) => Ok(None),
        Ok(Convention::Bik) => Ok(Some(perft_core::Convention::Bik)),
        Ok(Convention::Oeis) => Ok(Some(perft_core::Convention::Oeis)),
        Err(_) => Err(UnknownValue::Convention { raw }),
    }
}

/// A missing count reads as zero.
pub fn count(n: Option<U128>) -> u128 {
    n.map_or(0, u128::from)
}

impl From<perft_model::WorkerFigures> for WorkerStats {
    fn from(figures: perft_model::WorkerFigures) -> WorkerStats {
        WorkerStats {
            table_probes: figures.table_probes,
            table_hits: figures.table_hits,
            table_fill: figures.table_fill,
            table_bytes: figures.table_bytes,
            units_done: figures.units_done,
            leaves_done: Some(figures.leaves_done.into()),
        }
    }
}

impl From<WorkerStats> for perft_model::WorkerFigures {
    /// As sent: the receiver sanitizes ([`perft_model::WorkerFigures::sanitized`]).
    fn from(stats: WorkerStats) -> perft_model::WorkerFigures {
        perft_model::WorkerFigures {
            table_probes: stats.table_probes,
            table_hits: stats.table_hits,
            table_fill: stats.table_fill,
            table_bytes: stats.table_bytes,
            units_done: stats.units_done,
            leaves_done: count(stats.leaves_done),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_heartbeat_of_zero_from_a_coordinator_cannot_spin_a_worker() {
        let asked = |ms| {
            RegisterResponse {
                heartbeat_interval_ms: ms,
                ..RegisterResponse::default()
            }
            .heartbeat_every()
        };
        assert_eq!(asked(0), std::time::Duration::from_millis(100));
        assert_eq!(asked(5_000), std::time::Duration::from_secs(5));
    }

    #[test]
    fn u128_round_trips_through_halves() {
        for n in [
            0u128,
            1,
            u64::MAX as u128,
            u64::MAX as u128 + 1,
            76_309_690_522_352_444_005,
            u128::MAX,
        ] {
            assert_eq!(u128::from(U128::from(n)), n);
        }
        assert_eq!(U128::from(1u128 << 64), U128 { high: 1, low: 0 });
    }

    #[test]
    fn every_game_of_the_registry_has_its_wire_value() {
        for &kind in perft_core::GameKind::ALL {
            let wire = Game::from_kind(kind);
            assert_ne!(
                wire,
                Game::Unspecified,
                "{kind} is missing from the proto's Game enum"
            );
            assert_eq!(wire.to_kind(), Some(kind));
            assert_eq!(game_kind(wire as i32), Ok(kind));
        }
        assert!(game_kind(0).is_err());
        for c in [
            None,
            Some(perft_core::Convention::Bik),
            Some(perft_core::Convention::Oeis),
        ] {
            assert_eq!(convention(Convention::from_core(c) as i32), Ok(c));
        }
        assert_eq!(
            convention(7).unwrap_err().to_string(),
            "unknown convention 7: expected bik or oeis"
        );
        assert!(game_kind(99).unwrap_err().to_string().contains("unknown game 99"));
    }

    #[test]
    fn leaves_round_trip() {
        let n = perft_core::Leaves {
            leaves: 16_377_718_018_836_900_735_000,
            higher: 23_340,
        };
        assert_eq!(Leaves::from(n).to_core(), n);
        assert_eq!(Leaves::default().to_core(), perft_core::Leaves::ZERO);
        let with = Leaves::with_kinds(n, &[3, u128::MAX]);
        assert_eq!(with.to_core(), n);
        assert_eq!(with.kind_counts(), [3, u128::MAX]);
    }

    #[test]
    fn counts_cross_the_wire_with_their_kinds_checked() {
        let chess = perft_core::GameKind::Chess.fns();
        let start = chess.pack_text("").unwrap();
        let truth = chess.count_packed_stats(&start, 2).unwrap();
        let count = perft_model::Count::with_kinds(truth.leaves, &truth.counts).unwrap();
        let wire = Leaves::from(&count);
        assert_eq!(wire.to_count(chess, truth.counts.len()), Ok(count));
        assert!(wire.to_count(chess, 0).is_err());
    }
}
