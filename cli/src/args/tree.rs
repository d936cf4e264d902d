//! The tree a count is asked of: game, depth, root position and Reversi's
//! convention, shared by `run`, `submit` and `estimate`.

use clap::Args;
use perft_core::{Convention, GameKind};

use super::values::{GameParser, convention_parser};

#[derive(Debug, Clone, Args)]
pub struct TreeArgs {
    /// The game.
    #[arg(long, value_parser = GameParser)]
    pub game: GameKind,
    /// Plies to count below the position.
    #[arg(long, allow_negative_numbers = true)]
    pub depth: u32,
    /// The root position (default: the game's start). Reversi positions
    /// often begin with `-`, so hyphens are taken as part of the value.
    #[arg(long, allow_hyphen_values = true)]
    pub position: Option<String>,
    /// Reversi's counting convention (default: bik); refused for other games.
    #[arg(long, value_parser = convention_parser())]
    pub convention: Option<Convention>,
}

impl TreeArgs {
    /// The start of `game`, `depth` plies deep.
    pub fn start(game: GameKind, depth: u32, convention: Option<Convention>) -> TreeArgs {
        TreeArgs {
            game,
            depth,
            position: None,
            convention,
        }
    }
}
