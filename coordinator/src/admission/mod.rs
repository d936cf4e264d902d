//! The admission layer: every resource a caller can make the coordinator
//! hold is charged to a principal (a participant, proven by its
//! credential, or the remote address of a caller without one) and
//! bounded by that principal's budget. One place decides: the gRPC layer
//! ([`layer`]) charges streams and marks connections, the services ask
//! here before they open a job, a session or a dashboard session, and
//! refusals are logged through here, at most once an interval each.

pub mod budget;
mod interceptor;
pub(crate) mod layer;
mod refusals;

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use dashmap::DashMap;
use tonic::Status;

pub use budget::{Budget, BudgetError, Overrides, Resource};
pub(crate) use interceptor::Authenticate;

use perft_model::ParticipantId;

/// What a participant's unfinished jobs hold, charged to its budget.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpenUse {
    pub jobs: u64,
    pub units: u64,
}

/// Who a resource is charged to.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Principal {
    /// A caller whose credential proved it.
    Participant(ParticipantId),
    /// A caller with no credential (health probes): its address, an IPv6
    /// one by its /64.
    Address(IpAddr),
}

impl std::fmt::Display for Principal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Principal::Participant(p) => write!(f, "participant '{p}'"),
            Principal::Address(ip) => write!(f, "address {ip} (no credential)"),
        }
    }
}

/// The coordinator-wide budgets: what every participant may hold unless
/// an admin set its own figures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budgets {
    /// Every participant's, unless overridden.
    pub participant: Budget,
    /// Streams of one address without a credential.
    pub anonymous_streams: u64,
    /// A principal's refusals are logged at most once this often (the
    /// rest are counted in metrics and summed in the next line).
    pub log_every: Duration,
}

impl Default for Budgets {
    fn default() -> Budgets {
        Budgets {
            participant: Budget::default(),
            anonymous_streams: budget::ANONYMOUS_STREAMS,
            log_every: Duration::from_secs(60),
        }
    }
}

/// The admission layer's state: budgets, overrides, and the use of what
/// is not counted elsewhere (streams; jobs and units are the job table's,
/// sessions the worker registry's, dashboard sessions the dashboard's).
#[derive(Debug)]
pub struct Admission {
    budgets: Budgets,
    overrides: RwLock<HashMap<ParticipantId, Overrides>>,
    streams: DashMap<Principal, u64>,
    /// Live worker sessions of each participant (the worker registry is
    /// the truth; this counts its entries, to check a budget in one step).
    sessions: DashMap<ParticipantId, u64>,
    refusals: refusals::Refusals,
    /// One submit or resume at a time per participant: its budget check
    /// and the job it admits are one step.
    turns: DashMap<ParticipantId, Arc<tokio::sync::Mutex<()>>>,
}

impl Admission {
    pub fn new(budgets: Budgets, overrides: Vec<(ParticipantId, Overrides)>) -> Admission {
        Admission {
            budgets,
            overrides: RwLock::new(overrides.into_iter().collect()),
            streams: DashMap::new(),
            sessions: DashMap::new(),
            refusals: refusals::Refusals::new(budgets.log_every),
            turns: DashMap::new(),
        }
    }

    pub fn budgets(&self) -> Budgets {
        self.budgets
    }

    /// The budget of `who`: the defaults with its overrides. The built-in
    /// participants (the operator's token, every caller of an open
    /// coordinator) own the coordinator: their jobs and units are not
    /// bounded.
    pub fn budget(&self, who: &ParticipantId) -> Budget {
        let mut budget = self.budgets.participant;
        if who.is_builtin() {
            budget.open_jobs = u64::MAX;
            budget.open_units = u64::MAX;
            return budget;
        }
        match self.read().get(who) {
            Some(overrides) => budget.with(overrides),
            None => budget,
        }
    }

    /// The overrides of `who` (empty: the defaults).
    pub fn overrides(&self, who: &ParticipantId) -> Overrides {
        self.read().get(who).cloned().unwrap_or_default()
    }

