//! Reversi positions with empty centre squares: the original game's empty
//! board, hand-checked set-ups, and random empty-centre boards whose perft
//! is compared with a naive square-by-square reference mover written here
//! (no bitboards, no shared code with the engine).

use crate::reference::reversi::{cells_of, reference_perft};
use perft_core::{Counter, Game, Leaves, Reversi, TranspositionTable, divide, perft};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// A board text with `X` and `O` on the named squares.
fn board(dark: &[&str], light: &[&str], side: char) -> String {
    let index = |name: &&str| {
        let b = name.as_bytes();
        usize::from(b[1] - b'1') * 8 + usize::from(b[0] - b'a')
    };
    let mut cells = ['-'; 64];
    dark.iter().for_each(|sq| cells[index(sq)] = 'X');
    light.iter().for_each(|sq| cells[index(sq)] = 'O');
    format!("{} {side}", cells.iter().collect::<String>())
}

fn parse(text: &str) -> Reversi {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
}

/// The engine's counts for depths 0..=max, with and without a table.
fn engine_counts(pos: &Reversi, max: u32) -> Vec<Leaves> {
    let table = TranspositionTable::for_game::<Reversi>(1 << 20).expect("1 MiB holds a bucket");
    let mut counter = Counter::new(Some(&table));
    (0..=max)
        .map(|depth| {
            let plain = perft(pos, depth);
            assert_eq!(counter.perft(pos, depth), plain, "table, {pos} depth {depth}");
            assert_eq!(divide(pos, depth).total, plain, "divide, {pos} depth {depth}");
            plain
        })
        .collect()
}

#[test]
fn the_original_games_empty_board_is_one_leaf_at_every_depth() {
    let empty = parse(&format!("{} X", "-".repeat(64)));
    assert_eq!(empty.legal_moves().count(), 0);
    let counts = engine_counts(&empty, 8);
    assert_eq!(&counts[..2], &[Leaves::full(1), Leaves::full(1)]);
    for (depth, count) in counts.iter().enumerate().skip(2) {
        assert_eq!(*count, Leaves { leaves: 1, higher: 1 }, "depth {depth}");
    }
    assert!(divide(&empty, 5).moves.is_empty());
}

#[test]
fn hand_checked_set_ups() {
    // X a1, O b1: X's only move c1 takes the last O disc; then nobody moves.
    let corner = parse(&board(&["a1"], &["b1"], 'X'));
    assert_eq!(
        engine_counts(&corner, 4),
        [
            Leaves::full(1),
            Leaves::full(1),
            Leaves::full(1),
            Leaves { leaves: 1, higher: 1 },
            Leaves { leaves: 1, higher: 1 },
        ]
    );
    // X to move with no disc of its own: it passes, O has no flank either
    // (X has no disc), so this is game over at once.
    let lonely = parse(&board(&[], &["d4", "e5"], 'X'));
    assert_eq!(engine_counts(&lonely, 3)[3], Leaves { leaves: 1, higher: 1 });
    // X on d4 facing O e4 and O d5, centre e5 empty: X has f4 and d6.
    let text = board(&["d4"], &["e4", "d5"], 'X');
    let two = parse(&text);
    let moves: Vec<String> = two.legal_moves().map(|mv| two.format_move(mv)).collect();
    assert_eq!(moves, ["f4", "d6"]);
    // After f4, O answers d3 or f3 (through d4, and e4 to d5); after d6,
    // c4 or c6 (d4 to e4, and d5 to e4): four leaves at depth 2.
    let counts = engine_counts(&two, 7);
    assert_eq!(counts[2], Leaves::full(4));
    let reference: Vec<Leaves> = (0..=7).map(|d| reference_perft(&cells_of(&text), d)).collect();
    assert_eq!(counts, reference);
}

