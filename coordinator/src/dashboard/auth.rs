//! The dashboard's door: unless the coordinator is open (no token, no
//! participant ever added), nothing answers without a credential. A caller shows it as `Authorization: Bearer TOKEN`, or as `?token=`
//! on a first visit, which is swapped for a random session key in an
//! HttpOnly, SameSite=Lax cookie (the token itself is never stored in
//! the browser) and a redirect to the same URL without the token.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use cookie::{Cookie, SameSite};

use super::{Dash, refuse};
use crate::connections::Arrival;
use perft_model::Action;
use perft_model::ParticipantId;

/// The session cookie's name.
pub(super) const COOKIE: &str = "perft_session";
/// Most live sessions in all (each participant holds at most its
/// budget's `dashboard_sessions`): past it a login is refused.
const MAX_SESSIONS: usize = 65_536;
/// A session lasts this long.
const SESSION_LIFE: Duration = Duration::from_secs(7 * 24 * 3600);

/// Live session keys, stored as their BLAKE3 hashes (a lookup by hash
/// tells a timing observer nothing about the keys themselves), each with
/// the participant that opened it: a revoked participant's sessions end.
#[derive(Debug, Default)]
pub(crate) struct Sessions(Mutex<HashMap<[u8; 32], (Instant, ParticipantId)>>);

impl Sessions {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<[u8; 32], (Instant, ParticipantId)>> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// A new session's key (64 hex digits of OS randomness) for `who`,
    /// who may hold `budget` sessions: past it, its own oldest ends (never
    /// another's). With every place taken, the login is refused.
    fn open(&self, who: ParticipantId, budget: u64) -> Result<String, &'static str> {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).map_err(|_| "no randomness for a session key")?;
        let text: String = key.iter().map(|b| format!("{b:02x}")).collect();
        let mut sessions = self.lock();
        let now = Instant::now();
        sessions.retain(|_, (opened, _)| now.duration_since(*opened) < SESSION_LIFE);
        let mut own: Vec<([u8; 32], Instant)> = sessions
            .iter()
            .filter(|(_, (_, owner))| *owner == who)
            .map(|(k, (t, _))| (*k, *t))
            .collect();
        own.sort_by_key(|&(_, t)| t);
        let over = (own.len() as u64 + 1).saturating_sub(budget.max(1)) as usize;
        for (oldest, _) in own.into_iter().take(over) {
            sessions.remove(&oldest);
        }
        if sessions.len() >= MAX_SESSIONS {
            return Err(
                "the dashboard holds as many sessions as it may: log in with an Authorization header, or later",
            );
        }
        sessions.insert(*blake3::hash(text.as_bytes()).as_bytes(), (now, who));
        Ok(text)
    }

    /// Live sessions of every participant holding one: one pass over the
    /// sessions, for a metrics pass over every participant.
    pub(crate) fn by_owner(&self) -> HashMap<ParticipantId, u64> {
        let now = Instant::now();
        let mut counts = HashMap::new();
        for (opened, owner) in self.lock().values() {
            if now.duration_since(*opened) < SESSION_LIFE {
                *counts.entry(owner.clone()).or_default() += 1;
            }
        }
        counts
    }

    /// The participant of a live session key.
    fn valid(&self, key: &str) -> Option<ParticipantId> {
        let hash = *blake3::hash(key.as_bytes()).as_bytes();
        self.lock()
            .get(&hash)
            .filter(|(opened, _)| opened.elapsed() < SESSION_LIFE)
            .map(|(_, who)| who.clone())
    }
}

const NEEDS_TOKEN: &str = "this dashboard needs a credential (the coordinator's token or a participant's secret): send 'Authorization: Bearer SECRET', or open the page once with ?token=SECRET";

/// Lets a request through when the coordinator is open (the rule of
/// [`crate::participants::Participants::is_open`]: no token, no participant
/// ever added), or the request carries a credential that may read (header
/// or session cookie); trades `?token=` for a session cookie; refuses
/// everything else with 401. Every request is checked, the pages' polls
/// too: a revoked participant's live page stops at its next poll.
pub(super) async fn guard(State(dash): State<Arc<Dash>>, request: Request, next: Next) -> Response {
    let arrival = request.extensions().get::<Arrival>().cloned();
    if let Some(arrival) = &arrival {
        arrival.state.mark_requested();
    }
    match admit(&dash, &request) {
        None => {
            // A credential let it in (or the coordinator is open, and
            // everyone is its admin): its connection is proven.
            if let Some(arrival) = arrival {
                arrival.gate.prove(&arrival.state);
            }
            next.run(request).await
        }
        Some(answer) => match answer.extensions().get::<Unauthorized>() {
            Some(Unauthorized(why)) if wants_page(&request) => sign_in_page(why),
            _ => answer,
        },
    }
}

/// Why a request was refused for its credential, kept on the plain
/// answer so a browser can be shown a page instead.
#[derive(Clone, Debug)]
struct Unauthorized(String);

/// A browser asking for a page (not the JSON API, not an asset): it gets
/// HTML it can act on, where scripts and tools get the one plain line.
fn wants_page(request: &Request) -> bool {
    let path = request.uri().path();
    let accepts_html = request
        .headers()
        .get_all(header::ACCEPT)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .any(|accept| accept.contains("text/html"));
    accepts_html && !path.starts_with("/api/") && !path.starts_with("/assets/")
}

