//! How a count on this machine shows its progress while its threads
//! count: a bar of units on a terminal, else a plain line on stderr every
//! `--progress-every` seconds, which a log keeps.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use perft_local::Progress;

use crate::args::ProgressArgs;

/// How often the bar or the line reads the progress.
const TICK: Duration = Duration::from_millis(200);

/// Runs `count`, showing `progress` as `shown` asks from a thread beside
/// it; the count's result.
pub fn shown_while<T>(progress: &Progress, shown: ProgressArgs, count: impl FnOnce() -> T) -> T {
    if shown.quiet {
        return count();
    }
    let (stop, stopped) = mpsc::channel::<()>();
    std::thread::scope(|scope| {
        scope.spawn(move || show(progress, shown, &stopped));
        let result = count();
        drop(stop);
        result
    })
}

/// Shows the progress until `stopped` closes.
fn show(progress: &Progress, shown: ProgressArgs, stopped: &mpsc::Receiver<()>) {
    let started = Instant::now();
    let live = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let bar = if live {
        ProgressBar::new(0)
    } else {
        ProgressBar::hidden()
    };
    bar.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:20} {pos}/{len} units")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let every = Duration::from_secs(shown.progress_every);
    let mut next_line = started + every;
    while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(TICK) {
        let (done, total) = progress.units();
        bar.set_length(total as u64);
        bar.set_position(done as u64);
        if !live && Instant::now() >= next_line {
            next_line += every;
            errln!(
                "counting: {done}/{total} units done in {:.0} s",
                started.elapsed().as_secs_f64()
            );
        }
    }
    bar.finish_and_clear();
}
