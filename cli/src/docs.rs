//! Shell completions and the man page, generated from the clap definitions
//! in [`crate::args`] so they cannot drift from the arguments `perft` takes.

use std::io::Write;

use clap::CommandFactory;

use crate::args::{Cli, CompletionsArgs};
use crate::error::CliError;
use crate::output::stdout_failed;

/// `perft completions SHELL`: the completion script on stdout.
pub fn completions(args: &CompletionsArgs) -> Result<(), CliError> {
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "perft", &mut script);
    write_stdout(&script)
}

/// `perft man`: the roff man page `perft(1)` on stdout, with every
/// subcommand listed.
pub fn man() -> Result<(), CliError> {
    let mut page = Vec::new();
    clap_mangen::Man::new(Cli::command())
        .render(&mut page)
        .map_err(|err| CliError::Failed(format!("cannot render the man page: {err}")))?;
    write_stdout(&page)
}

/// Writes `bytes` to stdout and flushes; a closed stdout is an error, not a
/// panic.
fn write_stdout(bytes: &[u8]) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    out.write_all(bytes)
        .and_then(|()| out.flush())
        .map_err(stdout_failed)
}