#[test]
fn the_start_with_an_empty_d4_matches_the_reference() {
    // The standard start with d4's O lifted: X to move.
    let text = "----------------------------X------XO--------------------------- X";
    let pos = parse(text);
    let counts = engine_counts(&pos, 6);
    let reference: Vec<Leaves> = (0..=6).map(|d| reference_perft(&cells_of(text), d)).collect();
    assert_eq!(counts, reference);
    // f5 and e6 are left; d3 and c4 needed d4's light disc.
    assert_eq!(counts[1], Leaves::full(2));
    eprintln!(
        "empty d4: {:?}",
        counts.iter().map(|c| c.leaves).collect::<Vec<_>>()
    );
}

#[test]
fn the_start_block_moved_off_centre() {
    // The start's 2x2 block moved to c3..d4, so e4, d5 and e5 are empty.
    let text = board(&["d3", "c4"], &["c3", "d4"], 'X');
    let counts = engine_counts(&parse(&text), 7);
    let reference: Vec<Leaves> = (0..=7).map(|d| reference_perft(&cells_of(&text), d)).collect();
    assert_eq!(counts, reference);
    // As the start (1, 4, 12, 56, 244) until the a and b files cut lines
    // short at depth 5, where the start has 1396 and 8200 follow.
    let leaves: Vec<u128> = counts.iter().map(|c| c.leaves).collect();
    assert_eq!(leaves, [1, 4, 12, 56, 244, 1380, 7902, 51410]);
    assert!(counts.iter().all(|c| c.higher == 0));
}

/// A random board with discs scattered over the middle 6x6 (so moves
/// abound), at least one centre square empty, and a random side to move.
fn random_empty_centre(rng: &mut StdRng) -> String {
    let mut cells = ['-'; 64];
    for rank in 1..7 {
        for file in 1..7 {
            cells[rank * 8 + file] = match rng.random_range(0..8u8) {
                0 | 1 => 'X',
                2 | 3 => 'O',
                _ => '-',
            };
        }
    }
    let centre = [27, 28, 35, 36];
    cells[centre[rng.random_range(0..4)]] = '-';
    let side = if rng.random::<bool>() { 'X' } else { 'O' };
    format!("{} {side}", cells.iter().collect::<String>())
}

#[test]
fn random_empty_centre_boards_match_the_reference() {
    let mut rng = StdRng::seed_from_u64(13);
    let mut compared = 0u128;
    for n in 0..12 {
        let text = random_empty_centre(&mut rng);
        let pos = parse(&text);
        assert_eq!(pos.to_string(), text, "round trip");
        let max = if n < 4 { 5 } else { 4 };
        let counts = engine_counts(&pos, max);
        for (depth, &count) in counts.iter().enumerate() {
            assert_eq!(
                count,
                reference_perft(&cells_of(&text), depth as u32),
                "{text} depth {depth}"
            );
        }
        compared += counts[max as usize].leaves;
    }
    // The boards are busy enough for the comparison to mean something.
    eprintln!("{compared} deepest leaves compared with the reference");
    assert!(compared > 100_000, "only {compared} leaves compared");
}

#[test]
fn the_reference_agrees_with_the_published_start() {
    // Guards the reference itself: the standard start's published counts.
    let start = Reversi::start().to_string();
    let leaves: Vec<u128> = (1..=6)
        .map(|d| reference_perft(&cells_of(&start), d).leaves)
        .collect();
    assert_eq!(leaves, [4, 12, 56, 244, 1396, 8200]);
}

/// The shipped Reversi suite's counts (from this engine) equal the
/// reference mover's, to depth 6.
#[test]
fn the_reversi_suite_matches_the_reference() {
    let suite = perft_core::parse_suite(include_str!("../../data/reversi-suite.epd")).unwrap();
    assert_eq!(suite.len(), 5);
    for line in suite {
        for &(depth, expected) in line.expected.iter().filter(|&&(d, _)| d <= 6) {
            let reference = reference_perft(&cells_of(&line.position), depth).leaves;
            assert_eq!(reference, expected, "line {} depth {depth}", line.line);
        }
    }
}
