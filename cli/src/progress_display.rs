//! How progress is shown while work runs: a live bar on a terminal, else a
//! plain line on stderr every `--progress-every` seconds, which a log
//! keeps, or nothing with `--quiet`. A job followed on a coordinator and a
//! count on this machine both show theirs through [`Display`].

use std::sync::mpsc;
use std::time::{Duration, Instant};

use indicatif::{ProgressBar, ProgressStyle};
use perft_local::Progress;

use crate::args::ProgressArgs;

/// How often a count on this machine reads its progress.
const TICK: Duration = Duration::from_millis(200);

/// Progress shown as the user asked; the bar is cleared when dropped.
#[derive(Debug)]
pub struct Display {
    bar: ProgressBar,
    every: Duration,
    /// When the next plain line is due (none on a terminal or when quiet).
    next_line: Option<Instant>,
}

impl Display {
    /// Nothing shown yet; the bar (on a terminal) is drawn by indicatif's
    /// `template`, the first plain line comes one interval from now.
    pub fn new(shown: ProgressArgs, template: &str) -> Display {
        let live = !shown.quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
        let bar = if live {
            ProgressBar::new(0)
        } else {
            ProgressBar::hidden()
        };
        bar.set_style(
            ProgressStyle::with_template(template).unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        let every = Duration::from_secs(shown.progress_every);
        let next_line = (!shown.quiet && !live).then(|| Instant::now() + every);
        Display {
            bar,
            every,
            next_line,
        }
    }

    /// `done` of `total` with the bar's `message`; `line()` on stderr when
    /// a plain line is due.
    pub fn show(&mut self, done: u64, total: u64, message: Option<String>, line: impl FnOnce() -> String) {
        self.bar.set_length(total);
        self.bar.set_position(done);
        if let Some(message) = message {
            self.bar.set_message(message);
        }
        if let Some(at) = self.next_line.as_mut().filter(|at| Instant::now() >= **at) {
            *at += self.every;
            errln!("{}", line());
        }
    }

    /// Takes the bar off the terminal (it is also taken off when dropped).
    pub fn clear(&self) {
        self.bar.finish_and_clear();
    }

    /// Writes `line` on stderr without tearing the bar.
    pub fn say(&self, line: &str) {
        self.bar.suspend(|| errln!("{line}"));
    }
}

impl Drop for Display {
    fn drop(&mut self) {
        self.clear();
    }
}

/// Runs `count`, showing `progress` as `shown` asks from a thread beside
/// it; the count's result.
pub fn shown_while<T>(progress: &Progress, shown: ProgressArgs, count: impl FnOnce() -> T) -> T {
    if shown.quiet {
        return count();
    }
    let (stop, stopped) = mpsc::channel::<()>();
    std::thread::scope(|scope| {
        scope.spawn(move || {
            let started = Instant::now();
            let mut display = Display::new(shown, "{spinner} [{elapsed_precise}] {bar:20} {pos}/{len} units");
            while let Err(mpsc::RecvTimeoutError::Timeout) = stopped.recv_timeout(TICK) {
                let (done, total) = progress.units();
                display.show(done as u64, total as u64, None, || {
                    let seconds = started.elapsed().as_secs_f64();
                    format!("counting: {done}/{total} units done in {seconds:.0} s")
                });
            }
        });
        let result = count();
        drop(stop);
        result
    })
}
