//! `perft participant add|list|revoke|lift|budget`: who may take part, against a
//! running coordinator (admin credential) or a stopped one's data dir.

use std::io::Write;

use perft_coordinator::offline;
use perft_model::{BudgetLine, Participant, Resource, Role};

use crate::args::{
    ParticipantAddArgs, ParticipantBudgetArgs, ParticipantCommand, ParticipantLiftArgs, ParticipantListArgs,
    ParticipantRevokeArgs,
};
use crate::client::connect;
use crate::cluster::runtime;
use crate::error::CliError;

pub fn participant(command: &ParticipantCommand) -> Result<(), CliError> {
    match command {
        ParticipantCommand::Add(args) => add(args),
        ParticipantCommand::List(args) => list(args),
        ParticipantCommand::Revoke(args) => revoke(args),
        ParticipantCommand::Lift(args) => lift(args),
        ParticipantCommand::Budget(args) => budget(args),
    }
}

/// Hands the secret over: into a new 0600 file, or on stdout.
fn hand_over(secret: &str, file: Option<&std::path::Path>) -> Result<(), CliError> {
    let Some(path) = file else {
        outln!("{secret}")?;
        return Ok(());
    };
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut out = options.open(path).map_err(|e| {
        CliError::usage_by(
            format!("cannot create the secret file '{}': {e}", path.display()),
            e,
        )
    })?;
    writeln!(out, "{secret}").map_err(|e| CliError::failed_by(format!("{}: {e}", path.display()), e))?;
    Ok(())
}

fn add(args: &ParticipantAddArgs) -> Result<(), CliError> {
    let role = Role::parse(&args.role).map_err(CliError::usage_from)?;
    if args.keep_existing
        && let Some(file) = args.secret_file.as_deref().filter(|f| f.exists())
    {
        crate::output::note(format_args!(
            "{} exists: participant '{}' is kept as it is",
            file.display(),
            perft_core::echoed(&args.name)
        ));
        return Ok(());
    }
    let secret = if let Some(dir) = &args.target.data_dir {
        let (_, secret) = offline::add_participant(dir, &args.name, role).map_err(CliError::usage_from)?;
        secret.expose().to_owned()
    } else {
        runtime()?.block_on(async {
            let added = connect(&args.target.coordinator)
                .await?
                .add_participant(&args.name, role)
                .await?;
            Ok::<_, CliError>(added.secret.expose().to_owned())
        })?
    };
    crate::output::note(format_args!(
        "participant '{}' added with role {}; its secret is shown once",
        perft_core::echoed(&args.name),
        role.name()
    ));
    hand_over(&secret, args.secret_file.as_deref())
}

/// A budget line as `used/limit` (`*` marks an admin's figure).
fn budget_cell(line: &BudgetLine) -> String {
    let limit = line
        .limit
        .map_or_else(|| "unlimited".to_owned(), |limit| limit.to_string());
    let mark = if line.overridden { "*" } else { "" };
    format!("{} {}/{limit}{mark}", line.resource, line.used)
}

