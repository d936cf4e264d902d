//! `perft`: Deep Perft's single binary; everything but the allocator is
//! the `perft_cli` library's.

use std::process::ExitCode;

/// The coordinator serves many small gRPC calls, each a few dozen
/// allocations; glibc's allocator spent about a sixth of its CPU time on
/// them (BENCHMARKS.md, "Coordinator throughput with participants").
/// Counting itself allocates nothing in its loops.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    perft_cli::main()
}
