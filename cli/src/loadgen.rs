//! `perft loadgen`: many simulated workers against one coordinator, to
//! measure how many results a second it accepts (with its journal on). The
//! simulation is `perft-loadgen`'s; this submits its job and prints what
//! it came to.

use std::io::Write;
use std::time::Instant;

use crate::args::{LoadgenArgs, SubmitArgs};
use crate::cluster::runtime;
use crate::error::CliError;

pub fn loadgen(args: &LoadgenArgs) -> Result<(), CliError> {
    runtime()?.block_on(async {
        let client = crate::client::connect(&args.coordinator).await?;
        let submit = SubmitArgs {
            coordinator: args.coordinator.clone(),
            game: args.game,
            depth: args.depth,
            position: None,
            split_depth: Some(args.depth.saturating_sub(1)),
            verify: false,
            convention: None,
            stats: false,
        };
        let planning = Instant::now();
        let job_id = client.submit(&crate::client::submission(&submit)?).await?;
        let planned = planning.elapsed();
        let job = client.job(&job_id).await?;
        errln!(
            "job {job_id}: {} units planned and journaled in {:.2} s",
            job.units_total,
            planned.as_secs_f64()
        );
        let configs = if args.own_participants {
            let configs = perft_loadgen::own_participants(&client, &job_id, args.workers).await?;
            errln!("{} participants added, one per simulated worker", args.workers);
            configs
        } else {
            vec![client.config().clone(); args.workers as usize]
        };
        let simulated =
            perft_loadgen::simulate(configs, &job_id, args.batch, args.latency_log.is_some()).await?;
        if let Some(path) = &args.latency_log {
            write_log(path, &simulated.log)?;
        }
        let report = crate::client::fetch_report(&client, &job_id).await?;
        let (results, seconds) = (simulated.accepted, simulated.seconds);
        outln!(
            "{} simulated workers: {results} results accepted in {seconds:.2} s = {:.0} results/s; job {} with {} leaves",
            args.workers,
            results as f64 / seconds,
            match &report.source {
                crate::report::Source::Job { state, .. } => state.as_str(),
                crate::report::Source::Local(_) => "local",
            },
            report.total.leaves
        )?;
        let latency = &simulated.latency;
        outln!(
            "report acknowledgement over {} calls: p50 {:.1} ms, p99 {:.1} ms, p99.9 {:.1} ms, max {:.1} ms",
            latency.calls(),
            latency.quantile_ms(0.5),
            latency.quantile_ms(0.99),
            latency.quantile_ms(0.999),
            latency.max_ms()
        )?;
        Ok(())
    })
}

/// The latency log, in sending order: `unix_ms micros` per line.
fn write_log(path: &std::path::Path, log: &[(u64, u64)]) -> Result<(), CliError> {
    let cannot = |e: std::io::Error| {
        CliError::Failed(format!("cannot write the latency log '{}': {e}", path.display()))
    };
    let mut out = std::io::BufWriter::new(std::fs::File::create(path).map_err(cannot)?);
    for (sent, micros) in log {
        writeln!(out, "{sent} {micros}").map_err(cannot)?;
    }
    out.flush().map_err(cannot)
}
