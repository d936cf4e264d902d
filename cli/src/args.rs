//! Command-line arguments of every `perft` subcommand.

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Deep Perft: exact perft and divide counts for Reversi and checkers.
#[derive(Debug, Parser)]
#[command(name = "perft", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Count a perft on this machine and print the divide table.
    Run(RunArgs),
}

/// The games Deep Perft counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GameName {
    /// Reversi (Othello) 8x8; positions as 64 squares a1..h8 and X or O.
    Reversi,
    /// English draughts 8x8; positions as PDN FEN.
    Checkers,
}

/// How a result is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// `move: count` lines, a blank line, the total and the timing.
    Text,
    /// One JSON object; every count a decimal string.
    Json,
    /// `move,leaves,full_depth,higher` rows and a final `total` row.
    Csv,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// The game.
    #[arg(long, value_enum)]
    pub game: GameName,
    /// Plies to count below the position.
    #[arg(long, allow_negative_numbers = true)]
    pub depth: u32,
    /// The root position (default: the game's start). Reversi positions
    /// often begin with `-`, so hyphens are taken as part of the value.
    #[arg(long, allow_hyphen_values = true)]
    pub position: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,
}
