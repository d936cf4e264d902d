//! Errors of the `perft` binary: one line on stderr and an exit code, never
//! a panic.

use std::fmt;
use std::io::Write;
use std::process::ExitCode;

/// Writes `error: MESSAGE` to stderr; nothing is left to tell if that fails.
fn error_line(message: fmt::Arguments<'_>) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "error: {message}");
}

/// What caused an error, kept for whoever matches on it (`perft`'s own
/// words are the message; this is the typed error beneath them).
pub type Cause = Box<dyn std::error::Error + Send + Sync>;

/// What went wrong, and so which exit code the process ends with. Each
/// variant keeps the error it came from as its `source`, where there was
/// one; the exit code is chosen in one place, [`CliError::exit_code`].
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Bad input from the user: exit code 2.
    #[error("{message}")]
    Usage {
        message: String,
        #[source]
        cause: Option<Cause>,
    },
    /// Anything else (I/O on stdout, a mismatch, ...): exit code 1.
    #[error("{message}")]
    Failed {
        message: String,
        #[source]
        cause: Option<Cause>,
    },
    /// A call to the coordinator failed: exit code 2 when the request was
    /// the user's to fix, else 1; the cause is kept.
    #[error("{}", client_message(.0))]
    Client(#[source] perft_client::ClientError),
    /// A credential or CA file that cannot be used: exit code 2.
    #[error(transparent)]
    Credential(#[from] perft_client::CredentialError),
}

impl CliError {
    /// The user's to fix (exit code 2), with nothing beneath `message`.
    pub fn usage(message: impl Into<String>) -> CliError {
        CliError::Usage {
            message: message.into(),
            cause: None,
        }
    }

    /// Failed (exit code 1), with nothing beneath `message`.
    pub fn failed(message: impl Into<String>) -> CliError {
        CliError::Failed {
            message: message.into(),
            cause: None,
        }
    }

    /// `cause`, the user's to fix (exit code 2), told as `message`.
    pub fn usage_by(message: impl Into<String>, cause: impl Into<Cause>) -> CliError {
        CliError::Usage {
            message: message.into(),
            cause: Some(cause.into()),
        }
    }

    /// `cause`, a failure (exit code 1), told as `message`.
    pub fn failed_by(message: impl Into<String>, cause: impl Into<Cause>) -> CliError {
        CliError::Failed {
            message: message.into(),
            cause: Some(cause.into()),
        }
    }

    /// `cause`, the user's to fix (exit code 2), in its own words.
    pub fn usage_from<E: std::error::Error + Send + Sync + 'static>(cause: E) -> CliError {
        CliError::usage_by(cause.to_string(), cause)
    }

    /// `cause`, a failure (exit code 1), in its own words.
    pub fn failed_from<E: std::error::Error + Send + Sync + 'static>(cause: E) -> CliError {
        CliError::failed_by(cause.to_string(), cause)
    }

    /// Prints the one-line message and picks the exit code.
    pub fn report(&self) -> ExitCode {
        error_line(format_args!("{self}"));
        ExitCode::from(self.exit_code())
    }

    /// `err` in its own words: the user's to fix (exit code 2) when
    /// `users_fault`, else a failure (exit code 1).
    fn by_fault<E: std::error::Error + Send + Sync + 'static>(users_fault: bool, err: E) -> CliError {
        if users_fault {
            CliError::usage_from(err)
        } else {
            CliError::failed_from(err)
        }
    }

    /// 2 for what the user can fix by asking differently, 1 for the rest.
    pub fn exit_code(&self) -> u8 {
        match self {
            CliError::Usage { .. } | CliError::Credential(_) => 2,
            CliError::Client(e) if e.is_request() || e.untrusted_certificate().is_some() => 2,
            CliError::Failed { .. } | CliError::Client(_) => 1,
        }
    }
}

impl From<perft_client::ClientError> for CliError {
    fn from(err: perft_client::ClientError) -> CliError {
        CliError::Client(err)
    }
}

