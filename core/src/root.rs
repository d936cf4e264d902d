//! The root of a count as a person gives it: a position's text (or the
//! game's start), a depth the game allows, Chess960 notation, and moves
//! played from the position. [`RootSetup`] is the unchecked request;
//! [`RootSetup::root`] makes it a position or says which part is wrong.

use std::any::Any;

use crate::{Chess, Game, MoveError};

/// A root as asked for, not yet checked.
#[derive(Debug, Clone, Copy)]
pub struct RootSetup<'a> {
    /// The position's text; `None` for the game's start.
    pub position: Option<&'a str>,
    /// Plies to be counted below the root.
    pub depth: u32,
    /// Chess: moves written and read with castling as the king taking its
    /// rook (`e1h1`), as engines do with UCI_Chess960.
    pub chess960: bool,
    /// Moves played from the position before counting, in the game's
    /// notation; each may hold several, separated by spaces.
    pub moves: &'a [String],
}

/// Why a [`RootSetup`] is no root.
#[derive(Debug, thiserror::Error)]
pub enum RootRefused {
    /// The depth is beyond what the game's counts are built for.
    #[error("depth {depth} is above the {game} limit of {limit}")]
    TooDeep {
        game: &'static str,
        depth: u32,
        limit: u32,
    },
    /// The position's text is no position of the game.
    #[error("invalid {game} position '{echoed}': {source}")]
    Position {
        game: &'static str,
        /// The text, cut short and escaped for display.
        echoed: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Chess960 notation was asked of a game that has no castling.
    #[error("--chess960 is for chess, not {game}")]
    NotChess { game: &'static str },
    /// A move is not legal where it is played.
    #[error(transparent)]
    Move(#[from] MoveError),
}

impl<'a> RootSetup<'a> {
    /// The start, or `position`, to be counted `depth` plies deep.
    pub fn new(position: Option<&'a str>, depth: u32) -> RootSetup<'a> {
        RootSetup {
            position,
            depth,
            chess960: false,
            moves: &[],
        }
    }

    /// The root of game `G`, or the first thing wrong with the request.
    ///
    /// ```
    /// use perft_core::{Chess, Game, RootSetup};
    ///
    /// let moves = ["e2e4 e7e5".to_owned()];
    /// let setup = RootSetup { moves: &moves, ..RootSetup::new(None, 3) };
    /// let root: Chess = setup.root().unwrap();
    /// assert_eq!(root.to_string(), "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2");
    ///
    /// let refused = RootSetup::new(None, 17).root::<Chess>().unwrap_err();
    /// assert_eq!(refused.to_string(), "depth 17 is above the chess limit of 16");
    /// ```
    pub fn root<G: Game>(&self) -> Result<G, RootRefused> {
        if self.depth > G::MAX_DEPTH {
            return Err(RootRefused::TooDeep {
                game: G::NAME,
                depth: self.depth,
                limit: G::MAX_DEPTH,
            });
        }
        let mut root = match self.position {
            None => G::start(),
            Some(text) => text.parse::<G>().map_err(|e| RootRefused::Position {
                game: G::NAME,
                echoed: crate::echoed(text.trim()),
                source: Box::new(e),
            })?,
        };
        if self.chess960 {
            match (&mut root as &mut dyn Any).downcast_mut::<Chess>() {
                Some(chess) => *chess = chess.with_chess960_notation(true),
                None => return Err(RootRefused::NotChess { game: G::NAME }),
            }
        }
        for text in self.moves.iter().flat_map(|m| m.split_whitespace()) {
            root = root.play(root.parse_move(text)?);
        }
        Ok(root)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Checkers, Reversi};

    #[test]
    fn each_part_is_refused_by_name() {
        let bad = RootSetup::new(Some("not a board\n"), 3).root::<Checkers>();
        let message = bad.unwrap_err().to_string();
        assert!(
            message.starts_with("invalid checkers position 'not a board': "),
            "{message}"
        );

        let setup = RootSetup {
            chess960: true,
            ..RootSetup::new(None, 3)
        };
        let refused = setup.root::<Reversi>().unwrap_err();
        assert_eq!(refused.to_string(), "--chess960 is for chess, not reversi");

        let moves = ["e2e5".to_owned()];
        let setup = RootSetup {
            moves: &moves,
            ..RootSetup::new(None, 3)
        };
        let refused = setup.root::<Chess>().unwrap_err();
        assert!(matches!(refused, RootRefused::Move(_)), "{refused}");
    }

    #[test]
    fn chess960_notation_writes_castling_as_taking_the_rook() {
        let setup = RootSetup {
            chess960: true,
            ..RootSetup::new(Some("4k3/8/8/8/8/8/8/4K2R w K - 0 1"), 1)
        };
        let root: Chess = setup.root().unwrap();
        assert!(root.parse_move("e1h1").is_ok());
    }
}
