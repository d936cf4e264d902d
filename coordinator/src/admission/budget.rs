//! What one principal may hold at once: its budget of each resource, the
//! coordinator-wide defaults and an admin's per-participant overrides.

pub use perft_model::{Resource, UnknownResource};

/// How much of each resource one participant may hold at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    pub open_jobs: u64,
    pub open_units: u64,
    pub sessions: u64,
    pub streams: u64,
    pub dashboard_sessions: u64,
}

/// Default open jobs of a participant.
pub const OPEN_JOBS: u64 = 16;
/// Default open units of a participant: 100 participants at it hold ten
/// million units, a record run's plan, in about 1 GiB (BENCHMARKS.md).
pub const OPEN_UNITS: u64 = 100_000;
/// Default live worker sessions of a participant.
pub const SESSIONS: u64 = 1024;
/// Default streams of a participant.
pub const STREAMS: u64 = 32;
/// Default dashboard sessions of a participant.
pub const DASHBOARD_SESSIONS: u64 = 16;
/// Streams open at once from one address without a credential (health
/// watches of probes, mostly).
pub const ANONYMOUS_STREAMS: u64 = 8;

impl Default for Budget {
    fn default() -> Budget {
        Budget {
            open_jobs: OPEN_JOBS,
            open_units: OPEN_UNITS,
            sessions: SESSIONS,
            streams: STREAMS,
            dashboard_sessions: DASHBOARD_SESSIONS,
        }
    }
}

impl Budget {
    /// The figure of one resource.
    pub fn of(&self, resource: Resource) -> u64 {
        match resource {
            Resource::OpenJobs => self.open_jobs,
            Resource::OpenUnits => self.open_units,
            Resource::Sessions => self.sessions,
            Resource::Streams => self.streams,
            Resource::DashboardSessions => self.dashboard_sessions,
        }
    }

    fn slot(&mut self, resource: Resource) -> &mut u64 {
        match resource {
            Resource::OpenJobs => &mut self.open_jobs,
            Resource::OpenUnits => &mut self.open_units,
            Resource::Sessions => &mut self.sessions,
            Resource::Streams => &mut self.streams,
            Resource::DashboardSessions => &mut self.dashboard_sessions,
        }
    }

    /// This budget with `overrides` in place of its figures.
    pub fn with(mut self, overrides: &Overrides) -> Budget {
        for (resource, figure) in overrides.iter() {
            *self.slot(resource) = figure;
        }
        self
    }
}

/// Largest figure an override may set: past it a sum could overflow, and
/// no coordinator holds so much.
pub const MAX_FIGURE: u64 = 1 << 40;

/// An admin's figures for one participant, in place of the defaults:
/// journaled, so they survive restarts.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Overrides(Vec<(Resource, u64)>);

impl Overrides {
    /// The overridden figures, in [`Resource::ALL`] order.
    pub fn iter(&self) -> impl Iterator<Item = (Resource, u64)> + '_ {
        self.0.iter().copied()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn get(&self, resource: Resource) -> Option<u64> {
        self.0.iter().find(|(r, _)| *r == resource).map(|&(_, f)| f)
    }

    /// Sets (`Some`) or drops (`None`, back to the default) one figure.
    pub fn set(&mut self, resource: Resource, figure: Option<u64>) -> Result<(), BudgetError> {
        self.0.retain(|(r, _)| *r != resource);
        if let Some(figure) = figure {
            if figure > MAX_FIGURE {
                return Err(BudgetError::TooBig { resource, figure });
            }
            self.0.push((resource, figure));
            self.0
                .sort_by_key(|(r, _)| Resource::ALL.iter().position(|a| a == r));
        }
        Ok(())
    }

    /// The journal's text: `open_jobs=4,open_units=1000` (empty: none).
    pub fn encode(&self) -> String {
        self.0
            .iter()
            .map(|(r, f)| format!("{r}={f}"))
            .collect::<Vec<_>>()
            .join(",")
    }

    /// The overrides of [`Overrides::encode`]'s text, or what is wrong.
    pub fn decode(text: &str) -> Result<Overrides, BudgetError> {
        let mut overrides = Overrides::default();
        for pair in text.split(',').filter(|p| !p.is_empty()) {
            let (name, figure) = pair.split_once('=').ok_or_else(|| BudgetError::NotAPair {
                echoed: perft_core::echoed(pair),
            })?;
            let resource = Resource::parse(name)?;
            let figure = figure.parse::<u64>().map_err(|source| BudgetError::NotANumber {
                resource,
                echoed: perft_core::echoed(figure),
                source,
            })?;
            if overrides.get(resource).is_some() {
                return Err(BudgetError::Twice { resource });
            }
            overrides.set(resource, Some(figure))?;
        }
        Ok(overrides)
    }
}

/// Why a budget name, figure or override list was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BudgetError {
    #[error(transparent)]
    Unknown(#[from] UnknownResource),
    #[error("budget {resource} of {figure} is more than {MAX_FIGURE}, the most any may be")]
    TooBig { resource: Resource, figure: u64 },
    #[error("budget '{echoed}' is not NAME=FIGURE")]
    NotAPair { echoed: String },
    #[error("budget {resource}: '{echoed}' is not a whole number")]
    NotANumber {
        resource: Resource,
        echoed: String,
        #[source]
        source: std::num::ParseIntError,
    },
    #[error("budget {resource} is given twice")]
    Twice { resource: Resource },
}

impl From<BudgetError> for tonic::Status {
    fn from(e: BudgetError) -> tonic::Status {
        tonic::Status::invalid_argument(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overrides_replace_defaults_and_round_trip() {
        let mut overrides = Overrides::default();
        overrides.set(Resource::Streams, Some(3)).unwrap();
        overrides.set(Resource::OpenJobs, Some(1)).unwrap();
        assert_eq!(overrides.encode(), "open_jobs=1,streams=3");
        assert_eq!(Overrides::decode(&overrides.encode()), Ok(overrides.clone()));
        let budget = Budget::default().with(&overrides);
        assert_eq!((budget.open_jobs, budget.streams), (1, 3));
        assert_eq!(budget.open_units, OPEN_UNITS);
        overrides.set(Resource::OpenJobs, None).unwrap();
        assert_eq!(overrides.encode(), "streams=3");
        assert_eq!(Overrides::decode(""), Ok(Overrides::default()));
    }

    #[test]
    fn bad_overrides_are_refused_with_their_reason() {
        assert!(
            Overrides::decode("open_jobs")
                .unwrap_err()
                .to_string()
                .contains("NAME=FIGURE")
        );
        assert!(
            Overrides::decode("cpus=3")
                .unwrap_err()
                .to_string()
                .contains("unknown budget 'cpus'")
        );
        assert!(
            Overrides::decode("streams=-1")
                .unwrap_err()
                .to_string()
                .contains("not a whole number")
        );
        assert!(
            Overrides::decode("streams=1,streams=2")
                .unwrap_err()
                .to_string()
                .contains("twice")
        );
        let mut overrides = Overrides::default();
        assert!(overrides.set(Resource::OpenUnits, Some(MAX_FIGURE + 1)).is_err());
    }
}
