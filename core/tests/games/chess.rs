//! Chess: the published perft table (every row up to about 2e8 leaves),
//! divide sums, FEN round trips and every FEN error, exactly.

use perft_core::chess::FenError;
use perft_core::chess::published_rows;
use perft_core::{Chess, Game, Leaves, TranspositionTable, divide, divide_parallel, perft};

/// Rows up to this many leaves are counted in CI.
const CI_LEAVES: u128 = 200_000_000;

fn parse(fen: &str) -> Chess {
    fen.parse()
        .unwrap_or_else(|e| panic!("{fen} does not parse: {e}"))
}

#[test]
fn every_published_row_up_to_2e8_leaves() {
    let rows: Vec<_> = published_rows().filter(|row| row.leaves <= CI_LEAVES).collect();
    assert_eq!(rows.len(), 38, "rows up to 2e8 leaves");
    let table = TranspositionTable::for_game::<Chess>(256 << 20).unwrap();
    for row in rows {
        let pos = parse(row.fen);
        let counted = if row.leaves < 10_000_000 {
            perft(&pos, row.depth)
        } else {
            divide_parallel::<_, perft_core::Plain>(&pos, row.depth, 2, Some(&table))
                .unwrap()
                .0
                .total
        };
        assert_eq!(
            counted,
            Leaves::full(row.leaves),
            "{} depth {}",
            row.name,
            row.depth
        );
    }
}

#[test]
fn published_rows_cover_the_six_positions() {
    let names: std::collections::BTreeSet<_> = published_rows().map(|row| row.name).collect();
    assert_eq!(names.len(), 7, "{names:?}");
    let start = published_rows()
        .find(|row| row.name == "start" && row.depth == 15)
        .unwrap();
    assert_eq!(start.leaves, 2_015_099_950_053_364_471_960);
    assert_eq!(parse(start.fen), Chess::start());
}

#[test]
fn divide_lines_sum_to_the_total_and_are_sorted_by_uci() {
    let kiwipete = parse("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1");
    let result = divide(&kiwipete, 3);
    assert_eq!(result.moves.len(), 48);
    assert_eq!(result.total, Leaves::full(97_862));
    assert_eq!(result.moves.iter().map(|&(_, n)| n).sum::<Leaves>(), result.total);
    for &(mv, n) in &result.moves {
        assert_eq!(n, perft(&kiwipete.play(mv), 2), "{}", kiwipete.format_move(mv));
    }
    let castles: Vec<String> = result
        .moves
        .iter()
        .map(|&(mv, _)| kiwipete.format_move(mv))
        .filter(|uci| uci == "e1g1" || uci == "e1c1")
        .collect();
    assert_eq!(castles.len(), 2);
}

#[test]
fn fen_round_trips() {
    for fen in [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
        "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
        "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
        // A legal en passant capture keeps its square.
        "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
        "4k3/8/8/8/3pP3/8/8/4K3 b - e3 0 1",
    ] {
        assert_eq!(parse(fen).to_string(), fen);
    }
    // EPD's four fields: the clocks read 0 and 1.
    assert_eq!(
        parse("4k3/8/8/8/8/8/8/4K3 b - -").to_string(),
        "4k3/8/8/8/8/8/8/4K3 b - - 0 1"
    );
}

#[test]
fn an_en_passant_square_without_a_legal_capture_is_dropped() {
    // After 1. e4 nothing can take on e3.
    let after_e4 = parse("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e3 0 1");
    assert_eq!(after_e4.en_passant(), None);
    assert_eq!(
        after_e4,
        Chess::start().play(Chess::start().parse_move("e2e4").unwrap())
    );
    assert_eq!(
        after_e4.table_key(),
        parse("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1").table_key()
    );
    // Taking would expose the king along the rank: no legal capture.
    let pinned = parse("8/8/8/K2pP2r/8/8/8/7k w - d6 0 1");
    assert_eq!(pinned.en_passant(), None);
    assert_eq!(pinned.count_moves(), pinned.legal_moves().len() as u64);
    assert!(
        pinned
            .legal_moves()
            .iter()
            .all(|&mv| pinned.format_move(mv) != "e5d6")
    );
    // The same with the rook gone: the capture is legal and kept.
    let free = parse("8/8/8/K2pP3/8/8/8/7k w - d6 0 1");
    assert_eq!(
        free.en_passant().map(perft_core::chess::square_name).as_deref(),
        Some("d6")
    );
    assert!(free.parse_move("e5d6").is_ok());
}

