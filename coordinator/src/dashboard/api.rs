//! The dashboard's JSON (`/api/...`), which its pages poll once a second;
//! documented in docs/dashboard-api.md. Counts are decimal strings: they
//! are u128 and JavaScript numbers are not.

use std::sync::Arc;

use axum::Json;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use perft_core::Leaves;

use perft_core::published::Published;
use perft_model::Count;
use serde::{Deserialize, Serialize};

use super::source::{self, ReadError};
use super::{Dash, refuse};
use crate::jobs::{JobSpec, JobView};
use perft_model::JobState;
use perft_model::{JobId, SessionId};

/// Largest page of jobs, and the default one.
const MAX_PAGE: usize = 1000;
const DEFAULT_PAGE: usize = 100;

#[derive(Debug, Deserialize)]
pub(super) struct PageQuery {
    start: Option<usize>,
    limit: Option<usize>,
}

/// A count and, for games that report it, its game-over part; in a
/// statistics job, its leaves by kind in the game's column order.
#[derive(Debug, Serialize)]
struct CountJson {
    leaves: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    higher: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    kinds: Vec<KindJson>,
}

/// One kind of leaves and how many there are.
#[derive(Debug, Serialize)]
struct KindJson {
    kind: &'static str,
    count: String,
}

fn leaves_json(leaves: Leaves, reports_higher: bool) -> CountJson {
    CountJson {
        leaves: leaves.leaves.to_string(),
        higher: reports_higher.then(|| leaves.higher.to_string()),
        kinds: Vec::new(),
    }
}

