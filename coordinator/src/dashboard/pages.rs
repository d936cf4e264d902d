//! The embedded pages, script and styles. The pages are shells: the
//! script fills them from the JSON API and polls it once a second.

use std::sync::Arc;

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::{Dash, api, refuse, source};

const INDEX: &str = include_str!("assets/index.html");
const JOB: &str = include_str!("assets/job.html");
const WORKERS: &str = include_str!("assets/workers.html");
const PARTICIPANTS: &str = include_str!("assets/participants.html");
const SCRIPT: &str = include_str!("assets/dashboard.js");
const STYLE: &str = include_str!("assets/dashboard.css");

fn html(body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], body).into_response()
}

/// `/`: the job list.
pub(super) async fn index() -> Response {
    html(INDEX)
}

/// `/jobs/{id}`: one job; 400 for a malformed id, 404 for an unknown one.
pub(super) async fn job(State(dash): State<Arc<Dash>>, id: Result<Path<String>, PathRejection>) -> Response {
    let id = match api::checked_id(id) {
        Ok(id) => id,
        Err(refused) => return *refused,
    };
    if !source::job_exists(&dash.coordinator, &id).await {
        return refuse(StatusCode::NOT_FOUND, &format!("no job '{id}'"));
    }
    html(JOB)
}

/// `/workers`: the workers.
pub(super) async fn workers() -> Response {
    html(WORKERS)
}

/// `/participants`: each participant's credit, standing and budget; the
/// same door as every page (any role that may read).
pub(super) async fn participants() -> Response {
    html(PARTICIPANTS)
}

pub(super) async fn script() -> Response {
    ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], SCRIPT).into_response()
}

pub(super) async fn style() -> Response {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], STYLE).into_response()
}
