//! The embedded pages, script and styles. The pages are shells, each its
//! `<main>` in one shared frame: the script fills them from the JSON API
//! and polls it once a second.

use std::sync::{Arc, OnceLock};

use axum::extract::rejection::PathRejection;
use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::{Dash, api, refuse, source};

const FRAME: &str = include_str!("assets/page.html");
const SCRIPT: &str = include_str!("assets/dashboard.js");
const STYLE: &str = include_str!("assets/dashboard.css");

/// The navigation's links, in order: where each goes and its label.
const NAV: [(&str, &str); 3] = [
    ("/", "Jobs"),
    ("/workers", "Workers"),
    ("/participants", "Participants"),
];

/// One page: the shared frame (head, header, navigation) around its own
/// `<main>`, put together at its first request.
struct Page {
    /// The page's name in the title, and its `data-page`, which tells the
    /// script what to fill.
    name: &'static str,
    /// The navigation link marked as the current page, if one is.
    current: Option<&'static str>,
    /// The inside of its `<main>` element.
    main: &'static str,
    rendered: OnceLock<String>,
}

impl Page {
    const fn new(name: &'static str, current: Option<&'static str>, main: &'static str) -> Page {
        Page {
            name,
            current,
            main,
            rendered: OnceLock::new(),
        }
    }

    fn render(&self) -> String {
        let nav: String = NAV
            .iter()
            .map(|&(href, label)| {
                let current = if self.current == Some(href) {
                    r#" aria-current="page""#
                } else {
                    ""
                };
                format!(r#"<a href="{href}"{current}>{label}</a>"#)
            })
            .collect();
        FRAME
            .replace("{title}", self.name)
            .replace("{page}", self.name)
            .replace("{nav}", &nav)
            .replace("{main}", self.main)
    }

    fn html(&'static self) -> &'static str {
        self.rendered.get_or_init(|| self.render())
    }

    fn response(&'static self) -> Response {
        ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], self.html()).into_response()
    }
}

static INDEX: Page = Page::new("jobs", Some("/"), include_str!("assets/index.main.html"));
static JOB: Page = Page::new("job", None, include_str!("assets/job.main.html"));
static WORKERS: Page = Page::new(
    "workers",
    Some("/workers"),
    include_str!("assets/workers.main.html"),
);
static PARTICIPANTS: Page = Page::new(
    "participants",
    Some("/participants"),
    include_str!("assets/participants.main.html"),
);

/// `/`: the job list.
pub(super) async fn index() -> Response {
    INDEX.response()
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
    JOB.response()
}

/// `/workers`: the workers.
pub(super) async fn workers() -> Response {
    WORKERS.response()
}

/// `/participants`: each participant's credit, standing and budget; the
/// same door as every page (any role that may read).
pub(super) async fn participants() -> Response {
    PARTICIPANTS.response()
}

pub(super) async fn script() -> Response {
    ([(header::CONTENT_TYPE, "text/javascript; charset=utf-8")], SCRIPT).into_response()
}

pub(super) async fn style() -> Response {
    ([(header::CONTENT_TYPE, "text/css; charset=utf-8")], STYLE).into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_page_is_the_frame_around_its_main_with_its_link_marked() {
        for (page, name, current) in [
            (&INDEX, "jobs", Some("Jobs")),
            (&JOB, "job", None),
            (&WORKERS, "workers", Some("Workers")),
            (&PARTICIPANTS, "participants", Some("Participants")),
        ] {
            let page = page.html();
            assert!(page.starts_with("<!doctype html>\n"), "{name}");
            assert!(
                page.contains(&format!("<title>Deep Perft: {name}</title>")),
                "{name}"
            );
            assert!(page.contains(&format!(r#"<body data-page="{name}">"#)), "{name}");
            assert!(!page.contains('{'), "{name}: a placeholder left");
            assert_eq!(
                page.matches("aria-current").count(),
                usize::from(current.is_some()),
                "{name}"
            );
            if let Some(label) = current {
                assert!(
                    page.contains(&format!(r#" aria-current="page">{label}</a>"#)),
                    "{name}"
                );
            }
            assert!(page.ends_with("</main>\n</body>\n</html>\n"), "{name}");
        }
    }
}
