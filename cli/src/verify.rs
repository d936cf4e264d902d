//! `perft verify`: counts from the start (locally or on a cluster) and
//! compares the total and each divide line with the published tables.

use perft_core::GameKind;

use crate::args::{CoordinatorArg, Format, RunArgs, SubmitArgs, TreeArgs, VerifyArgs};
use crate::error::CliError;
use crate::report::Report;

fn cluster_report(args: &VerifyArgs, url: &str, game: GameKind, depth: u32) -> Result<Report, CliError> {
    crate::cluster::runtime()?.block_on(async {
        let coordinator = CoordinatorArg {
            coordinator: url.to_owned(),
            token: args.token.clone(),
            tls_ca: args.tls_ca.clone(),
        };
        let client = crate::client::connect(&coordinator).await?;
        let submit = SubmitArgs {
            coordinator: coordinator.clone(),
            tree: TreeArgs::start(game, depth, args.convention),
            split_depth: None,
            verify: false,
            stats: false,
        };
        let id = client.submit(&crate::client::submission(&submit)?).await?;
        errln!("job {id} submitted to {url}");
        let job = crate::client::follow(&client, &id, crate::args::ProgressArgs::DEFAULT).await?;
        if job.state != perft_model::JobState::Done {
            return Err(CliError::failed(format!("job {id} ended {}", job.state.name())));
        }
        crate::client::fetch_report(&client, &id).await
    })
}

pub fn verify(args: &VerifyArgs) -> Result<(), CliError> {
    let game = args.game;
    let convention = game
        .resolve_convention(args.convention)
        .map_err(CliError::usage_from)?;
    let published = game
        .fns_in(convention)
        .map_err(CliError::usage_from)?
        .published(args.depth);
    let named = convention.map_or(String::new(), |c| format!(" ({c} convention)"));
    let Some(expected) = published else {
        return Err(CliError::usage(format!(
            "no published value for {game}{named} depth {}: nothing to verify against",
            args.depth
        )));
    };
    // The first line says where the count is made: a named coordinator
    // (flag or PERFT_COORDINATOR) unless --local.
    let report = match args.coordinator.as_deref().filter(|_| !args.local) {
        Some(url) => {
            outln!("counting on the coordinator at {}", perft_core::echoed(url))?;
            cluster_report(args, url, game, args.depth)?
        }
        None => {
            outln!("counting on this machine ({} threads)", args.engine.threads())?;
            let run = RunArgs {
                tree: TreeArgs::start(args.game, args.depth, args.convention),
                moves: Vec::new(),
                certificate: None,
                split_depth: None,
                chess960: false,
                raw: false,
                stats: false,
                format: Format::Text,
                engine: args.engine.clone(),
                progress: crate::args::ProgressArgs::DEFAULT,
            };
            crate::run::count_in(&run)?
        }
    };
    let mut mismatches = 0;
    for line in expected.compare(report.total, &report.divide, report.reports_higher) {
        if line.matches() {
            outln!("match     {}: {}", line.label, line.counted)?;
        } else {
            mismatches += 1;
            outln!(
                "MISMATCH  {}: published {}, counted {}",
                line.label,
                line.published,
                line.counted
            )?;
        }
    }
    if expected.divide.is_none() {
        outln!(
            "(no divide table was published for {game}{named} depth {})",
            args.depth
        )?;
    }
    if mismatches > 0 {
        return Err(CliError::failed(format!(
            "{mismatches} mismatch(es) with the published table"
        )));
    }
    outln!(
        "{game}{named} depth {} matches the published table ({:.3} s)",
        args.depth,
        report.seconds
    )?;
    Ok(())
}
