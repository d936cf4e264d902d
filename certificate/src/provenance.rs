//! Where a certificate comes from (versions 3 and 4): the job that made
//! it, when that job finished and the program that wrote the file. A label
//! as trustworthy as whoever wrote it: the Merkle root does not cover it,
//! and no audit check can confirm it; it ties a file to the run that made
//! it, for people.

/// The job, the finish time and the program of a certificate.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Provenance {
    /// The cluster job's id, or empty ([`Provenance::NO_JOB`]) for a count
    /// made by `perft run` on one machine, which has no job.
    pub job: String,
    /// When the job finished, in seconds since the Unix epoch (UTC); 0
    /// ([`Provenance::NOT_RECORDED`]) when the maker did not know.
    pub finished: u64,
    /// The program that wrote the certificate and its version, as
    /// `perft 0.1.0`: never empty.
    pub program: String,
}

impl Provenance {
    /// The job id of a count that had no job (`perft run --certificate`).
    pub const NO_JOB: &'static str = "";

    /// The finish time of a job whose maker did not know it.
    pub const NOT_RECORDED: u64 = 0;

    /// A cluster job `job`'s certificate, the job finished at `finished`
    /// (Unix seconds), written by `program`.
    pub fn of_job(job: impl Into<String>, finished: u64, program: impl Into<String>) -> Provenance {
        Provenance {
            job: job.into(),
            finished,
            program: program.into(),
        }
    }

    /// A count made on one machine without a job, finished at `finished`
    /// (Unix seconds), written by `program`.
    pub fn local(finished: u64, program: impl Into<String>) -> Provenance {
        Provenance::of_job(Provenance::NO_JOB, finished, program)
    }

    /// For people, one line: `job 3f2a..., finished 2026-11-28T01:23:45Z,
    /// by perft 0.1.0`, or `a local run (no job), ...` for a count without
    /// a job.
    pub fn shown(&self) -> String {
        let job = if self.job.is_empty() {
            "a local run (no job)".to_owned()
        } else {
            format!("job {}", self.job)
        };
        let finished = if self.finished == Provenance::NOT_RECORDED {
            "finish time not recorded".to_owned()
        } else {
            format!("finished {}", rfc3339(self.finished))
        };
        format!("{job}, {finished}, by {}", self.program)
    }
}

/// `unix_seconds` as an RFC 3339 UTC time, `2026-11-28T01:23:45Z`; a time
/// past the year 9999 (only a hostile or broken file holds one) as its
/// seconds.
pub fn rfc3339(unix_seconds: u64) -> String {
    i64::try_from(unix_seconds)
        .ok()
        .and_then(|seconds| time::OffsetDateTime::from_unix_timestamp(seconds).ok())
        .and_then(|at| at.format(&time::format_description::well_known::Rfc3339).ok())
        .unwrap_or_else(|| format!("{unix_seconds} s after 1970-01-01T00:00:00Z"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_shown_in_rfc_3339() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339(1_795_829_025), "2026-11-28T01:23:45Z");
        assert_eq!(rfc3339(4_107_542_399), "2100-02-28T23:59:59Z");
        assert_eq!(rfc3339(4_107_542_400), "2100-03-01T00:00:00Z");
        // The largest finish time a file can hold still prints.
        assert_eq!(
            rfc3339(u64::MAX),
            "18446744073709551615 s after 1970-01-01T00:00:00Z"
        );
    }

    #[test]
    fn a_provenance_is_shown_in_one_line() {
        assert_eq!(
            Provenance::of_job("3f2a", 1_795_829_025, "perft 0.1.0").shown(),
            "job 3f2a, finished 2026-11-28T01:23:45Z, by perft 0.1.0"
        );
        assert_eq!(
            Provenance::local(0, "perft 0.1.0").shown(),
            "a local run (no job), finish time not recorded, by perft 0.1.0"
        );
    }
}
