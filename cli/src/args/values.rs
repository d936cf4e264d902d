//! Values several subcommands take: the game, Reversi's convention and the
//! output format.

use clap::ValueEnum;
use perft_core::{Convention, GameKind};

/// Parses `--game` against the game registry, listing each game with its
/// [`Game::ABOUT`](perft_core::Game::ABOUT) in the help.
#[derive(Debug, Clone, Copy)]
pub struct GameParser;

impl GameParser {
    fn values() -> impl Iterator<Item = clap::builder::PossibleValue> {
        GameKind::ALL
            .iter()
            .map(|kind| clap::builder::PossibleValue::new(kind.name()).help(kind.facts().about))
    }

    fn names() -> clap::builder::PossibleValuesParser {
        clap::builder::PossibleValuesParser::new(Self::values())
    }
}

impl clap::builder::TypedValueParser for GameParser {
    type Value = GameKind;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<GameKind, clap::Error> {
        let name = Self::names().parse_ref(cmd, arg, value)?;
        name.parse()
            .map_err(|e| clap::Error::raw(clap::error::ErrorKind::InvalidValue, e))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new(Self::values()))
    }
}

/// Parses `--convention` (`bik` or `oeis`), listing each with its rule.
fn convention_values() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(
        Convention::ALL.map(|c| clap::builder::PossibleValue::new(c.name()).help(c.about())),
    )
}

/// [`convention_values`] mapped to the [`Convention`].
pub fn convention_parser() -> impl clap::builder::TypedValueParser<Value = Convention> {
    clap::builder::TypedValueParser::try_map(convention_values(), |name| name.parse::<Convention>())
}

/// How a result is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// `move: count` lines, a blank line, the total and the timing.
    Text,
    /// One JSON object; every count a decimal string.
    Json,
    /// `move,leaves,full_depth,higher` rows (and a column per kind with
    /// `--stats`) and a final `total` row.
    Csv,
}
