//! Lease tags: the coordinator's proof that it issued a lease. A tag is a
//! keyed hash (BLAKE3) of the lease's job, unit, epoch and the participant
//! it went to, under a key kept in the journal: a count is taken only for
//! a lease this coordinator issued to that participant, and a lease
//! outlives a coordinator restart or a worker's re-registration.

use perft_model::{Epoch, JobId, ParticipantId, UnitId};

/// Bytes of a tag on the wire.
pub const TAG_BYTES: usize = 16;

/// Signs and checks lease tags.
#[derive(Clone)]
pub struct LeaseSigner {
    key: [u8; 32],
}

impl std::fmt::Debug for LeaseSigner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LeaseSigner(<key>)")
    }
}

impl LeaseSigner {
    pub fn new(key: [u8; 32]) -> LeaseSigner {
        LeaseSigner { key }
    }

    /// The tag of the lease `epoch` of `unit_id` in `job_id` given to the
    /// participant `identity`.
    pub fn sign(
        &self,
        job_id: &JobId,
        unit_id: UnitId,
        epoch: Epoch,
        identity: &ParticipantId,
    ) -> [u8; TAG_BYTES] {
        let mut hasher = blake3::Hasher::new_keyed(&self.key);
        for part in [job_id.as_str().as_bytes(), identity.as_str().as_bytes()] {
            hasher.update(&(part.len() as u64).to_le_bytes());
            hasher.update(part);
        }
        hasher.update(&unit_id.0.to_le_bytes());
        hasher.update(&epoch.0.to_le_bytes());
        let mut tag = [0u8; TAG_BYTES];
        tag.copy_from_slice(&hasher.finalize().as_bytes()[..TAG_BYTES]);
        tag
    }

    /// True when `tag` is the tag of that lease (compared in constant
    /// time).
    pub fn verify(
        &self,
        job_id: &JobId,
        unit_id: UnitId,
        epoch: Epoch,
        identity: &ParticipantId,
        tag: &[u8],
    ) -> bool {
        use subtle::ConstantTimeEq;
        let expected = self.sign(job_id, unit_id, epoch, identity);
        tag.len() == TAG_BYTES && bool::from(expected.ct_eq(tag))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tag_holds_for_its_lease_only() {
        let job = |id| JobId::parse(id).unwrap();
        let who = |name| ParticipantId::parse(name).unwrap();
        let (j1, a) = (job("job1"), who("lab-a"));
        let signer = LeaseSigner::new([7; 32]);
        let tag = signer.sign(&j1, UnitId(5), Epoch(100), &a);
        assert!(signer.verify(&j1, UnitId(5), Epoch(100), &a, &tag));
        assert!(
            !signer.verify(&j1, UnitId(5), Epoch(100), &who("lab-b"), &tag),
            "another participant"
        );
        assert!(
            !signer.verify(&j1, UnitId(6), Epoch(100), &a, &tag),
            "another unit"
        );
        assert!(
            !signer.verify(&j1, UnitId(5), Epoch(101), &a, &tag),
            "another epoch"
        );
        assert!(
            !signer.verify(&job("job2"), UnitId(5), Epoch(100), &a, &tag),
            "another job"
        );
        assert!(
            !signer.verify(&j1, UnitId(5), Epoch(100), &a, &tag[..8]),
            "cut short"
        );
        assert!(!signer.verify(&j1, UnitId(5), Epoch(100), &a, &[]));
        let other = LeaseSigner::new([8; 32]);
        assert!(!other.verify(&j1, UnitId(5), Epoch(100), &a, &tag), "another key");
    }
}
