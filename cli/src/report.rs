//! A perft result as the user sees it, in text, JSON or CSV. `perft run`
//! and (later) `perft divide` print through this one type.

use std::io::Write;

use perft_core::Leaves;
use perft_local::{TableReport, peak_memory_bytes};
use serde::Serialize;

use crate::args::Format;
use crate::error::CliError;

/// A finished count with its divide table.
#[derive(Debug, Clone)]
pub struct Report {
    pub game: &'static str,
    /// The counting convention, for games with a choice.
    pub convention: Option<perft_core::Convention>,
    /// Whether the game has game-over leaves, so the split is worth printing.
    pub reports_higher: bool,
    pub position: String,
    pub depth: u32,
    pub total: Leaves,
    /// Each first move in the game's notation with its leaves.
    pub divide: Vec<(String, Leaves)>,
    /// Leaves by kind (`--stats`), in total and for each move of `divide`.
    pub stats: Option<ReportStats>,
    pub seconds: f64,
    /// Where the count was made.
    pub source: Source,
}

/// Leaves by kind: the kinds in column order, the total's counts and each
/// divide line's, in the order of [`Report::divide`].
#[derive(Debug, Clone)]
pub struct ReportStats {
    pub kinds: &'static [&'static str],
    pub total: Vec<u128>,
    pub per_move: Vec<Vec<u128>>,
}

/// Counts by kind as a JSON object, kinds in column order, counts as
/// decimal strings.
struct JsonKinds<'a> {
    kinds: &'static [&'static str],
    counts: &'a [u128],
}

impl Serialize for JsonKinds<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.kinds.len()))?;
        for (kind, count) in self.kinds.iter().zip(self.counts) {
            map.serialize_entry(kind, &count.to_string())?;
        }
        map.end()
    }
}

/// Where a count was made: on this machine, or by a cluster job.
#[derive(Debug, Clone)]
pub enum Source {
    Local(LocalSource),
    Job {
        id: String,
        /// `queued`, `running`, `done`, `failed` or `cancelled`.
        state: String,
    },
}

/// How a count on this machine was made.
#[derive(Debug, Clone)]
pub struct LocalSource {
    /// Counting threads.
    pub threads: usize,
    /// The transposition table, when one was used.
    pub table: Option<TableReport>,
    /// The instruction set the recursion ran on (`x86-64-v3`, ...).
    pub kernel: &'static str,
    /// `perft run --raw`: the bare generator, nothing merged.
    pub raw: bool,
    /// The process's peak resident memory, where the OS tells it.
    pub peak_memory_bytes: Option<u64>,
}

/// `1.0 GiB`-style sizes for people.
pub fn human_bytes(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut value = bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit < UNITS.len() - 1 {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[derive(Serialize)]
struct JsonReport<'a> {
    game: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    convention: Option<&'static str>,
    position: &'a str,
    depth: u32,
    leaves: String,
    full_depth: String,
    higher: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    stats: Option<JsonKinds<'a>>,
    divide: Vec<JsonMove<'a>>,
    seconds: f64,
    leaves_per_second: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    job: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    state: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    threads: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    kernel: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    raw: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    table: Option<Option<TableReport>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    peak_memory_bytes: Option<Option<u64>>,
}

#[derive(Serialize)]
struct JsonMove<'a> {
    #[serde(rename = "move")]
    mv: &'a str,
    leaves: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    stats: Option<JsonKinds<'a>>,
}

impl Report {
    /// Leaves per second of wall time (0 when no time could be measured).
    pub fn leaves_per_second(&self) -> f64 {
        if self.seconds > 0.0 {
            self.total.leaves as f64 / self.seconds
        } else {
            0.0
        }
    }

    /// Writes the report in `format`.
    pub fn write(&self, format: Format, out: &mut impl Write) -> Result<(), CliError> {
        match format {
            Format::Text => self.write_text(out)?,
            Format::Json => {
                serde_json::to_writer(&mut *out, &self.json()).map_err(CliError::failed_from)?;
                writeln!(out)?;
            }
            Format::Csv => self.write_csv(out)?,
        }
        Ok(())
    }

    fn write_text(&self, out: &mut impl Write) -> std::io::Result<()> {
        for (mv, leaves) in &self.divide {
            writeln!(out, "{mv}: {}", leaves.leaves)?;
        }
        writeln!(out)?;
        writeln!(out, "total: {}", self.total.leaves)?;
        if self.reports_higher {
            writeln!(out, "full depth: {}", self.total.full_depth())?;
            writeln!(out, "higher: {}", self.total.higher)?;
        }
        if let Some(stats) = &self.stats {
            write_stats_table(out, stats)?;
        }
        writeln!(out, "time: {:.3} s", self.seconds)?;
        writeln!(out, "speed: {:.0} leaves/s", self.leaves_per_second())?;
        match &self.source {
            Source::Local(local) => {
                writeln!(out, "threads: {}", local.threads)?;
                match &local.table {
                    None => writeln!(out, "table: none")?,
                    Some(t) => writeln!(
                        out,
                        "table: {} ({} entries), {} probes, {} hits ({:.1}%), {:.1}% full",
                        human_bytes(t.bytes),
                        t.entries,
                        t.probes,
                        t.hits,
                        100.0 * t.hit_rate(),
                        100.0 * t.fill
                    )?,
                }
                writeln!(out, "kernel: {}", local.kernel)?;
                if local.raw {
                    writeln!(out, "mode: raw (one thread, no table, no merging)")?;
                }
                if let Some(bytes) = &local.peak_memory_bytes {
                    writeln!(out, "peak memory: {}", human_bytes(*bytes))?;
                }
            }
            Source::Job { id, state } => {
                writeln!(out, "job: {id}")?;
                writeln!(out, "state: {state}")?;
            }
        }
        if let Some(convention) = self.convention {
            writeln!(out, "convention: {convention}")?;
        }
        Ok(())
    }

