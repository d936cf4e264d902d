//! The participants service (an admin's): adding, listing, revoking,
//! lifting and budgeting who may take part. Every answer is read into the
//! vocabulary's [`Participant`], as the offline listing of a stopped
//! coordinator's data dir answers too.

use perft_model::{Participant, Resource, Role};
use perft_proto as pb;
use perft_proto::connect::{ClientConfig, Token};

use crate::Client;
use crate::error::{ClientError, ReplyError};

/// A participant's secret, handed over once at its making: only a keyed
/// hash of it is kept. Its `Debug` hides it.
#[derive(Clone)]
pub struct ParticipantSecret(String);

impl ParticipantSecret {
    /// The secret itself, to hand to its owner.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ParticipantSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ParticipantSecret(..)")
    }
}

/// A participant just added, with its secret.
#[derive(Clone, Debug)]
pub struct AddedParticipant {
    pub participant: Participant,
    pub secret: ParticipantSecret,
}

impl AddedParticipant {
    /// `base` (an address, its TLS) with this participant's credential:
    /// the configuration of a client that calls as it.
    pub fn client_config(&self, base: &ClientConfig) -> Result<ClientConfig, ClientError> {
        Ok(ClientConfig {
            token: Some(Token::new(self.secret.expose())?),
            ..base.clone()
        })
    }
}

impl Client {
    /// Adds participant `name` with `role`.
    pub async fn add_participant(&self, name: &str, role: Role) -> Result<AddedParticipant, ClientError> {
        let reply = self
            .participants
            .clone()
            .add_participant(pb::AddParticipantRequest {
                name: name.to_owned(),
                role: pb::Role::from_model(role).into(),
            })
            .await?
            .into_inner();
        let participant = reply
            .participant
            .ok_or_else(|| ReplyError::NoParticipant(name.to_owned()))?;
        Ok(AddedParticipant {
            participant: read(participant)?,
            secret: ParticipantSecret(reply.secret),
        })
    }

    /// Every participant, with its credit, standing and budget.
    pub async fn participants(&self) -> Result<Vec<Participant>, ClientError> {
        let reply = self
            .participants
            .clone()
            .list_participants(pb::ListParticipantsRequest {})
            .await?
            .into_inner();
        reply.participants.into_iter().map(read).collect()
    }

    /// Revokes participant `name`; with `recount`, every unit its votes
    /// decided is counted again.
    pub async fn revoke_participant(&self, name: &str, recount: bool) -> Result<Participant, ClientError> {
        let reply = self
            .participants
            .clone()
            .revoke_participant(pb::RevokeParticipantRequest {
                name: name.to_owned(),
                recount,
            })
            .await?;
        read(reply.into_inner())
    }

    /// Lifts participant `name`'s quarantine (forgiving its lost votes)
    /// and/or its suspension (forgiving its lapse strikes).
    pub async fn lift_quarantine(
        &self,
        name: &str,
        quarantine: bool,
        lapses: bool,
    ) -> Result<Participant, ClientError> {
        let reply = self
            .participants
            .clone()
            .lift_participant(pb::LiftParticipantRequest {
                name: name.to_owned(),
                quarantine,
                lapses,
            })
            .await?;
        read(reply.into_inner())
    }

    /// Sets participant `name`'s budget figures (resource, figure) in
    /// place of the coordinator's defaults, and puts the `reset` resources
    /// back to them.
    pub async fn set_budget(
        &self,
        name: &str,
        figures: &[(Resource, u64)],
        reset: &[Resource],
    ) -> Result<Participant, ClientError> {
        let reply = self
            .participants
            .clone()
            .set_budget(pb::SetBudgetRequest {
                name: name.to_owned(),
                figures: figures
                    .iter()
                    .map(|&(resource, figure)| pb::BudgetFigure {
                        resource: resource.name().to_owned(),
                        figure,
                    })
                    .collect(),
                reset: reset.iter().map(|r| r.name().to_owned()).collect(),
            })
            .await?;
        read(reply.into_inner())
    }
}

fn read(participant: pb::Participant) -> Result<Participant, ClientError> {
    Ok(Participant::try_from(participant).map_err(ReplyError::from)?)
}
