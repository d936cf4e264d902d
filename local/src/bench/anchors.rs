//! Ours beside the public engines the project is measured against (the
//! "anchors": Egaroucid and Edax for Reversi, DarkHorse for checkers,
//! Gigantua, ellxor's perft and perft_cpu_2026 for chess), each case a
//! pair of commands run in turn, whole processes, every count checked,
//! compared by CPU time (user and system) since every program counts on
//! one thread.
//!
//! The anchors are built outside the repository (`bench/anchors/build.sh`,
//! `bench/chess-anchors.sh`, `bench/anchors/build-perft-cpu-2026.sh`); a
//! case whose anchor is not found is skipped, and the caller says so.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

use nix::sys::resource::{UsageWho, getrusage};
use perft_core::chess::{PositionRow, published_rows};
use perft_core::{ECHOED_CHARS, GameKind, Leaves};

use super::{BENCH_TABLE, median};
use crate::error::LocalError;

/// A public perft program measured beside ours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    /// Egaroucid for Console: `egaroucid -perft DEPTH 1` (Bik's convention).
    Egaroucid,
    /// Edax's perft.c driver: `edax-perft DEPTH [TABLE_BITS]`.
    Edax,
    /// DarkHorse's perft without a table: `darkhorse DEPTH`.
    DarkHorse,
    /// DarkHorse's last perft with a table: `darkhorse-table DEPTH SIZE`.
    DarkHorseTable,
    /// Gigantua: `gigantua FEN DEPTH EXPECTED` exits 0 when it counts EXPECTED.
    Gigantua,
    /// ellxor/perft: `ellxor FEN DEPTH`.
    Ellxor,
    /// perft_cpu_2026: `perft_cpu FEN DEPTH -nott` (raw) or `-htt MB`.
    PerftCpu,
}

impl Anchor {
    /// Every anchor.
    pub const ALL: [Anchor; 7] = [
        Anchor::Egaroucid,
        Anchor::Edax,
        Anchor::DarkHorse,
        Anchor::DarkHorseTable,
        Anchor::Gigantua,
        Anchor::Ellxor,
        Anchor::PerftCpu,
    ];

    /// Its name in tables.
    pub const fn name(self) -> &'static str {
        match self {
            Anchor::Egaroucid => "Egaroucid",
            Anchor::Edax => "Edax",
            Anchor::DarkHorse | Anchor::DarkHorseTable => "DarkHorse",
            Anchor::Gigantua => "Gigantua",
            Anchor::Ellxor => "ellxor/perft",
            Anchor::PerftCpu => "perft_cpu_2026",
        }
    }

    /// The file name its build gives it.
    pub const fn program(self) -> &'static str {
        match self {
            Anchor::Egaroucid => "egaroucid",
            Anchor::Edax => "edax-perft",
            Anchor::DarkHorse => "darkhorse",
            Anchor::DarkHorseTable => "darkhorse-table",
            Anchor::Gigantua => "gigantua",
            Anchor::Ellxor => "ellxor",
            Anchor::PerftCpu => "perft_cpu",
        }
    }

    /// Its program in `folder` when given and there, else on `PATH`.
    pub fn find(self, folder: Option<&Path>) -> Option<PathBuf> {
        let in_folder = folder.map(|f| f.join(self.program())).filter(|p| p.is_file());
        in_folder.or_else(|| which::which(self.program()).ok())
    }
}

/// How a run's count is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// Its output holds this count in decimal.
    Prints(u128),
    /// It was handed the count and exits 0 only when it counted it.
    ExitStatus,
}

/// One comparison: our command beside an anchor's, with what each must
/// count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnchorCase {
    /// The game.
    pub game: GameKind,
    /// What is counted: `start d7 raw`, `d14 table 2G`, ...
    pub label: String,
    /// Our arguments (after the program).
    pub ours: Vec<String>,
    /// The leaves we count.
    pub leaves: u128,
    /// The anchor.
    pub anchor: Anchor,
    /// Its arguments.
    pub anchor_args: Vec<String>,
    /// How its count is checked.
    pub anchor_check: Check,
}

/// The published count of `game`'s start at `depth`, from the tables
/// `perft-core` ships (the one copy of every published number).
fn published(game: GameKind, depth: u32) -> Leaves {
    game.fns()
        .published(depth)
        .map(|published| published.total)
        .unwrap_or_else(|| panic!("core's tables hold {game} perft({depth}), a benchmarked depth"))
}

