//! The coordinator: plans jobs into subtree units, leases them to workers,
//! journals results and sums them into divide tables.
//!
//! Filled by the distributed-perft issue.
