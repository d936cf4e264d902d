//! Why a call to the coordinator failed (or a job it waited for ended
//! other than done), with its cause kept, and whose fault it is: the
//! caller's request (fix it and ask again) or not.

use perft_proto::connect::ConnectError;
use tonic::{Code, Status};

/// A failed call, or a job waited for that did not end done;
/// [`ClientError::is_request`] tells the caller's mistakes
/// (a bad address, an unknown job, a refused credential) from failures of
/// the coordinator or the network.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The address, token or TLS files cannot make a connection.
    #[error(transparent)]
    Config(#[from] ConnectError),
    /// Nothing answered at the address.
    #[error("cannot reach the coordinator at {url}")]
    Unreachable {
        url: String,
        #[source]
        source: tonic::transport::Error,
    },
    /// The coordinator answered the call with an error (or the transport
    /// failed under it: the status's sources say how).
    #[error("{}", .0.message().replace('\n', " "))]
    Status(#[source] Status),
    /// The coordinator's answer cannot be what this client asked for: a
    /// coordinator of another build, or a broken one.
    #[error("{0}")]
    Reply(#[from] ReplyError),
    /// A job this client waited for ended other than done.
    #[error("job {job} ended {}{}", .state.name(), .error.as_ref().map_or(String::new(), |e| format!(": {e}")))]
    JobEnded {
        job: perft_model::JobId,
        state: perft_model::JobState,
        error: Option<String>,
    },
}

/// An answer this client refuses, and why.
#[derive(Debug, thiserror::Error)]
pub enum ReplyError {
    #[error("coordinator sent {0}")]
    Value(#[from] perft_proto::UnknownValue),
    #[error("coordinator sent a malformed job id: {0}")]
    JobId(#[from] perft_model::IdError),
    #[error("coordinator sent a count that cannot be one of a {game} job's: {source}")]
    Count {
        game: perft_core::GameKind,
        #[source]
        source: perft_model::CountRefused,
    },
    #[error("coordinator sent {0}")]
    Participant(#[from] perft_proto::ParticipantUnreadable),
    #[error("the coordinator's answer to adding participant {0} names no participant")]
    NoParticipant(String),
    #[error("coordinator sent a malformed worker id: {0}")]
    SessionId(#[source] perft_model::IdError),
    #[error("the coordinator's certificate stream is broken: {0}")]
    Certificate(String),
    #[error("{0}")]
    UnitCounts(String),
    #[error("the coordinator sent nothing about job {0}")]
    Nothing(perft_model::JobId),
}

impl ClientError {
    /// The caller's to fix (a refused request, a bad address): a command
    /// line exits with its usage code. Everything else is a failure.
    pub fn is_request(&self) -> bool {
        if self.is_not_grpc() {
            // The address names some other server: the caller's to fix.
            return true;
        }
        match self {
            ClientError::Config(_) => true,
            ClientError::Status(status) => matches!(
                status.code(),
                Code::InvalidArgument
                    | Code::NotFound
                    | Code::FailedPrecondition
                    | Code::Unimplemented
                    | Code::Unauthenticated
                    | Code::PermissionDenied
                    | Code::AlreadyExists
                    | Code::OutOfRange
                    | Code::ResourceExhausted
            ),
            ClientError::Unreachable { .. } | ClientError::Reply(_) | ClientError::JobEnded { .. } => false,
        }
    }

    /// The coordinator's status code, when it answered with one.
    pub fn code(&self) -> Option<Code> {
        match self {
            ClientError::Status(status) => Some(status.code()),
            _ => None,
        }
    }

    /// The coordinator refused the call for a budget (or another limit):
    /// `RESOURCE_EXHAUSTED`.
    pub fn is_over_budget(&self) -> bool {
        self.code() == Some(Code::ResourceExhausted)
    }

    /// Whether the server broke the connection at the call rather than
    /// answer it: what a server that does not speak gRPC does (the
    /// dashboard's port, the metrics' port, any HTTP/1 server).
    pub fn is_not_grpc(&self) -> bool {
        let ClientError::Status(status) = self else {
            return false;
        };
        let mut source = std::error::Error::source(status);
        // The HTTP/2 connection dropped under the call: hyper cancels it.
        if status.code() == Code::Cancelled && source.is_some() {
            return true;
        }
        if !matches!(status.code(), Code::Unknown | Code::Unavailable) {
            return false;
        }
        while let Some(cause) = source {
            if let Some(io) = cause.downcast_ref::<std::io::Error>()
                && matches!(
                    io.kind(),
                    std::io::ErrorKind::BrokenPipe | std::io::ErrorKind::ConnectionReset
                )
            {
                return true;
            }
            source = cause.source();
        }
        false
    }

    /// The reason TLS refused the coordinator's certificate (signed by
    /// another CA, issued for another host, expired), when that is why
    /// the call failed: asking again cannot help, the CA file or the URL
    /// must change.
    pub fn untrusted_certificate(&self) -> Option<String> {
        let mut source: Option<&(dyn std::error::Error + 'static)> = match self {
            ClientError::Status(status) => std::error::Error::source(status),
            ClientError::Unreachable { source, .. } => Some(source as &(dyn std::error::Error + 'static)),
            _ => None,
        };
        while let Some(cause) = source {
            let tls = cause.downcast_ref::<rustls::Error>().or_else(|| {
                cause
                    .downcast_ref::<std::io::Error>()
                    .and_then(|io| io.get_ref())
                    .and_then(|inner| inner.downcast_ref::<rustls::Error>())
            });
            if let Some(rustls::Error::InvalidCertificate(why)) = tls {
                return Some(why.to_string());
            }
            source = cause.source();
        }
        None
    }

    /// Whether asking again later may succeed: the coordinator is away
    /// (restarting, or refusing writes while its disk is full).
    pub fn is_transient(&self) -> bool {
        matches!(
            self.code(),
            Some(Code::Unavailable | Code::Unknown | Code::Cancelled)
        )
    }
}

impl From<Status> for ClientError {
    fn from(status: Status) -> ClientError {
        ClientError::Status(status)
    }
}
