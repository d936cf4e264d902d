//! What a game implements to be counted with statistics, and generic
//! statistics code to run for a game chosen at run time.

use super::tally::{LeafStats, Tally};
use crate::game::Game;
use crate::kernel::Isa;

/// A game whose leaves can be counted by kind. Every registered game is
/// one ([`GameKind::dispatch_stats`](crate::GameKind::dispatch_stats)).
pub trait GameStats: Game {
    /// The game's statistics.
    type Stats: Tally;

    /// The kinds of this position as a leaf no move led to: the root of a
    /// depth-0 count, or a game-over node above full depth that the game
    /// counts as a leaf ([`Game::GAME_OVER_IS_LEAF`]).
    fn node_kinds(&self) -> Self::Stats;

    /// The leaves one ply below this position and their kinds: every legal
    /// move classified, or, with none, what the game counts there. The
    /// last ply of the statistics recursion, on the instructions `isa`
    /// allows.
    fn children_stats<I: Isa>(&self, isa: I) -> LeafStats<Self::Stats>;

    /// The kinds of the one leaf `mv` (a legal move here) makes when it is
    /// the last ply: a divide's first move at depth 1. Over all moves, the
    /// sum is [`GameStats::children_stats`]'s.
    fn move_kinds(&self, mv: Self::Move) -> Self::Stats;
}

/// Generic code to run, with statistics, for a game chosen at run time.
pub trait StatsVisitor {
    /// What the code returns.
    type Output;
    /// Runs the code for game `G`.
    fn visit<G: GameStats>(self) -> Self::Output;
}
