//! What a participant may do: its role, and the actions each role allows.
//! The rule is the same for the coordinator that enforces it and the
//! client that asks.

use perft_core::echoed;

/// What a participant may do.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// Registers, leases, reports and heartbeats.
    Worker,
    /// Submits, cancels and resumes its own jobs; reads.
    Submitter,
    /// Reads jobs, divide tables and the dashboard.
    Reader,
    /// Everything, including managing participants.
    Admin,
}

/// What a call does, for the role check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// The worker service.
    Work,
    /// Submitting, cancelling, resuming jobs.
    Submit,
    /// Reading jobs, divide tables, the dashboard.
    Read,
    /// Managing participants, deleting jobs, acting on others' jobs,
    /// copying the journal.
    Manage,
}

/// A role name that is none of the four.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown role '{echoed}': expected worker, submitter, reader or admin")]
pub struct UnknownRole {
    echoed: String,
}

impl Role {
    pub const ALL: [Role; 4] = [Role::Worker, Role::Submitter, Role::Reader, Role::Admin];

    pub fn name(self) -> &'static str {
        match self {
            Role::Worker => "worker",
            Role::Submitter => "submitter",
            Role::Reader => "reader",
            Role::Admin => "admin",
        }
    }

    /// The role of a name, or an error listing the names.
    pub fn parse(name: &str) -> Result<Role, UnknownRole> {
        Role::ALL
            .into_iter()
            .find(|r| r.name() == name)
            .ok_or_else(|| UnknownRole { echoed: echoed(name) })
    }

    pub fn allows(self, action: Action) -> bool {
        match self {
            Role::Admin => true,
            Role::Worker => action == Action::Work,
            Role::Submitter => matches!(action, Action::Submit | Action::Read),
            Role::Reader => action == Action::Read,
        }
    }
}