    /// Takes journaled overrides of `who`.
    pub fn set_overrides(&self, who: ParticipantId, overrides: Overrides) {
        let mut all = self.overrides.write().unwrap_or_else(|p| p.into_inner());
        if overrides.is_empty() {
            all.remove(&who);
        } else {
            all.insert(who, overrides);
        }
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, HashMap<ParticipantId, Overrides>> {
        self.overrides.read().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits for `who`'s turn to admit a job: held across the budget check
    /// and the job's insertion, so two submits cannot both take the last
    /// of a budget.
    pub async fn turn(&self, who: &ParticipantId) -> tokio::sync::OwnedMutexGuard<()> {
        let lock = Arc::clone(self.turns.entry(who.clone()).or_default().value());
        lock.lock_owned().await
    }

    /// How many units a new job of `who` may have, given what its open
    /// jobs hold; RESOURCE_EXHAUSTED naming the figures when it may open
    /// none.
    pub fn units_left(&self, who: &ParticipantId, used: OpenUse) -> Result<u64, Status> {
        let budget = self.budget(who);
        if used.jobs >= budget.open_jobs {
            return Err(self.exhausted(who, Resource::OpenJobs, used.jobs, budget.open_jobs));
        }
        let left = budget.open_units.saturating_sub(used.units);
        if left == 0 {
            return Err(self.exhausted(who, Resource::OpenUnits, used.units, budget.open_units));
        }
        Ok(left)
    }

    /// RESOURCE_EXHAUSTED for a job of `units` units that does not fit
    /// what is left of `who`'s open units.
    pub fn plan_too_big(&self, who: &ParticipantId, used: OpenUse, units: Option<u64>) -> Status {
        let budget = self.budget(who).open_units;
        let size = match units {
            Some(units) => format!("{units} units"),
            None => format!("more than {} units", budget.saturating_sub(used.units)),
        };
        self.refused(who, Resource::OpenUnits);
        Status::resource_exhausted(format!(
            "participant '{who}' may hold {budget} open units and its open jobs hold {}: a job of {size} does not fit \
             (submit a smaller --split-depth, wait for a job to finish, or ask an admin: perft participant budget {who} --open-units N)",
            used.units
        ))
    }

    /// RESOURCE_EXHAUSTED: `who` holds `used` of `resource`, its budget.
    pub fn exhausted(&self, who: &ParticipantId, resource: Resource, used: u64, budget: u64) -> Status {
        self.refused(who, resource);
        let hint = match resource {
            Resource::OpenJobs => "wait for a job to finish or cancel one",
            Resource::OpenUnits => "wait for a job to finish or cancel one",
            Resource::Sessions => "stop some workers first",
            Resource::Streams => "close some watches first",
            Resource::DashboardSessions => "its oldest session ends",
        };
        Status::resource_exhausted(format!(
            "participant '{who}' holds {used} {}, its budget of {budget}: {hint}, or ask an admin (perft participant budget {who} --{} N)",
            resource.words(),
            resource.name().replace('_', "-"),
        ))
    }

    /// Counts a refusal in metrics (logged through [`Admission::log_refused`]).
    fn refused(&self, who: &ParticipantId, resource: Resource) {
        metrics::counter!("perft_budget_refusals_total", "resource" => resource.name()).increment(1);
        self.log_refused(&Principal::Participant(who.clone()), resource.words());
    }

    /// Logs a refusal of `what` to `principal` at warn level, at most once
    /// each [`Budgets::log_every`] per principal; the line says how many
    /// were refused since the last one.
    pub fn log_refused(&self, principal: &Principal, what: &str) {
        if let Some(times) = self.refusals.due(principal) {
            let every = self.log_interval();
            tracing::warn!(%principal, refused = times, "refused {what} (logged at most {every} per caller; every one counted in metrics)");
        }
    }

    /// How often a caller's refusals are logged, in words for the line:
    /// "once a minute", "once every 5 s".
    pub fn log_interval(&self) -> String {
        match self.budgets.log_every.as_secs() {
            60 => "once a minute".to_owned(),
            seconds => format!("once every {seconds} s"),
        }
    }

    /// Whether a refusal of `principal` is logged now, and how many since
    /// the last line: for callers that write their own line.
    pub fn log_due(&self, principal: &Principal) -> Option<u64> {
        self.refusals.due(principal)
    }

    /// A stream for `principal`, charged until the permit drops; refused
    /// past its budget.
    pub fn open_stream(self: &Arc<Self>, principal: Principal) -> Result<StreamPermit, Status> {
        let budget = match &principal {
            Principal::Participant(who) => self.budget(who).streams,
            Principal::Address(_) => self.budgets.anonymous_streams,
        };
        let mut open = self.streams.entry(principal.clone()).or_insert(0);
        if *open >= budget {
            let held = *open;
            drop(open);
            if held == 0 {
                // A budget of none: the entry just made must not stay, or
                // every address ever refused would be remembered.
                self.streams.remove_if(&principal, |_, open| *open == 0);
            }
            metrics::counter!("perft_budget_refusals_total", "resource" => Resource::Streams.name())
                .increment(1);
            self.log_refused(&principal, "a stream");
            return Err(match &principal {
                Principal::Participant(who) => Status::resource_exhausted(format!(
                    "participant '{who}' holds {held} open streams, its budget of {budget}: close some watches first, or ask an admin (perft participant budget {who} --streams N)"
                )),
                Principal::Address(ip) => Status::resource_exhausted(format!(
                    "{ip} holds {held} open streams without a credential, the most allowed: close some, or call with a credential"
                )),
            });
        }
        *open += 1;
        drop(open);
        Ok(StreamPermit {
            admission: Arc::clone(self),
            principal,
        })
    }

    /// Charges a new worker session to `who`, or RESOURCE_EXHAUSTED past
    /// its budget. The registry calls [`Admission::session_ended`] when
    /// the session goes.
    pub fn open_session(&self, who: &ParticipantId) -> Result<(), Status> {
        let budget = self.budget(who).sessions;
        let mut live = self.sessions.entry(who.clone()).or_insert(0);
        if *live >= budget {
            let held = *live;
            drop(live);
            return Err(self.exhausted(who, Resource::Sessions, held, budget));
        }
        *live += 1;
        Ok(())
    }

    /// A worker session of `who` ended.
    pub fn session_ended(&self, who: &ParticipantId) {
        if let Some(mut live) = self.sessions.get_mut(who) {
            *live = live.saturating_sub(1);
        }
        self.sessions.remove_if(who, |_, live| *live == 0);
    }

    /// Live worker sessions of `who`.
    pub fn sessions_of(&self, who: &ParticipantId) -> u64 {
        self.sessions.get(who).map_or(0, |n| *n)
    }

    /// Streams `principal` holds now.
    pub fn streams_of(&self, principal: &Principal) -> u64 {
        self.streams.get(principal).map_or(0, |n| *n)
    }
}

/// One open stream, charged to its principal until dropped.
#[derive(Debug)]
pub struct StreamPermit {
    admission: Arc<Admission>,
    principal: Principal,
}

impl Drop for StreamPermit {
    fn drop(&mut self) {
        if let Some(mut open) = self.admission.streams.get_mut(&self.principal) {
            *open = open.saturating_sub(1);
        }
        self.admission
            .streams
            .remove_if(&self.principal, |_, open| *open == 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alice() -> ParticipantId {
        ParticipantId::parse("alice").unwrap()
    }

    #[test]
    fn a_budget_is_the_defaults_with_overrides_and_builtins_hold_any_jobs() {
        let mut overrides = Overrides::default();
        overrides.set(Resource::OpenJobs, Some(2)).unwrap();
        let admission = Admission::new(Budgets::default(), vec![(alice(), overrides)]);
        assert_eq!(admission.budget(&alice()).open_jobs, 2);
        assert_eq!(admission.budget(&alice()).open_units, budget::OPEN_UNITS);
        let operator = ParticipantId::operator();
        assert_eq!(admission.budget(&operator).open_units, u64::MAX);
        assert_eq!(admission.budget(&operator).streams, budget::STREAMS);
    }

    #[test]
    fn units_left_name_the_figures() {
        let admission = Admission::new(Budgets::default(), Vec::new());
        let used = OpenUse {
            jobs: 1,
            units: budget::OPEN_UNITS - 10,
        };
        assert_eq!(admission.units_left(&alice(), used).unwrap(), 10);
        let full = OpenUse {
            jobs: budget::OPEN_JOBS,
            units: 0,
        };
        let refused = admission.units_left(&alice(), full).unwrap_err();
        assert_eq!(refused.code(), tonic::Code::ResourceExhausted);
        assert!(
            refused.message().contains("holds 16 open jobs, its budget of 16"),
            "{}",
            refused.message()
        );
        let too_big = admission.plan_too_big(&alice(), used, Some(11));
        assert!(
            too_big.message().contains("a job of 11 units does not fit"),
            "{}",
            too_big.message()
        );
    }

    #[test]
    fn streams_are_charged_until_their_permit_drops() {
        let admission = Arc::new(Admission::new(
            Budgets {
                anonymous_streams: 2,
                ..Budgets::default()
            },
            Vec::new(),
        ));
        let address = Principal::Address("10.0.0.1".parse().unwrap());
        let first = admission.open_stream(address.clone()).unwrap();
        let _second = admission.open_stream(address.clone()).unwrap();
        let refused = admission.open_stream(address.clone()).unwrap_err();
        assert_eq!(refused.code(), tonic::Code::ResourceExhausted);
        // Another address, and a participant, are charged apart.
        let _other = admission
            .open_stream(Principal::Address("10.0.0.2".parse().unwrap()))
            .unwrap();
        let _alice = admission.open_stream(Principal::Participant(alice())).unwrap();
        drop(first);
        assert_eq!(admission.streams_of(&address), 1);
        let _again = admission.open_stream(address.clone()).unwrap();
    }

    #[test]
    fn sessions_are_charged_up_to_the_budget_and_freed() {
        let mut overrides = Overrides::default();
        overrides.set(Resource::Sessions, Some(2)).unwrap();
        let admission = Admission::new(Budgets::default(), vec![(alice(), overrides)]);
        admission.open_session(&alice()).unwrap();
        admission.open_session(&alice()).unwrap();
        let refused = admission.open_session(&alice()).unwrap_err();
        assert!(
            refused
                .message()
                .contains("holds 2 worker sessions, its budget of 2"),
            "{}",
            refused.message()
        );
        admission.session_ended(&alice());
        assert_eq!(admission.sessions_of(&alice()), 1);
        admission.open_session(&alice()).unwrap();
    }

    #[test]
    fn refusals_under_a_budget_of_no_streams_leave_nothing_behind() {
        let admission = Arc::new(Admission::new(
            Budgets {
                anonymous_streams: 0,
                ..Budgets::default()
            },
            Vec::new(),
        ));
        for i in 0..1000u32 {
            let address = Principal::Address(std::net::Ipv4Addr::from(0x0a00_0000 + i).into());
            let refused = admission.open_stream(address).unwrap_err();
            assert_eq!(refused.code(), tonic::Code::ResourceExhausted);
        }
        assert_eq!(admission.streams.len(), 0, "refused addresses are not remembered");
    }

    #[test]
    fn refusal_lines_name_the_interval_they_are_logged_at() {
        let every = |seconds| {
            Admission::new(
                Budgets {
                    log_every: Duration::from_secs(seconds),
                    ..Budgets::default()
                },
                Vec::new(),
            )
            .log_interval()
        };
        assert_eq!(every(60), "once a minute");
        assert_eq!(every(2), "once every 2 s");
    }
}
