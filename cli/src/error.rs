//! Errors of the `perft` binary: one line on stderr and an exit code, never
//! a panic.

use std::fmt;
use std::io::Write;
use std::process::ExitCode;

/// Writes `error: MESSAGE` to stderr; nothing is left to tell if that fails.
fn error_line(message: fmt::Arguments<'_>) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "error: {message}");
}

/// What went wrong, and so which exit code the process ends with.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// Bad input from the user: exit code 2.
    #[error("{0}")]
    Usage(String),
    /// Anything else (I/O on stdout, ...): exit code 1.
    #[error("{0}")]
    Failed(String),
}

impl CliError {
    /// Prints the one-line message and picks the exit code.
    pub fn report(&self) -> ExitCode {
        error_line(format_args!("{self}"));
        match self {
            CliError::Usage(_) => ExitCode::from(2),
            CliError::Failed(_) => ExitCode::from(1),
        }
    }
}

impl From<std::io::Error> for CliError {
    fn from(err: std::io::Error) -> CliError {
        CliError::Failed(err.to_string())
    }
}

/// Help and version print as clap renders them; an argument error is folded
/// into one line and exits with 2.
pub fn clap_exit(err: &clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        err.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = err.print();
        return if err.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
            ExitCode::from(2)
        } else {
            ExitCode::SUCCESS
        };
    }
    let rendered = err.render().to_string();
    let line = rendered
        .lines()
        .map(str::trim)
        .filter(|line| {
            !line.is_empty() && !line.starts_with("For more information") && !line.starts_with("Usage:")
        })
        .collect::<Vec<_>>()
        .join(" ");
    let line = line.strip_prefix("error: ").unwrap_or(&line);
    error_line(format_args!("{line}"));
    ExitCode::from(2)
}
