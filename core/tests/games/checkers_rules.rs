//! The rules of English draughts that the perft counts depend on, each on a
//! position built for it.

use perft_core::{Checkers, Game, MoveError, perft};

fn moves(fen: &str) -> Vec<String> {
    let pos: Checkers = fen.parse().expect("test positions are valid");
    let mut list: Vec<String> = pos
        .legal_moves()
        .into_iter()
        .map(|mv| pos.format_move(mv))
        .collect();
    list.sort();
    list
}

#[test]
fn start_has_the_seven_standard_moves() {
    let expected = ["10-14", "10-15", "11-15", "11-16", "12-16", "9-13", "9-14"];
    assert_eq!(moves("B:W21-32:B1-12"), expected);
}

#[test]
fn capture_is_compulsory() {
    // Dark 18 can take 22 (landing on 25); the step 1-5 is then illegal.
    assert_eq!(moves("B:W22:B1,18"), ["18x25"]);
}

#[test]
fn men_capture_forward_only_and_kings_both_ways() {
    // Light man on 14 behind the dark man on 18: a man cannot take it...
    assert_eq!(moves("B:W14:B18"), ["18-22", "18-23"]);
    // ...a king must.
    assert_eq!(moves("B:W14:BK18"), ["18x9"]);
}

#[test]
fn capture_sequence_is_completed() {
    // 9x18 over 14, then 18x27 over 23: stopping after one jump is no move.
    assert_eq!(moves("B:W14,23:B9"), ["9x18x27"]);
}

#[test]
fn man_crowned_mid_capture_ends_the_move() {
    // The man on 23 takes 26 and is crowned on 30; as a king it could go on
    // over 25 to 21, but crowning ends the move.
    assert_eq!(moves("B:W25,26:B23"), ["23x30"]);
    // A king already crowned does continue.
    assert!(moves("B:W25,26:BK23").contains(&"23x30x21".to_owned()));
    let crowned = "B:W25,26:B23".parse::<Checkers>().unwrap();
    let after = crowned.play(crowned.legal_moves()[0]);
    assert_eq!(after.to_string(), "W:W25:BK30");
}

#[test]
fn same_pieces_in_another_order_are_different_moves() {
    // The king on 22 circles square 23 either way, taking 18, 19, 26, 27 and
    // coming back to 22: two moves, both kept.
    let fen = "B:W18,19,26,27,29,32:BK22";
    assert_eq!(moves(fen), ["22x15x24x31x22", "22x31x24x15x22"]);
    let pos: Checkers = fen.parse().unwrap();
    let both: Vec<_> = pos.legal_moves().into_iter().collect();
    assert_eq!(both[0].captured(), both[1].captured());
    for mv in both {
        assert_eq!(pos.play(mv).to_string(), "W:W29,32:BK22");
    }
    assert_eq!(perft(&pos, 1).leaves, 2);
    // The short form names both sequences, so it is refused as ambiguous.
    assert_eq!(
        pos.parse_move("22x22"),
        Err(MoveError::Ambiguous {
            text: "22x22".to_owned(),
            candidates: vec!["22x31x24x15x22".to_owned(), "22x15x24x31x22".to_owned()],
        })
    );
}

#[test]
fn short_capture_notation_is_accepted_when_unique() {
    let pos: Checkers = "B:W14,23:B9".parse().unwrap();
    assert_eq!(pos.parse_move("9x27"), pos.parse_move("9x18x27"));
    assert!(pos.parse_move("9x27").is_ok());
}

#[test]
fn a_side_without_moves_has_no_children() {
    // Dark's only man, on 5 (a single forward square, 9), is blocked by the
    // light man there, which 14 shields from capture.
    let blocked: Checkers = "B:W9,14:B5".parse().unwrap();
    assert_eq!(blocked.legal_moves().len(), 0);
    assert_eq!(perft(&blocked, 1).leaves, 0);
    assert_eq!(perft(&blocked, 5).leaves, 0);
    let no_pieces: Checkers = "B:W21:B".parse().unwrap();
    assert_eq!(perft(&no_pieces, 3).leaves, 0);
}
