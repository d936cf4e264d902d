//! Who counts, as JSON: the worker sessions (`/api/workers`) and the
//! participants with their credit and budget (`/api/participants`);
//! documented in docs/dashboard-api.md. A worker's name is only a label:
//! its participant is whom verification and credit count.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use super::api::short_session;
use super::{Dash, refuse, source};

#[derive(Debug, Serialize)]
struct WorkerJson {
    /// The session id.
    id: String,
    /// The participant whose credential registered it (null once gone).
    participant: Option<String>,
    /// The machine's name: a label, not an identity.
    name: String,
    threads: u32,
    /// active, draining, silent (no call for two heartbeats), lost (reaped
    /// without a heartbeat) or left (reaped after draining).
    status: &'static str,
    only_job: Option<String>,
    /// Units it counted, from its heartbeat.
    units_done: u64,
    /// Leaves of the units it counted, each unit once (from its heartbeat).
    leaves_done: Option<String>,
    leaves_per_second: f64,
    table_hit_rate: Option<f64>,
    table_fill: Option<f64>,
    table_bytes: Option<u64>,
    last_seen_seconds: Option<f64>,
    gone_unix_ms: Option<u64>,
}

#[derive(Debug, Serialize)]
struct WorkersJson {
    workers: Vec<WorkerJson>,
}

/// `GET /api/workers`: registered workers, then those lost or left lately.
pub(super) async fn workers(State(dash): State<Arc<Dash>>) -> Response {
    let late = source::heartbeat_interval(&dash.coordinator) * 2;
    let mut out: Vec<WorkerJson> = source::workers(&dash.coordinator)
        .into_iter()
        .map(|w| {
            let status = if w.draining {
                "draining"
            } else if w.silent_for > late {
                "silent"
            } else {
                "active"
            };
            WorkerJson {
                leaves_per_second: dash.rates.worker_rate(&w.session),
                id: short_session(&w.session),
                participant: Some(w.participant.to_string()),
                name: w.name.to_string(),
                threads: w.threads,
                status,
                only_job: w.only_job.map(|job| job.to_string()),
                units_done: w.stats.map_or(0, |s| s.units_done),
                leaves_done: w.stats.map(|s| s.leaves_done.to_string()),
                table_hit_rate: w
                    .stats
                    .filter(|s| s.table_probes > 0)
                    .map(|s| s.table_hits as f64 / s.table_probes as f64),
                table_fill: w.stats.map(|s| s.table_fill),
                table_bytes: w.stats.map(|s| s.table_bytes),
                last_seen_seconds: Some(w.silent_for.as_secs_f64()),
                gone_unix_ms: None,
            }
        })
        .collect();
    out.extend(dash.rates.gone().into_iter().map(|g| WorkerJson {
        id: short_session(&g.session),
        participant: None,
        name: g.name.to_string(),
        threads: g.threads,
        status: if g.left { "left" } else { "lost" },
        only_job: None,
        units_done: g.units_done,
        leaves_done: None,
        leaves_per_second: 0.0,
        table_hit_rate: None,
        table_fill: None,
        table_bytes: None,
        last_seen_seconds: None,
        gone_unix_ms: Some(g.gone_ms),
    }));
    Json(WorkersJson { workers: out }).into_response()
}

#[derive(Debug, Serialize)]
struct BudgetJson {
    resource: String,
    used: u64,
    /// Null when unlimited.
    limit: Option<u64>,
    overridden: bool,
}

/// A participant as `perft participant list --format json` shows it (the
/// same field names and kinds), with its budget as lines.
#[derive(Debug, Serialize)]
struct ParticipantJson {
    name: String,
    role: &'static str,
    revoked: bool,
    /// Lost too many majority votes: leases no more.
    quarantined: bool,
    /// Let too many leases lapse lately: leases no more for now.
    suspended: bool,
    /// Counts it sent that were taken (as votes or verdicts).
    units: String,
    /// The leaves of those counts, each unit once: the work its machines
    /// did, not the weighted leaves it added to jobs.
    leaves: String,
    cpu_seconds: f64,
    /// Counts it sent that lost a majority vote, and those an admin forgave.
    lost_votes: String,
    lost_votes_forgiven: String,
    /// Leases it let lapse.
    lapses: String,
    /// Live worker sessions and their threads.
    machines: u32,
    threads: u32,
    budget: Vec<BudgetJson>,
}

#[derive(Debug, Serialize)]
struct ParticipantsJson {
    participants: Vec<ParticipantJson>,
}

/// `GET /api/participants`: every participant's credit (what its counts
/// earned), standing and budget beside what it holds now.
pub(super) async fn participants(State(dash): State<Arc<Dash>>) -> Response {
    let listed = match source::participants_with_budget(&dash.coordinator).await {
        Ok(listed) => listed,
        Err(status) => return refuse(StatusCode::SERVICE_UNAVAILABLE, status.message()),
    };
    let participants = listed
        .into_iter()
        .map(|p| ParticipantJson {
            role: perft_proto::Role::try_from(p.role)
                .ok()
                .and_then(|role| role.to_model())
                .map_or("unknown", perft_model::Role::name),
            name: p.name,
            revoked: p.revoked,
            quarantined: p.quarantined,
            suspended: p.suspended,
            units: p.units.to_string(),
            leaves: p.leaves.map_or(0, u128::from).to_string(),
            cpu_seconds: p.cpu_seconds,
            lost_votes: p.lost_votes.to_string(),
            lost_votes_forgiven: p.lost_votes_forgiven.to_string(),
            lapses: p.lapses.to_string(),
            machines: p.machines,
            threads: p.threads,
            budget: p
                .budget
                .into_iter()
                .map(|line| BudgetJson {
                    limit: (!line.unlimited).then_some(line.limit),
                    resource: line.resource,
                    used: line.used,
                    overridden: line.overridden,
                })
                .collect(),
        })
        .collect();
    Json(ParticipantsJson { participants }).into_response()
}