/// A failed call in the words users have always read: a refused request
/// as the coordinator said it, other statuses with their code, and a
/// transport failure (TLS above all) with its causes.
fn client_message(err: &perft_client::ClientError) -> String {
    use perft_client::ClientError;
    use tonic::Code;
    if let Some(why) = err.untrusted_certificate() {
        return format!(
            "the coordinator showed a certificate the --tls-ca file does not vouch for ({why}): check that --tls-ca is that coordinator's CA certificate and that the host in --coordinator (or PERFT_COORDINATOR) is the name its certificate was issued for"
        );
    }
    match err {
        err if err.is_not_grpc() => "the server broke the connection instead of answering: it does not speak gRPC. Is the coordinator's address (--coordinator or PERFT_COORDINATOR) the dashboard's or the metrics' port? Use the address `perft serve` printed after 'listening on'".to_owned(),
        ClientError::Status(status) => {
            let message = if matches!(status.code(), Code::Unavailable | Code::Unknown) {
                chain(status)
            } else {
                status.message().replace('\n', " ")
            };
            match status.code() {
                _ if err.is_request() => message,
                Code::Unavailable => format!("coordinator unavailable: {message}"),
                code => format!("{code:?}: {message}"),
            }
        }
        err if err.is_request() => err.to_string(),
        err => chain(err),
    }
}

/// A load's failed call keeps its cause and exit code; bad files of
/// secrets are the user's to fix (a bad line names its option); anything
/// else failed (exit code 1).
impl From<perft_loadgen::LoadgenError> for CliError {
    fn from(err: perft_loadgen::LoadgenError) -> CliError {
        use perft_loadgen::LoadgenError;
        match err {
            LoadgenError::Client(e) => CliError::Client(e),
            e @ LoadgenError::StreamLine => CliError::usage_by(format!("--stream-secrets {e}"), e),
            e => CliError::by_fault(e.is_bad_secrets(), e),
        }
    }
}

/// A certificate file given that cannot be read or is none is the user's
/// to fix; one that cannot be written failed.
impl From<perft_certificate::file::FileError> for CliError {
    fn from(err: perft_certificate::file::FileError) -> CliError {
        CliError::by_fault(err.is_bad_file(), err)
    }
}

/// A journal opened by `perft serve`: damaged, or one that lost work, is a
/// failure (exit 1), not a mistake in the command line (in use, of another
/// release, out of reach: exit 2).
impl From<perft_coordinator::journal::JournalError> for CliError {
    fn from(err: perft_coordinator::journal::JournalError) -> CliError {
        CliError::by_fault(!err.is_damage(), err)
    }
}

/// A stopped coordinator's journal read offline: the user's to fix
/// (exit 2) unless the journal is damaged or unreadable.
impl From<perft_coordinator::offline::OfflineError> for CliError {
    fn from(err: perft_coordinator::offline::OfflineError) -> CliError {
        CliError::by_fault(err.is_request(), err)
    }
}

/// `perft serve`'s TLS files that cannot be read or cannot serve are the
/// user's to fix.
impl From<perft_coordinator::options::OptionsError> for CliError {
    fn from(err: perft_coordinator::options::OptionsError) -> CliError {
        CliError::usage_from(err)
    }
}

/// An address (gRPC, dashboard, metrics) that cannot be served is the
/// user's to fix.
impl From<perft_coordinator::ListenError> for CliError {
    fn from(err: perft_coordinator::ListenError) -> CliError {
        CliError::by_fault(err.is_request(), err)
    }
}

/// A metrics address that cannot be served is the user's to fix.
impl From<perft_worker::MetricsError> for CliError {
    fn from(err: perft_worker::MetricsError) -> CliError {
        CliError::usage_from(err)
    }
}

/// A worker name (given, or the host's) that cannot be registered is the
/// user's to fix.
impl From<perft_worker::BadWorkerName> for CliError {
    fn from(err: perft_worker::BadWorkerName) -> CliError {
        CliError::usage_from(err)
    }
}

/// A worker stopped on its own: a bad address is the user's to fix, a
/// refusal by the coordinator failed.
impl From<perft_worker::WorkerError> for CliError {
    fn from(err: perft_worker::WorkerError) -> CliError {
        let bad_address = matches!(err, perft_worker::WorkerError::BadAddress(..));
        CliError::by_fault(bad_address, err)
    }
}

