//! What `perft watch` (and `audit --on`, `suite --on`) show beside the counts: the job's pace (measured by
//! the client's follow: ETA, leaves/s) and its first moves finished, in
//! words a person reads at a glance.

use perft_client::Pace;

/// A duration as a person reads it: `42s`, `7m 05s`, `3h 02m`, `2d 04h`.
pub fn duration_text(seconds: f64) -> String {
    if !seconds.is_finite() || seconds < 0.0 {
        return "?".to_owned();
    }
    let s = seconds.round() as u64;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m {:02}s", s / 60, s % 60),
        3600..86_400 => format!("{}h {:02}m", s / 3600, s % 3600 / 60),
        _ => format!("{}d {:02}h", s / 86_400, s % 86_400 / 3600),
    }
}

/// A rate with an SI prefix: `950 leaves/s`, `12.3 M leaves/s`.
pub fn rate_text(per_second: f64) -> String {
    const PREFIXES: [(f64, &str); 4] = [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")];
    match PREFIXES.iter().find(|(scale, _)| per_second >= *scale) {
        Some((scale, prefix)) => format!("{:.1} {prefix} leaves/s", per_second / scale),
        None => format!("{per_second:.0} leaves/s"),
    }
}

/// The line `perft watch` shows for a job's newest step, most wanted first
/// (a narrow terminal cuts it at the end).
pub fn status_line(
    work_done: f64,
    units: (u64, u64),
    pace: &Pace,
    first_moves: Option<(usize, usize)>,
) -> String {
    let eta = pace.eta_seconds.map_or_else(|| "?".to_owned(), duration_text);
    let rate = pace
        .leaves_per_second
        .map_or_else(|| "? leaves/s".to_owned(), rate_text);
    let mut line = format!("ETA {eta}, {:.1}% done, {rate}", work_done * 100.0);
    if let Some((done, all)) = first_moves {
        line.push_str(&format!(", first moves finished: {done}/{all}"));
    }
    line.push_str(&format!(", {}/{} units", units.0, units.1));
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_status_line_says_eta_share_rate_moves_and_units() {
        assert_eq!(
            status_line(0.0, (0, 8), &Pace::default(), None),
            "ETA ?, 0.0% done, ? leaves/s, 0/8 units"
        );
        let pace = Pace {
            work_per_second: Some(0.025),
            leaves_per_second: Some(200.0),
            eta_seconds: Some(20.0),
        };
        assert_eq!(
            status_line(0.5, (3, 100), &pace, Some((1, 4))),
            "ETA 20s, 50.0% done, 200 leaves/s, first moves finished: 1/4, 3/100 units"
        );
    }

    #[test]
    fn durations_and_rates_read_well() {
        assert_eq!(duration_text(59.4), "59s");
        assert_eq!(duration_text(10.0 / 9.0), "1s");
        assert_eq!(duration_text(60.0), "1m 00s");
        assert_eq!(duration_text(425.0), "7m 05s");
        assert_eq!(duration_text(3.0 * 3600.0 + 125.0), "3h 02m");
        assert_eq!(duration_text(2.0 * 86_400.0 + 4.0 * 3600.0), "2d 04h");
        assert_eq!(duration_text(f64::INFINITY), "?");
        assert_eq!(rate_text(950.0), "950 leaves/s");
        assert_eq!(rate_text(1_234_000.0), "1.2 M leaves/s");
        assert_eq!(rate_text(5.0e9), "5.0 G leaves/s");
        assert_eq!(rate_text(9e8), "900.0 M leaves/s");
    }
}