#[test]
fn moves_are_uci_and_parsed_exactly() {
    let start = Chess::start();
    assert!(start.parse_move("e2e4").is_ok());
    assert!(start.parse_move("E2E4").is_err());
    assert!(start.parse_move("e2e5").is_err());
    let promote = parse("8/4P3/8/8/8/8/k7/4K3 w - - 0 1");
    let moves: Vec<String> = promote
        .legal_moves()
        .iter()
        .map(|&mv| promote.format_move(mv))
        .collect();
    for uci in ["e7e8q", "e7e8r", "e7e8b", "e7e8n"] {
        assert!(moves.contains(&uci.to_owned()), "{moves:?}");
    }
    assert!(promote.parse_move("e7e8Q").is_err());
    assert!(promote.parse_move("e7e8").is_err());
    let castle = parse("r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1");
    assert!(castle.parse_move("e1g1").is_ok());
    assert!(castle.parse_move("e1c1").is_ok());
    let after = castle.play(castle.parse_move("e1g1").unwrap());
    assert_eq!(after.to_string(), "r3k2r/8/8/8/8/8/8/R4RK1 b kq - 1 1");
}

#[test]
fn castling_through_an_attacked_square_is_not_generated() {
    // The black rook on f8 covers f1: no king-side castling; d1 is free.
    let pos = parse("4kr2/8/8/8/8/8/8/R3K2R w KQ - 0 1");
    let moves: Vec<String> = pos.legal_moves().iter().map(|&mv| pos.format_move(mv)).collect();
    assert!(!moves.contains(&"e1g1".to_owned()));
    assert!(moves.contains(&"e1c1".to_owned()));
    // b1 attacked does not stop queen-side castling.
    let pos = parse("1r2k3/8/8/8/8/8/8/R3K2R w KQ - 0 1");
    assert!(pos.parse_move("e1c1").is_ok());
}