/// A count with its kinds named after `names` (the game's kinds).
fn count_json(count: &Count, reports_higher: bool, names: &[&'static str]) -> CountJson {
    CountJson {
        kinds: names
            .iter()
            .zip(count.kinds())
            .map(|(&kind, n)| KindJson {
                kind,
                count: n.to_string(),
            })
            .collect(),
        ..leaves_json(count.leaves, reports_higher)
    }
}

#[derive(Debug, Serialize)]
pub(super) struct JobJson {
    id: String,
    game: &'static str,
    /// The counting convention (`bik` or `oeis`); null for games without
    /// a choice.
    convention: Option<&'static str>,
    position: String,
    depth: u32,
    split_depth: u32,
    verify: bool,
    /// When it was submitted; null for a job from a journal older than
    /// schema 10, which did not record it.
    submitted_unix_ms: Option<u64>,
    state: &'static str,
    error: Option<String>,
    units_total: u64,
    units_done: u64,
    units_queued: u64,
    units_leased: u64,
    units_released: u64,
    leaves_done: String,
    work_done: f64,
    seconds: f64,
    leaves_per_second: f64,
    eta_seconds: Option<f64>,
    disagreements: u64,
}

fn job_json(dash: &Dash, view: &JobView) -> JobJson {
    let rate = dash.rates.job_rate(view);
    JobJson {
        id: view.id.to_string(),
        game: view.spec.game.name(),
        convention: view.spec.convention.map(perft_core::Convention::name),
        position: view.spec.position.clone(),
        depth: view.spec.depth,
        split_depth: view.split_depth,
        verify: view.spec.verify,
        submitted_unix_ms: view.submitted_ms,
        state: view.state.name(),
        error: view.error.clone(),
        units_total: view.units_total,
        units_done: view.units_done,
        units_queued: view.units_queued,
        units_leased: view.units_leased,
        units_released: view.units_released,
        leaves_done: view.leaves_done.to_string(),
        work_done: view.work_done,
        seconds: view.seconds,
        leaves_per_second: rate.leaves_per_second,
        eta_seconds: rate.eta_seconds,
        disagreements: view.disagreements,
    }
}

#[derive(Debug, Serialize)]
struct JobsPage {
    jobs: Vec<JobJson>,
    /// `start` of the next page, if there is one.
    next: Option<usize>,
}

fn read_error(error: ReadError) -> Response {
    match error {
        ReadError::NotFound(e) => refuse(StatusCode::NOT_FOUND, &e.to_string()),
        ReadError::Journal(why) => refuse(StatusCode::SERVICE_UNAVAILABLE, &why),
    }
}

/// `GET /api/jobs?start=N&limit=M`: jobs in submission order.
pub(super) async fn jobs(
    State(dash): State<Arc<Dash>>,
    query: Result<Query<PageQuery>, QueryRejection>,
) -> Response {
    let Ok(Query(page)) = query else {
        return refuse(
            StatusCode::BAD_REQUEST,
            "bad query: 'start' and 'limit' must be whole numbers",
        );
    };
    let start = page.start.unwrap_or(0);
    let limit = page.limit.unwrap_or(DEFAULT_PAGE).clamp(1, MAX_PAGE);
    match source::jobs_page(&dash.coordinator, start, limit).await {
        Ok((views, next)) => Json(JobsPage {
            jobs: views.iter().map(|v| job_json(&dash, v)).collect(),
            next,
        })
        .into_response(),
        Err(e) => read_error(e),
    }
}

#[derive(Debug, Serialize)]
struct DivideJson {
    #[serde(rename = "move")]
    first_move: String,
    #[serde(flatten)]
    count: CountJson,
    units_total: u64,
    units_done: u64,
    /// The published count of this move, where one was published.
    published: Option<String>,
    /// Whether the finished line equals it (`null` until both exist).
    matches: Option<bool>,
}

#[derive(Debug, Serialize)]
struct VoteJson {
    worker: String,
    leaves: String,
}

#[derive(Debug, Serialize)]
struct DisagreementJson {
    unit_id: u64,
    position: String,
    votes: Vec<VoteJson>,
    decided: Option<String>,
}

#[derive(Debug, Serialize)]
struct ServingJson {
    id: String,
    participant: Option<String>,
    name: Option<String>,
    units: u64,
}

#[derive(Debug, Serialize)]
struct JobDetailJson {
    job: JobJson,
    divide: Vec<DivideJson>,
    total: CountJson,
    published_total: Option<CountJson>,
    total_matches: Option<bool>,
    disagreements: Vec<DisagreementJson>,
    more_disagreements: bool,
    workers: Vec<ServingJson>,
    /// Leaves/s over the job's life: [unix ms, leaves/s] pairs.
    chart: Vec<(u64, f64)>,
}

/// What was published for the job in its convention, when its root is
/// its game's start.
fn published_for(spec: &JobSpec) -> Option<Published> {
    let start = spec.game.fns().pack_text("").ok()?;
    let root = spec.game.fns().pack_text(&spec.position).ok()?;
    (root == start)
        .then(|| {
            spec.game
                .fns_in(spec.convention)
                .ok()
                .and_then(|fns| fns.published(spec.depth))
        })
        .flatten()
}

/// A job id as this coordinator makes them: 1 to 64 of `[A-Za-z0-9_-]`;
/// else the 400 answer.
pub(super) fn checked_id(id: Result<Path<String>, PathRejection>) -> Result<JobId, Box<Response>> {
    let bad = |shown: &str| {
        Box::new(refuse(
            StatusCode::BAD_REQUEST,
            &format!(
                "'{}' is not a job id: ids are 1 to 64 letters, digits, '-' or '_'",
                perft_core::echoed(shown)
            ),
        ))
    };
    let Ok(Path(id)) = id else {
        return Err(bad("(not UTF-8)"));
    };
    let well_formed = !id.is_empty()
        && id.len() <= 64
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    match JobId::parse(&id) {
        Ok(job) if well_formed => Ok(job),
        _ => Err(bad(&id)),
    }
}

/// `GET /api/jobs/{id}`: the job, its divide table so far, its first
/// disagreements, the workers holding its units and its rate chart.
pub(super) async fn job(State(dash): State<Arc<Dash>>, id: Result<Path<String>, PathRejection>) -> Response {
    let id = match checked_id(id) {
        Ok(id) => id,
        Err(refused) => return *refused,
    };
    let detail = match source::job_detail(&dash.coordinator, &id).await {
        Ok(detail) => detail,
        Err(e) => return read_error(e),
    };
    let view = &detail.divide.job;
    let higher = view.spec.game.reports_higher();
    let names = view.spec.game.fns().stats_kinds();
    let published = published_for(&view.spec);
    let published_line = |mv: &str| {
        published
            .as_ref()?
            .divide
            .as_ref()?
            .iter()
            .find(|(m, _)| m == mv)
            .map(|(_, n)| *n)
    };
    let divide = detail
        .divide
        .moves
        .iter()
        .map(|line| {
            let expected = published_line(&line.first_move);
            let finished = line.units_done == line.units_total;
            DivideJson {
                first_move: line.first_move.clone(),
                count: count_json(&line.count, higher, names),
                units_total: line.units_total,
                units_done: line.units_done,
                published: expected.map(|n| n.to_string()),
                matches: expected
                    .filter(|_| finished)
                    .map(|n| n == line.count.leaves.leaves),
            }
        })
        .collect();
    let done = view.state == JobState::Done;
    let body = JobDetailJson {
        job: job_json(&dash, view),
        divide,
        total: count_json(&detail.divide.total, higher, names),
        published_total: published.as_ref().map(|p| leaves_json(p.total, higher)),
        total_matches: published
            .as_ref()
            .filter(|_| done)
            .map(|p| p.total == detail.divide.total.leaves),
        disagreements: detail
            .disagreements
            .iter()
            .map(|d| DisagreementJson {
                unit_id: d.unit_id.0,
                position: d.position.clone(),
                votes: d
                    .votes
                    .iter()
                    .map(|v| VoteJson {
                        worker: v.worker.clone(),
                        leaves: v.count.leaves.leaves.to_string(),
                    })
                    .collect(),
                decided: d.decided.map(|c| c.leaves.leaves.to_string()),
            })
            .collect(),
        more_disagreements: detail.more_disagreements,
        workers: detail
            .serving
            .into_iter()
            .map(|s| ServingJson {
                id: short_session(&s.session),
                participant: s.participant.map(|p| p.to_string()),
                name: s.name.map(|n| n.to_string()),
                units: s.units,
            })
            .collect(),
        chart: dash.rates.chart(&id),
    };
    Json(body).into_response()
}

/// `GET /api/jobs/{id}/certificate`: a done job's certificate file, as a
/// download; 409 for a job that is not done.
pub(super) async fn certificate(
    State(dash): State<Arc<Dash>>,
    id: Result<Path<String>, PathRejection>,
) -> Response {
    use crate::certify::CertifyError;
    use crate::journal::FinishedError;
    let id = match checked_id(id) {
        Ok(id) => id,
        Err(refused) => return *refused,
    };
    match crate::certify::served(&dash.coordinator, id.clone()).await {
        Ok(bytes) => (
            [
                (header::CONTENT_TYPE, "application/octet-stream".to_owned()),
                (
                    header::CONTENT_DISPOSITION,
                    format!("attachment; filename=\"job-{id}.cert\""),
                ),
            ],
            bytes,
        )
            .into_response(),
        Err(e) => {
            let status = match &e {
                CertifyError::Finished(FinishedError::NotFound(_)) => StatusCode::NOT_FOUND,
                CertifyError::Finished(FinishedError::NotDone { .. }) | CertifyError::UnitList { .. } => {
                    StatusCode::CONFLICT
                }
                CertifyError::Finished(FinishedError::Journal(_)) => StatusCode::SERVICE_UNAVAILABLE,
                _ => StatusCode::INTERNAL_SERVER_ERROR,
            };
            refuse(status, &e.to_string())
        }
    }
}

/// A session id as the dashboard shows it: its first 8 characters, never
/// the whole (a session id is no credential, but nobody needs it whole).
pub(super) fn short_session(session: &SessionId) -> String {
    session.to_string()
}