/// A published chess position (`start`, `kiwipete`) at `depth`.
fn chess_row(name: &str, depth: u32) -> PositionRow {
    published_rows()
        .find(|row| row.name == name && row.depth == depth)
        .unwrap_or_else(|| panic!("core's chess table holds {name} perft({depth})"))
}

/// The table of the table cases, in MB as perft_cpu_2026 and DarkHorse
/// take it: the 2 GiB of [`BENCH_TABLE`].
const TABLE_MB: u64 = 2048;

fn args(words: &[&str]) -> Vec<String> {
    words.iter().map(|&w| w.to_owned()).collect()
}

/// Our `bench-case` count of a game's start on one thread, `engine` being
/// `--raw` or `--hash SIZE`.
fn ours_case(game: GameKind, depth: u32, engine: &[&str]) -> Vec<String> {
    let depth = depth.to_string();
    let mut words = args(&[
        "bench-case",
        "--game",
        game.name(),
        "--depth",
        &depth,
        "--threads",
        "1",
    ]);
    words.extend(args(engine));
    words
}

/// Our raw count of a game's start: one thread, no table.
fn ours_raw(game: GameKind, depth: u32) -> Vec<String> {
    ours_case(game, depth, &["--raw"])
}

/// Our raw count of a chess position.
fn ours_raw_chess(fen: &str, depth: u32) -> Vec<String> {
    let depth = depth.to_string();
    args(&[
        "run",
        "--game",
        "chess",
        "--position",
        fen,
        "--depth",
        &depth,
        "--raw",
        "--quiet",
    ])
}

/// Our whole engine on one thread with the bench table.
fn ours_table(game: GameKind, depth: u32) -> Vec<String> {
    ours_case(game, depth, &["--hash", BENCH_TABLE])
}

/// Our side of a comparison: what we count and how.
struct Ours {
    game: GameKind,
    label: String,
    args: Vec<String>,
    leaves: u128,
}

impl Ours {
    fn new(game: GameKind, label: &str, args: Vec<String>, leaves: u128) -> Ours {
        Ours {
            game,
            label: label.to_owned(),
            args,
            leaves,
        }
    }

    /// This count beside `anchor` run with `anchor_args`.
    fn vs(&self, anchor: Anchor, anchor_args: &[&str], anchor_check: Check) -> AnchorCase {
        AnchorCase {
            game: self.game,
            label: self.label.clone(),
            ours: self.args.clone(),
            leaves: self.leaves,
            anchor,
            anchor_args: args(anchor_args),
            anchor_check,
        }
    }
}

/// Every comparison, game by game: raw generators, then whole engines
/// with tables of (nearly) equal size.
pub fn anchor_cases() -> Vec<AnchorCase> {
    use Anchor::*;
    use GameKind::{Checkers, Chess, Reversi};
    let table_mb = TABLE_MB.to_string();
    let darkhorse_table = format!("{table_mb}mb");
    // Edax prints the full-depth leaves (it leaves out games over before
    // full depth); everyone else every leaf.
    let (reversi_12, reversi_14) = (published(Reversi, 12), published(Reversi, 14));
    let (checkers_12, checkers_15) = (published(Checkers, 12).leaves, published(Checkers, 15).leaves);
    let reversi_12_ours = Ours::new(Reversi, "d12 raw", ours_raw(Reversi, 12), reversi_12.leaves);
    let reversi_14_ours = Ours::new(
        Reversi,
        "d14 table 2G",
        ours_table(Reversi, 14),
        reversi_14.leaves,
    );
    let checkers_12_ours = Ours::new(Checkers, "d12 raw", ours_raw(Checkers, 12), checkers_12);
    let checkers_15_ours = Ours::new(Checkers, "d15 table 2G", ours_table(Checkers, 15), checkers_15);
    let mut cases = vec![
        reversi_12_ours.vs(
            Egaroucid,
            &["-perft", "12", "1"],
            Check::Prints(reversi_12.leaves),
        ),
        reversi_12_ours.vs(Edax, &["12"], Check::Prints(reversi_12.full_depth())),
        // 2^25 entries of 72 bytes: 2.4 GB, the nearest to 2 GiB.
        reversi_14_ours.vs(Edax, &["14", "25"], Check::Prints(reversi_14.full_depth())),
        checkers_12_ours.vs(DarkHorse, &["12"], Check::Prints(checkers_12)),
        checkers_15_ours.vs(
            DarkHorseTable,
            &["15", &darkhorse_table],
            Check::Prints(checkers_15),
        ),
    ];
    for (row, label) in [
        (chess_row("start", 7), "start d7 raw"),
        (chess_row("kiwipete", 6), "kiwipete d6 raw"),
    ] {
        let (fen, leaves) = (row.fen, row.leaves);
        let (d, counted) = (row.depth.to_string(), leaves.to_string());
        let ours = Ours::new(Chess, label, ours_raw_chess(fen, row.depth), leaves);
        cases.push(ours.vs(Gigantua, &[fen, &d, &counted], Check::ExitStatus));
        cases.push(ours.vs(Ellxor, &[fen, &d], Check::Prints(leaves)));
        cases.push(ours.vs(PerftCpu, &[fen, &d, "-nott"], Check::Prints(leaves)));
    }
    let start_8 = chess_row("start", 8);
    let chess_8 = Ours::new(Chess, "start d8 table 2G", ours_table(Chess, 8), start_8.leaves);
    cases.push(chess_8.vs(
        PerftCpu,
        &[start_8.fen, "8", "-htt", &table_mb],
        Check::Prints(start_8.leaves),
    ));
    cases
}

