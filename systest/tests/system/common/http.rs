//! HTTP(S) clients for the dashboard tests: every status is returned (no
//! error for 4xx), no redirect is followed.

use std::sync::Arc;

/// An HTTP client that shows every status (no error for 4xx) and follows
/// no redirects, so the tests see exactly what the dashboard answers.
pub fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .build()
        .into()
}

/// [`agent`] trusting only the PEM certificate `ca`.
pub fn tls_agent(ca: &[u8]) -> ureq::Agent {
    let cert = ureq::tls::Certificate::from_pem(ca).unwrap();
    let tls = ureq::tls::TlsConfig::builder()
        .root_certs(ureq::tls::RootCerts::Specific(Arc::new(vec![cert])))
        .build();
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .tls_config(tls)
        .build()
        .into()
}

/// The status, a header's value (if asked) and the body of a GET.
pub fn get(agent: &ureq::Agent, url: &str, headers: &[(&str, &str)]) -> (u16, String) {
    let mut request = agent.get(url);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let mut response = request.call().unwrap_or_else(|e| panic!("GET {url}: {e}"));
    let status = response.status().as_u16();
    (status, response.body_mut().read_to_string().unwrap())
}

pub fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// The status, the Content-Disposition header and the raw body of a GET.
pub fn get_bytes(agent: &ureq::Agent, url: &str, headers: &[(&str, &str)]) -> (u16, String, Vec<u8>) {
    let mut request = agent.get(url);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let mut response = request.call().unwrap_or_else(|e| panic!("GET {url}: {e}"));
    let status = response.status().as_u16();
    let disposition = response
        .headers()
        .get("content-disposition")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let body = response
        .body_mut()
        .with_config()
        .limit(1 << 30)
        .read_to_vec()
        .unwrap();
    (status, disposition, body)
}
