//! The coordinator's Prometheus gauges: jobs, units, leaves, workers, and
//! per participant what its machines' heartbeats last said (table hit
//! ratio and fill, units and leaves done) and its credit, so one scrape of
//! the coordinator shows the whole cluster. Series are per participant,
//! never per registration or machine name (which callers choose): their
//! number is bounded by the participants an admin added.
//! `deploy/check-monitoring.py` reads the names from this file.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use crate::admission::{OpenUse, Principal, Resource};
use crate::{Coordinator, Worker};
use perft_model::ParticipantId;

/// Publishes the coordinator's gauges every second (a no-op unless a
/// metrics recorder, such as the Prometheus exporter, is installed).
pub(crate) async fn publish_metrics(coordinator: Arc<Coordinator>) {
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    let mut last: Option<(Instant, u128)> = None;
    loop {
        tick.tick().await;
        let Ok(stats) = coordinator.peek(|jobs| jobs.stats()).await else {
            continue;
        };
        for (state, count) in ["queued", "running", "done", "failed", "cancelled"]
            .into_iter()
            .zip(stats.jobs)
        {
            metrics::gauge!("perft_jobs", "state" => state).set(count as f64);
        }
        metrics::gauge!("perft_units", "state" => "queued").set(stats.units_queued as f64);
        metrics::gauge!("perft_units", "state" => "leased").set(stats.units_leased as f64);
        metrics::gauge!("perft_units", "state" => "done").set(stats.units_done as f64);
        metrics::gauge!("perft_units_released").set(stats.units_released as f64);
        let now = Instant::now();
        if let Some((then, leaves)) = last {
            let rate =
                stats.leaves_done.saturating_sub(leaves) as f64 / now.duration_since(then).as_secs_f64();
            metrics::gauge!("perft_leaves_per_second").set(rate);
        }
        last = Some((now, stats.leaves_done));
        metrics::gauge!("perft_leaves_total").set(stats.leaves_done as f64);
        metrics::gauge!("perft_workers_connected").set(coordinator.workers.len() as f64);
        let threads: u64 = coordinator.workers.iter().map(|w| u64::from(w.threads)).sum();
        metrics::gauge!("perft_worker_threads").set(threads as f64);
        metrics::gauge!("perft_journal_degraded")
            .set(f64::from(u8::from(coordinator.degraded.load(Ordering::Acquire))));
        publish_per_participant(&coordinator).await;
    }
}

/// What the live sessions of one participant add up to.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(crate) struct NameTotals {
    pub threads: u64,
    pub table_probes: u64,
    pub table_hits: u64,
    /// Sum of the sessions' fill, over `reporting` for the mean.
    fill_sum: f64,
    /// Sessions that sent stats.
    pub reporting: u32,
    pub units_done: u64,
    pub leaves_done: u128,
}

impl NameTotals {
    /// Table hits over probes, when anything was probed.
    pub fn hit_ratio(&self) -> Option<f64> {
        (self.table_probes > 0).then(|| self.table_hits as f64 / self.table_probes as f64)
    }

    /// The mean table fill of the sessions that reported one.
    pub fn fill(&self) -> Option<f64> {
        (self.reporting > 0).then(|| self.fill_sum / f64::from(self.reporting))
    }
}

/// Sessions grouped by participant.
pub(crate) fn totals_by_participant<'w>(
    workers: impl IntoIterator<Item = &'w Worker>,
) -> BTreeMap<ParticipantId, NameTotals> {
    let mut names: BTreeMap<ParticipantId, NameTotals> = BTreeMap::new();
    for worker in workers {
        let totals = names.entry(worker.participant.clone()).or_default();
        totals.threads += u64::from(worker.threads);
        if let Some(stats) = &worker.stats {
            totals.table_probes = totals.table_probes.saturating_add(stats.table_probes);
            totals.table_hits = totals.table_hits.saturating_add(stats.table_hits);
            totals.fill_sum += stats.table_fill;
            totals.reporting += 1;
            totals.units_done = totals.units_done.saturating_add(stats.units_done);
            totals.leaves_done = totals.leaves_done.saturating_add(stats.leaves_done);
        }
    }
    names
}

