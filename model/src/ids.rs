//! Names of things that travel between Deep Perft's parts, as types: a
//! participant is never confused with a machine or a session, a unit never
//! with an epoch.

use std::fmt;
use std::sync::Arc;

use perft_core::echoed;

/// Longest id accepted, in bytes.
pub const MAX_ID_BYTES: usize = 64;

/// Why a name or an id was refused: the message names what it was meant
/// to be and echoes what came, cut short and escaped.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IdError {
    #[error("{field} '{echoed}' must be 1 to {MAX_ID_BYTES} bytes of printable characters")]
    NotPrintable { field: &'static str, echoed: String },
    #[error("participant name '{echoed}' must be 1 to {MAX_ID_BYTES} of A-Z a-z 0-9 . _ -")]
    ParticipantName { echoed: String },
    #[error(
        "decider '{echoed}' must be 1 to {} bytes of printable characters",
        DeciderName::MAX_BYTES
    )]
    Decider { echoed: String },
}

/// `value` if it is 1 to [`MAX_ID_BYTES`] bytes of printable characters
/// (no control, line-separating or bidirectional ones); else what `field`
/// must be.
pub fn printable<'v>(field: &'static str, value: &'v str) -> Result<&'v str, IdError> {
    if value.is_empty() || value.len() > MAX_ID_BYTES || value.chars().any(perft_core::must_escape) {
        return Err(IdError::NotPrintable {
            field,
            echoed: echoed(value),
        });
    }
    Ok(value)
}

/// A participant: an owner of credentials (a person or an organisation),
/// the identity verification counts. 1 to 64 of `A-Z a-z 0-9 . _ -`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ParticipantId(Arc<str>);

impl ParticipantId {
    /// The participant of the shared `--token-file` token: an admin.
    pub const OPERATOR: &'static str = "operator";
    /// Every caller of a coordinator with no credential configured.
    pub const ANONYMOUS: &'static str = "anonymous";

    /// A well-formed participant name, or why not.
    pub fn parse(name: &str) -> Result<ParticipantId, IdError> {
        let ok = !name.is_empty()
            && name.len() <= MAX_ID_BYTES
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
        if ok {
            Ok(ParticipantId(Arc::from(name)))
        } else {
            Err(IdError::ParticipantName { echoed: echoed(name) })
        }
    }

    /// The built-in participant of the shared token.
    pub fn operator() -> ParticipantId {
        ParticipantId(Arc::from(Self::OPERATOR))
    }

    /// The built-in participant of a caller with no credential.
    pub fn anonymous() -> ParticipantId {
        ParticipantId(Arc::from(Self::ANONYMOUS))
    }

