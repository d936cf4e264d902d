//! How counts, weights and votes are stored, and the checksums that guard
//! every stored count: a flipped bit is found on restore, never served.

use perft_core::Leaves;
use perft_model::{Count, ParticipantId};

use crate::jobs::Summary;
use perft_model::JobState;

/// Participants whose counts agreed, as a result row stores them: one a
/// line.
pub(crate) fn deciders_text(deciders: &[ParticipantId]) -> String {
    deciders
        .iter()
        .map(ParticipantId::as_str)
        .collect::<Vec<_>>()
        .join("\n")
}

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

/// A stored count: leaves and game-over leaves (16 bytes each, little
/// endian), then 16 bytes per kind in a statistics job. A plain count is
/// the 32 bytes every schema stored.
pub(crate) fn count_blob(c: &Count) -> Vec<u8> {
    let mut blob = Vec::with_capacity(count_bytes(c.kinds().len()));
    blob.extend_from_slice(&c.leaves.leaves.to_le_bytes());
    blob.extend_from_slice(&c.leaves.higher.to_le_bytes());
    for k in c.kinds() {
        blob.extend_from_slice(&k.to_le_bytes());
    }
    blob
}

/// Bytes of a stored count with `kinds` kinds.
fn count_bytes(kinds: usize) -> usize {
    32 + 16 * kinds
}

/// A stored count, its kinds as many as its length says; `None` unless
/// whole, `higher <= leaves`, no kind above the leaves and at most
/// [`MAX_KINDS`](perft_model::MAX_KINDS) kinds. Whether the kinds are the job's is the caller's to
/// check.
pub(crate) fn blob_count(blob: &[u8]) -> Option<Count> {
    if blob.len() < 32 || !(blob.len() - 32).is_multiple_of(16) {
        return None;
    }
    let u128_at = |at: usize| Some(u128::from_le_bytes(blob.get(at..at + 16)?.try_into().ok()?));
    let leaves = Leaves {
        leaves: u128_at(0)?,
        higher: u128_at(16)?,
    };
    let kinds = (32..blob.len())
        .step_by(16)
        .map(u128_at)
        .collect::<Option<Vec<u128>>>()?;
    let fits = leaves.is_consistent() && kinds.iter().all(|&k| k <= leaves.leaves);
    fits.then(|| Count::with_kinds(leaves, &kinds)).flatten()
}

/// Counts of `kinds` kinds each, one after the other.
pub(crate) fn count_list_blob(list: &[Count]) -> Vec<u8> {
    list.iter().flat_map(count_blob).collect()
}

/// A list of counts of `kinds` kinds each; `None` for bytes that are not.
pub(crate) fn blob_count_list(blob: &[u8], kinds: usize) -> Option<Vec<Count>> {
    let size = count_bytes(kinds);
    if !blob.len().is_multiple_of(size) {
        return None;
    }
    blob.chunks(size).map(blob_count).collect()
}

/// A finished job's summary as one blob.
pub(crate) fn summary_blob(s: &Summary) -> Vec<u8> {
    let kinds = s.per_move.first().map_or(0, |c| c.kinds().len());
    let mut blob = Vec::with_capacity(28 + s.per_move.len() * (count_bytes(kinds) + 16));
    blob.extend_from_slice(&s.done.to_le_bytes());
    blob.extend_from_slice(&s.work_total.to_le_bytes());
    blob.extend_from_slice(&s.work_done.to_le_bytes());
    blob.extend_from_slice(&(s.per_move.len() as u32).to_le_bytes());
    for ((count, units), done) in s.per_move.iter().zip(&s.move_units).zip(&s.move_done) {
        blob.extend_from_slice(&count_blob(count));
        blob.extend_from_slice(&units.to_le_bytes());
        blob.extend_from_slice(&done.to_le_bytes());
    }
    blob
}

