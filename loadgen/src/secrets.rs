//! The credentials a hold charges its sessions and watches to, read from
//! files of participants' secrets: one secret a line for sessions, `SECRET
//! JOB` a line for watches; blank lines are skipped.

use std::path::Path;

use perft_client::{ClientConfig, ClientError, Token};
use perft_model::JobId;

use crate::error::LoadgenError;

/// Whose sessions a hold registers, and whose watches of which job it opens.
#[derive(Clone, Debug, Default)]
pub struct HoldCredentials {
    pub sessions: Vec<ClientConfig>,
    pub streams: Vec<(ClientConfig, JobId)>,
}

impl HoldCredentials {
    /// Reads the session secrets and then the stream secrets, when given,
    /// each secret a credential at `coordinator`. Every line is checked
    /// before any credential is made.
    pub fn read(
        coordinator: &str,
        session_secrets: Option<&Path>,
        stream_secrets: Option<&Path>,
    ) -> Result<HoldCredentials, LoadgenError> {
        let session_lines = session_secrets.map(lines).transpose()?.unwrap_or_default();
        let stream_lines = stream_secrets.map(lines).transpose()?.unwrap_or_default();
        if stream_lines.iter().any(|words| words.len() != 2) {
            return Err(LoadgenError::StreamLine);
        }
        let sessions = session_lines
            .iter()
            .map(|words| credential(coordinator, &words[0]))
            .collect::<Result<_, _>>()?;
        let streams = stream_lines
            .iter()
            .map(|words| {
                let config = credential(coordinator, &words[0])?;
                Ok((config, JobId::parse(&words[1]).map_err(LoadgenError::JobId)?))
            })
            .collect::<Result<_, LoadgenError>>()?;
        Ok(HoldCredentials { sessions, streams })
    }
}

/// The non-empty lines of `path`, split on white space.
fn lines(path: &Path) -> Result<Vec<Vec<String>>, LoadgenError> {
    let text = std::fs::read_to_string(path).map_err(|source| LoadgenError::Secrets {
        path: path.to_owned(),
        source,
    })?;
    Ok(text
        .lines()
        .map(|l| l.split_whitespace().map(str::to_owned).collect::<Vec<_>>())
        .filter(|words| !words.is_empty())
        .collect())
}

/// The coordinator at `url`, called with `secret`; a secret that is no
/// token is the caller's to fix, as a bad token of any call is.
fn credential(url: &str, secret: &str) -> Result<ClientConfig, LoadgenError> {
    Ok(ClientConfig {
        url: url.to_owned(),
        token: Some(Token::new(secret).map_err(ClientError::from)?),
        tls_ca: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, text: &str) -> std::path::PathBuf {
        let path = std::env::temp_dir().join(format!("perft-loadgen-{}-{name}", std::process::id()));
        std::fs::write(&path, text).unwrap();
        path
    }

    #[test]
    fn secrets_are_read_a_line_each_and_bad_lines_refused() {
        let url = "http://127.0.0.1:1";
        let sessions = file("sessions", "s1\n\n  s2  \n");
        let streams = file("streams", "t1 job-1\n");
        let read = HoldCredentials::read(url, Some(&sessions), Some(&streams)).unwrap();
        assert_eq!(read.sessions.len(), 2);
        assert_eq!(read.streams[0].1.as_str(), "job-1");
        assert!(read.sessions.iter().all(|c| c.url == url && c.token.is_some()));

        let bad = file("bad-streams", "t1\n");
        let refused = HoldCredentials::read(url, None, Some(&bad)).unwrap_err();
        assert!(matches!(refused, LoadgenError::StreamLine) && refused.is_bad_secrets());
        let missing = HoldCredentials::read(url, Some(&sessions.with_extension("none")), None).unwrap_err();
        assert!(missing.is_bad_secrets() && missing.to_string().starts_with("cannot read '"));
        for path in [sessions, streams, bad] {
            std::fs::remove_file(path).unwrap();
        }
    }
}
