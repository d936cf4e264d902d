//! The games by name, for code that learns the game at run time (the CLI,
//! the wire) and then calls generic code for it, monomorphized per game.

use std::fmt;
use std::str::FromStr;

use crate::{Checkers, Game, Reversi};

/// A game Deep Perft counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum GameKind {
    /// Reversi (Othello) 8x8.
    Reversi,
    /// English draughts 8x8.
    Checkers,
}

/// Generic code to run for a game chosen at run time.
pub trait GameVisitor {
    /// What the code returns.
    type Output;
    /// Runs the code for game `G`.
    fn visit<G: Game>(self) -> Self::Output;
}

/// A game name that is not one of ours.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown game '{0}': expected reversi or checkers")]
pub struct UnknownGame(pub String);

impl GameKind {
    /// Every game.
    pub const ALL: [GameKind; 2] = [GameKind::Reversi, GameKind::Checkers];

    /// The lower-case name ([`Game::NAME`]).
    pub const fn name(self) -> &'static str {
        match self {
            GameKind::Reversi => Reversi::NAME,
            GameKind::Checkers => Checkers::NAME,
        }
    }

    /// The deepest perft accepted ([`Game::MAX_DEPTH`]).
    pub const fn max_depth(self) -> u32 {
        match self {
            GameKind::Reversi => Reversi::MAX_DEPTH,
            GameKind::Checkers => Checkers::MAX_DEPTH,
        }
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

    /// Runs `visitor` with this game's type.
    pub fn dispatch<V: GameVisitor>(self, visitor: V) -> V::Output {
        match self {
            GameKind::Reversi => visitor.visit::<Reversi>(),
            GameKind::Checkers => visitor.visit::<Checkers>(),
        }
    }
}

impl FromStr for GameKind {
    type Err = UnknownGame;

    fn from_str(name: &str) -> Result<GameKind, UnknownGame> {
        GameKind::ALL
            .into_iter()
            .find(|kind| kind.name().eq_ignore_ascii_case(name.trim()))
            .ok_or_else(|| UnknownGame(crate::shown(name)))
    }
}

impl fmt::Display for GameKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
