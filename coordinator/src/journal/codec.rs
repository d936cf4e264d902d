//! How counts, weights and votes are stored, and the checksums that guard
//! every stored count: a flipped bit is found on restore, never served.

use perft_core::Leaves;
use rusqlite::types::{ToSql, ToSqlOutput};

use crate::ids::{JobId, ParticipantId, UnitId};
use crate::jobs::{JobState, Summary};

/// A job id is stored as its text (read back through [`JobId::parse`]).
impl ToSql for JobId {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::from(self.as_str()))
    }
}

/// A participant is stored as its name (read back through
/// [`ParticipantId::parse`]).
impl ToSql for ParticipantId {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::from(self.as_str()))
    }
}

/// A unit id is stored as an INTEGER: its bits as an i64, as every
/// unit number in the journal is.
impl ToSql for UnitId {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(ToSqlOutput::from(self.0 as i64))
    }
}

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

/// A finished job's summary as one blob.
pub(crate) fn summary_blob(s: &Summary) -> Vec<u8> {
    let mut blob = Vec::with_capacity(28 + s.per_move.len() * 48);
    blob.extend_from_slice(&s.done.to_le_bytes());
    blob.extend_from_slice(&s.work_total.to_le_bytes());
    blob.extend_from_slice(&s.work_done.to_le_bytes());
    blob.extend_from_slice(&(s.per_move.len() as u32).to_le_bytes());
    for ((leaves, units), done) in s.per_move.iter().zip(&s.move_units).zip(&s.move_done) {
        blob.extend_from_slice(&leaves_blob(*leaves));
        blob.extend_from_slice(&units.to_le_bytes());
        blob.extend_from_slice(&done.to_le_bytes());
    }
    blob
}

/// A summary read back; `None` for bytes that are not one.
pub(crate) fn blob_summary(blob: &[u8]) -> Option<Summary> {
    let u64_at = |at: usize| Some(u64::from_le_bytes(blob.get(at..at + 8)?.try_into().ok()?));
    let moves = u32::from_le_bytes(blob.get(24..28)?.try_into().ok()?) as usize;
    if blob.len() != 28 + moves.checked_mul(48)? {
        return None;
    }
    let mut s = Summary {
        done: u64_at(0)?,
        work_total: f64::from_bits(u64_at(8)?),
        work_done: f64::from_bits(u64_at(16)?),
        ..Summary::default()
    };
    for m in 0..moves {
        let at = 28 + m * 48;
        s.per_move.push(blob_leaves(blob.get(at..at + 32)?)?);
        s.move_units.push(u64_at(at + 32)?);
        s.move_done.push(u64_at(at + 40)?);
    }
    Some(s)
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
    fn summaries_round_trip_and_damaged_ones_are_refused() {
        let s = Summary {
            done: 7,
            per_move: vec![Leaves::full(1 << 90), Leaves { leaves: 9, higher: 2 }],
            move_units: vec![4, 3],
            move_done: vec![4, 3],
            work_total: 12.5,
            work_done: 12.5,
        };
        let blob = summary_blob(&s);
        assert_eq!(blob_summary(&blob), Some(s));
        for cut in 0..blob.len() {
            assert_eq!(blob_summary(&blob[..cut]), None);
        }
    }
}
