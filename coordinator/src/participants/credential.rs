//! Participant secrets: `NAME.` and 64 hex digits of OS randomness, shown
//! once; the journal keeps only a keyed BLAKE3 hash of the whole secret.

use perft_model::ParticipantId;

/// A participant's secret, as handed to it once. Never logged.
#[derive(Clone)]
pub struct Secret(String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(<redacted>)")
    }
}

impl Secret {
    /// A fresh secret for `id`.
    pub fn generate(id: &ParticipantId) -> Result<Secret, getrandom::Error> {
        let mut random = [0u8; 32];
        getrandom::fill(&mut random)?;
        let hex: String = random.iter().map(|b| format!("{b:02x}")).collect();
        Ok(Secret(format!("{id}.{hex}")))
    }

    /// The text to hand to the participant.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

/// The key of the secrets' hashes, derived from the journal's key so a
/// copied hash is worthless against another coordinator.
pub(super) fn hasher_key(journal_key: &[u8; 32]) -> [u8; 32] {
    blake3::derive_key("deep-perft 2026 participant credential", journal_key)
}

/// The keyed hash of a secret as the caller sent it.
pub(super) fn hash(key: &[u8; 32], secret: &[u8]) -> [u8; 32] {
    *blake3::keyed_hash(key, secret).as_bytes()
}

/// Compares two hashes in constant time.
pub(super) fn hash_matches(a: &[u8; 32], b: &[u8; 32]) -> bool {
    use subtle::ConstantTimeEq;
    bool::from(a.ct_eq(b))
}

/// The participant a secret names, if it has the secret's shape.
pub(super) fn split(secret: &[u8]) -> Option<(ParticipantId, &[u8])> {
    let text = std::str::from_utf8(secret).ok()?;
    let (name, hex) = text.rsplit_once('.')?;
    if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    Some((ParticipantId::parse(name).ok()?, hex.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_differ_and_name_their_participant() {
        let id = ParticipantId::parse("lab.one").unwrap();
        let a = Secret::generate(&id).unwrap();
        let b = Secret::generate(&id).unwrap();
        assert_ne!(a.expose(), b.expose());
        assert_eq!(split(a.expose().as_bytes()).unwrap().0, id);
        assert!(split(b"lab.one.1234").is_none());
        assert!(!format!("{a:?}").contains(a.expose()));
        let key = hasher_key(&[1; 32]);
        assert!(hash_matches(&hash(&key, b"x"), &hash(&key, b"x")));
        assert!(!hash_matches(
            &hash(&key, b"x"),
            &hash(&hasher_key(&[2; 32]), b"x")
        ));
    }
}
