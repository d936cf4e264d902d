//! What a coordinator process sets up around [`serve`](crate::serve): its
//! listeners, bound before anything is announced; its Prometheus metrics
//! endpoint; and the open-file limit its connections need.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

use tokio::net::TcpListener;

use crate::ConnectionLimits;
use crate::metrics::IDLE_GAUGE_SECONDS;

/// An address the coordinator was to serve on cannot be served, or a
/// bound listener's address cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ListenError {
    /// The gRPC address is taken, unknown or not allowed.
    #[error("cannot listen on '{address}': {source}")]
    Grpc {
        address: String,
        #[source]
        source: io::Error,
    },
    /// The dashboard's address is taken, unknown or not allowed.
    #[error("cannot serve the dashboard on '{}': {source}", perft_core::echoed(address))]
    Dashboard {
        address: String,
        #[source]
        source: io::Error,
    },
    /// The metrics endpoint cannot be served on its address.
    #[error("cannot serve metrics on {address}: {source}")]
    Metrics {
        address: SocketAddr,
        #[source]
        source: metrics_exporter_prometheus::BuildError,
    },
    /// A bound listener's own address cannot be read.
    #[error(transparent)]
    LocalAddress(io::Error),
}

impl ListenError {
    /// Whether the address asked for is at fault (as opposed to the
    /// system failing a listener it bound).
    pub fn is_request(&self) -> bool {
        !matches!(self, ListenError::LocalAddress(_))
    }
}

/// The gRPC listener and, when asked for, the dashboard's, both bound: an
/// address that cannot be served is refused before any is announced.
#[derive(Debug)]
pub struct Listeners {
    grpc: TcpListener,
    dashboard: Option<TcpListener>,
    address: SocketAddr,
    dashboard_address: Option<SocketAddr>,
}

impl Listeners {
    /// Binds `listen` (gRPC) and then `http_listen` (the dashboard), each
    /// `host:port`; port 0 takes any free port.
    pub async fn bind(listen: &str, http_listen: Option<&str>) -> Result<Listeners, ListenError> {
        let grpc = TcpListener::bind(listen)
            .await
            .map_err(|source| ListenError::Grpc {
                address: listen.to_owned(),
                source,
            })?;
        let address = grpc.local_addr().map_err(ListenError::LocalAddress)?;
        let dashboard = match http_listen {
            Some(http) => Some(
                TcpListener::bind(http)
                    .await
                    .map_err(|source| ListenError::Dashboard {
                        address: http.to_owned(),
                        source,
                    })?,
            ),
            None => None,
        };
        let dashboard_address = dashboard
            .as_ref()
            .map(TcpListener::local_addr)
            .transpose()
            .map_err(ListenError::LocalAddress)?;
        Ok(Listeners {
            grpc,
            dashboard,
            address,
            dashboard_address,
        })
    }

    /// The address gRPC is served on (the port chosen when 0 was asked).
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The address the dashboard is served on, if it is.
    pub fn dashboard_address(&self) -> Option<SocketAddr> {
        self.dashboard_address
    }

    /// The gRPC listener and the dashboard's, for [`serve`](crate::serve).
    pub fn into_parts(self) -> (TcpListener, Option<TcpListener>) {
        (self.grpc, self.dashboard)
    }
}

/// Serves the coordinator's Prometheus metrics over HTTP on `address`,
/// inside the current tokio runtime. A gauge not set for
/// [`IDLE_GAUGE_SECONDS`] is dropped: the per-participant gauges of a
/// participant whose machines all left.
pub fn serve_metrics(address: SocketAddr) -> Result<(), ListenError> {
    metrics_exporter_prometheus::PrometheusBuilder::new()
        .with_http_listener(address)
        .idle_timeout(
            metrics_util::MetricKindMask::GAUGE,
            Some(Duration::from_secs(IDLE_GAUGE_SECONDS)),
        )
        .install()
        .map_err(|source| ListenError::Metrics { address, source })
}

/// File descriptors kept beside the connections: the journal, the
/// listeners, the metrics endpoint, the runtime.
const SPARE_FILES: u64 = 64;

/// Raises the soft open-file limit to the hard one (a connection is a file
/// descriptor), and warns when even that leaves `limits.max_total`
/// unreachable: past the limit, accepts fail and connections wait.
pub fn raise_open_file_limit(limits: &ConnectionLimits) {
    let max_connections = limits.max_total as u64;
    let limit = match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => limit,
        Err(e) => {
            tracing::warn!(error = %e, "cannot read or raise the open-file limit");
            return;
        }
    };
    if limit < max_connections.saturating_add(SPARE_FILES) {
        tracing::warn!(
            open_files = limit,
            max_connections,
            "the open-file limit is below --max-connections + {SPARE_FILES}: raise it (ulimit -n) or lower --max-connections"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn both_listeners_are_bound_before_either_is_announced() {
        let taken = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let taken = taken.local_addr().unwrap().to_string();
        let refused = Listeners::bind("127.0.0.1:0", Some(&taken)).await.unwrap_err();
        assert!(refused.is_request());
        assert!(
            refused
                .to_string()
                .starts_with(&format!("cannot serve the dashboard on '{taken}': "))
        );
        let bound = Listeners::bind("127.0.0.1:0", Some("127.0.0.1:0")).await.unwrap();
        assert_ne!(bound.address().port(), 0);
        assert_ne!(bound.dashboard_address().map(|a| a.port()), Some(0));
        let refused = Listeners::bind(&bound.address().to_string(), None)
            .await
            .unwrap_err();
        assert!(refused.to_string().starts_with("cannot listen on '"));
    }
}