/// One run's times.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunTime {
    /// Wall seconds.
    pub wall: f64,
    /// CPU seconds of the process (user and system).
    pub cpu: f64,
}

/// A case measured: each side's runs, in the order run.
#[derive(Debug, Clone, PartialEq)]
pub struct SideBySide {
    /// The case.
    pub case: AnchorCase,
    /// Our runs.
    pub ours: Vec<RunTime>,
    /// The anchor's runs.
    pub anchor: Vec<RunTime>,
}

impl SideBySide {
    /// Our median CPU seconds: every program counts on one thread, and CPU
    /// time is what a busy machine disturbs least.
    pub fn ours_cpu(&self) -> f64 {
        median(self.ours.iter().map(|r| r.cpu).collect())
    }

    /// The anchor's median CPU seconds.
    pub fn anchor_cpu(&self) -> f64 {
        median(self.anchor.iter().map(|r| r.cpu).collect())
    }

    /// Our median wall seconds.
    pub fn ours_wall(&self) -> f64 {
        median(self.ours.iter().map(|r| r.wall).collect())
    }

    /// The anchor's median wall seconds.
    pub fn anchor_wall(&self) -> f64 {
        median(self.anchor.iter().map(|r| r.wall).collect())
    }

    /// How many times faster ours is: the anchor's median CPU time over
    /// ours.
    pub fn speedup(&self) -> f64 {
        self.anchor_cpu() / self.ours_cpu()
    }
}

/// Runs `case` in `pairs` alternating pairs (ours, the anchor, ours, ...)
/// after one warm-up pair that is not counted; `ours` is our program,
/// `anchor` the anchor's. The runs inherit this thread's CPU affinity.
pub fn side_by_side(
    case: &AnchorCase,
    ours: &Path,
    anchor: &Path,
    pairs: u64,
) -> Result<SideBySide, LocalError> {
    let mut measured = SideBySide {
        case: case.clone(),
        ours: Vec::new(),
        anchor: Vec::new(),
    };
    for pair in 0..=pairs {
        let ours_run = timed(ours, &case.ours, Check::Prints(case.leaves))?;
        let anchor_run = timed(anchor, &case.anchor_args, case.anchor_check)?;
        if pair > 0 {
            measured.ours.push(ours_run);
            measured.anchor.push(anchor_run);
        }
    }
    Ok(measured)
}

/// Keeps this thread, and the processes it starts from now on, on the
/// CPU core `core`, as side-by-side timing wants; refused when the OS
/// refused or there is no such core.
pub fn pin_to_core(core: usize) -> Result<(), LocalError> {
    let pinned = core_affinity::get_core_ids()
        .and_then(|ids| ids.into_iter().find(|id| id.id == core))
        .is_some_and(core_affinity::set_for_current);
    pinned.then_some(()).ok_or_else(|| LocalError::NoSuchCore {
        core,
        cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
    })
}

/// CPU seconds used so far by this process's children that were waited for.
fn children_cpu_seconds() -> f64 {
    getrusage(UsageWho::RUSAGE_CHILDREN).map_or(0.0, |usage| {
        let seconds = |t: nix::sys::time::TimeVal| t.tv_sec() as f64 + t.tv_usec() as f64 / 1e6;
        seconds(usage.user_time()) + seconds(usage.system_time())
    })
}

