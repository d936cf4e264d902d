//! Lease tags: the coordinator's proof that it issued a lease. A tag is a
//! keyed hash (BLAKE3) of the lease's job, unit, epoch and the name of the
//! machine it went to, under a key kept in the journal: a count is taken
//! only for a lease this coordinator issued to that machine, and a lease
//! outlives a coordinator restart or a worker's re-registration.

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
    /// machine `identity`.
    pub fn sign(&self, job_id: &str, unit_id: u64, epoch: u64, identity: &str) -> [u8; TAG_BYTES] {
        let mut hasher = blake3::Hasher::new_keyed(&self.key);
        for part in [job_id.as_bytes(), identity.as_bytes()] {
            hasher.update(&(part.len() as u64).to_le_bytes());
            hasher.update(part);
        }
        hasher.update(&unit_id.to_le_bytes());
        hasher.update(&epoch.to_le_bytes());
        let mut tag = [0u8; TAG_BYTES];
        tag.copy_from_slice(&hasher.finalize().as_bytes()[..TAG_BYTES]);
        tag
    }

    /// True when `tag` is the tag of that lease (compared in constant
    /// time).
    pub fn verify(&self, job_id: &str, unit_id: u64, epoch: u64, identity: &str, tag: &[u8]) -> bool {
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
        let signer = LeaseSigner::new([7; 32]);
        let tag = signer.sign("job1", 5, 100, "host-a");
        assert!(signer.verify("job1", 5, 100, "host-a", &tag));
        assert!(!signer.verify("job1", 5, 100, "host-b", &tag), "another machine");
        assert!(!signer.verify("job1", 6, 100, "host-a", &tag), "another unit");
        assert!(!signer.verify("job1", 5, 101, "host-a", &tag), "another epoch");
        assert!(!signer.verify("job2", 5, 100, "host-a", &tag), "another job");
        assert!(!signer.verify("job1", 5, 100, "host-a", &tag[..8]), "cut short");
        assert!(!signer.verify("job1", 5, 100, "host-a", &[]));
        let other = LeaseSigner::new([8; 32]);
        assert!(!other.verify("job1", 5, 100, "host-a", &tag), "another key");
    }
}
