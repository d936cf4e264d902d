//! The registry line of each game, and [`GameKind`]: a game named at run
//! time, with its facts, its functions and its generic dispatch.

use std::fmt;
use std::str::FromStr;

use super::facts::GameFacts;
use super::fns::GameFns;
use crate::game::Game;
use crate::stats::StatsVisitor;

/// Generic code to run for a game chosen at run time.
pub trait GameVisitor {
    /// What the code returns.
    type Output;
    /// Runs the code for game `G`.
    fn visit<G: Game>(self) -> Self::Output;
}

/// Declares [`GameKind`] with one variant per game, its facts, functions
/// and dispatch.
macro_rules! registry {
    ($($(#[$doc:meta])* $variant:ident => $game:ty),+ $(,)?) => {
        /// A game Deep Perft counts.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum GameKind {
            $($(#[$doc])* $variant,)+
        }

        impl GameKind {
            /// Every game, in registry order.
            pub const ALL: &'static [GameKind] = &[$(GameKind::$variant),+];

            /// The game's facts.
            pub const fn facts(self) -> GameFacts {
                match self {
                    $(GameKind::$variant => GameFacts::of::<$game>(),)+
                }
            }

            /// The game's plain functions, for cold paths.
            pub fn fns(self) -> &'static GameFns {
                match self {
                    $(GameKind::$variant => {
                        const FNS: GameFns = GameFns::of::<$game>();
                        &FNS
                    })+
                }
            }

            /// Runs `visitor` with this game's type: for counting and other
            /// hot generic code.
            pub fn dispatch<V: GameVisitor>(self, visitor: V) -> V::Output {
                match self {
                    $(GameKind::$variant => visitor.visit::<$game>(),)+
                }
            }

            /// Runs `visitor` with this game's type, which counts
            /// statistics too (every registered game does).
            pub fn dispatch_stats<V: StatsVisitor>(self, visitor: V) -> V::Output {
                match self {
                    $(GameKind::$variant => visitor.visit::<$game>(),)+
                }
            }
        }
    };
}

registry! {
    /// Reversi (Othello) 8x8.
    Reversi => crate::Reversi,
    /// English draughts 8x8.
    Checkers => crate::Checkers,
    /// Chess.
    Chess => crate::Chess,
}

/// A game name that is not one of ours.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown game '{name}': expected one of {}", GameKind::names().join(", "))]
pub struct UnknownGame {
    /// The name as given (cut and escaped for echoing).
    pub name: String,
}

impl GameKind {
    /// The lower-case name ([`Game::NAME`]).
    pub const fn name(self) -> &'static str {
        self.facts().name
    }

    /// The deepest perft accepted ([`Game::MAX_DEPTH`]).
    pub const fn max_depth(self) -> u32 {
        self.facts().max_depth
    }

    /// Whether results carry the game-over ("higher") split.
    pub const fn reports_higher(self) -> bool {
        self.facts().reports_higher
    }

    /// Bytes of the game's packed positions ([`Game::PACKED_BYTES`]).
    pub const fn packed_bytes(self) -> usize {
        self.facts().packed_bytes
    }

    /// The kinds of the game's statistics, in column order.
    pub const fn stats_kinds(self) -> &'static [&'static str] {
        self.facts().stats_kinds
    }

    /// Every game's name, in registry order.
    pub fn names() -> Vec<&'static str> {
        GameKind::ALL.iter().map(|kind| kind.name()).collect()
    }
}

impl FromStr for GameKind {
    type Err = UnknownGame;

    /// The name in any case, surrounding spaces ignored.
    fn from_str(name: &str) -> Result<GameKind, UnknownGame> {
        GameKind::ALL
            .iter()
            .copied()
            .find(|kind| kind.name().eq_ignore_ascii_case(name.trim()))
            .ok_or_else(|| UnknownGame {
                name: crate::echoed(name),
            })
    }
}

impl fmt::Display for GameKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_exactly() {
        for &kind in GameKind::ALL {
            assert_eq!(kind.name().parse::<GameKind>(), Ok(kind));
        }
        assert_eq!(
            "go".parse::<GameKind>().unwrap_err().to_string(),
            "unknown game 'go': expected one of reversi, checkers, chess"
        );
    }
}
