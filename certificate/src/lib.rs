//! Deep Perft's certificate: everything needed to check a finished perft
//! without trusting whoever made it, in one versioned file
//! (`docs/certificate.md` is the specification).
//!
//! It owns the format: building, encoding and decoding a certificate on
//! byte slices, its Merkle tree, and what an audit checks ([`audit`]: the
//! exact checks over the whole file, the sample a seed draws, how a
//! recount differs), and reading and writing a certificate file
//! ([`file`]). It must not do any other I/O, nor count units: the
//! coordinator and `perft run` hand it counted units, and `perft audit`
//! (or anyone's program) recounts the sample it draws.
//!
//! A certificate holds the game, the counting convention, the root, the
//! depth and split depth, every unit of the plan (packed position, paths
//! per first move, count, the participants whose votes decided it) in plan
//! order, the divide table, the total, and a Merkle root over the units so
//! that one unit can be proven to belong to it with a few hashes. A
//! statistics certificate (version 2) also holds every count's leaves by
//! kind, under the same sums and the same Merkle root. Versions 3 and 4 are
//! versions 1 and 2 with a [`Provenance`] first: the job, when it finished
//! and the program that wrote the file, a label outside the Merkle root.
//! This code writes versions 3 and 4 and reads all four.
//!
//! Pure logic on byte slices apart from [`file`]: the callers do the
//! network I/O.

pub mod audit;
mod build;
mod decode;
mod encode;
pub mod file;
pub mod merkle;
mod provenance;
mod text;
mod varint;

pub use build::{BuildError, CountedUnit, Header, from_plan, summed_kinds, weighted_kinds};
pub use decode::DecodeError;
pub use provenance::{Provenance, rfc3339};

use perft_core::{Leaves, Weight};
pub use perft_model::{Count, DeciderName};

/// The first bytes of every certificate file.
pub const MAGIC: [u8; 8] = *b"DPERFTC\n";

/// The format version of a certificate of leaves only without its
/// provenance: read, no longer written (a certificate without a
/// [`Provenance`] encodes to it, byte for byte as before).
pub const VERSION_LEAVES: u16 = 1;

/// The format version of a statistics certificate without its provenance:
/// version 1's fields and every count's leaves by kind. Read, no longer
/// written.
pub const VERSION_STATS: u16 = 2;

/// Version 1 with its [`Provenance`] first in the body: what this code
/// writes for a plain count.
pub const VERSION_LEAVES_PROVENANCE: u16 = 3;

/// Version 2 with its [`Provenance`] first in the body: what this code
/// writes for a count by kind.
pub const VERSION_STATS_PROVENANCE: u16 = 4;

/// One unit of the plan with its count.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unit {
    /// The position, packed as the game packs it.
    pub position: Vec<u8>,
    /// How many paths from each first move reach it.
    pub weights: Vec<Weight>,
    /// Its leaves at the remaining depth and, in a statistics certificate,
    /// its leaves by kind in the order of [`Header::kinds`].
    pub count: Count,
    /// Indices into [`Certificate::participants`] of those whose votes
    /// decided the count.
    pub deciders: Vec<u32>,
}

/// A finished perft, unit by unit.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Certificate {
    /// What the certificate says about the job, apart from its units: game,
    /// convention, root, depth, split depth, first moves, settled leaves.
    pub header: Header,
    /// Everyone named as a decider.
    pub participants: Vec<DeciderName>,
    /// The units in plan order.
    pub units: Vec<Unit>,
    /// Leaves per first move.
    pub divide: Vec<Leaves>,
    /// All leaves.
    pub total: Leaves,
    /// Leaves by kind per first move (empty without kinds).
    pub divide_kinds: Vec<Vec<u128>>,
    /// All leaves by kind (empty without kinds).
    pub total_kinds: Vec<u128>,
    /// [`merkle::root`] of the units.
    pub merkle_root: merkle::Hash,
    /// Who made it and when: always there in a certificate this code
    /// builds, `None` only in one read from a file of version 1 or 2. Not
    /// under the Merkle root.
    pub provenance: Option<Provenance>,
}

impl Certificate {
    /// The format version the file is written in: with a provenance
    /// [`VERSION_STATS_PROVENANCE`] when the certificate counts kinds, else
    /// [`VERSION_LEAVES_PROVENANCE`]; without one (a file of the old
    /// versions read back), [`VERSION_STATS`] or [`VERSION_LEAVES`].
    pub fn version(&self) -> u16 {
        match (self.header.kinds.is_empty(), self.provenance.is_some()) {
            (true, true) => VERSION_LEAVES_PROVENANCE,
            (false, true) => VERSION_STATS_PROVENANCE,
            (true, false) => VERSION_LEAVES,
            (false, false) => VERSION_STATS,
        }
    }

    /// The file's bytes: magic, version, then the compressed body.
    pub fn encode(&self) -> Vec<u8> {
        encode::encode(self)
    }

    /// A certificate read back from its file's bytes, every field checked
    /// for shape (the audit checks the numbers).
    pub fn decode(bytes: &[u8]) -> Result<Certificate, DecodeError> {
        decode::decode(bytes)
    }

    /// The Merkle root the units give (compare with [`Certificate::merkle_root`]).
    pub fn computed_merkle_root(&self) -> merkle::Hash {
        merkle::root(&self.leaf_hashes())
    }

    /// Every unit's leaf hash, in plan order.
    pub fn leaf_hashes(&self) -> Vec<merkle::Hash> {
        self.units
            .iter()
            .enumerate()
            .map(|(i, unit)| merkle::leaf_hash(i as u64, &self.unit_bytes(unit)))
            .collect()
    }

    /// The bytes of one unit that its leaf hash covers: position, weights,
    /// count (with its kinds, if any) and the deciders' ids (ids, not indices, so that a proof
    /// stands without the participants table).
    pub fn unit_bytes(&self, unit: &Unit) -> Vec<u8> {
        encode::unit_bytes(unit, &self.participants)
    }
}
