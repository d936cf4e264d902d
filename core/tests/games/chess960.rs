//! Chess960: Ethereal's 960-position suite (core/data/chess960.epd) counted
//! exactly, X-FEN and Shredder-FEN round trips, king-takes-rook notation,
//! the castling rules that standard chess never exercises, and every
//! castling-field error.

use perft_core::{Chess, Game, Leaves, parse_suite, perft};

const CHESS960: &str = include_str!("../../data/chess960.epd");

fn parse(fen: &str) -> Chess {
    fen.parse()
        .unwrap_or_else(|e| panic!("{fen} does not parse: {e}"))
}

/// A suite line: its number, the position, the expected counts by depth.
type Case = (usize, Chess, Vec<(u32, u128)>);

fn suite() -> Vec<Case> {
    let lines = parse_suite(CHESS960).expect("the shipped suite parses");
    assert_eq!(lines.len(), 960);
    lines
        .into_iter()
        .map(|line| (line.line, parse(&line.position), line.expected))
        .collect()
}

fn expected(counts: &[(u32, u128)], depth: u32) -> u128 {
    counts
        .iter()
        .find(|&&(d, _)| d == depth)
        .map(|&(_, n)| n)
        .unwrap_or_else(|| panic!("no D{depth}"))
}

#[test]
fn all_960_positions_to_depth_3() {
    for (line, pos, counts) in suite() {
        for depth in 1..=3 {
            assert_eq!(
                perft(&pos, depth),
                Leaves::full(expected(&counts, depth)),
                "line {line} depth {depth}: {pos}"
            );
        }
    }
}

/// Sixteen positions spread over the file, at depth 5.
#[test]
fn a_sample_of_16_positions_to_depth_5() {
    for (line, pos, counts) in suite().into_iter().step_by(60) {
        assert_eq!(
            perft(&pos, 5),
            Leaves::full(expected(&counts, 5)),
            "line {line}: {pos}"
        );
    }
}

#[test]
#[ignore = "benchmark-sized: run with --ignored"]
fn all_960_positions_to_depth_5() {
    let table = perft_core::TranspositionTable::for_game::<Chess>(256 << 20).unwrap();
    for (line, pos, counts) in suite() {
        let (result, _) =
            perft_core::divide_parallel::<_, perft_core::Plain>(&pos, 5, 2, Some(&table)).unwrap();
        assert_eq!(
            result.total,
            Leaves::full(expected(&counts, 5)),
            "line {line}: {pos}"
        );
    }
}

/// Shredder-FEN in, Shredder-FEN out, X-FEN both ways, for every position
/// of the suite and its positions after each first move.
#[test]
fn fen_round_trips_in_x_fen_and_shredder_fen() {
    for (line, pos, _) in suite() {
        let text = CHESS960.lines().nth(line - 1).unwrap();
        let fen = text.split(';').next().unwrap().trim();
        assert_eq!(pos.shredder_fen(), fen, "line {line}");
        for child in std::iter::once(pos).chain(pos.legal_moves().into_iter().map(|mv| pos.play(mv))) {
            assert_eq!(parse(&child.to_string()), child, "line {line}: {child}");
            assert_eq!(parse(&child.shredder_fen()), child, "line {line}: {child}");
            assert_eq!(parse(&child.to_string()).to_string(), child.to_string());
        }
    }
}

#[test]
fn x_fen_letters_name_the_outermost_rook_or_the_file() {
    // Rooks on a1, b1 and h1 (king e1): K and Q are h1 and a1, B is b1.
    let pos = parse("4k3/8/8/8/8/8/8/RR2K2R w KQ - 0 1");
    assert_eq!(pos.shredder_fen(), "4k3/8/8/8/8/8/8/RR2K2R w HA - 0 1");
    assert!(!pos.chess960_notation());
    let inner = parse("4k3/8/8/8/8/8/8/RR2K2R w KB - 0 1");
    assert_eq!(inner.to_string(), "4k3/8/8/8/8/8/8/RR2K2R w KB - 0 1");
    assert_eq!(inner.shredder_fen(), "4k3/8/8/8/8/8/8/RR2K2R w HB - 0 1");
    assert!(inner.chess960_notation(), "b1 is no standard castling rook");
    // Mixed: Shredder for white, X-FEN for black.
    let mixed = parse("rk5r/8/8/8/8/8/8/RK5R w Hk - 0 1");
    assert_eq!(mixed.to_string(), "rk5r/8/8/8/8/8/8/RK5R w Kk - 0 1");
    assert_eq!(mixed.shredder_fen(), "rk5r/8/8/8/8/8/8/RK5R w Hh - 0 1");
    // The standard start in Shredder-FEN asks for Chess960 notation.
    let start = parse("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w HAha - 0 1");
    assert_eq!(start, Chess::start());
    assert!(start.chess960_notation());
    assert!(!Chess::start().chess960_notation());
}

fn moves(pos: &Chess) -> Vec<String> {
    let mut moves: Vec<String> = pos.legal_moves().iter().map(|&mv| pos.format_move(mv)).collect();
    moves.sort();
    moves
}

