//! Position texts: the formats round-trip, and every way a text can be wrong
//! is refused with an error that names what is wrong.

use perft_core::checkers::FenError;
use perft_core::reversi::PositionError;
use perft_core::{Checkers, Game, Reversi};

const REVERSI_START: &str = "---------------------------OX------XO--------------------------- X";

#[test]
fn start_positions_print_in_the_documented_format() {
    assert_eq!(Reversi::start().to_string(), REVERSI_START);
    assert_eq!(
        Checkers::start().to_string(),
        "B:W21,22,23,24,25,26,27,28,29,30,31,32:B1,2,3,4,5,6,7,8,9,10,11,12"
    );
}

#[test]
fn alternative_spellings_parse_to_the_same_position() {
    let dots = REVERSI_START.replace('-', ".");
    assert_eq!(dots.parse::<Reversi>(), Ok(Reversi::start()));
    assert_eq!("B:W21-32:B1-12".parse::<Checkers>(), Ok(Checkers::start()));
    assert_eq!("B:B1-12:W21-32.".parse::<Checkers>(), Ok(Checkers::start()));
    assert_eq!(
        "W:WK3,21:B5,K30".parse::<Checkers>().map(|p| p.to_string()),
        Ok("W:WK3,21:B5,K30".to_owned())
    );
}

fn reversi_error(text: &str) -> String {
    let err = text.parse::<Reversi>().expect_err("text is invalid");
    err.to_string()
}

#[test]
fn reversi_errors_name_what_is_wrong() {
    assert_eq!(
        REVERSI_START.replacen("-", "Z", 1).parse::<Reversi>(),
        Err(PositionError::BadSquare {
            found: 'Z',
            square: "a1".to_owned()
        })
    );
    let c3 = {
        let mut chars: Vec<char> = REVERSI_START.chars().collect();
        chars[18] = '?';
        chars.into_iter().collect::<String>()
    };
    assert_eq!(
        reversi_error(&c3),
        "invalid character '?' at square c3: expected X, O, - or ."
    );
    assert_eq!(
        reversi_error("XO X"),
        "a Reversi board has 64 squares a1..h8, found 2 characters before the side to move"
    );
    assert_eq!(
        reversi_error(&REVERSI_START.replace(" X", " Q")),
        "the side to move must be X or O after a space, found 'Q'"
    );
    assert_eq!(
        reversi_error(REVERSI_START.trim_end_matches(" X")),
        "the side to move must be X or O after a space, found ''"
    );
}

#[test]
fn reversi_empty_centres_are_positions() {
    let empty_centre = REVERSI_START.replacen("O", "-", 1);
    let pos: Reversi = empty_centre.parse().expect("an empty d4 is well formed");
    assert_eq!(pos.to_string(), empty_centre);
    let empty_board = format!("{} X", "-".repeat(64));
    assert_eq!(
        empty_board.parse::<Reversi>().map(|p| p.to_string()),
        Ok(empty_board)
    );
}

fn fen_error(text: &str) -> FenError {
    text.parse::<Checkers>().expect_err("text is invalid")
}

#[test]
fn fen_errors_name_what_is_wrong() {
    assert_eq!(
        fen_error("X:W21:B1"),
        FenError::BadSide {
            found: "X".to_owned()
        }
    );
    assert_eq!(
        fen_error("B:W21:B33"),
        FenError::BadSquare {
            found: "33".to_owned()
        }
    );
    assert_eq!(
        fen_error("B:W21:B0"),
        FenError::BadSquare {
            found: "0".to_owned()
        }
    );
    assert_eq!(
        fen_error("B:W21:B5-2"),
        FenError::BadSquare {
            found: "5-2".to_owned()
        }
    );
    assert_eq!(
        fen_error("B:W2a:B1"),
        FenError::BadSquare {
            found: "2a".to_owned()
        }
    );
    assert_eq!(fen_error("B:W14:B14"), FenError::Overlap { square: 14 });
    assert_eq!(fen_error("B:W14,K14:B1"), FenError::Overlap { square: 14 });
    assert_eq!(fen_error("B:W21:B1:W22"), FenError::TooManyFields { found: 4 });
    assert_eq!(
        fen_error("B:X21:B1"),
        FenError::BadColour {
            found: "X21".to_owned()
        }
    );
    assert_eq!(
        fen_error("B:W21:W22"),
        FenError::BadColour {
            found: "W22".to_owned()
        }
    );
    assert_eq!(
        fen_error("B:W21:B30"),
        FenError::ManOnCrowningRow {
            colour: "dark (B)",
            square: 30
        }
    );
    assert_eq!(
        fen_error("W:W2:B3").to_string(),
        "a light (W) man on square 2 cannot exist: men are crowned on reaching that row"
    );
    assert_eq!(
        fen_error("B:WK1-13:B20").to_string(),
        "light (W) has 13 pieces, but a side has at most 12"
    );
    assert_eq!(
        fen_error("B:W21:B33").to_string(),
        "'33' is not a square or range of squares: squares are numbered 1 to 32"
    );
}

#[test]
fn illegal_moves_are_refused() {
    let reversi = Reversi::start();
    assert!(reversi.parse_move("d3").is_ok());
    assert!(reversi.parse_move("D3").is_ok());
    assert_eq!(
        reversi.parse_move("a1").unwrap_err().to_string(),
        format!("'a1' is not a legal move in position '{REVERSI_START}'")
    );
    assert!(reversi.parse_move("pass").is_err());
    let checkers = Checkers::start();
    assert!(checkers.parse_move("11-15").is_ok());
    assert!(checkers.parse_move("11-14").is_err());
}
