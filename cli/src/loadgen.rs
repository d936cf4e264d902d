//! `perft loadgen`: many simulated workers against one coordinator, to
//! measure how many results a second it accepts (with its journal on). The
//! load is `perft-loadgen`'s; this maps the arguments and prints what it
//! came to.

use crate::args::LoadgenArgs;
use crate::cluster::runtime;
use crate::error::CliError;

pub fn loadgen(args: &LoadgenArgs) -> Result<(), CliError> {
    runtime()?.block_on(async {
        let client = crate::client::connect(&args.coordinator).await?;
        let job = perft_loadgen::submit_job(&client, args.game, args.depth).await?;
        errln!(
            "job {}: {} units planned and journaled in {:.2} s",
            job.id,
            job.units,
            job.planned.as_secs_f64()
        );
        let configs =
            perft_loadgen::worker_credentials(&client, &job.id, args.workers, args.own_participants).await?;
        if args.own_participants {
            errln!("{} participants added, one per simulated worker", args.workers);
        }
        let simulated =
            perft_loadgen::simulate(configs, &job.id, args.batch, args.latency_log.is_some()).await?;
        if let Some(path) = &args.latency_log {
            simulated.write_log(path)?;
        }
        let report = crate::client::fetch_report(&client, &job.id).await?;
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
