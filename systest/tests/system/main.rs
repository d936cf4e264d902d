//! The system tests: real coordinators, workers and clients as processes
//! on loopback, one module a concern, built as one test binary (a binary
//! each cost minutes of build and link time on every CI run).

mod common;

mod admission;
mod admission_streams;
mod backup;
mod bench;
mod certificate;
mod chaos;
mod cluster;
mod cluster_certificate;
mod cluster_stats;
mod connections;
mod dashboard;
mod dashboard_browser;
mod dashboard_security;
mod docs;
mod done_damage;
mod edges;
mod engine_authors;
mod estimate;
mod figures;
mod first_hour;
mod hostile;
mod hostile_participants;
mod journal_loss;
mod operations;
mod participants;
mod perftree;
mod run;
mod security;
mod space;
mod stats;
mod suite_cluster;
mod trust;
mod upgrade;
mod verification;
mod volunteer;