/// Gauges labelled `participant`: its live machines' heartbeats, and its
/// credit. A participant with no machine left stops being set for the
/// first kind, and the exporter drops those series after
/// [`IDLE_GAUGE_SECONDS`].
async fn publish_per_participant(coordinator: &Coordinator) {
    let workers: Vec<Worker> = coordinator
        .workers
        .iter()
        .map(|entry| entry.value().clone())
        .collect();
    for (participant, totals) in totals_by_participant(&workers) {
        let p = participant.to_string();
        metrics::gauge!("perft_workers_threads", "participant" => p.clone()).set(totals.threads as f64);
        metrics::gauge!("perft_workers_units_done", "participant" => p.clone()).set(totals.units_done as f64);
        metrics::gauge!("perft_workers_leaves_done", "participant" => p.clone())
            .set(totals.leaves_done as f64);
        if let Some(ratio) = totals.hit_ratio() {
            metrics::gauge!("perft_workers_table_hit_ratio", "participant" => p.clone()).set(ratio);
        }
        if let Some(fill) = totals.fill() {
            metrics::gauge!("perft_workers_table_fill", "participant" => p).set(fill);
        }
    }
    let mut names: Vec<ParticipantId> = coordinator
        .participants
        .list()
        .into_iter()
        .filter(|p| !p.revoked)
        .map(|p| p.id)
        .collect();
    if coordinator.config.token.is_some() {
        names.push(ParticipantId::operator());
    }
    if coordinator.participants.is_open() {
        names.push(ParticipantId::anonymous());
    }
    let Ok(credit) = coordinator
        .peek(move |jobs| {
            // One pass over the jobs for every participant's open use.
            let mut open_use = jobs.open_use_by_owner();
            names
                .into_iter()
                .map(|n| {
                    let c = jobs.credit(&n);
                    let q = jobs.is_quarantined(&n);
                    let open = open_use.remove(&n).unwrap_or_default();
                    (n, c, q, open)
                })
                .collect::<Vec<_>>()
        })
        .await
    else {
        return;
    };
    let dashboard_sessions = coordinator.dashboard_sessions.by_owner();
    for (p, c, quarantined, open) in credit {
        let dashboard = dashboard_sessions.get(&p).copied().unwrap_or(0);
        publish_budget(coordinator, &p, open, dashboard);
        let p = p.to_string();
        metrics::gauge!("perft_participant_units", "participant" => p.clone()).set(c.units as f64);
        metrics::gauge!("perft_participant_leaves", "participant" => p.clone()).set(c.leaves as f64);
        metrics::gauge!("perft_participant_cpu_seconds", "participant" => p.clone())
            .set(c.cpu_ms as f64 / 1000.0);
        metrics::gauge!("perft_participant_lost_votes", "participant" => p.clone()).set(c.lost_votes as f64);
        metrics::gauge!("perft_participant_quarantined", "participant" => p)
            .set(f64::from(u8::from(quarantined)));
    }
}

/// Gauges of `who`'s budget and what it holds of each resource
/// (`perft_budget_limit` is not set for an unlimited resource): `open`
/// and `dashboard_sessions` are counted once per pass for everyone.
fn publish_budget(coordinator: &Coordinator, who: &ParticipantId, open: OpenUse, dashboard_sessions: u64) {
    let budget = coordinator.admission.budget(who);
    let principal = Principal::Participant(who.clone());
    for resource in Resource::ALL {
        let used = match resource {
            Resource::OpenJobs => open.jobs,
            Resource::OpenUnits => open.units,
            Resource::Sessions => coordinator.admission.sessions_of(who),
            Resource::Streams => coordinator.admission.streams_of(&principal),
            Resource::DashboardSessions => dashboard_sessions,
        };
        let labels = [
            ("participant", who.to_string()),
            ("resource", resource.name().to_owned()),
        ];
        metrics::gauge!("perft_budget_used", &labels).set(used as f64);
        let limit = budget.of(resource);
        if limit != u64::MAX {
            metrics::gauge!("perft_budget_limit", &labels).set(limit as f64);
        }
    }
}

/// Seconds after which the coordinator's exporter drops a gauge nobody
/// sets any more (a departed worker's): the gauges are set every second.
pub const IDLE_GAUGE_SECONDS: u64 = 15;

#[cfg(test)]
mod tests {
    use super::*;
    use perft_model::WorkerFigures;

    fn worker(name: &str, threads: u32, stats: Option<WorkerFigures>) -> Worker {
        Worker {
            participant: ParticipantId::parse(name).unwrap(),
            label: std::sync::Arc::from(format!("{name}/{name}-host")),
            name: perft_model::MachineName::parse(&format!("{name}-host")).unwrap(),
            threads,
            last_seen: Instant::now(),
            proven: false,
            only_job: None,
            draining: false,
            stats,
        }
    }

    fn stats(probes: u64, hits: u64, fill: f64, units: u64, leaves: u128) -> Option<WorkerFigures> {
        Some(WorkerFigures {
            table_probes: probes,
            table_hits: hits,
            table_fill: fill,
            table_bytes: 1 << 20,
            units_done: units,
            leaves_done: leaves,
        })
    }

    #[test]
    fn sessions_of_one_participant_add_up() {
        let workers = [
            worker("a", 4, stats(100, 25, 0.5, 3, 1000)),
            worker("b", 2, None),
            worker("a", 4, stats(300, 175, 0.25, 5, 24)),
        ];
        let names = totals_by_participant(&workers);
        let a = names[&ParticipantId::parse("a").unwrap()];
        assert_eq!(
            (a.threads, a.units_done, a.leaves_done, a.reporting),
            (8, 8, 1024, 2)
        );
        assert_eq!(a.hit_ratio(), Some(0.5));
        assert_eq!(a.fill(), Some(0.375));
        let b = names[&ParticipantId::parse("b").unwrap()];
        assert_eq!((b.threads, b.hit_ratio(), b.fill()), (2, None, None));
    }
}
