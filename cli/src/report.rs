//! A perft result as the user sees it, in text, JSON or CSV. `perft run`
//! and (later) `perft divide` print through this one type.

use std::io::Write;

use perft_core::Leaves;
use serde::Serialize;

use crate::args::Format;
use crate::error::CliError;

/// A finished count with its divide table.
#[derive(Debug, Clone)]
pub struct Report {
    pub game: &'static str,
    /// Whether the game has game-over leaves, so the split is worth printing.
    pub reports_higher: bool,
    pub position: String,
    pub depth: u32,
    pub total: Leaves,
    /// Each first move in the game's notation with its leaves.
    pub divide: Vec<(String, Leaves)>,
    pub seconds: f64,
}

#[derive(Serialize)]
struct JsonReport<'a> {
    game: &'a str,
    position: &'a str,
    depth: u32,
    leaves: String,
    full_depth: String,
    higher: String,
    divide: Vec<JsonMove<'a>>,
    seconds: f64,
    leaves_per_second: u64,
}

#[derive(Serialize)]
struct JsonMove<'a> {
    #[serde(rename = "move")]
    mv: &'a str,
    leaves: String,
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
                serde_json::to_writer(&mut *out, &self.json())
                    .map_err(|e| CliError::Failed(e.to_string()))?;
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
        writeln!(out, "time: {:.3} s", self.seconds)?;
        writeln!(out, "speed: {:.0} leaves/s", self.leaves_per_second())
    }

    fn json(&self) -> JsonReport<'_> {
        JsonReport {
            game: self.game,
            position: &self.position,
            depth: self.depth,
            leaves: self.total.leaves.to_string(),
            full_depth: self.total.full_depth().to_string(),
            higher: self.total.higher.to_string(),
            divide: self
                .divide
                .iter()
                .map(|(mv, leaves)| JsonMove {
                    mv,
                    leaves: leaves.leaves.to_string(),
                })
                .collect(),
            seconds: self.seconds,
            leaves_per_second: self.leaves_per_second().round() as u64,
        }
    }

    fn write_csv(&self, out: &mut impl Write) -> Result<(), CliError> {
        let mut csv = csv::Writer::from_writer(out);
        let csv_err = |e: csv::Error| CliError::Failed(e.to_string());
        csv.write_record(["move", "leaves", "full_depth", "higher"])
            .map_err(csv_err)?;
        let total = ("total".to_owned(), self.total);
        for (mv, leaves) in self.divide.iter().chain(std::iter::once(&total)) {
            csv.write_record([
                mv.clone(),
                leaves.leaves.to_string(),
                leaves.full_depth().to_string(),
                leaves.higher.to_string(),
            ])
            .map_err(csv_err)?;
        }
        csv.flush()?;
        Ok(())
    }
}
