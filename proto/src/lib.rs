//! The gRPC contract between the CLI, the coordinator and the workers.
//!
//! Filled by the distributed-perft issue (tonic + prost, compiled in pure
//! Rust with protox).
