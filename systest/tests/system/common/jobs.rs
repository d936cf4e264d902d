//! Jobs as the CLI shows them, for the tests that submit one and follow it:
//! a command line written as one string, and `perft status` parsed once.

use super::{ok, perft};

/// The words of a command line, split on white space, so that a test
/// writes `"submit --game checkers --depth 9"` as it would type it. An
/// argument with a space in it (a FEN) is pushed onto the result.
pub fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

/// The arguments of `perft submit --coordinator URL` followed by the words
/// of `line`, for a test that runs the command itself.
pub fn submit_to<'a>(url: &'a str, line: &'a str) -> Vec<&'a str> {
    let mut args = vec!["submit", "--coordinator", url];
    args.extend(words(line));
    args
}

/// `perft submit` of the command line `line` (after `submit`) to the
/// tokenless coordinator at `url`; returns the job's id.
pub fn submit(url: &str, line: &str) -> String {
    let mut args = vec!["submit"];
    args.extend(words(line));
    ok(perft(url, &args)).trim().to_owned()
}

/// `perft status` of a job.
#[derive(Debug, Clone)]
pub struct JobStatus {
    pub state: String,
    /// Why it failed; empty while it has not.
    pub error: String,
    pub done: u64,
    pub total: u64,
    /// Units handed out again (a lease lapsed or was handed back).
    pub released: u64,
}

impl JobStatus {
    /// Parses the text of `perft status`.
    pub fn parse(text: &str) -> JobStatus {
        let field = |name: &str| text.lines().find_map(|l| l.strip_prefix(name)).map(str::to_owned);
        // "units: 12/805 (3 handed out again)"
        let units = field("units: ").unwrap_or_else(|| panic!("no units in {text}"));
        let (done, rest) = units.split_once('/').unwrap();
        let (total, rest) = rest.split_once(" (").unwrap();
        let released = rest.split_whitespace().next().unwrap();
        JobStatus {
            state: field("state: ").unwrap_or_else(|| panic!("no state in {text}")),
            error: field("error: ").unwrap_or_default(),
            done: done.parse().unwrap(),
            total: total.parse().unwrap(),
            released: released.parse().unwrap(),
        }
    }
}

/// `perft status` of `job` at the tokenless coordinator at `url`.
pub fn status(url: &str, job: &str) -> JobStatus {
    JobStatus::parse(&ok(perft(url, &["status", job])))
}
