//! Property tests over random playouts: every reachable position prints and
//! parses back to itself, every legal move round-trips through its notation,
//! bulk counting agrees with the move list, and `play` keeps each game's
//! invariants.

use perft_core::checkers::{CheckersMove, Side};
use perft_core::chess::Colour;
use perft_core::reversi::{ReversiMove, flips};
use perft_core::{Checkers, Chess, Game, Leaves, MoveSet, Reversi, divide, perft};
use proptest::prelude::*;

/// Plays `choices` from the start (each picks among the legal moves) and
/// calls `visit(parent, move, child)` for every ply played.
fn playout<G: Game>(choices: &[u16], mut visit: impl FnMut(&G, G::Move, &G)) -> G {
    let mut pos = G::start();
    for &choice in choices {
        let moves: Vec<G::Move> = pos.legal_moves().into_iter().collect();
        if moves.is_empty() {
            break;
        }
        let mv = moves[usize::from(choice) % moves.len()];
        let child = pos.play(mv);
        visit(&pos, mv, &child);
        pos = child;
    }
    pos
}

/// What every game must satisfy at every reachable position.
fn check_common<G: Game>(pos: &G) -> Result<(), TestCaseError> {
    let text = pos.to_string();
    prop_assert_eq!(text.parse::<G>().ok(), Some(*pos), "{} does not round-trip", text);
    let moves = pos.legal_moves();
    prop_assert_eq!(pos.count_moves(), moves.len() as u64);
    for mv in moves {
        let notation = pos.format_move(mv);
        prop_assert_eq!(pos.parse_move(&notation), Ok(mv), "move {} in {}", notation, text);
    }
    Ok(())
}

fn check_reversi_ply(parent: &Reversi, mv: ReversiMove, child: &Reversi) -> Result<(), TestCaseError> {
    let (before, after) = (
        parent.player() | parent.opponent(),
        child.player() | child.opponent(),
    );
    prop_assert_eq!(child.player() & child.opponent(), 0);
    prop_assert_eq!(child.to_move(), parent.to_move().other());
    match mv.square() {
        None => {
            prop_assert_eq!(child.player(), parent.opponent());
            prop_assert_eq!(child.opponent(), parent.player());
        }
        Some(square) => {
            let flipped = flips(parent.player(), parent.opponent(), square);
            prop_assert!(flipped != 0, "a placement flips at least one disc");
            prop_assert_eq!(after, before | (1 << square));
            prop_assert_eq!(child.opponent(), parent.player() | flipped | (1 << square));
            prop_assert_eq!(child.player(), parent.opponent() & !flipped);
        }
    }
    let mover = parent.to_move();
    prop_assert_eq!(child.discs(mover) | child.discs(mover.other()), after);
    prop_assert_eq!(child.to_move(), mover.other(), "the turn passes with every ply");
    Ok(())
}

fn check_checkers_ply(parent: &Checkers, mv: CheckersMove, child: &Checkers) -> Result<(), TestCaseError> {
    let side = parent.to_move();
    let (dark, light, kings) = (child.pieces(Side::Dark), child.pieces(Side::Light), child.kings());
    prop_assert_eq!(dark & light, 0);
    prop_assert_eq!(kings & !(dark | light), 0, "kings only on occupied squares");
    prop_assert_eq!(dark & !kings & 0xF000_0000, 0, "no dark man on 29-32");
    prop_assert_eq!(light & !kings & 0x0000_000F, 0, "no light man on 1-4");
    prop_assert_eq!(child.pieces(side).count_ones(), parent.pieces(side).count_ones());
    let taken = mv.captured().count_ones();
    prop_assert_eq!(
        child.pieces(side.other()).count_ones() + taken,
        parent.pieces(side.other()).count_ones()
    );
    prop_assert_eq!(mv.captured() & parent.pieces(side.other()), mv.captured());
    prop_assert_eq!(mv.is_capture(), taken > 0);
    prop_assert_eq!(child.to_move(), side.other());
    Ok(())
}