/// An engine comparison's failure in the words `perft check` has always
/// used: a command text that is none is the user's to fix (it names
/// `--engine`), the rest failed.
impl From<perft_compare::CompareError> for CliError {
    fn from(err: perft_compare::CompareError) -> CliError {
        match err {
            e @ perft_compare::CompareError::NoCommandLine { .. } => {
                CliError::usage_by(format!("--engine {e}"), e)
            }
            e => CliError::failed_from(e),
        }
    }
}

/// A local count's failure in the words `perft run`, `bench`, `audit` and
/// `suite` have always used: what asking differently avoids is the user's
/// to fix (a too deep split names `--stats`), the rest failed.
impl From<perft_local::LocalError> for CliError {
    fn from(err: perft_local::LocalError) -> CliError {
        match err {
            e @ perft_local::LocalError::SplitTooDeep { depth, split } => CliError::usage_by(
                format!(
                    "--stats needs a split depth below the depth {depth} (units count the last ply), got {split}"
                ),
                e,
            ),
            e if e.is_request() => CliError::usage_from(e),
            e => CliError::failed_from(e),
        }
    }
}

/// A root that is none (its text, its depth, a move, Chess960 notation for
/// another game) is the user's to fix.
impl From<perft_core::RootRefused> for CliError {
    fn from(err: perft_core::RootRefused) -> CliError {
        CliError::usage_from(err)
    }
}

impl From<std::io::Error> for CliError {
    fn from(err: std::io::Error) -> CliError {
        CliError::failed_from(err)
    }
}

/// Help and version print as clap renders them; an argument error is folded
/// into one line and exits with 2.
pub fn clap_exit(err: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        err.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = err.print();
        return if err.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
            ExitCode::from(2)
        } else {
            ExitCode::SUCCESS
        };
    }
    let rendered = err.render().to_string();
    let line = rendered
        .lines()
        .map(str::trim)
        .filter(|line| {
            !line.is_empty() && !line.starts_with("For more information") && !line.starts_with("Usage:")
        })
        .collect::<Vec<_>>()
        .join(" ");
    let line = line.strip_prefix("error: ").unwrap_or(&line);
    error_line(format_args!("{line}"));
    ExitCode::from(2)
}

/// An error with its causes, `outer: inner: innermost`: transport errors
/// (TLS above all) name their reason only in their sources.
pub fn chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text.replace('\n', " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_job_that_ended_other_than_done_fails_with_exit_1_naming_it() {
        let ended = |error: Option<&str>| {
            CliError::from(perft_client::ClientError::JobEnded {
                job: perft_model::JobId::parse("j-1").expect("a job id"),
                state: perft_model::JobState::Failed,
                error: error.map(str::to_owned),
            })
        };
        let failed = ended(Some("unit 3 lapsed 8 times"));
        assert_eq!(failed.to_string(), "job j-1 ended failed: unit 3 lapsed 8 times");
        assert_eq!(failed.exit_code(), 1);
        assert_eq!(ended(None).to_string(), "job j-1 ended failed");
    }

    #[test]
    fn an_error_told_in_the_clis_words_keeps_its_cause_and_exit_code() {
        use std::error::Error;
        let err = CliError::from(perft_local::LocalError::SplitTooDeep { depth: 3, split: 3 });
        assert_eq!(
            err.to_string(),
            "--stats needs a split depth below the depth 3 (units count the last ply), got 3"
        );
        assert_eq!(err.exit_code(), 2);
        let cause = err.source().expect("the local error is kept");
        assert!(matches!(
            cause.downcast_ref::<perft_local::LocalError>(),
            Some(perft_local::LocalError::SplitTooDeep { depth: 3, split: 3 })
        ));
        let io = CliError::from(std::io::Error::other("disk gone"));
        assert_eq!((io.to_string().as_str(), io.exit_code()), ("disk gone", 1));
        assert!(
            io.source()
                .is_some_and(|c| c.downcast_ref::<std::io::Error>().is_some())
        );
        assert!(CliError::usage("no cause").source().is_none());
    }
}