    /// True for the built-in participants (the operator's token, the
    /// anonymous caller of an open coordinator): the coordinator's owner.
    pub fn is_builtin(&self) -> bool {
        [Self::OPERATOR, Self::ANONYMOUS].contains(&self.as_str())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ParticipantId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A worker session's id: what `Register` hands out. It authorises nothing
/// by itself: every call is checked against the caller's credential.
/// Shared, not copied: every call of a session clones it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SessionId(Arc<str>);

impl SessionId {
    /// A fresh random session id.
    pub fn new() -> SessionId {
        SessionId(Arc::from(uuid::Uuid::new_v4().simple().to_string()))
    }

    /// A session id as a caller gave it: 1 to [`MAX_ID_BYTES`] bytes of
    /// printable characters (whether it is a live session is the
    /// registry's business).
    pub fn parse(id: &str) -> Result<SessionId, IdError> {
        printable("worker id", id).map(|id| SessionId(Arc::from(id)))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The first 8 characters: enough for people to tell sessions apart,
    /// never enough to use one.
    pub fn short(&self) -> &str {
        self.0.get(..8).unwrap_or(&self.0)
    }
}

impl Default for SessionId {
    fn default() -> SessionId {
        SessionId::new()
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Shown cut short everywhere: logs and pages never carry a whole id.
        write!(f, "{}…", self.short())
    }
}

/// A job's id, as `SubmitJob` hands it out and the journal keys it.
/// Shared, not copied: every lease and report names its job.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JobId(Arc<str>);

impl JobId {
    /// A fresh job id: 12 hex digits of a random UUID.
    pub fn generate() -> JobId {
        JobId(Arc::from(&uuid::Uuid::new_v4().simple().to_string()[..12]))
    }

    /// A job id as a caller or the journal gave it: 1 to
    /// [`MAX_ID_BYTES`] bytes of printable characters.
    pub fn parse(id: &str) -> Result<JobId, IdError> {
        printable("job id", id).map(|id| JobId(Arc::from(id)))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for JobId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A machine's name as its worker declared it: shown on the dashboard and
/// in metrics, never an identity (that is its participant).
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MachineName(Arc<str>);

impl MachineName {
    /// A machine's name as its worker gave it: 1 to [`MAX_ID_BYTES`] bytes
    /// of printable characters.
    pub fn parse(name: &str) -> Result<MachineName, IdError> {
        printable("worker name", name).map(|name| MachineName(Arc::from(name)))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for MachineName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A unit's place in its job's plan: unit ids of different jobs are never
/// compared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct UnitId(pub u64);

impl fmt::Display for UnitId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

impl UnitId {
    /// `units` named for people: the first eight, then how many more.
    pub fn listed(units: &[UnitId]) -> String {
        UnitId::listed_of(units.iter().copied(), units.len())
    }

    /// [`UnitId::listed`] of the first of `units`, `len` in all: only the
    /// eight shown are read, however many there are.
    pub fn listed_of(units: impl Iterator<Item = UnitId>, len: usize) -> String {
        const SHOWN: usize = 8;
        let mut text = units
            .take(SHOWN)
            .map(|u| u.to_string())
            .collect::<Vec<_>>()
            .join(", ");
        if len > SHOWN {
            text.push_str(&format!(" and {} more", len - SHOWN));
        }
        text
    }
}

/// A lease's number: a report or release names the lease it answers, so a
/// late answer to an expired lease is never taken for the current one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Epoch(pub u64);

impl fmt::Display for Epoch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// Who decided a count, as a journal or a certificate names them: a
/// participant, `local` for a count made on one machine, or a machine's
/// name in a journal from before participants. Any printable name, so a
/// record from an older release is never refused for its names.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DeciderName(Arc<str>);

impl DeciderName {
    /// The decider of a count made by `perft run` on one machine.
    pub const LOCAL: &'static str = "local";

    /// Longest name accepted, in bytes: older records named machines,
    /// whose names were not held to [`MAX_ID_BYTES`].
    pub const MAX_BYTES: usize = 256;

    /// A decider's name as a record gave it: 1 to [`DeciderName::MAX_BYTES`]
    /// bytes of printable characters.
    pub fn parse(name: &str) -> Result<DeciderName, IdError> {
        if name.is_empty() || name.len() > Self::MAX_BYTES || name.chars().any(perft_core::must_escape) {
            return Err(IdError::Decider { echoed: echoed(name) });
        }
        Ok(DeciderName(Arc::from(name)))
    }

    /// The decider of a local count.
    pub fn local() -> DeciderName {
        DeciderName(Arc::from(Self::LOCAL))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl From<&ParticipantId> for DeciderName {
    fn from(participant: &ParticipantId) -> DeciderName {
        DeciderName(Arc::clone(&participant.0))
    }
}

impl fmt::Display for DeciderName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn participant_names_are_plain() {
        assert!(ParticipantId::parse("alice-lab_2.x").is_ok());
        for bad in ["", "a b", "é", "x\n", &"a".repeat(65)] {
            let err = ParticipantId::parse(bad).unwrap_err().to_string();
            assert!(!err.contains('\n'), "{err}");
        }
    }

    #[test]
    fn printable_ids_are_checked_with_the_field_named() {
        assert_eq!(JobId::parse("0a1b2c3d4e5f").unwrap().as_str(), "0a1b2c3d4e5f");
        assert_eq!(JobId::generate().as_str().len(), 12);
        assert!(MachineName::parse("host 1 (lab)").is_ok());
        for bad in ["", "x\n", "\u{1b}[2J", &"a".repeat(65)] {
            let err = JobId::parse(bad).unwrap_err().to_string();
            assert!(err.starts_with("job id '") && !err.contains('\n'), "{err}");
            let err = MachineName::parse(bad).unwrap_err().to_string();
            assert!(err.starts_with("worker name '"), "{err}");
            let err = SessionId::parse(bad).unwrap_err().to_string();
            assert!(err.starts_with("worker id '"), "{err}");
        }
        assert_eq!(
            JobId::parse("x\n").unwrap_err().to_string(),
            "job id 'x\\n' must be 1 to 64 bytes of printable characters"
        );
    }

    #[test]
    fn a_session_shows_only_its_start() {
        let id = SessionId::new();
        assert_eq!(id.as_str().len(), 32);
        assert_eq!(id.to_string(), format!("{}…", &id.as_str()[..8]));
    }
}