fn list(args: &ParticipantListArgs) -> Result<(), CliError> {
    let participants: Vec<Participant> = if let Some(dir) = &args.target.data_dir {
        offline::participants(dir).map_err(CliError::usage_from)?
    } else {
        runtime()?.block_on(async {
            Ok::<_, CliError>(connect(&args.target.coordinator).await?.participants().await?)
        })?
    };
    if args.format == "json" {
        let rows: Vec<serde_json::Value> = participants
            .iter()
            .map(|p| {
                serde_json::json!({
                    "name": p.name.as_str(),
                    "role": p.role.name(),
                    "revoked": p.revoked,
                    "quarantined": p.quarantined,
                    "units": p.units.to_string(),
                    "leaves": p.leaves.to_string(),
                    "cpu_seconds": p.cpu_seconds,
                    "lost_votes": p.lost_votes.to_string(),
                    "lost_votes_forgiven": p.lost_votes_forgiven.to_string(),
                    "lapses": p.lapses.to_string(),
                    "strikes": p.strikes,
                    "suspended": p.suspended,
                    "machines": p.machines,
                    "threads": p.threads,
                    "budget": p.budget.iter().map(|line| {
                        (line.resource.clone(), serde_json::json!({
                            "limit": line.limit.map(|limit| limit.to_string()),
                            "used": line.used.to_string(),
                            "overridden": line.overridden,
                        }))
                    }).collect::<serde_json::Map<_, _>>(),
                })
            })
            .collect();
        outln!("{}", serde_json::Value::Array(rows))?;
        return Ok(());
    }
    let mut table = crate::output::table([
        "participant",
        "role",
        "state",
        "machines",
        "threads",
        "units",
        "leaves",
        "cpu s",
        "lost votes",
        "lapses",
        "budget (used/limit, * set by an admin)",
    ]);
    for p in &participants {
        let state = if p.revoked {
            "revoked"
        } else if p.quarantined {
            "quarantined"
        } else if p.suspended {
            "suspended"
        } else {
            "active"
        };
        table.add_row([
            p.name.to_string(),
            p.role.name().to_owned(),
            state.to_owned(),
            p.machines.to_string(),
            p.threads.to_string(),
            p.units.to_string(),
            p.leaves.to_string(),
            format!("{:.1}", p.cpu_seconds),
            p.lost_votes.to_string(),
            p.lapses.to_string(),
            p.budget.iter().map(budget_cell).collect::<Vec<_>>().join("\n"),
        ]);
    }
    outln!("{table}")?;
    Ok(())
}

fn revoke(args: &ParticipantRevokeArgs) -> Result<(), CliError> {
    runtime()?.block_on(async {
        let p = connect(&args.coordinator)
            .await?
            .revoke_participant(&args.name, args.recount)
            .await?;
        outln!(
            "participant {} revoked{}",
            p.name,
            if args.recount {
                "; the units it decided are counted again"
            } else {
                ""
            }
        )
    })
}

fn lift(args: &ParticipantLiftArgs) -> Result<(), CliError> {
    let (quarantine, lapses) = match (args.quarantine, args.lapses) {
        (false, false) => (true, true),
        asked => asked,
    };
    runtime()?.block_on(async {
        let p = connect(&args.coordinator)
            .await?
            .lift_quarantine(&args.name, quarantine, lapses)
            .await?;
        let lifted = match (quarantine, lapses) {
            (true, true) => "quarantine and suspension",
            (true, false) => "quarantine",
            _ => "suspension",
        };
        outln!(
            "participant {}: {lifted} lifted (lost votes {}, forgiven {}; lapses {})",
            p.name,
            p.lost_votes,
            p.lost_votes_forgiven,
            p.lapses
        )
    })
}

fn budget(args: &ParticipantBudgetArgs) -> Result<(), CliError> {
    let figures: Vec<(Resource, u64)> = [
        (Resource::OpenJobs, args.open_jobs),
        (Resource::OpenUnits, args.open_units),
        (Resource::Sessions, args.sessions),
        (Resource::Streams, args.streams),
        (Resource::DashboardSessions, args.dashboard_sessions),
    ]
    .into_iter()
    .filter_map(|(resource, figure)| figure.map(|figure| (resource, figure)))
    .collect();
    if figures.is_empty() && args.reset.is_empty() {
        return Err(CliError::usage(
            "nothing to set: give a figure (--open-jobs, --open-units, --sessions, --streams, --dashboard-sessions) or --reset RESOURCE".to_owned(),
        ));
    }
    let reset = args
        .reset
        .iter()
        .map(|name| Resource::parse(name))
        .collect::<Result<Vec<_>, _>>()
        .map_err(CliError::usage_from)?;
    runtime()?.block_on(async {
        let p = connect(&args.coordinator)
            .await?
            .set_budget(&args.name, &figures, &reset)
            .await?;
        let lines: Vec<String> = p.budget.iter().map(budget_cell).collect();
        outln!("participant {} budget: {}", p.name, lines.join(", "))
    })
}
