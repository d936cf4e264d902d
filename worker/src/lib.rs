//! The worker: leases units from a coordinator, counts them with the
//! multi-threaded engine, reports and heartbeats.
//!
//! Filled by the distributed-perft issue.
