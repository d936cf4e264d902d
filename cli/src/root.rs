//! The root of a count as the user gives it: a position's text (or the
//! start), Chess960 notation, and moves played from it; each bad value is
//! a usage error naming it.

use perft_core::Game;

use crate::error::CliError;

/// Parses the position (or takes the start) and checks the depth limit.
pub fn root_position<G: Game>(text: Option<&str>, depth: u32) -> Result<G, CliError> {
    if depth > G::MAX_DEPTH {
        return Err(CliError::Usage(format!(
            "depth {depth} is above the {} limit of {}",
            G::NAME,
            G::MAX_DEPTH
        )));
    }
    match text {
        None => Ok(G::start()),
        Some(text) => text.parse::<G>().map_err(|e| {
            CliError::Usage(format!(
                "invalid {} position '{}': {e}",
                G::NAME,
                perft_core::echoed(text.trim())
            ))
        }),
    }
}

/// `root` with its moves written in Chess960 notation when `chess960`
/// (castling as the king taking its rook); only chess has one.
pub fn with_chess960_notation<G: Game>(mut root: G, chess960: bool) -> Result<G, CliError> {
    if !chess960 {
        return Ok(root);
    }
    match (&mut root as &mut dyn std::any::Any).downcast_mut::<perft_core::Chess>() {
        Some(chess) => {
            *chess = chess.with_chess960_notation(true);
            Ok(root)
        }
        None => Err(CliError::Usage(format!(
            "--chess960 is for chess, not {}",
            G::NAME
        ))),
    }
}

/// `root` after each of `moves`, each parsed in the position it is played
/// in; the first illegal one is a usage error naming it.
pub fn play_moves<G: Game>(mut root: G, moves: &[String]) -> Result<G, CliError> {
    for text in moves.iter().flat_map(|m| m.split_whitespace()) {
        let mv = root
            .parse_move(text)
            .map_err(|e| CliError::Usage(e.to_string()))?;
        root = root.play(mv);
    }
    Ok(root)
}
