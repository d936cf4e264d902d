//! How a game's tree is counted where authorities differ. Only Reversi has
//! a choice: Aart Bik's table and OEIS A124004 treat passes and early game
//! ends differently, so their counts part from depth 9 on.
//!
//! Each convention is its own [`Game`](crate::Game) type ([`Reversi`] and
//! [`ReversiOeis`]), so the counting recursion is monomorphised per
//! convention and no node ever tests which one it is in.
//!
//! [`Reversi`]: crate::Reversi
//! [`ReversiOeis`]: crate::ReversiOeis

use std::fmt;
use std::str::FromStr;

/// A way of counting a game's tree.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Convention {
    /// Aart Bik's (the default): a pass is a ply, and a node where neither
    /// side can move counts as one leaf ("higher" when two or more plies
    /// above full depth).
    Bik,
    /// OEIS A124004's: a pass is not a ply (the side with no move passes
    /// and the opponent moves within the same ply), and a game that ends
    /// before full depth contributes nothing.
    Oeis,
}

impl Convention {
    /// Every convention, default first.
    pub const ALL: [Convention; 2] = [Convention::Bik, Convention::Oeis];

    /// The lower-case name used on the command line, in files and reports.
    pub const fn name(self) -> &'static str {
        match self {
            Convention::Bik => "bik",
            Convention::Oeis => "oeis",
        }
    }

    /// One line for help texts.
    pub const fn about(self) -> &'static str {
        match self {
            Convention::Bik => {
                "Aart Bik's: a pass is a ply; a game over above full depth is one 'higher' leaf"
            }
            Convention::Oeis => "OEIS A124004's: a pass is not a ply; a game that ends early counts nothing",
        }
    }
}

impl fmt::Display for Convention {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A convention name that is not one of ours.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown convention '{name}': expected bik or oeis")]
pub struct UnknownConvention {
    /// The name as given (cut and escaped for echoing).
    pub name: String,
}

impl FromStr for Convention {
    type Err = UnknownConvention;

    /// The name in any case, surrounding spaces ignored.
    fn from_str(name: &str) -> Result<Convention, UnknownConvention> {
        Convention::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(name.trim()))
            .ok_or_else(|| UnknownConvention {
                name: crate::echoed(name),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back() {
        for c in Convention::ALL {
            assert_eq!(c.name().parse::<Convention>(), Ok(c));
        }
        assert_eq!(
            "Bik's".parse::<Convention>().unwrap_err().to_string(),
            "unknown convention 'Bik's': expected bik or oeis"
        );
    }
}
