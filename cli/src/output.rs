//! Writing to stdout and stderr without panicking: a closed or full stdout
//! ends the verb with exit 1 and a message; a closed stderr is ignored.

use std::fmt;
use std::io::Write;

use crate::error::CliError;

/// Writes one line to stdout, flushed; a failure is an error to report.
pub fn line(args: fmt::Arguments<'_>) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    out.write_fmt(args)
        .and_then(|()| out.write_all(b"\n"))
        .and_then(|()| out.flush())
        .map_err(stdout_failed)
}

/// The error of a failed write to stdout.
pub fn stdout_failed(err: std::io::Error) -> CliError {
    CliError::Failed(format!("cannot write to stdout: {err}"))
}

/// Writes one line to stderr; nothing is left to tell if that fails.
pub fn note(args: fmt::Arguments<'_>) {
    let mut err = std::io::stderr().lock();
    let _ = err.write_fmt(args).and_then(|()| err.write_all(b"\n"));
}

/// `println!` that returns a [`CliError`] instead of panicking.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::output::line(format_args!($($arg)*))
    };
}

/// `eprintln!` that never panics.
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::output::note(format_args!($($arg)*))
    };
}
