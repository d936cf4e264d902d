//! `perft participant add|list|revoke|lift|budget`: who may take part, against a
//! running coordinator (admin credential) or a stopped one's data dir.

use std::io::Write;

use comfy_table::{Table, presets::UTF8_FULL_CONDENSED};
use perft_coordinator::offline;
use perft_model::Role;
use perft_proto as pb;
use perft_proto::participant_service_client::ParticipantServiceClient;

use crate::args::{
    ParticipantAddArgs, ParticipantBudgetArgs, ParticipantCommand, ParticipantLiftArgs, ParticipantListArgs,
    ParticipantRevokeArgs,
};
use crate::client::{connect, status_error};
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

async fn client(
    coordinator: &crate::args::CoordinatorArg,
) -> Result<ParticipantServiceClient<perft_proto::connect::AuthChannel>, CliError> {
    let client = connect(coordinator).await?;
    Ok(ParticipantServiceClient::with_interceptor(
        client.channel(),
        client.config().interceptor(),
    ))
}

fn role_wire(role: Role) -> pb::Role {
    match role {
        Role::Worker => pb::Role::Worker,
        Role::Submitter => pb::Role::Submitter,
        Role::Reader => pb::Role::Reader,
        Role::Admin => pb::Role::Admin,
    }
}

fn role_name(raw: i32) -> &'static str {
    match pb::Role::try_from(raw) {
        Ok(pb::Role::Worker) => "worker",
        Ok(pb::Role::Submitter) => "submitter",
        Ok(pb::Role::Reader) => "reader",
        Ok(pb::Role::Admin) => "admin",
        _ => "unknown",
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
    let mut out = options
        .open(path)
        .map_err(|e| CliError::Usage(format!("cannot create the secret file '{}': {e}", path.display())))?;
    writeln!(out, "{secret}").map_err(|e| CliError::Failed(format!("{}: {e}", path.display())))?;
    Ok(())
}

fn add(args: &ParticipantAddArgs) -> Result<(), CliError> {
    let role = Role::parse(&args.role).map_err(|e| CliError::Usage(e.to_string()))?;
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
        let (_, secret) =
            offline::add_participant(dir, &args.name, role).map_err(|e| CliError::Usage(e.to_string()))?;
        secret.expose().to_owned()
    } else {
        runtime()?.block_on(async {
            let reply = client(&args.target.coordinator)
                .await?
                .add_participant(pb::AddParticipantRequest {
                    name: args.name.clone(),
                    role: role_wire(role).into(),
                })
                .await
                .map_err(status_error)?
                .into_inner();
            Ok::<_, CliError>(reply.secret)
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
fn budget_cell(line: &pb::BudgetLine) -> String {
    let limit = if line.unlimited {
        "unlimited".to_owned()
    } else {
        line.limit.to_string()
    };
    let mark = if line.overridden { "*" } else { "" };
    format!("{} {}/{limit}{mark}", line.resource, line.used)
}

fn list(args: &ParticipantListArgs) -> Result<(), CliError> {
    let participants: Vec<pb::Participant> = if let Some(dir) = &args.target.data_dir {
        offline::participants(dir).map_err(|e| CliError::Usage(e.to_string()))?
    } else {
        runtime()?.block_on(async {
            Ok::<_, CliError>(
                client(&args.target.coordinator)
                    .await?
                    .list_participants(pb::ListParticipantsRequest {})
                    .await
                    .map_err(status_error)?
                    .into_inner()
                    .participants,
            )
        })?
    };
    if args.format == "json" {
        let rows: Vec<serde_json::Value> = participants
            .iter()
            .map(|p| {
                serde_json::json!({
                    "name": p.name,
                    "role": role_name(p.role),
                    "revoked": p.revoked,
                    "quarantined": p.quarantined,
                    "units": p.units.to_string(),
                    "leaves": pb::count(p.leaves).to_string(),
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
                            "limit": (!line.unlimited).then(|| line.limit.to_string()),
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
    let mut table = Table::new();
    table.load_preset(UTF8_FULL_CONDENSED).set_header([
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
            p.name.clone(),
            role_name(p.role).to_owned(),
            state.to_owned(),
            p.machines.to_string(),
            p.threads.to_string(),
            p.units.to_string(),
            pb::count(p.leaves).to_string(),
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
        let p = client(&args.coordinator)
            .await?
            .revoke_participant(pb::RevokeParticipantRequest {
                name: args.name.clone(),
                recount: args.recount,
            })
            .await
            .map_err(status_error)?
            .into_inner();
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
        let p = client(&args.coordinator)
            .await?
            .lift_participant(pb::LiftParticipantRequest {
                name: args.name.clone(),
                quarantine,
                lapses,
            })
            .await
            .map_err(status_error)?
            .into_inner();
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
    let figures: Vec<pb::BudgetFigure> = [
        ("open_jobs", args.open_jobs),
        ("open_units", args.open_units),
        ("sessions", args.sessions),
        ("streams", args.streams),
        ("dashboard_sessions", args.dashboard_sessions),
    ]
    .into_iter()
    .filter_map(|(resource, figure)| {
        figure.map(|figure| pb::BudgetFigure {
            resource: resource.to_owned(),
            figure,
        })
    })
    .collect();
    if figures.is_empty() && args.reset.is_empty() {
        return Err(CliError::Usage(
            "nothing to set: give a figure (--open-jobs, --open-units, --sessions, --streams, --dashboard-sessions) or --reset RESOURCE".to_owned(),
        ));
    }
    for reset in &args.reset {
        perft_coordinator::admission::Resource::parse(reset).map_err(|e| CliError::Usage(e.to_string()))?;
    }
    runtime()?.block_on(async {
        let p = client(&args.coordinator)
            .await?
            .set_budget(pb::SetBudgetRequest {
                name: args.name.clone(),
                figures,
                reset: args.reset.clone(),
            })
            .await
            .map_err(status_error)?
            .into_inner();
        let lines: Vec<String> = p.budget.iter().map(budget_cell).collect();
        outln!("participant {} budget: {}", p.name, lines.join(", "))
    })
}
