//! `perft audit FILE`: checks a certificate with no coordinator and no
//! trust in whoever made it (`perft_local::audit`), recounting its sample
//! here or on a cluster, and prints what was checked and what the sample
//! proves.

mod recount;

use perft_certificate::audit::{hex, pass_probability, sample_indices, sample_size, shown_leaves};
use perft_local::Recount;

use crate::args::AuditArgs;
use crate::error::CliError;
use recount::recount_on_cluster;

/// Problems printed in full; the rest are counted.
const SHOWN_PROBLEMS: usize = 20;

/// Indices printed on one line of the sample.
const INDICES_A_LINE: usize = 20;

/// The drawn unit indices, for people and for comparing audits: lines of
/// at most [`INDICES_A_LINE`] indices, or one line when every unit is
/// drawn or none.
fn shown_sample(sample: &[usize], units: usize) -> Vec<String> {
    if sample.is_empty() {
        return vec!["none".to_owned()];
    }
    if sample.len() == units {
        return vec![format!("all {units} (0 to {})", units - 1)];
    }
    sample
        .chunks(INDICES_A_LINE)
        .map(|line| line.iter().map(usize::to_string).collect::<Vec<_>>().join(" "))
        .collect()
}

/// `perft audit`.
pub fn audit(args: &AuditArgs) -> Result<(), CliError> {
    let (cert, file_bytes) = perft_certificate::file::read(&args.file)?;
    let units = cert.units.len();
    let convention = cert
        .header
        .convention
        .map_or(String::new(), |c| format!(" ({c} convention)"));
    let kinds = match cert.header.kinds.len() {
        0 => String::new(),
        k => format!(", {k} kinds of leaves"),
    };
    outln!(
        "certificate: {}{convention}, depth {}, split depth {}, {units} units, total {}{kinds}, {file_bytes} bytes ({:.1} bytes a unit)",
        cert.header.game,
        cert.header.depth,
        cert.header.split_depth,
        shown_leaves(cert.total),
        file_bytes as f64 / units.max(1) as f64
    )?;
    // Who made it, as the file says: a label the checks below cannot
    // confirm (it is not under the Merkle root).
    let made_by = cert.provenance.as_ref().map_or_else(
        || format!("not recorded (format version {})", cert.version()),
        perft_certificate::Provenance::shown,
    );
    outln!("made by: {made_by}")?;
    let n = sample_size(units, args.sample, args.fraction);
    let seed = args.seed.unwrap_or_else(rand::random);
    let sample = sample_indices(units, n, seed);
    let drawn = shown_sample(&sample, units);
    // A sample counted to no depth is nothing to spread: counted here.
    let on = args
        .on
        .as_ref()
        .filter(|_| !args.local && cert.header.depth > cert.header.split_depth);
    let at = match on {
        None => Recount::Here {
            threads: args.engine.threads(),
            table: args.engine.table(),
        },
        Some(_) => Recount::Elsewhere,
    };
    let mut findings = perft_local::audit(&cert, &sample, at)?;
    let mut place = String::new();
    if let Some(url) = on {
        let coordinator = args.cluster.coordinator(url);
        let cluster = recount_on_cluster(&coordinator, &cert, &findings.sampled)?;
        findings.problems.extend(cluster.problems);
        findings.recounted = findings.sampled.len();
        findings.seconds = cluster.seconds;
        place = format!(" on {url} (job {})", cluster.jobs.join(", job "));
    }
    outln!("units: {}", findings.units_checked)?;
    outln!(
        "plan: re-planned to split depth {} and compared unit by unit",
        cert.header.split_depth
    )?;
    if cert.header.kinds.is_empty() {
        outln!("sums: divide lines and total summed from the units in checked u128")?;
    } else {
        outln!(
            "sums: divide lines and total summed from the units in checked u128, leaves and each kind ({})",
            cert.header.kinds.join(" ")
        )?;
    }
    outln!(
        "merkle: root {} (the certificate's), recomputed over the units",
        hex(&cert.merkle_root)
    )?;
    if cert.header.first_moves.is_empty() {
        outln!("recount: the root has no moves and so no units: its whole count was made again here")?;
    } else {
        outln!(
            "recount: {} of {units} units ({:.2}%) drawn with seed {seed}, recounted{place} in {:.3} s",
            findings.recounted,
            100.0 * findings.recounted as f64 / units.max(1) as f64,
            findings.seconds
        )?;
        for line in &drawn {
            outln!("sampled units: {line}")?;
        }
    }
    let mut shown = 0;
    for f in [0.0, 0.001, 0.01, 0.1] {
        let wrong = (f * units as f64).floor() as usize + 1;
        if wrong > units || wrong == shown {
            continue;
        }
        shown = wrong;
        let p = pass_probability(units, findings.recounted, wrong);
        outln!(
            "guarantee: a certificate in which more than {} of the units are wrong ({wrong} or more of {units}) would have passed this audit with probability at most {p:.3e}",
            if f == 0.0 {
                "0%".to_owned()
            } else {
                format!("{}%", f * 100.0)
            },
        )?;
    }
    if findings.problems.is_empty() {
        outln!("audit passed")?;
        return Ok(());
    }
    for problem in findings.problems.iter().take(SHOWN_PROBLEMS) {
        outln!("MISMATCH  {problem}")?;
    }
    if findings.problems.len() > SHOWN_PROBLEMS {
        outln!("... and {} more", findings.problems.len() - SHOWN_PROBLEMS)?;
    }
    Err(CliError::failed(format!(
        "audit failed: {} problem(s), the first: {}",
        findings.problems.len(),
        findings.problems[0]
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sample_is_shown_twenty_indices_a_line() {
        assert_eq!(shown_sample(&[], 5), ["none"]);
        assert_eq!(shown_sample(&[0, 1, 2], 3), ["all 3 (0 to 2)"]);
        assert_eq!(shown_sample(&[4, 9], 10), ["4 9"]);
        let sample: Vec<usize> = (0..45).map(|i| i * 2).collect();
        let lines = shown_sample(&sample, 100);
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[2], "80 82 84 86 88");
        assert_eq!(lines[0].split(' ').count(), 20);
    }
}
