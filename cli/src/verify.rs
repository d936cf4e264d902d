//! `perft verify`: counts from the start (locally or on a cluster) and
//! compares the total and each divide line with the published tables.

use perft_core::GameKind;
use perft_core::published::published;

use crate::args::{CoordinatorArg, Format, RunArgs, SubmitArgs, VerifyArgs};
use crate::error::CliError;
use crate::report::Report;

fn compare_line(label: &str, expected: u128, got: u128, mismatches: &mut usize) -> Result<(), CliError> {
    if expected == got {
        outln!("match     {label}: {got}")
    } else {
        *mismatches += 1;
        outln!("MISMATCH  {label}: published {expected}, counted {got}")
    }
}

fn cluster_report(args: &VerifyArgs, url: &str, game: GameKind, depth: u32) -> Result<Report, CliError> {
    crate::cluster::runtime()?.block_on(async {
        let coordinator = CoordinatorArg {
            coordinator: url.to_owned(),
            token: args.token.clone(),
            tls_ca: args.tls_ca.clone(),
        };
        let mut client = crate::client::connect(&coordinator).await?;
        let submit = SubmitArgs {
            coordinator: coordinator.clone(),
            game,
            depth,
            position: None,
            split_depth: None,
            verify: false,
        };
        let id = crate::client::submit_job(&mut client, &submit).await?;
        errln!("job {id} submitted to {url}");
        let job = crate::client::follow(&mut client, &id, true).await?;
        if job.state() != perft_proto::JobState::Done {
            return Err(CliError::Failed(format!(
                "job {id} ended {}",
                crate::client::state_name(&job)
            )));
        }
        crate::client::fetch_report(&mut client, &id).await
    })
}

pub fn verify(args: &VerifyArgs) -> Result<(), CliError> {
    let game = args.game;
    let Some(expected) = published(game, args.depth) else {
        return Err(CliError::Usage(format!(
            "no published value for {game} depth {}: nothing to verify against",
            args.depth
        )));
    };
    let report = match &args.coordinator {
        Some(url) => cluster_report(args, url, game, args.depth)?,
        None => {
            let run = RunArgs {
                game: args.game,
                depth: args.depth,
                position: None,
                moves: Vec::new(),
                chess960: false,
                raw: false,
                format: Format::Text,
                engine: args.engine.clone(),
            };
            game.dispatch(crate::run::Count(&run))?
        }
    };
    let mut mismatches = 0;
    compare_line(
        "total",
        expected.total.leaves,
        report.total.leaves,
        &mut mismatches,
    )?;
    if game.reports_higher() {
        compare_line(
            "higher",
            expected.total.higher,
            report.total.higher,
            &mut mismatches,
        )?;
    }
    match &expected.divide {
        None => outln!("(no divide table was published for {game} depth {})", args.depth)?,
        Some(lines) => {
            for (mv, count) in lines {
                let got = report
                    .divide
                    .iter()
                    .find(|(m, _)| m == mv)
                    .map_or(0, |(_, n)| n.leaves);
                compare_line(mv, *count, got, &mut mismatches)?;
            }
        }
    }
    if mismatches > 0 {
        return Err(CliError::Failed(format!(
            "{mismatches} mismatch(es) with the published table"
        )));
    }
    outln!(
        "{game} depth {} matches the published table ({:.3} s)",
        args.depth,
        report.seconds
    )?;
    Ok(())
}