/// A summary of a job whose counts have `kinds` kinds, read back; `None`
/// for bytes that are not one.
pub(crate) fn blob_summary(blob: &[u8], kinds: usize) -> Option<Summary> {
    let u64_at = |at: usize| Some(u64::from_le_bytes(blob.get(at..at + 8)?.try_into().ok()?));
    let moves = u32::from_le_bytes(blob.get(24..28)?.try_into().ok()?) as usize;
    let count = count_bytes(kinds);
    let line = count + 16;
    if blob.len() != moves.checked_mul(line)?.checked_add(28)? {
        return None;
    }
    let mut s = Summary {
        done: u64_at(0)?,
        work_total: f64::from_bits(u64_at(8)?),
        work_done: f64::from_bits(u64_at(16)?),
        ..Summary::default()
    };
    for m in 0..moves {
        let at = 28 + m * line;
        s.per_move.push(blob_count(blob.get(at..at + count)?)?);
        s.move_units.push(u64_at(at + count)?);
        s.move_done.push(u64_at(at + count + 8)?);
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_round_trip_and_inconsistent_ones_are_refused() {
        let count = Count::plain(Leaves {
            leaves: 1 << 100,
            higher: 5,
        });
        assert_eq!(
            count_blob(&count).len(),
            32,
            "a plain count is stored as every schema did"
        );
        assert_eq!(blob_count(&count_blob(&count)), Some(count));
        let bad = count_blob(&Count::plain(Leaves { leaves: 1, higher: 2 }));
        assert_eq!(blob_count(&bad), None);
        assert_eq!(blob_count(&[0; 31]), None);
        assert_eq!(blob_count(&[0; 40]), None);
        assert_eq!(blob_count_list(&[0; 33], 0), None);
        let with = Count::with_kinds(Leaves::full(9), &[1, 9, 0]).unwrap();
        assert_eq!(blob_count(&count_blob(&with)), Some(with));
        assert_eq!(
            blob_count_list(&count_list_blob(&[with, with]), 3),
            Some(vec![with, with])
        );
        assert_eq!(blob_count_list(&count_list_blob(&[with, with]), 2), None);
        let above = count_blob(&Count::with_kinds(Leaves::full(9), &[10]).unwrap());
        assert_eq!(blob_count(&above), None, "a kind above the leaves");
        assert_eq!(blob_count(&vec![0; 32 + 16 * (perft_model::MAX_KINDS + 1)]), None);
    }

    #[test]
    fn checksums_see_a_flipped_bit_and_part_boundaries() {
        let blob = count_blob(&Count::plain(Leaves::full(388_623_673)));
        let mut flipped = blob.clone();
        flipped[3] ^= 0x10;
        assert_ne!(checksum(&[b"job", &blob]), checksum(&[b"job", &flipped]));
        assert_ne!(checksum(&[b"ab", b"c"]), checksum(&[b"a", b"bc"]));
    }

    #[test]
    fn summaries_round_trip_and_damaged_ones_are_refused() {
        let plain = |l| Count::plain(l);
        let s = Summary {
            done: 7,
            per_move: vec![
                plain(Leaves::full(1 << 90)),
                plain(Leaves { leaves: 9, higher: 2 }),
            ],
            move_units: vec![4, 3],
            move_done: vec![4, 3],
            work_total: 12.5,
            work_done: 12.5,
        };
        let blob = summary_blob(&s);
        assert_eq!(blob_summary(&blob, 0), Some(s.clone()));
        for cut in 0..blob.len() {
            assert_eq!(blob_summary(&blob[..cut], 0), None);
        }
        let kinds = |n| Count::with_kinds(Leaves::full(n), &[1, 2]).unwrap();
        let with = Summary {
            per_move: vec![kinds(5), kinds(7)],
            ..s
        };
        let blob = summary_blob(&with);
        assert_eq!(blob_summary(&blob, 2), Some(with));
        assert_eq!(blob_summary(&blob, 0), None);
        assert_eq!(blob_summary(&blob, 1), None);
    }
}
