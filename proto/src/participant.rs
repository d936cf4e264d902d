//! A participant read off the wire into the vocabulary's
//! [`perft_model::Participant`].

use crate::{BudgetLine, Participant, UnknownValue, count, role};

/// Why a participant on the wire is none this build can read.
#[derive(Debug, thiserror::Error)]
pub enum ParticipantUnreadable {
    #[error(transparent)]
    Role(#[from] UnknownValue),
    #[error(transparent)]
    Name(#[from] perft_model::IdError),
}

impl TryFrom<Participant> for perft_model::Participant {
    type Error = ParticipantUnreadable;

    fn try_from(p: Participant) -> Result<perft_model::Participant, ParticipantUnreadable> {
        Ok(perft_model::Participant {
            name: perft_model::ParticipantId::parse(&p.name)?,
            role: role(p.role)?,
            revoked: p.revoked,
            quarantined: p.quarantined,
            suspended: p.suspended,
            created_ms: p.created_ms,
            units: p.units,
            leaves: count(p.leaves),
            cpu_seconds: p.cpu_seconds,
            lost_votes: p.lost_votes,
            lost_votes_forgiven: p.lost_votes_forgiven,
            lapses: p.lapses,
            strikes: p.strikes,
            machines: p.machines,
            threads: p.threads,
            budget: p.budget.into_iter().map(perft_model::BudgetLine::from).collect(),
        })
    }
}

impl From<BudgetLine> for perft_model::BudgetLine {
    fn from(line: BudgetLine) -> perft_model::BudgetLine {
        perft_model::BudgetLine {
            limit: (!line.unlimited).then_some(line.limit),
            resource: line.resource,
            used: line.used,
            overridden: line.overridden,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_participant_reads_with_its_role_and_budget() {
        let wire = Participant {
            name: "alice".to_owned(),
            role: crate::Role::Submitter.into(),
            leaves: Some((u128::from(u64::MAX) + 2).into()),
            budget: vec![
                BudgetLine {
                    resource: "open_jobs".to_owned(),
                    limit: 4,
                    used: 1,
                    overridden: true,
                    unlimited: false,
                },
                BudgetLine {
                    resource: "open_units".to_owned(),
                    unlimited: true,
                    ..BudgetLine::default()
                },
            ],
            ..Participant::default()
        };
        let read = perft_model::Participant::try_from(wire.clone()).unwrap();
        assert_eq!(read.role, perft_model::Role::Submitter);
        assert_eq!(read.leaves, u128::from(u64::MAX) + 2);
        assert_eq!(read.budget[0].limit, Some(4));
        assert_eq!(read.budget[1].limit, None);
        let unknown = Participant { role: 9, ..wire };
        assert!(perft_model::Participant::try_from(unknown).is_err());
    }
}
