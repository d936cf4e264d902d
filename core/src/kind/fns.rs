//! A game's cold paths as plain functions: one table per game, built
//! generically by [`GameFns::of`], so code that learns the game at run time
//! calls `kind.fns().show_packed(bytes)` instead of writing a visitor. Each
//! entry is the game's own monomorphised function; what it runs inside
//! (counting included) stays generic, and none is called per node.

use crate::count::Leaves;
use crate::game::{BenchCases, Game, UnpackError};
use crate::published::Published;
use crate::stats::{GameStats, NamedStats, StatsRequestError, Tally, count_packed_stats};

/// The plain functions of one game (or one counting convention of it:
/// [`GameKind::fns_in`](crate::GameKind::fns_in)).
#[derive(Clone, Copy, Debug)]
pub struct GameFns {
    max_leaves: fn(u32) -> u128,
    show_packed: fn(&[u8]) -> Result<String, UnpackError>,
    pack_text: fn(&str) -> Result<Vec<u8>, PositionRefused>,
    published: fn(u32) -> Option<Published>,
    published_depths: fn() -> Vec<u32>,
    bench: fn() -> BenchCases,
    count_packed_stats: fn(&[u8], u32) -> Result<NamedStats, StatsRequestError>,
    stats_kinds: &'static [&'static str],
    kinds_fit: fn(&Leaves, &[u128]) -> bool,
}

impl GameFns {
    /// The functions of game `G`.
    pub const fn of<G: GameStats>() -> GameFns {
        GameFns {
            max_leaves: G::max_leaves,
            show_packed: show_packed::<G>,
            pack_text: pack_text::<G>,
            published: G::published,
            published_depths: G::published_depths,
            bench: bench::<G>,
            count_packed_stats: count_packed_stats::<G>,
            stats_kinds: <G::Stats as Tally>::KINDS,
            kinds_fit: kinds_fit::<G>,
        }
    }

    /// Most leaves a tree of `depth` plies can have ([`Game::max_leaves`]).
    pub fn max_leaves(&self, depth: u32) -> u128 {
        (self.max_leaves)(depth)
    }

    /// The position's text for people (the game's `Display`), or why the
    /// bytes are not a position.
    pub fn show_packed(&self, bytes: &[u8]) -> Result<String, UnpackError> {
        (self.show_packed)(bytes)
    }

    /// Parses a position text (empty or blank: the start) and packs it.
    pub fn pack_text(&self, text: &str) -> Result<Vec<u8>, PositionRefused> {
        (self.pack_text)(text)
    }

    /// What was published from the start at `depth`, if anything
    /// ([`Game::published`]).
    pub fn published(&self, depth: u32) -> Option<Published> {
        (self.published)(depth)
    }

    /// The depths with a published total, deepest last
    /// ([`Game::published_depths`]).
    pub fn published_depths(&self) -> Vec<u32> {
        (self.published_depths)()
    }

    /// The cases `perft bench` measures ([`Game::BENCH`]).
    pub fn bench(&self) -> BenchCases {
        (self.bench)()
    }

    /// The statistics of the packed position `bytes` counted `depth` plies
    /// deep, on one thread without a table: one unit of a distributed
    /// count ([`count_packed_stats`](crate::stats::count_packed_stats)).
    pub fn count_packed_stats(&self, bytes: &[u8], depth: u32) -> Result<NamedStats, StatsRequestError> {
        (self.count_packed_stats)(bytes, depth)
    }

    /// The names of the game's kinds of leaves, in column order
    /// ([`Tally::KINDS`]).
    pub fn stats_kinds(&self) -> &'static [&'static str] {
        self.stats_kinds
    }

    /// Whether `kinds` (in column order) can be the kinds of a tree of
    /// `leaves`: one per kind, none above the leaves, totals equal to their
    /// parts. What a count by kind from outside the process is checked with.
    pub fn kinds_fit(&self, leaves: &Leaves, kinds: &[u128]) -> bool {
        (self.kinds_fit)(leaves, kinds)
    }
}

fn kinds_fit<G: GameStats>(leaves: &Leaves, kinds: &[u128]) -> bool {
    leaves.is_consistent() && G::Stats::from_counts(kinds).is_some_and(|tally| tally.is_consistent(leaves))
}

fn show_packed<G: Game>(bytes: &[u8]) -> Result<String, UnpackError> {
    G::unpack(bytes).map(|pos| pos.to_string())
}

fn pack_text<G: Game>(text: &str) -> Result<Vec<u8>, PositionRefused> {
    let pos = if text.trim().is_empty() {
        G::start()
    } else {
        text.parse::<G>().map_err(|e| PositionRefused(Box::new(e)))?
    };
    let mut out = Vec::with_capacity(G::PACKED_BYTES);
    pos.pack(&mut out);
    Ok(out)
}

/// Why a position text is no position of a game chosen at run time: the
/// game's own error ([`Game::PositionError`]), its words unchanged.
#[derive(Debug, thiserror::Error)]
#[error(transparent)]
pub struct PositionRefused(pub Box<dyn std::error::Error + Send + Sync>);

fn bench<G: Game>() -> BenchCases {
    G::BENCH
}

#[cfg(test)]
mod tests {
    use crate::GameKind;

    #[test]
    fn true_kinds_fit_and_impossible_ones_do_not() {
        for &kind in GameKind::ALL {
            let fns = kind.fns();
            let start = fns.pack_text("").unwrap();
            let stats = fns.count_packed_stats(&start, 4).unwrap();
            assert_eq!(stats.kinds, fns.stats_kinds(), "{kind}");
            assert!(fns.kinds_fit(&stats.leaves, &stats.counts), "{kind}");
            let mut fewer = stats.counts.clone();
            fewer.pop();
            assert!(!fns.kinds_fit(&stats.leaves, &fewer), "{kind}");
            let mut more = stats.counts.clone();
            more.push(0);
            assert!(!fns.kinds_fit(&stats.leaves, &more), "{kind}");
            let mut above = stats.counts.clone();
            above[0] = stats.leaves.leaves + 1;
            assert!(!fns.kinds_fit(&stats.leaves, &above), "{kind}");
        }
        let chess = GameKind::Chess.fns();
        let start = chess.pack_text("").unwrap();
        let stats = chess.count_packed_stats(&start, 4).unwrap();
        let at = stats.kinds.iter().position(|&k| k == "total_checks").unwrap();
        let mut forged = stats.counts.clone();
        forged[at] += 1;
        assert!(
            !chess.kinds_fit(&stats.leaves, &forged),
            "a total that is not its parts' sum"
        );
    }
}
