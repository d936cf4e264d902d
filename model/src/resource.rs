//! The resources a coordinator charges every caller for, by name: what a
//! budget limits, an admin sets and a client asks to change.

use std::fmt;

/// A resource every caller is charged for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Resource {
    /// Jobs it submitted that are not finished (queued, running, paused).
    OpenJobs,
    /// Units of those jobs (each costs memory while open and journal once
    /// counted).
    OpenUnits,
    /// Live worker sessions.
    Sessions,
    /// Streaming calls open at once (job watches, certificate downloads,
    /// health watches, reflection).
    Streams,
    /// Live dashboard sessions (cookies from `?token=` logins).
    DashboardSessions,
}

impl Resource {
    pub const ALL: [Resource; 5] = [
        Resource::OpenJobs,
        Resource::OpenUnits,
        Resource::Sessions,
        Resource::Streams,
        Resource::DashboardSessions,
    ];

    /// The name in flags, JSON, metrics labels and messages.
    pub fn name(self) -> &'static str {
        match self {
            Resource::OpenJobs => "open_jobs",
            Resource::OpenUnits => "open_units",
            Resource::Sessions => "sessions",
            Resource::Streams => "streams",
            Resource::DashboardSessions => "dashboard_sessions",
        }
    }

    /// The resource of a name, or an error listing the names.
    pub fn parse(name: &str) -> Result<Resource, UnknownResource> {
        Resource::ALL
            .into_iter()
            .find(|r| r.name() == name)
            .ok_or_else(|| UnknownResource {
                echoed: perft_core::echoed(name),
            })
    }

    /// Words for people: "open jobs".
    pub fn words(self) -> &'static str {
        match self {
            Resource::OpenJobs => "open jobs",
            Resource::OpenUnits => "open units",
            Resource::Sessions => "worker sessions",
            Resource::Streams => "open streams",
            Resource::DashboardSessions => "dashboard sessions",
        }
    }
}

impl fmt::Display for Resource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A budget name that is none of the five.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown budget '{echoed}': expected open_jobs, open_units, sessions, streams or dashboard_sessions")]
pub struct UnknownResource {
    echoed: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back_and_others_are_refused() {
        for resource in Resource::ALL {
            assert_eq!(Resource::parse(resource.name()), Ok(resource));
        }
        let refused = Resource::parse("disk\n").unwrap_err();
        assert_eq!(
            refused.to_string(),
            "unknown budget 'disk\\n': expected open_jobs, open_units, sessions, streams or dashboard_sessions"
        );
    }
}
