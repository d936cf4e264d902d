//! Why a comparison stopped: the engine could not be run or answered
//! wrongly, or a move of our own divide did not read back.

use std::process::ExitStatus;

/// What went wrong while comparing with another engine.
#[derive(Debug, thiserror::Error)]
pub enum CompareError {
    /// The engine's command text splits into no words (or has an open
    /// quote); `echoed` is that text, escaped and cut short.
    #[error("'{echoed}' is no command line")]
    NoCommandLine {
        /// The command text as given, echoed.
        echoed: String,
    },
    /// The engine's program could not be started.
    #[error("the engine '{program}' did not start: {source}")]
    DidNotStart {
        /// The program, echoed.
        program: String,
        /// Why the OS refused.
        #[source]
        source: std::io::Error,
    },
    /// A UCI engine was started without one of its pipes.
    #[error("the engine has no {stream}: closed")]
    NoPipe {
        /// `stdin` or `stdout`.
        stream: &'static str,
    },
    /// Writing to the engine failed.
    #[error("the engine closed its input: {source}")]
    InputClosed {
        /// The write's error.
        #[source]
        source: std::io::Error,
    },
    /// Reading the engine's answer failed.
    #[error("the engine output: {source}")]
    Output {
        /// The read's error.
        #[source]
        source: std::io::Error,
    },
    /// A UCI engine's output ended before its answer did.
    #[error("the engine ended: its output closed before the answer")]
    Ended,
    /// Waiting for a per-divide engine failed.
    #[error("the engine failed: {source}")]
    Wait {
        /// The wait's error.
        #[source]
        source: std::io::Error,
    },
    /// A per-divide engine exited unsuccessfully.
    #[error("the engine failed: {status} for depth {depth} of '{position}' after '{moves}'")]
    Exited {
        /// How it exited.
        status: ExitStatus,
        /// The divide's depth.
        depth: u32,
        /// The position it was given.
        position: String,
        /// The moves played from it, space-separated.
        moves: String,
    },
    /// A move of our own divide did not parse back in its position.
    #[error("{source}")]
    OurMove {
        /// The parse's refusal.
        #[source]
        source: perft_core::MoveError,
    },
}
