//! Participants: who takes part in a cluster, each with its own credential
//! and role. The coordinator knows a caller from its credential alone
//! (never from a field the caller fills in), and verification counts
//! participants, not machines or sessions.

mod credential;

use std::collections::HashMap;
use std::sync::RwLock;

use tonic::Status;

pub use credential::Secret;

use perft_model::{Action, ParticipantId, Role};

/// Who is calling, as its credential proves: put in every authenticated
/// request's extensions by the admission layer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    pub participant: ParticipantId,
    pub role: Role,
}

impl Caller {
    /// PERMISSION_DENIED unless the caller's role allows `action`.
    pub fn may(&self, action: Action) -> Result<(), Status> {
        if self.role.allows(action) {
            return Ok(());
        }
        Err(Status::permission_denied(format!(
            "participant '{}' has role {}, which may not {}",
            self.participant,
            self.role.name(),
            match action {
                Action::Work => "work (register, lease, report)",
                Action::Submit => "submit, cancel or resume jobs",
                Action::Read => "read jobs",
                Action::Manage => "manage participants or others' jobs, or copy the journal",
            }
        )))
    }

    /// The caller of a request, put there by the admission layer; a request
    /// that did not pass it (a bug) authorises nothing.
    pub fn of<T>(request: &tonic::Request<T>) -> Result<Caller, Status> {
        request
            .extensions()
            .get::<Caller>()
            .cloned()
            .ok_or_else(|| Status::unauthenticated("no credential was checked for this call"))
    }
}

/// A participant as the journal keeps it: never its secret, only a keyed
/// hash of it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StoredParticipant {
    pub id: ParticipantId,
    pub role: Role,
    pub secret_hash: [u8; 32],
    pub revoked: bool,
    pub created_ms: u64,
}

/// The participants this coordinator knows, for the credential check on
/// every call. Changed only after the journal holds the change.
#[derive(Debug)]
pub struct Participants {
    known: RwLock<HashMap<ParticipantId, StoredParticipant>>,
    /// Keys the secrets' hashes: derived from the journal's key.
    hasher_key: [u8; 32],
    /// The shared `--token-file` token: one admin credential.
    operator: Option<perft_proto::connect::Token>,
    /// Held from a revocation's last-admin check until the registry holds
    /// it, so two revocations cannot each leave the other admin as the last.
    revoking: tokio::sync::Mutex<()>,
}

/// Why a participant could not be added or revoked.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ParticipantError {
    #[error(transparent)]
    BadName(#[from] perft_model::IdError),
    #[error("participant '{0}' exists already (revoked names are not reused)")]
    Exists(ParticipantId),
    #[error("no participant '{0}'")]
    NotFound(ParticipantId),
    #[error("'{0}' is built in and cannot be added or revoked")]
    Builtin(ParticipantId),
    #[error("no randomness for a secret: {0}")]
    Randomness(#[source] getrandom::Error),
    #[error(
        "participant '{0}' is the last active admin: add another admin (or serve with --token-file) before revoking it"
    )]
    LastAdmin(ParticipantId),
}

impl From<ParticipantError> for Status {
    fn from(e: ParticipantError) -> Status {
        match e {
            ParticipantError::BadName(_) | ParticipantError::Builtin(_) => {
                Status::invalid_argument(e.to_string())
            }
            ParticipantError::Exists(_) => Status::already_exists(e.to_string()),
            ParticipantError::NotFound(_) => Status::not_found(e.to_string()),
            ParticipantError::LastAdmin(_) => Status::failed_precondition(e.to_string()),
            ParticipantError::Randomness(_) => Status::internal(e.to_string()),
        }
    }
}

