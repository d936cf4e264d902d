//! The game registry: the one place that lists the games. Code that learns
//! the game at run time (the CLI, the wire) names it with [`GameKind`] and
//! calls generic code for it through [`GameKind::dispatch`], monomorphized
//! per game. Every per-game fact lives on the [`Game`] trait.
//!
//! Adding a game is a new module implementing [`Game`] plus one line in the
//! `registry!` call below.

use std::fmt;
use std::str::FromStr;

use crate::stats::StatsVisitor;
use crate::{Game, UnpackError};

/// Generic code to run for a game chosen at run time.
pub trait GameVisitor {
    /// What the code returns.
    type Output;
    /// Runs the code for game `G`.
    fn visit<G: Game>(self) -> Self::Output;
}

/// What the registry knows of a game without running generic code: the
/// [`Game`] consts, readable in `const` contexts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GameFacts {
    /// [`Game::NAME`].
    pub name: &'static str,
    /// [`Game::ABOUT`].
    pub about: &'static str,
    /// [`Game::MAX_DEPTH`].
    pub max_depth: u32,
    /// [`Game::GAME_OVER_IS_LEAF`]: results carry a "higher" split.
    pub reports_higher: bool,
    /// [`Game::SORT_DIVIDE`]: divide lines are printed sorted by move.
    pub sort_divide: bool,
    /// [`Game::PACKED_BYTES`]: the length of every packed position.
    pub packed_bytes: usize,
}

impl GameFacts {
    /// The facts of game `G`.
    pub const fn of<G: Game>() -> GameFacts {
        GameFacts {
            name: G::NAME,
            about: G::ABOUT,
            max_depth: G::MAX_DEPTH,
            reports_higher: G::GAME_OVER_IS_LEAF,
            sort_divide: G::SORT_DIVIDE,
            packed_bytes: G::PACKED_BYTES,
        }
    }
}

/// Declares [`GameKind`] with one variant per game, and its dispatch.
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

            /// Runs `visitor` with this game's type.
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

    /// Most leaves a tree of `depth` plies can have ([`Game::max_leaves`]).
    pub fn max_leaves(self, depth: u32) -> u128 {
        struct MaxLeaves(u32);
        impl GameVisitor for MaxLeaves {
            type Output = u128;
            fn visit<G: Game>(self) -> u128 {
                G::max_leaves(self.0)
            }
        }
        self.dispatch(MaxLeaves(depth))
    }

    /// Whether results carry the game-over ("higher") split.
    pub const fn reports_higher(self) -> bool {
        self.facts().reports_higher
    }

    /// Bytes of the game's packed positions ([`Game::PACKED_BYTES`]).
    pub const fn packed_bytes(self) -> usize {
        self.facts().packed_bytes
    }

    /// The position's text for people (Display of the game), or why the bytes are not a position.
    pub fn show_packed(self, bytes: &[u8]) -> Result<String, UnpackError> {
        struct Show<'a>(&'a [u8]);
        impl GameVisitor for Show<'_> {
            type Output = Result<String, UnpackError>;
            fn visit<G: Game>(self) -> Self::Output {
                G::unpack(self.0).map(|pos| pos.to_string())
            }
        }
        self.dispatch(Show(bytes))
    }

    /// Parses a position text (empty/whitespace = start) and packs it.
    pub fn pack_text(self, text: &str) -> Result<Vec<u8>, String> {
        struct Pack<'a>(&'a str);
        impl GameVisitor for Pack<'_> {
            type Output = Result<Vec<u8>, String>;
            fn visit<G: Game>(self) -> Self::Output {
                let pos = if self.0.trim().is_empty() {
                    G::start()
                } else {
                    self.0.parse::<G>().map_err(|e| e.to_string())?
                };
                let mut out = Vec::with_capacity(G::PACKED_BYTES);
                pos.pack(&mut out);
                Ok(out)
            }
        }
        self.dispatch(Pack(text))
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
                name: crate::shown(name),
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