/// The times of one run of `program`, after checking its count. Runs are
/// made one at a time, so the children's CPU time grows by this run's.
fn timed(program: &Path, args: &[String], check: Check) -> Result<RunTime, LocalError> {
    let command = || format!("{} {}", program.display(), args.join(" "));
    let cpu_before = children_cpu_seconds();
    let started = Instant::now();
    let output = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|source| LocalError::AnchorStart {
            command: command(),
            source,
        })?;
    let wall = started.elapsed().as_secs_f64();
    let cpu = children_cpu_seconds() - cpu_before;
    let stdout = String::from_utf8_lossy(&output.stdout);
    let counted = match check {
        Check::Prints(leaves) => output.status.success() && prints_count(&stdout, leaves),
        Check::ExitStatus => output.status.success(),
    };
    if !counted {
        let said = format!("{stdout}{}", String::from_utf8_lossy(&output.stderr));
        // The end of what it said, where the error is, quoted by the
        // shared rule (cut short, control characters escaped).
        let said = said.trim();
        let start = said
            .char_indices()
            .rev()
            .nth(ECHOED_CHARS - 1)
            .map_or(0, |(i, _)| i);
        let tail = perft_core::echoed(&said[start..]);
        return Err(LocalError::AnchorMiscounted {
            command: command(),
            status: output.status.to_string(),
            output: tail,
        });
    }
    Ok(RunTime { wall, cpu })
}

/// Whether `output` holds `leaves` as a whole number (not a part of a
/// longer one).
fn prints_count(output: &str, leaves: u128) -> bool {
    let leaves = leaves.to_string();
    output
        .split(|c: char| !c.is_ascii_digit())
        .any(|number| number == leaves)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_count_is_found_only_as_a_whole_number() {
        assert!(prints_count("total: 3195901860\n", 3_195_901_860));
        assert!(prints_count("{\"leaves\":\"244\"}", 244));
        assert!(!prints_count("total: 31959018601", 3_195_901_860));
        assert!(!prints_count("nodes 1244", 244));
    }

    #[test]
    fn every_game_is_compared_and_every_anchor_is_used() {
        let cases = anchor_cases();
        for &game in GameKind::ALL {
            assert!(cases.iter().any(|c| c.game == game), "{game}");
        }
        for anchor in Anchor::ALL {
            assert!(cases.iter().any(|c| c.anchor == anchor), "{}", anchor.program());
        }
        // The counts come from core's tables: Edax is held to the
        // full-depth leaves, ours to every leaf.
        let edax_12 = cases
            .iter()
            .find(|c| c.anchor == Anchor::Edax && c.label == "d12 raw")
            .expect("a Reversi d12 case against Edax");
        assert_eq!(edax_12.leaves, 1_939_886_636);
        assert_eq!(edax_12.anchor_check, Check::Prints(1_939_886_052));
        let kiwipete = cases
            .iter()
            .find(|c| c.label == "kiwipete d6 raw")
            .expect("Kiwipete");
        assert_eq!(kiwipete.leaves, 8_031_647_685);
    }

    /// A real pair of processes: a shell that prints the count stands in
    /// for both sides, and one that prints another is refused.
    #[test]
    fn side_by_side_checks_each_count() {
        let sh = Path::new("/bin/sh");
        let case = AnchorCase {
            game: GameKind::Reversi,
            label: "d4".to_owned(),
            ours: args(&["-c", "echo 244"]),
            leaves: 244,
            anchor: Anchor::Edax,
            anchor_args: args(&["-c", "echo leaves 244"]),
            anchor_check: Check::Prints(244),
        };
        let measured = side_by_side(&case, sh, sh, 2).expect("both count 244");
        assert_eq!((measured.ours.len(), measured.anchor.len()), (2, 2));
        assert!(measured.ours_wall() > 0.0 && measured.anchor_wall() > 0.0);
        // A wrong count is refused, and what the program said is quoted
        // cut to its end with its control characters escaped.
        let wrong = AnchorCase {
            anchor_args: args(&["-c", "printf '%0200d \\033[31m245'"]),
            ..case
        };
        match side_by_side(&wrong, sh, sh, 1) {
            Err(LocalError::AnchorMiscounted { output, .. }) => {
                assert!(output.ends_with("\\u{1b}[31m245"), "{output}");
                assert!(!output.contains('\u{1b}'), "{output}");
                assert!(output.chars().count() <= 2 * ECHOED_CHARS, "{output}");
            }
            other => panic!("a miscount must be refused: {other:?}"),
        }
    }
}