    fn json(&self) -> JsonReport<'_> {
        let mut json = JsonReport {
            game: self.game,
            convention: self.convention.map(perft_core::Convention::name),
            position: &self.position,
            depth: self.depth,
            leaves: self.total.leaves.to_string(),
            full_depth: self.total.full_depth().to_string(),
            higher: self.total.higher.to_string(),
            stats: self.stats.as_ref().map(|stats| JsonKinds {
                kinds: stats.kinds,
                counts: &stats.total,
            }),
            divide: self
                .divide
                .iter()
                .enumerate()
                .map(|(i, (mv, leaves))| JsonMove {
                    mv,
                    leaves: leaves.leaves.to_string(),
                    stats: self.stats.as_ref().map(|stats| JsonKinds {
                        kinds: stats.kinds,
                        counts: &stats.per_move[i],
                    }),
                })
                .collect(),
            seconds: self.seconds,
            leaves_per_second: self.leaves_per_second().round() as u64,
            job: None,
            state: None,
            threads: None,
            kernel: None,
            raw: None,
            table: None,
            peak_memory_bytes: None,
        };
        match &self.source {
            Source::Local(local) => {
                json.kernel = Some(local.kernel);
                json.raw = Some(local.raw);
                json.threads = Some(local.threads);
                json.table = Some(local.table);
                json.peak_memory_bytes = Some(local.peak_memory_bytes);
            }
            Source::Job { id, state } => {
                json.job = Some(id);
                json.state = Some(state);
            }
        }
        json
    }

    fn write_csv(&self, out: &mut impl Write) -> Result<(), CliError> {
        let mut csv = csv::Writer::from_writer(out);
        let csv_err = |e: csv::Error| CliError::failed_from(e);
        let kinds = self.stats.as_ref().map_or(&[][..], |stats| stats.kinds);
        let header = ["move", "leaves", "full_depth", "higher"].iter().chain(kinds);
        csv.write_record(header).map_err(csv_err)?;
        let total = ("total".to_owned(), self.total);
        for (i, (mv, leaves)) in self.divide.iter().chain(std::iter::once(&total)).enumerate() {
            let counts = self.stats.as_ref().map_or(&[][..], |stats| {
                stats.per_move.get(i).unwrap_or(&stats.total).as_slice()
            });
            let fields = [
                mv.clone(),
                leaves.leaves.to_string(),
                leaves.full_depth().to_string(),
                leaves.higher.to_string(),
            ];
            csv.write_record(fields.into_iter().chain(counts.iter().map(u128::to_string)))
                .map_err(csv_err)?;
        }
        csv.flush()?;
        Ok(())
    }
}

/// The statistics for people: a blank line, then one `kind  count` line
/// per kind, names padded and counts right-aligned so the column reads.
fn write_stats_table(out: &mut impl Write, stats: &ReportStats) -> std::io::Result<()> {
    let name_width = stats.kinds.iter().map(|k| k.len()).fold("kind".len(), usize::max);
    let counts: Vec<String> = stats.total.iter().map(u128::to_string).collect();
    let count_width = counts.iter().map(String::len).fold("leaves".len(), usize::max);
    writeln!(out)?;
    writeln!(out, "{:name_width$}  {:>count_width$}", "kind", "leaves")?;
    for (kind, count) in stats.kinds.iter().zip(&counts) {
        writeln!(out, "{kind:name_width$}  {count:>count_width$}")?;
    }
    writeln!(out)?;
    Ok(())
}

/// The root's moves in notation with what was counted below each, sorted
/// by notation where the game wants it.
pub(crate) fn in_notation<G: perft_core::Game, T: Copy>(
    root: &G,
    moves: &[(G::Move, T)],
) -> Vec<(String, T)> {
    let mut named: Vec<(String, T)> = moves
        .iter()
        .map(|&(mv, counted)| (root.format_move(mv), counted))
        .collect();
    if G::SORT_DIVIDE {
        named.sort_by(|a, b| a.0.cmp(&b.0));
    }
    named
}

/// What a local count reports besides its numbers: the game, the root, and
/// how and where it was counted.
pub(crate) struct LocalRun {
    pub depth: u32,
    pub seconds: f64,
    pub threads: usize,
    pub table: Option<TableReport>,
    pub raw: bool,
}

impl LocalRun {
    /// The report of a count of `root`, with or without statistics.
    pub(crate) fn report<G: perft_core::Game>(
        self,
        root: &G,
        total: Leaves,
        divide: Vec<(String, Leaves)>,
        stats: Option<ReportStats>,
    ) -> Report {
        Report {
            game: G::NAME,
            convention: G::CONVENTION,
            reports_higher: G::GAME_OVER_IS_LEAF,
            position: root.to_string(),
            depth: self.depth,
            total,
            divide,
            stats,
            seconds: self.seconds,
            source: Source::Local(LocalSource {
                threads: self.threads,
                table: self.table,
                kernel: G::best_kernel().name(),
                raw: self.raw,
                peak_memory_bytes: peak_memory_bytes(),
            }),
        }
    }
}
