//! Shell completions and the man page, generated from the clap definitions
//! in [`crate::args`] so they cannot drift from the arguments `perft` takes.

use std::io::Write;

use clap::CommandFactory;

use crate::args::{Cli, CompletionsArgs, ManArgs};
use crate::error::CliError;
use crate::output::stdout_failed;

/// `perft completions SHELL`: the completion script on stdout.
pub fn completions(args: &CompletionsArgs) -> Result<(), CliError> {
    let mut command = Cli::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "perft", &mut script);
    write_stdout(&script)
}

/// `perft man [SUBCOMMAND]`: the roff man page `perft(1)`, which lists the
/// subcommands, or `perft-SUBCOMMAND(1)`, on stdout.
pub fn man(args: &ManArgs) -> Result<(), CliError> {
    let mut command = Cli::command();
    // Gives subcommands their full `perft NAME` usage.
    command.build();
    let page_of = match &args.subcommand {
        None => command,
        Some(name) => {
            let visible = |sub: &&clap::Command| !sub.is_hide_set() && sub.get_name() != "help";
            let Some(sub) = command
                .get_subcommands()
                .filter(visible)
                .find(|sub| sub.get_name() == name)
            else {
                let names: Vec<&str> = command
                    .get_subcommands()
                    .filter(visible)
                    .map(clap::Command::get_name)
                    .collect();
                return Err(CliError::usage(format!(
                    "no subcommand '{}': one of {}",
                    perft_core::echoed(name),
                    names.join(", ")
                )));
            };
            let title = format!("perft-{}", sub.get_name());
            sub.clone().name(title).version(env!("CARGO_PKG_VERSION"))
        }
    };
    let mut page = Vec::new();
    clap_mangen::Man::new(page_of)
        .render(&mut page)
        .map_err(|err| CliError::failed_by(format!("cannot render the man page: {err}"), err))?;
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
