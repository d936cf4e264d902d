//! The gRPC contract between the CLI, the coordinator and the workers
//! (`proto/perft/v1/perft.proto`), and conversions to the engine's types.

#[allow(missing_docs, missing_debug_implementations, clippy::all, clippy::pedantic)]
pub mod v1 {
    tonic::include_proto!("perft.v1");
}

pub use v1::*;

pub mod connect;

/// The version a worker must announce when it registers; bumped on any
/// change of meaning in the contract.
pub const PROTOCOL_VERSION: u32 = 2;

/// The encoded descriptor set of `perft.v1`, for server reflection.
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
        }
    }
}

impl Leaves {
    /// The engine's form; a missing field reads as zero.
    pub fn to_core(&self) -> perft_core::Leaves {
        perft_core::Leaves {
            leaves: self.leaves.map_or(0, u128::from),
            higher: self.higher.map_or(0, u128::from),
        }
    }
}

/// A missing count reads as zero.
pub fn count(n: Option<U128>) -> u128 {
    n.map_or(0, u128::from)
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn leaves_round_trip() {
        let n = perft_core::Leaves {
            leaves: 16_377_718_018_836_900_735_000,
            higher: 23_340,
        };
        assert_eq!(Leaves::from(n).to_core(), n);
        assert_eq!(Leaves::default().to_core(), perft_core::Leaves::ZERO);
    }
}