#[test]
fn castling_is_written_as_king_takes_rook_in_chess960_notation() {
    let start = Chess::start().with_chess960_notation(true);
    let open = parse("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1");
    assert!(moves(&open).contains(&"e1g1".to_owned()));
    let open960 = open.with_chess960_notation(true);
    let castles: Vec<String> = moves(&open960)
        .into_iter()
        .filter(|m| m == "e1h1" || m == "e1a1" || m == "e1g1" || m == "e1c1")
        .collect();
    assert_eq!(castles, ["e1a1", "e1h1"]);
    assert_eq!(perft(&start, 4), perft(&Chess::start(), 4));
    let after = open960.play(open960.parse_move("e1h1").unwrap());
    assert_eq!(after.to_string(), "r3k2r/8/8/8/8/8/8/R4RK1 b kq - 1 1");
    assert!(open960.parse_move("e1g1").is_err());
    assert!(open.parse_move("e1h1").is_err());
}

#[test]
fn chess960_castlings_that_standard_chess_never_has() {
    // King g1 with rook h1: the king stays, the rook jumps to f1.
    let pos = parse("6k1/8/8/8/8/8/8/6KR w H - 0 1");
    assert!(pos.chess960_notation());
    let after = pos.play(pos.parse_move("g1h1").unwrap());
    assert_eq!(after.to_string(), "6k1/8/8/8/8/8/8/5RK1 b - - 1 1");
    // King f1, rook g1: king and rook trade places.
    let pos = parse("k7/8/8/8/8/8/8/5KR1 w G - 0 1");
    let after = pos.play(pos.parse_move("f1g1").unwrap());
    assert_eq!(after.to_string(), "k7/8/8/8/8/8/8/5RK1 b - - 1 1");
    // King b1, rook a1: the king moves right to c1, the rook to d1.
    let pos = parse("6k1/8/8/8/8/8/8/RK6 w A - 0 1");
    let after = pos.play(pos.parse_move("b1a1").unwrap());
    assert_eq!(after.to_string(), "6k1/8/8/8/8/8/8/2KR4 b - - 1 1");
    // King b1, rook c1 on the h-side: a piece on e1 blocks the king's way.
    let pos = parse("6k1/8/8/8/8/8/8/1KR1N3 w C - 0 1");
    assert!(!moves(&pos).contains(&"b1c1".to_owned()));
    // The enemy queen on a1 looks at c1 through the castling rook on b1:
    // castling would leave the king in check.
    let pos = parse("6k1/8/8/8/8/8/8/qRK5 w B - 0 1");
    assert!(!moves(&pos).contains(&"c1b1".to_owned()));
    // Without the queen it castles (king stays on c1, rook to d1).
    let pos = parse("6k1/8/8/8/8/8/8/1RK5 w B - 0 1");
    let after = pos.play(pos.parse_move("c1b1").unwrap());
    assert_eq!(after.to_string(), "6k1/8/8/8/8/8/8/2KR4 b - - 1 1");
    // A square only the rook crosses may be attacked (b1, by the rook on
    // b8); one the king crosses may not (d1, by the rook on d8).
    let pos = parse("1r4k1/8/8/8/8/8/8/R1K5 w A - 0 1");
    let after = pos.play(pos.parse_move("c1a1").unwrap());
    assert_eq!(after.to_string(), "1r4k1/8/8/8/8/8/8/2KR4 b - - 1 1");
    let pos = parse("3r3k/8/8/8/8/8/8/5KR1 w G - 0 1");
    assert!(moves(&pos).contains(&"f1g1".to_owned()));
    let pos = parse("3r2k1/8/8/8/8/8/8/R4K2 w A - 0 1");
    assert!(!moves(&pos).contains(&"f1a1".to_owned()));
}

#[test]
fn castling_field_errors_are_one_clear_line() {
    let error = |fen: &str| match fen.parse::<Chess>() {
        Ok(pos) => panic!("{fen} parsed as {pos}"),
        Err(e) => e.to_string(),
    };
    assert_eq!(
        error("4k3/8/8/8/8/8/8/R3K2R w KQx - 0 1"),
        "the castling field must be '-' or letters KQkq (X-FEN) or rook files A-H/a-h (Shredder-FEN), found 'KQx'"
    );
    assert_eq!(
        error("4k3/8/8/8/8/8/4K3/R6R w K - 0 1"),
        "castling right 'K' needs the white king on rank 1"
    );
    assert_eq!(
        error("4k3/8/8/8/8/8/8/R3K2R w G - 0 1"),
        "castling right 'G' needs a white rook on g1"
    );
    assert_eq!(
        error("4k3/8/8/8/8/8/8/R3K1RR w HG - 0 1"),
        "the castling field 'HG' gives white two rights on the h-side of its king"
    );
    assert_eq!(
        error("r3k3/8/8/8/8/8/8/4K3 w k - 0 1"),
        "castling right 'k' needs a black rook on rank 8 on the h-side of its king"
    );
    assert_eq!(
        error("4k3/8/8/8/8/8/8/4K3 w - - 0 1 extra"),
        "a FEN has 6 fields (board, side, castling, en passant, halfmove, fullmove) or EPD's first 4, found 7"
    );
}
