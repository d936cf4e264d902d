//! Which games have a choice of counting convention, and the game type or
//! functions that count a game in a given one.

use super::fns::GameFns;
use super::registry::{GameKind, GameVisitor};
use crate::convention::Convention;
use crate::stats::StatsVisitor;

/// A convention asked of a game that has only one way of counting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{game} has one way of counting: a convention ({convention}) applies to reversi only")]
pub struct ConventionRefused {
    /// The game.
    pub game: GameKind,
    /// The convention asked.
    pub convention: Convention,
}

impl GameKind {
    /// The conventions the game can be counted in, default first; empty
    /// for games with one way of counting.
    pub const fn conventions(self) -> &'static [Convention] {
        match self {
            GameKind::Reversi => &Convention::ALL,
            _ => &[],
        }
    }

    /// Checks that `convention` (where given) applies to the game, and
    /// returns the one to count in: the given one, else the game's default
    /// (`None` for games without a choice).
    pub fn resolve_convention(
        self,
        convention: Option<Convention>,
    ) -> Result<Option<Convention>, ConventionRefused> {
        match convention {
            None => Ok(self.conventions().first().copied()),
            Some(c) if self.conventions().contains(&c) => Ok(Some(c)),
            Some(c) => Err(ConventionRefused {
                game: self,
                convention: c,
            }),
        }
    }

    /// The functions of the type that counts this game in `convention`
    /// (`None`: the default): [`ReversiOeis`](crate::ReversiOeis)'s for
    /// Reversi in A124004's convention, else [`GameKind::fns`].
    pub fn fns_in(self, convention: Option<Convention>) -> Result<&'static GameFns, ConventionRefused> {
        const OEIS: GameFns = GameFns::of::<crate::ReversiOeis>();
        Ok(match self.resolve_convention(convention)? {
            Some(Convention::Oeis) => &OEIS,
            _ => self.fns(),
        })
    }

    /// Runs `visitor` with the type that counts this game in `convention`
    /// (`None`: the default): [`ReversiOeis`](crate::ReversiOeis) for
    /// Reversi in A124004's convention, else [`GameKind::dispatch`]'s.
    pub fn dispatch_in<V: GameVisitor>(
        self,
        convention: Option<Convention>,
        visitor: V,
    ) -> Result<V::Output, ConventionRefused> {
        Ok(if self.counts_oeis(convention)? {
            visitor.visit::<crate::ReversiOeis>()
        } else {
            self.dispatch(visitor)
        })
    }

    /// Whether `convention` (refused or resolved for this game) is
    /// A124004's, which has a type of its own.
    fn counts_oeis(self, convention: Option<Convention>) -> Result<bool, ConventionRefused> {
        Ok(self.resolve_convention(convention)? == Some(Convention::Oeis))
    }

    /// [`GameKind::dispatch_in`] for code that counts statistics.
    pub fn dispatch_stats_in<V: StatsVisitor>(
        self,
        convention: Option<Convention>,
        visitor: V,
    ) -> Result<V::Output, ConventionRefused> {
        Ok(if self.counts_oeis(convention)? {
            visitor.visit::<crate::ReversiOeis>()
        } else {
            self.dispatch_stats(visitor)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn other_games_refuse_a_convention() {
        assert_eq!(
            GameKind::Reversi.resolve_convention(None),
            Ok(Some(Convention::Bik))
        );
        assert_eq!(GameKind::Checkers.resolve_convention(None), Ok(None));
        assert_eq!(
            GameKind::Chess
                .resolve_convention(Some(Convention::Bik))
                .unwrap_err()
                .to_string(),
            "chess has one way of counting: a convention (bik) applies to reversi only"
        );
    }
}
