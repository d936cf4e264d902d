//! How counts, weights and votes are stored, and the checksums that guard
//! every stored count: a flipped bit is found on restore, never served.

use perft_core::{Leaves, Weight};

use crate::jobs::JobState;

/// A 64-bit checksum of `parts`, each length-prefixed so that no two
/// different sequences of parts hash alike.
pub(crate) fn checksum(parts: &[&[u8]]) -> i64 {
    let mut hasher = blake3::Hasher::new_derive_key("deep-perft journal row v2");
    for part in parts {
        hasher.update(&(part.len() as u64).to_le_bytes());
        hasher.update(part);
    }
    let digest = hasher.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest.as_bytes()[..8]);
    i64::from_le_bytes(first)
}

pub(crate) fn state_name(state: JobState) -> &'static str {
    match state {
        JobState::Queued => "queued",
        JobState::Running => "running",
        JobState::Done => "done",
        JobState::Failed => "failed",
        JobState::Cancelled => "cancelled",
    }
}

pub(crate) fn parse_state(name: &str) -> Option<JobState> {
    Some(match name {
        "queued" => JobState::Queued,
        "running" => JobState::Running,
        "done" => JobState::Done,
        "failed" => JobState::Failed,
        "cancelled" => JobState::Cancelled,
        _ => return None,
    })
}

pub(crate) fn leaves_blob(l: Leaves) -> Vec<u8> {
    let mut blob = l.leaves.to_le_bytes().to_vec();
    blob.extend_from_slice(&l.higher.to_le_bytes());
    blob
}

/// A stored count; `None` unless exactly 32 bytes with `higher <= leaves`.
pub(crate) fn blob_leaves(blob: &[u8]) -> Option<Leaves> {
    if blob.len() != 32 {
        return None;
    }
    let leaves = u128::from_le_bytes(blob[..16].try_into().ok()?);
    let higher = u128::from_le_bytes(blob[16..].try_into().ok()?);
    let count = Leaves { leaves, higher };
    count.is_consistent().then_some(count)
}

pub(crate) fn leaves_list_blob(list: &[Leaves]) -> Vec<u8> {
    list.iter().flat_map(|&l| leaves_blob(l)).collect()
}

pub(crate) fn blob_leaves_list(blob: &[u8]) -> Option<Vec<Leaves>> {
    if !blob.len().is_multiple_of(32) {
        return None;
    }
    blob.chunks(32).map(blob_leaves).collect()
}

pub(crate) fn weights_blob(weights: &[Weight]) -> Vec<u8> {
    weights
        .iter()
        .flat_map(|w| {
            w.first_move
                .to_le_bytes()
                .into_iter()
                .chain(w.paths.to_le_bytes())
        })
        .collect()
}

pub(crate) fn blob_weights(blob: &[u8]) -> Option<Vec<Weight>> {
    if !blob.len().is_multiple_of(12) {
        return None;
    }
    blob.chunks(12)
        .map(|c| {
            Some(Weight {
                first_move: u32::from_le_bytes(c.get(..4)?.try_into().ok()?),
                paths: u64::from_le_bytes(c.get(4..12)?.try_into().ok()?),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_round_trip_and_inconsistent_ones_are_refused() {
        let count = Leaves {
            leaves: 1 << 100,
            higher: 5,
        };
        assert_eq!(blob_leaves(&leaves_blob(count)), Some(count));
        let bad = leaves_blob(Leaves { leaves: 1, higher: 2 });
        assert_eq!(blob_leaves(&bad), None);
        assert_eq!(blob_leaves(&[0; 31]), None);
        assert_eq!(blob_leaves_list(&[0; 33]), None);
    }

    #[test]
    fn checksums_see_a_flipped_bit_and_part_boundaries() {
        let blob = leaves_blob(Leaves::full(388_623_673));
        let mut flipped = blob.clone();
        flipped[3] ^= 0x10;
        assert_ne!(checksum(&[b"job", &blob]), checksum(&[b"job", &flipped]));
        assert_ne!(checksum(&[b"ab", b"c"]), checksum(&[b"a", b"bc"]));
    }

    #[test]
    fn weights_round_trip() {
        let weights = vec![
            Weight {
                first_move: 3,
                paths: 7,
            },
            Weight {
                first_move: 0,
                paths: u64::MAX,
            },
        ];
        assert_eq!(blob_weights(&weights_blob(&weights)), Some(weights));
        assert_eq!(blob_weights(&[0; 13]), None);
    }
}
