//! The `perft` program the system tests run: the same library and the same
//! allocator as the released binary, built in this package so its tests
//! can name it (`CARGO_BIN_EXE_perft-under-test`).

use std::process::ExitCode;

/// As in `cli/src/main.rs`: the program under test allocates as the
/// released one does.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    perft_cli::main()
}
