//! `perft backup DIR` (a copy of a running coordinator's journal, written
//! on its machine) and `perft journal check DIR` (a stopped data dir or a
//! copy, checked offline).

use perft_coordinator::offline::{self, Level};

use crate::args::{BackupArgs, JournalCheckArgs, JournalCommand};
use crate::client::connect;
use crate::cluster::runtime;
use crate::error::CliError;

pub fn backup(args: &BackupArgs) -> Result<(), CliError> {
    runtime()?.block_on(async {
        let reply = connect(&args.coordinator).await?.backup(&args.dir).await?;
        outln!(
            "journal copied at commit {} into {} on the coordinator's machine ({} bytes, {:.3} s)",
            reply.sequence,
            perft_core::echoed(&reply.dir),
            reply.bytes,
            reply.seconds
        )
    })
}

pub fn journal(command: &JournalCommand) -> Result<(), CliError> {
    match command {
        JournalCommand::Check(args) => journal_check(args),
    }
}

fn journal_check(args: &JournalCheckArgs) -> Result<(), CliError> {
    let checked =
        offline::check_journal(&args.dir).map_err(|e| CliError::usage_by(crate::error::chain(&e), e))?;
    for finding in &checked.findings {
        let level = match finding.level {
            Level::Ok => "ok",
            Level::Note => "note",
            Level::Damage => "DAMAGED",
        };
        outln!("{level}: {}", finding.text)?;
    }
    let dir = args.dir.display();
    let sequence = checked
        .sequence
        .map_or_else(|| "no commit sequence".to_owned(), |s| format!("commit {s}"));
    if checked.is_clean() {
        outln!("clean: {dir} ({sequence}; {} rows checked)", checked.rows)?;
        return Ok(());
    }
    outln!(
        "damaged: {dir} ({sequence}; {} rows checked, {} damaged findings)",
        checked.rows,
        checked.damaged
    )?;
    let first = checked.damage().next().map_or("", |f| f.text.as_str());
    Err(CliError::failed(format!(
        "the journal in {dir} is damaged: {first}{}",
        match checked.damaged {
            1 => String::new(),
            n => format!(" (and {} more)", n - 1),
        }
    )))
}
