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
    CliError::failed_by(format!("cannot write to stdout: {err}"), err)
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

/// A table for people with these column names, in the one style every
/// verb prints its tables in.
pub fn table<const N: usize>(header: [&str; N]) -> comfy_table::Table {
    let mut table = comfy_table::Table::new();
    table
        .load_preset(comfy_table::presets::UTF8_FULL_CONDENSED)
        .set_header(header);
    table
}

/// Writes `value` to stdout as indented JSON and a newline.
pub fn json_pretty(value: &impl serde::Serialize) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    serde_json::to_writer_pretty(&mut out, value)
        .map_err(|e| CliError::failed_by(format!("cannot write JSON: {e}"), e))?;
    out.write_all(b"\n")
        .and_then(|()| out.flush())
        .map_err(stdout_failed)
}