fn error(fen: &str) -> String {
    match fen.parse::<Chess>() {
        Ok(pos) => panic!("{fen} parsed as {pos}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn error_field_count() {
    assert_eq!(
        error("8/8/8/8/8/8/8/8 w"),
        "a FEN has 6 fields (board, side, castling, en passant, halfmove, fullmove) or EPD's first 4, found 2"
    );
}

#[test]
fn error_rank_count() {
    assert_eq!(
        error("8/8/8/8/8/8/8 w - - 0 1"),
        "the board has 7 ranks separated by '/', expected 8"
    );
}

#[test]
fn error_rank_length() {
    assert_eq!(
        error("rnbqkbnr/pppppppp/9/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"),
        "'9' in rank 6 is not a piece letter (PNBRQK, pnbrqk) or a digit 1-8"
    );
    assert_eq!(
        error("rnbqkbnr/ppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1"),
        "rank 7 'ppppppp' does not describe exactly 8 squares"
    );
}

#[test]
fn error_bad_piece() {
    assert_eq!(
        error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNX w KQkq - 0 1"),
        "'X' in rank 1 is not a piece letter (PNBRQK, pnbrqk) or a digit 1-8"
    );
}

#[test]
fn error_bad_side() {
    assert_eq!(
        error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR W KQkq - 0 1"),
        "the side to move must be 'w' or 'b', found 'W'"
    );
}

#[test]
fn error_bad_castling() {
    assert_eq!(
        error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KKq - 0 1"),
        "the castling field 'KKq' gives white two rights on the h-side of its king"
    );
}

#[test]
fn error_bad_en_passant() {
    assert_eq!(
        error("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq e4 0 1"),
        "the en passant field must be '-' or a square on rank 3, found 'e4'"
    );
}

#[test]
fn error_en_passant_without_push() {
    assert_eq!(
        error("rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq e3 0 1"),
        "en passant square e3 needs a white pawn just past it and the two squares behind it empty"
    );
}

#[test]
fn error_bad_clock() {
    assert_eq!(
        error("4k3/8/8/8/8/8/8/4K3 w - - x 1"),
        "the halfmove clock must be a number from 0 to 65535, found 'x'"
    );
    assert_eq!(
        error("4k3/8/8/8/8/8/8/4K3 w - - 0 0"),
        "the fullmove clock must be a number from 1 to 65535, found '0'"
    );
}

#[test]
fn error_king_count() {
    assert_eq!(
        error("4k3/8/8/8/8/8/8/8 w - - 0 1"),
        "white has 0 kings, a side needs exactly one"
    );
    assert_eq!(
        error("4k3/8/8/8/8/8/8/3KK3 w - - 0 1"),
        "white has 2 kings, a side needs exactly one"
    );
}

#[test]
fn error_too_many_pieces() {
    assert_eq!(
        error("4k3/8/8/8/8/NNNNNNNN/NNNNNNNN/4K3 w - - 0 1"),
        "white has 17 pieces, a side has at most 16"
    );
}

#[test]
fn error_too_many_promoted_pieces() {
    // Ten queens and no pawn: nine promotions needed, eight pawns to give.
    assert_eq!(
        error("QQQQQQQQ/QQ6/8/8/8/8/8/k3K3 b - - 0 1"),
        "white has 9 more queens, rooks, bishops or knights than its 8 missing pawns could have become"
    );
    // The record position for legal moves (218) is within the rule.
    let record: perft_core::Chess = "R6R/3Q4/1Q4Q1/4Q3/2Q4Q/Q4Q2/pp1Q4/kBNN1KB1 w - - 0 1"
        .parse()
        .unwrap();
    assert_eq!(perft_core::Game::count_moves(&record), 218);
}

#[test]
fn error_pawn_on_back_rank() {
    assert_eq!(
        error("3Pk3/8/8/8/8/8/8/4K3 w - - 0 1"),
        "a pawn on d8 cannot exist: pawns never stand on rank 1 or 8"
    );
}

#[test]
fn error_opponent_in_check() {
    assert_eq!(
        error("4k3/8/8/8/8/8/8/r3K3 b - - 0 1"),
        "white is in check but it is black's move"
    );
    assert_eq!(
        error("4k3/8/8/8/8/8/8/4K2r b - - 0 1"),
        "white is in check but it is black's move"
    );
}

#[test]
fn error_castling_without_pieces() {
    assert_eq!(
        error("4k3/8/8/8/8/8/8/4K3 w K - 0 1"),
        "castling right 'K' needs a white rook on rank 1 on the h-side of its king"
    );
    assert_eq!(
        error("4k2r/8/8/8/8/8/8/4K3 w q - 0 1"),
        "castling right 'q' needs a black rook on rank 8 on the a-side of its king"
    );
}

#[test]
fn echoed_input_is_cut_and_escaped() {
    let long = format!("{}\u{1b}[31m", "x".repeat(100));
    let message = error(&format!("8/8/8/8/8/8/8/8 {long} - - 0 1"));
    assert_eq!(
        message,
        format!(
            "the side to move must be 'w' or 'b', found '{}...'",
            "x".repeat(80)
        )
    );
    assert!(!message.chars().any(char::is_control));
    assert_eq!(
        error("8/8/8/8/8/8/8/8 \u{7}w - - 0 1"),
        "the side to move must be 'w' or 'b', found '\\u{7}w'"
    );
    let _ = FenError::FieldCount { found: 0 };
}