fn check_chess_ply(parent: &Chess, child: &Chess) -> Result<(), TestCaseError> {
    // Parsing the child's FEN validates it: one king a side, no pawn on a
    // back rank, and the side that just moved is not in check.
    let fen = child.to_string();
    prop_assert_eq!(fen.parse::<Chess>().ok(), Some(*child));
    prop_assert_eq!(child.side_to_move(), parent.side_to_move().other());
    let mirror = child.colour_flipped();
    prop_assert_eq!(mirror.table_key(), child.table_key(), "mirror of {}", fen);
    prop_assert_eq!(mirror.count_moves(), child.count_moves());
    prop_assert_eq!(mirror.colour_flipped(), *child);
    prop_assert_eq!(
        child.side_pieces(Colour::White) & child.side_pieces(Colour::Black),
        0
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn chess_playouts_keep_invariants(choices in proptest::collection::vec(any::<u16>(), 0..160)) {
        let mut failure = Ok(());
        let end = playout::<Chess>(&choices, |parent, _, child| {
            if failure.is_ok() {
                failure = check_common(parent).and_then(|()| check_chess_ply(parent, child));
            }
        });
        failure?;
        check_common(&end)?;
        let mirror = end.colour_flipped();
        prop_assert_eq!(perft(&mirror, 2), perft(&end, 2));
    }

    #[test]
    fn reversi_playouts_keep_invariants(choices in proptest::collection::vec(any::<u16>(), 0..70)) {
        let mut failure = Ok(());
        let end = playout::<Reversi>(&choices, |parent, mv, child| {
            if failure.is_ok() {
                failure = check_common(parent).and_then(|()| check_reversi_ply(parent, mv, child));
            }
        });
        failure?;
        check_common(&end)?;
    }

    #[test]
    fn checkers_playouts_keep_invariants(choices in proptest::collection::vec(any::<u16>(), 0..120)) {
        let mut failure = Ok(());
        let end = playout::<Checkers>(&choices, |parent, mv, child| {
            if failure.is_ok() {
                failure = check_common(parent).and_then(|()| check_checkers_ply(parent, mv, child));
            }
        });
        failure?;
        check_common(&end)?;
    }

    /// Divide sums to perft, and its lines are perft of each child, from
    /// random reachable positions (game-over roots included).
    #[test]
    fn divide_sums_to_perft_from_random_positions(choices in proptest::collection::vec(any::<u16>(), 0..60), depth in 0u32..5) {
        check_divide(&playout::<Reversi>(&choices, |_, _, _| {}), depth)?;
        check_divide(&playout::<Checkers>(&choices, |_, _, _| {}), depth)?;
        check_divide(&playout::<Chess>(&choices, |_, _, _| {}), depth.min(3))?;
    }
}

fn check_divide<G: Game>(pos: &G, depth: u32) -> Result<(), TestCaseError> {
    let table = divide(pos, depth);
    prop_assert_eq!(table.total, perft(pos, depth));
    if !table.moves.is_empty() {
        prop_assert_eq!(table.moves.iter().map(|&(_, n)| n).sum::<Leaves>(), table.total);
        for &(mv, n) in &table.moves {
            prop_assert_eq!(n, perft(&pos.play(mv), depth - 1));
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(60))]

    /// The planner's units, weighted by their paths, add up to direct perft,
    /// first move by first move, whatever the position and split depth.
    #[test]
    fn planned_units_times_paths_equal_direct_perft(
        choices in proptest::collection::vec(any::<u16>(), 0..50),
        depth in 1u32..6,
        split in 1u32..6,
    ) {
        check_plan(&playout::<Reversi>(&choices, |_, _, _| {}), depth, split.min(depth))?;
        check_plan(&playout::<Checkers>(&choices, |_, _, _| {}), depth, split.min(depth))?;
        let depth = depth.min(4);
        check_plan(&playout::<Chess>(&choices, |_, _, _| {}), depth, split.min(depth))?;
    }
}

fn check_plan<G: Game>(pos: &G, depth: u32, split: u32) -> Result<(), TestCaseError> {
    let plan = perft_core::Plan::new(*pos, depth, split).expect("1 <= split <= depth");
    prop_assert_eq!(plan.split_depth(), split);
    let counts: Vec<Leaves> = plan
        .units()
        .positions()
        .iter()
        .map(|u| perft(u, plan.remaining_depth()))
        .collect();
    prop_assert_eq!(plan.divide::<perft_core::Plain>(&counts), divide(pos, depth));
    // Merging never loses a path: the weights count exactly the paths to
    // the frontier (game-over nodes above it are settled instead).
    let paths: u64 = plan
        .units()
        .iter()
        .flat_map(|(_, weights)| weights)
        .map(|w| w.paths)
        .sum();
    prop_assert_eq!(paths, paths_to_frontier(pos, split));
    Ok(())
}

/// Paths of exactly `plies` plies from `pos` (a game-over node ends its
/// paths early, so they never reach the frontier).
fn paths_to_frontier<G: Game>(pos: &G, plies: u32) -> u64 {
    if plies == 0 {
        return 1;
    }
    pos.legal_moves()
        .into_iter()
        .map(|mv| paths_to_frontier(&pos.play(mv), plies - 1))
        .sum()
}