/// 401 as a page: the reason, and a form that opens the page again with
/// `?token=` (traded at once for a session cookie, as a link would be).
fn sign_in_page(why: &str) -> Response {
    let page = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>Deep Perft: sign in</title></head>\n<body>\n<h1>This dashboard needs a credential</h1>\n<p>{}</p>\n<p>Give the coordinator's token or a participant's secret (from <code>perft participant add</code>) whose role may read:</p>\n<form method=\"get\"><input type=\"password\" name=\"token\" autocomplete=\"off\" aria-label=\"secret\" required> <button type=\"submit\">Open</button></form>\n</body></html>\n",
        html_escape::encode_safe(why)
    );
    let mut response = (
        StatusCode::UNAUTHORIZED,
        [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
        page,
    )
        .into_response();
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    response
}

/// `None` to let the request through, else the answer in its place. A
/// credential (the shared token or a participant's secret whose role may
/// read) is checked exactly as the gRPC services check it.
fn admit(dash: &Dash, request: &Request) -> Option<Response> {
    let participants = super::source::participants(&dash.coordinator);
    if participants.is_open() {
        return None;
    }
    let may_read = |header: &[u8]| match participants.authenticate(Some(header)) {
        Ok(caller) => caller
            .may(Action::Read)
            .map(|()| caller.participant)
            .map_err(|status| Box::new(unauthorized(status.message()))),
        Err(_) => Err(Box::new(unauthorized("unknown or revoked credential"))),
    };
    if let Some(given) = request.headers().get(header::AUTHORIZATION) {
        return may_read(given.as_bytes()).err().map(|refused| *refused);
    }
    let query = request.uri().query().unwrap_or_default();
    let mut given_token = None;
    let mut rest = form_urlencoded::Serializer::new(String::new());
    for (name, value) in form_urlencoded::parse(query.as_bytes()) {
        if name == "token" {
            given_token = Some(value.into_owned());
        } else {
            rest.append_pair(&name, &value);
        }
    }
    if let Some(given) = given_token {
        let who = match may_read(format!("Bearer {given}").as_bytes()) {
            Ok(who) => who,
            Err(refused) => return Some(*refused),
        };
        let budget = dash.coordinator.admission.budget(&who).dashboard_sessions;
        let key = match dash.coordinator.dashboard_sessions.open(who, budget) {
            Ok(key) => key,
            Err(why) => return Some(refuse(StatusCode::SERVICE_UNAVAILABLE, why)),
        };
        return Some(swap_for_cookie(
            request.uri().path(),
            &rest.finish(),
            key,
            dash.tls,
        ));
    }
    let has_session = request
        .headers()
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(Cookie::split_parse)
        .filter_map(Result::ok)
        .filter(|c| c.name() == COOKIE)
        .filter_map(|c| dash.coordinator.dashboard_sessions.valid(c.value()))
        .any(|who| participants.may(&who, Action::Read));
    (!has_session).then(|| unauthorized(NEEDS_TOKEN))
}

/// 303 to the URL without its token, setting the session cookie.
fn swap_for_cookie(path: &str, rest: &str, key: String, tls: bool) -> Response {
    // A path of "//host" (or "/\\host", which browsers read alike) would
    // send the browser to another site.
    let path = if path.starts_with('/') && !path.starts_with("//") && !path.contains('\\') {
        path
    } else {
        "/"
    };
    let location = if rest.is_empty() {
        path.to_owned()
    } else {
        format!("{path}?{rest}")
    };
    let cookie = Cookie::build((COOKIE, key))
        .http_only(true)
        // Lax, not Strict: a first visit by a link from another site is a
        // cross-site redirect chain, on which browsers withhold Strict
        // cookies; the dashboard answers only GET and changes nothing.
        .same_site(SameSite::Lax)
        .secure(tls)
        .path("/")
        .max_age(cookie::time::Duration::seconds(SESSION_LIFE.as_secs() as i64))
        .build();
    let (Ok(location), Ok(cookie)) = (
        HeaderValue::from_str(&location),
        HeaderValue::from_str(&cookie.to_string()),
    ) else {
        return refuse(StatusCode::BAD_REQUEST, "the URL cannot be redirected to");
    };
    (
        StatusCode::SEE_OTHER,
        [(header::LOCATION, location), (header::SET_COOKIE, cookie)],
    )
        .into_response()
}

fn unauthorized(why: &str) -> Response {
    let mut response = refuse(StatusCode::UNAUTHORIZED, why);
    response.extensions_mut().insert(Unauthorized(why.to_owned()));
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reason shown on the sign-in page is text, never markup: a
    /// refusal quoting hostile input cannot inject a script.
    #[tokio::test]
    async fn the_sign_in_page_escapes_its_reason() {
        let page = sign_in_page("<script>alert('x')</script> & \"more\"");
        assert_eq!(page.status(), StatusCode::UNAUTHORIZED);
        let body = axum::body::to_bytes(page.into_body(), 1 << 16).await.unwrap();
        let body = String::from_utf8(body.to_vec()).unwrap();
        assert!(!body.contains("<script>"), "{body}");
        assert!(
            body.contains("&lt;script&gt;alert(&#x27;x&#x27;)&lt;&#x2F;script&gt; &amp; &quot;more&quot;"),
            "{body}"
        );
    }
}