impl Participants {
    /// The registry from the journal's rows, its key and the shared token.
    pub fn new(
        stored: Vec<StoredParticipant>,
        journal_key: &[u8; 32],
        operator: Option<perft_proto::connect::Token>,
    ) -> Participants {
        Participants {
            known: RwLock::new(stored.into_iter().map(|p| (p.id.clone(), p)).collect()),
            hasher_key: credential::hasher_key(journal_key),
            operator,
            revoking: tokio::sync::Mutex::new(()),
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, HashMap<ParticipantId, StoredParticipant>> {
        self.known.read().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, HashMap<ParticipantId, StoredParticipant>> {
        self.known
            .write()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// True when no credential was ever configured: every caller is the
    /// anonymous admin (a one-person cluster on a trusted network). Open
    /// means started without a token and no participant ever added: a
    /// participant's row is never deleted (revoking rewrites it, names are
    /// not reused), so any row at all, revoked or not, proves one was
    /// added, and revoking every participant never opens the door again.
    pub fn is_open(&self) -> bool {
        self.operator.is_none() && self.read().is_empty()
    }

    /// Held while a revocation checks [`Participants::revocable`] and until
    /// the revoked record is [`Participants::insert`]ed.
    pub async fn revoking(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.revoking.lock().await
    }

    /// Refuses to revoke the last active admin: with no other active admin
    /// participant and no `--token-file` (the operator, an admin only when
    /// configured), nobody could manage the cluster any more, and since a
    /// coordinator never opens again, nobody would be let in at all.
    pub fn revocable(&self, stored: &StoredParticipant) -> Result<(), ParticipantError> {
        if stored.revoked || stored.role != Role::Admin || self.operator.is_some() {
            return Ok(());
        }
        let another = self
            .read()
            .values()
            .any(|p| p.id != stored.id && p.role == Role::Admin && !p.revoked);
        if another {
            Ok(())
        } else {
            Err(ParticipantError::LastAdmin(stored.id.clone()))
        }
    }

    /// The caller an `authorization` header proves, or UNAUTHENTICATED.
    pub fn authenticate(&self, header: Option<&[u8]>) -> Result<Caller, Status> {
        let Some(header) = header else {
            if self.is_open() {
                return Ok(Caller {
                    participant: ParticipantId::anonymous(),
                    role: Role::Admin,
                });
            }
            return Err(Status::unauthenticated(
                "missing credential: give your participant secret or the coordinator's token (--token-file or PERFT_TOKEN)",
            ));
        };
        if let Some(token) = &self.operator
            && token.matches_header(header)
        {
            return Ok(Caller {
                participant: ParticipantId::operator(),
                role: Role::Admin,
            });
        }
        let refused = || {
            Status::unauthenticated(
                "unknown, revoked or malformed credential: give your participant secret or the coordinator's token",
            )
        };
        let secret = header.strip_prefix(b"Bearer ").ok_or_else(refused)?;
        let (name, _) = credential::split(secret).ok_or_else(refused)?;
        let hash = credential::hash(&self.hasher_key, secret);
        let known = self.read();
        let participant = known.get(&name).ok_or_else(refused)?;
        // The hash comparison takes constant time; which names exist is
        // not a secret (an admin lists them).
        if participant.revoked || !credential::hash_matches(&hash, &participant.secret_hash) {
            return Err(refused());
        }
        Ok(Caller {
            participant: participant.id.clone(),
            role: participant.role,
        })
    }

    /// Whether `id` may still do `action` (not revoked, its role allows
    /// it): for sessions opened by a credential earlier.
    pub fn may(&self, id: &ParticipantId, action: Action) -> bool {
        match id.as_str() {
            ParticipantId::OPERATOR => self.operator.is_some(),
            ParticipantId::ANONYMOUS => self.is_open(),
            _ => self
                .read()
                .get(id)
                .is_some_and(|p| !p.revoked && p.role.allows(action)),
        }
    }

    /// A new participant's record and its secret, not yet stored: the
    /// caller journals the record, then [`Participants::insert`]s it.
    pub fn mint(&self, name: &str, role: Role) -> Result<(StoredParticipant, Secret), ParticipantError> {
        let id = ParticipantId::parse(name).map_err(ParticipantError::BadName)?;
        if id.is_builtin() {
            return Err(ParticipantError::Builtin(id));
        }
        if self.read().contains_key(&id) {
            return Err(ParticipantError::Exists(id));
        }
        let secret = Secret::generate(&id).map_err(ParticipantError::Randomness)?;
        let stored = StoredParticipant {
            secret_hash: credential::hash(&self.hasher_key, secret.expose().as_bytes()),
            id,
            role,
            revoked: false,
            created_ms: crate::clock::unix_ms(),
        };
        Ok((stored, secret))
    }

    /// Takes a journaled record (new, or revoked).
    pub fn insert(&self, stored: StoredParticipant) {
        self.write().insert(stored.id.clone(), stored);
    }

    /// The record of `name`, for revoking it.
    pub fn get(&self, name: &str) -> Result<StoredParticipant, ParticipantError> {
        let id = ParticipantId::parse(name).map_err(ParticipantError::BadName)?;
        if id.is_builtin() {
            return Err(ParticipantError::Builtin(id));
        }
        self.read()
            .get(&id)
            .cloned()
            .ok_or(ParticipantError::NotFound(id))
    }

    /// Every participant, by name.
    pub fn list(&self) -> Vec<StoredParticipant> {
        let mut all: Vec<_> = self.read().values().cloned().collect();
        all.sort_by(|a, b| a.id.cmp(&b.id));
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registry(token: Option<&str>) -> Participants {
        Participants::new(
            Vec::new(),
            &[3; 32],
            token.map(|t| perft_proto::connect::Token::new(t).unwrap()),
        )
    }

    fn bearer(secret: &str) -> Vec<u8> {
        format!("Bearer {secret}").into_bytes()
    }

    #[test]
    fn roles_allow_what_they_say() {
        assert!(Role::Worker.allows(Action::Work) && !Role::Worker.allows(Action::Read));
        assert!(Role::Submitter.allows(Action::Submit) && Role::Submitter.allows(Action::Read));
        assert!(!Role::Submitter.allows(Action::Work) && !Role::Submitter.allows(Action::Manage));
        assert!(Role::Reader.allows(Action::Read) && !Role::Reader.allows(Action::Submit));
        assert!(
            [Action::Work, Action::Submit, Action::Read, Action::Manage]
                .into_iter()
                .all(|a| Role::Admin.allows(a))
        );
        for role in Role::ALL {
            assert_eq!(Role::parse(role.name()), Ok(role));
        }
        assert!(Role::parse("root").is_err());
    }

    #[test]
    fn a_secret_proves_its_participant_only() {
        let registry = registry(None);
        assert!(registry.is_open());
        let (alice, alice_secret) = registry.mint("alice", Role::Worker).unwrap();
        registry.insert(alice.clone());
        let (bob, bob_secret) = registry.mint("bob", Role::Submitter).unwrap();
        registry.insert(bob);
        assert!(!registry.is_open());
        let caller = registry
            .authenticate(Some(&bearer(alice_secret.expose())))
            .unwrap();
        assert_eq!(
            (caller.participant.as_str(), caller.role),
            ("alice", Role::Worker)
        );
        let caller = registry.authenticate(Some(&bearer(bob_secret.expose()))).unwrap();
        assert_eq!(caller.participant.as_str(), "bob");
        // Bob's secret under Alice's name, a changed digit, nothing at all.
        let forged = bob_secret.expose().replacen("bob", "alice", 1);
        assert!(registry.authenticate(Some(&bearer(&forged))).is_err());
        let mut flipped = alice_secret.expose().to_owned();
        let last = flipped.pop().unwrap();
        flipped.push(if last == '0' { '1' } else { '0' });
        assert!(registry.authenticate(Some(&bearer(&flipped))).is_err());
        assert!(registry.authenticate(None).is_err(), "not open any more");
        // Revoked: refused.
        registry.insert(StoredParticipant {
            revoked: true,
            ..alice
        });
        assert!(
            registry
                .authenticate(Some(&bearer(alice_secret.expose())))
                .is_err()
        );
        assert!(matches!(
            registry.mint("alice", Role::Worker),
            Err(ParticipantError::Exists(_))
        ));
    }

    fn added(registry: &Participants, name: &str, role: Role) -> StoredParticipant {
        let (stored, _) = registry.mint(name, role).unwrap();
        registry.insert(stored.clone());
        stored
    }

    fn revoked(registry: &Participants, stored: &StoredParticipant) {
        registry.insert(StoredParticipant {
            revoked: true,
            ..stored.clone()
        });
    }

    #[test]
    fn revoking_everyone_never_opens_the_coordinator_again() {
        let registry = registry(None);
        let anonymous = ParticipantId::anonymous();
        assert!(registry.is_open() && registry.may(&anonymous, Action::Manage));
        let root = added(&registry, "root", Role::Admin);
        let bob = added(&registry, "bob", Role::Worker);
        revoked(&registry, &bob);
        revoked(&registry, &root);
        assert!(!registry.is_open(), "every participant revoked");
        let refused = registry.authenticate(None).unwrap_err();
        assert_eq!(refused.code(), tonic::Code::Unauthenticated);
        assert!(!registry.may(&anonymous, Action::Read));
        // The same after a restart from the journal's rows.
        let restarted = Participants::new(registry.list(), &[3; 32], None);
        assert!(!restarted.is_open());
        assert!(restarted.authenticate(None).is_err());
        // A token alone closes it too, with no participant at all.
        assert!(!self::registry(Some("s3cret")).is_open());
    }

    #[test]
    fn the_last_active_admin_cannot_be_revoked() {
        let registry = registry(None);
        let alice = added(&registry, "alice", Role::Admin);
        let bob = added(&registry, "bob", Role::Admin);
        let worker = added(&registry, "w1", Role::Worker);
        assert_eq!(registry.revocable(&alice), Ok(()), "bob is still an admin");
        revoked(&registry, &alice);
        let refused = registry.revocable(&bob).unwrap_err();
        assert_eq!(refused, ParticipantError::LastAdmin(bob.id.clone()));
        let status = Status::from(refused);
        assert_eq!(status.code(), tonic::Code::FailedPrecondition);
        assert!(status.message().contains("'bob' is the last active admin"));
        assert_eq!(status.message().lines().count(), 1);
        // Others, and a participant revoked already, may be revoked.
        assert_eq!(registry.revocable(&worker), Ok(()));
        assert_eq!(registry.revocable(&registry.get("alice").unwrap()), Ok(()));
        // A revoked admin does not count, and neither does a reader.
        added(&registry, "carol", Role::Reader);
        assert!(registry.revocable(&bob).is_err());
        // The operator token is an admin: with it, bob may go.
        let restarted = Participants::new(registry.list(), &[3; 32], None);
        assert!(restarted.revocable(&bob).is_err());
        let with_token = Participants::new(
            registry.list(),
            &[3; 32],
            Some(perft_proto::connect::Token::new("s3cret").unwrap()),
        );
        assert_eq!(with_token.revocable(&bob), Ok(()));
    }

    #[test]
    fn the_shared_token_is_the_operator() {
        let registry = registry(Some("s3cret"));
        assert!(!registry.is_open());
        let caller = registry.authenticate(Some(b"Bearer s3cret")).unwrap();
        assert_eq!(
            (caller.participant.as_str(), caller.role),
            ("operator", Role::Admin)
        );
        assert!(registry.authenticate(Some(b"Bearer s3cre")).is_err());
        assert!(matches!(
            registry.mint("operator", Role::Worker),
            Err(ParticipantError::Builtin(_))
        ));
    }
}
