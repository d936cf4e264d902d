//! The packed positions: every position round-trips through `pack` and
//! `unpack`, and bytes from outside (wrong lengths, flipped bits, random
//! noise, each broken invariant) are refused without a panic, never decoded
//! into a position the text parser would refuse.

use perft_core::{Checkers, Chess, Game, GameKind, Reversi, UnpackError};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn packed<G: Game>(pos: &G) -> Vec<u8> {
    let mut out = Vec::new();
    pos.pack(&mut out);
    out
}

fn kind<G: Game>() -> GameKind {
    G::NAME.parse().expect("every game is registered")
}

/// Every position of `playouts` random games of at most `plies` plies.
fn playout_positions<G: Game>(seed: u64, playouts: usize, plies: usize) -> Vec<G> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut positions = vec![G::start()];
    for _ in 0..playouts {
        let mut pos = G::start();
        for _ in 0..plies {
            let moves: Vec<G::Move> = pos.legal_moves().into_iter().collect();
            if moves.is_empty() {
                break;
            }
            pos = pos.play(moves[rng.random_range(0..moves.len())]);
            positions.push(pos);
        }
    }
    positions
}

/// `pos` packs to `PACKED_BYTES` bytes that decode to itself, also through
/// the registry.
fn assert_round_trip<G: Game>(pos: &G) {
    let bytes = packed(pos);
    assert_eq!(bytes.len(), G::PACKED_BYTES, "{pos}");
    assert_eq!(G::unpack(&bytes).as_ref(), Ok(pos), "{pos}");
    assert_eq!(G::unpack(&bytes).map(|p| p.to_string()), Ok(pos.to_string()));
    assert_eq!(kind::<G>().fns().show_packed(&bytes), Ok(pos.to_string()));
    assert_eq!(kind::<G>().fns().pack_text(&pos.to_string()).unwrap(), bytes);
}

/// What any accepted bytes must satisfy: they are exactly what `pack`
/// writes for the decoded position and, where the text parser already
/// accepts every position the packed form may hold, its text parses back
/// to it (so the decoder accepts nothing the parser refuses).
fn check_decoded<G: Game>(bytes: &[u8], text_agrees: bool) {
    if let Ok(pos) = G::unpack(bytes) {
        assert_eq!(packed(&pos), bytes, "{pos} re-packs to other bytes");
        if text_agrees {
            assert_eq!(pos.to_string().parse::<G>().ok(), Some(pos), "{pos}");
        }
    }
}

/// Each single-bit flip of `pos`'s bytes is refused or decodes to a
/// position that packs to the flipped bytes.
fn check_bit_flips<G: Game>(pos: &G, text_agrees: bool) {
    let bytes = packed(pos);
    for bit in 0..bytes.len() * 8 {
        let mut flipped = bytes.clone();
        flipped[bit / 8] ^= 1 << (bit % 8);
        check_decoded::<G>(&flipped, text_agrees);
    }
}

fn check_lengths<G: Game>() {
    let bytes = packed(&G::start());
    for len in (0..=2 * G::PACKED_BYTES + 1).filter(|&len| len != G::PACKED_BYTES) {
        let mut wrong = bytes.clone();
        wrong.resize(len, 0);
        assert_eq!(
            G::unpack(&wrong),
            Err(UnpackError::Length {
                game: G::NAME,
                expected: G::PACKED_BYTES,
                found: len,
            })
        );
    }
}

fn check_random_bytes<G: Game>(seed: u64, text_agrees: bool) {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut bytes = vec![0u8; G::PACKED_BYTES];
    for _ in 0..200_000 {
        bytes.iter_mut().for_each(|b| *b = rng.random::<u8>());
        check_decoded::<G>(&bytes, text_agrees);
    }
}

/// The whole battery for one game over `positions`.
fn check_game<G: Game>(positions: &[G], seed: u64, text_agrees: bool) {
    for pos in positions {
        assert_round_trip(pos);
    }
    for pos in positions.iter().step_by(7) {
        check_bit_flips(pos, text_agrees);
    }
    check_lengths::<G>();
    check_random_bytes::<G>(seed, text_agrees);
}

fn reason<G: Game>(bytes: &[u8]) -> String {
    match G::unpack(bytes) {
        Err(UnpackError::Invalid { game, reason }) if game == G::NAME => reason,
        other => panic!("expected an invalid {} position, got {other:?}", G::NAME),
    }
}

#[test]
fn packed_sizes() {
    assert_eq!(GameKind::Reversi.packed_bytes(), 17);
    assert_eq!(GameKind::Checkers.packed_bytes(), 13);
    assert_eq!(GameKind::Chess.packed_bytes(), 30);
    for &kind in GameKind::ALL {
        assert_eq!(
            kind.fns().pack_text(" ").map(|b| b.len()).unwrap(),
            kind.packed_bytes()
        );
    }
}

#[test]
fn registry_shows_and_refuses() {
    assert_eq!(
        GameKind::Checkers
            .fns()
            .show_packed(&[0; 12])
            .unwrap_err()
            .to_string(),
        "a packed checkers position is 13 bytes, found 12"
    );
    assert_eq!(
        GameKind::Chess.fns().pack_text("").unwrap(),
        packed(&Chess::start())
    );
    let refused = GameKind::Chess.fns().pack_text("8/8 w - -").unwrap_err();
    // The game's own error, its words unchanged.
    assert_eq!(
        refused.to_string(),
        "8/8 w - -".parse::<Chess>().unwrap_err().to_string()
    );
}

#[test]
fn reversi_round_trips_and_refuses_noise() {
    // The text parser accepts every disjoint board, empty centres too, so
    // every decoded position is also run back through it.
    let positions = playout_positions::<Reversi>(1, 300, 70);
    check_game(&positions, 11, true);
}

#[test]
fn checkers_round_trips_and_refuses_noise() {
    let mut positions = playout_positions::<Checkers>(2, 200, 150);
    for fen in [
        "B:W21-32:B1-12",
        "B:W22:B1,18",
        "B:W14:BK18",
        "B:W14,23:B9",
        "B:W18,19,26,27,29,32:BK22",
        "B:W21:B",
        "W:WK3,21:B5,K30",
    ] {
        positions.push(fen.parse().expect("test FEN is valid"));
    }
    check_game(&positions, 12, true);
}

#[test]
fn chess_round_trips_and_refuses_noise() {
    let mut positions = playout_positions::<Chess>(3, 150, 200);
    let published = include_str!("../../data/chess-published.tsv");
    let fens = published
        .lines()
        .filter(|line| !line.starts_with('#') && !line.starts_with("name"))
        .filter_map(|line| line.split('\t').nth(1));
    for fen in fens.chain([
        "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
        "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
        "4k3/8/8/8/3pP3/8/8/4K3 b - e3 0 1",
        "8/8/8/K2pP2r/8/8/8/7k w - d6 0 1",
        "4k3/8/8/8/8/8/8/4K3 w - - 65535 65535",
    ]) {
        positions.push(fen.parse().expect("test FEN is valid"));
    }
    check_game(&positions, 13, true);
}

fn reversi_bytes(player: u64, opponent: u64, side: u8) -> Vec<u8> {
    [&player.to_le_bytes()[..], &opponent.to_le_bytes(), &[side]].concat()
}

#[test]
fn reversi_invariants() {
    let start = Reversi::start();
    let both = reversi_bytes(start.player() | 1, start.opponent() | 1, 0);
    assert_eq!(reason::<Reversi>(&both), "square a1 holds discs of both colours");
    let side = reversi_bytes(start.player(), start.opponent(), 2);
    assert_eq!(
        reason::<Reversi>(&side),
        "side to move byte 2, expected 0 (X) or 1 (O)"
    );
    // An empty centre is a position like any other, in bytes and in text.
    let empty = reversi_bytes(1, 2, 1);
    assert_eq!(Reversi::unpack(&empty).map(|p| packed(&p)), Ok(empty.clone()));
    let text = "OX-------------------------------------------------------------- O";
    assert_eq!(GameKind::Reversi.fns().pack_text(text).unwrap(), empty);
}

fn checkers_bytes(dark: u32, light: u32, kings: u32, side: u8) -> Vec<u8> {
    [
        &dark.to_le_bytes()[..],
        &light.to_le_bytes(),
        &kings.to_le_bytes(),
        &[side],
    ]
    .concat()
}

#[test]
fn checkers_invariants() {
    assert_eq!(
        reason::<Checkers>(&checkers_bytes(1 << 13, 1 << 13, 0, 0)),
        "square 14 is given more than once"
    );
    assert_eq!(
        reason::<Checkers>(&checkers_bytes(1 << 29, 1, 0, 0)),
        "a dark (B) man on square 30 cannot exist: men are crowned on reaching that row"
    );
    assert_eq!(
        reason::<Checkers>(&checkers_bytes(1 << 29, 1 << 1, 0, 0)),
        "a dark (B) man on square 30 cannot exist: men are crowned on reaching that row"
    );
    assert_eq!(
        reason::<Checkers>(&checkers_bytes(1 << 10, 1 << 2, 0, 1)),
        "a light (W) man on square 3 cannot exist: men are crowned on reaching that row"
    );
    // Kings may stand on the crowning row.
    assert!(Checkers::unpack(&checkers_bytes(1 << 29, 1 << 2, (1 << 29) | (1 << 2), 0)).is_ok());
    assert_eq!(
        reason::<Checkers>(&checkers_bytes(0x1FFF, 1 << 20, 0, 0)),
        "dark (B) has 13 pieces, but a side has at most 12"
    );
    assert_eq!(
        reason::<Checkers>(&checkers_bytes(1, 1 << 20, 1 << 15, 0)),
        "a king on square 16, which holds no piece"
    );
    assert_eq!(
        reason::<Checkers>(&checkers_bytes(1, 1 << 20, 0, 2)),
        "side to move byte 2, expected 0 (B) or 1 (W)"
    );
    // No pieces at all, or none of one side, is a finished game, not an error.
    assert!(Checkers::unpack(&checkers_bytes(0, 0, 0, 1)).is_ok());
}

/// Chess bytes from pieces given as (square, code 1-12), in any order.
fn chess_bytes(pieces: &[(u8, u8)], flags: u8, en_passant: u8, halfmove: u16, fullmove: u16) -> Vec<u8> {
    let mut pieces = pieces.to_vec();
    pieces.sort_unstable();
    let occupied = pieces.iter().fold(0u64, |acc, &(sq, _)| acc | 1 << sq);
    let mut nibbles = [0u8; 16];
    for (i, &(_, code)) in pieces.iter().enumerate().take(32) {
        nibbles[i / 2] |= code << (4 * (i % 2));
    }
    let mut out = occupied.to_le_bytes().to_vec();
    out.extend_from_slice(&nibbles);
    out.extend_from_slice(&[flags, en_passant]);
    out.extend_from_slice(&halfmove.to_le_bytes());
    out.extend_from_slice(&fullmove.to_le_bytes());
    out
}

// Piece codes: white 1-6 = P N B R Q K, black 7-12.
const WP: u8 = 1;
const WR: u8 = 4;
const WK: u8 = 6;
const BP: u8 = 7;
const BK: u8 = 12;
const NONE: u8 = 64;
/// e1, e8.
const KINGS: [(u8, u8); 2] = [(4, WK), (60, BK)];

#[test]
fn chess_bare_kings_decode() {
    let bytes = chess_bytes(&KINGS, 0, NONE, 0, 1);
    assert_eq!(
        Chess::unpack(&bytes).map(|p| p.to_string()),
        Ok("4k3/8/8/8/8/8/8/4K3 w - - 0 1".to_owned())
    );
}

#[test]
fn chess_board_invariants() {
    let with = |extra: &[(u8, u8)]| [&KINGS[..], extra].concat();
    assert_eq!(
        reason::<Chess>(&chess_bytes(&with(&[(3, WK)]), 0, NONE, 0, 1)),
        "white has 2 kings, a side needs exactly one"
    );
    assert_eq!(
        reason::<Chess>(&chess_bytes(&[(4, WK)], 0, NONE, 0, 1)),
        "black has 0 kings, a side needs exactly one"
    );
    assert_eq!(
        reason::<Chess>(&chess_bytes(&with(&[(57, WP)]), 0, NONE, 0, 1)),
        "a pawn on b8 cannot exist: pawns never stand on rank 1 or 8"
    );
    // A white rook on e7 checks black, but it is white's move.
    assert_eq!(
        reason::<Chess>(&chess_bytes(&with(&[(52, WR)]), 0, NONE, 0, 1)),
        "black is in check but it is white's move"
    );
    // White may castle king side (bit 1) but has no rook on h1.
    assert_eq!(
        reason::<Chess>(&chess_bytes(&KINGS, 1 << 1, NONE, 0, 1)),
        "castling right 'H' needs a white rook on h1"
    );
    assert!(Chess::unpack(&chess_bytes(&with(&[(7, WR)]), 1 << 1, NONE, 0, 1)).is_ok());
    assert_eq!(
        reason::<Chess>(&chess_bytes(&KINGS, 1 << 6, NONE, 0, 1)),
        "flags byte 0x40 has bits above 5 set"
    );
    assert_eq!(
        reason::<Chess>(&chess_bytes(&KINGS, 0, NONE, 0, 0)),
        "fullmove number 0, it starts at 1"
    );
}

#[test]
fn chess_encoding_invariants() {
    let mut bytes = chess_bytes(&KINGS, 0, NONE, 0, 1);
    bytes[8] = 0x0F << 4 | WK;
    assert_eq!(reason::<Chess>(&bytes), "piece code 15 on e8, expected 1 to 14");
    bytes[8] = BK << 4;
    assert_eq!(reason::<Chess>(&bytes), "piece code 0 on e1, expected 1 to 14");
    let mut bytes = chess_bytes(&KINGS, 0, NONE, 0, 1);
    bytes[9] = 0x10;
    assert_eq!(
        reason::<Chess>(&bytes),
        "nibble 3 is past the last piece but not zero"
    );
    let mut bytes = chess_bytes(&KINGS, 0, NONE, 0, 1);
    bytes[..8].copy_from_slice(&(u64::MAX >> 31).to_le_bytes());
    assert_eq!(reason::<Chess>(&bytes), "33 occupied squares, at most 32 fit");
}

/// Chess960 castling rooks off the corners travel as codes 13 (white) and
/// 14 (black), the notation as flags bit 5; each misuse is refused.
#[test]
fn chess960_castling_encoding() {
    // King b1, castling rook c1 (white, code 13); king b8, rook c8 (14).
    let pieces = [(1, WK), (2, 13), (57, BK), (58, 14)];
    let pos = Chess::unpack(&chess_bytes(&pieces, 1 << 5, NONE, 0, 1)).unwrap();
    assert_eq!(pos.to_string(), "1kr5/8/8/8/8/8/8/1KR5 w Kk - 0 1");
    assert_eq!(pos.shredder_fen(), "1kr5/8/8/8/8/8/8/1KR5 w Cc - 0 1");
    assert!(pos.chess960_notation());
    assert_eq!(packed(&pos), chess_bytes(&pieces, 1 << 5, NONE, 0, 1));
    assert_eq!(
        reason::<Chess>(&chess_bytes(&pieces, 0, NONE, 0, 1)),
        "a Chess960 castling placement without the Chess960 notation bit"
    );
    assert_eq!(
        reason::<Chess>(&chess_bytes(&[(4, WK), (7, 13), (60, BK)], 0, NONE, 0, 1)),
        "castling rook code 13 on corner h1, whose right the flags byte carries"
    );
    assert_eq!(
        reason::<Chess>(&chess_bytes(&[(4, WK), (20, 13), (60, BK)], 0, NONE, 0, 1)),
        "castling rook on e3, off the back ranks"
    );
    // A white castling rook on black's back rank (behind a black knight)
    // is no black rook.
    assert_eq!(
        reason::<Chess>(&chess_bytes(
            &[(4, WK), (60, BK), (61, 8), (62, 13)],
            1 << 5,
            NONE,
            0,
            1
        )),
        "castling right 'g' needs a black rook on g8"
    );
    // Two castling rooks on one side of the king.
    assert_eq!(
        reason::<Chess>(&chess_bytes(
            &[(0, WR), (1, 13), (4, WK), (60, BK)],
            1 << 2 | 1 << 5,
            NONE,
            0,
            1
        )),
        "the castling field 'BA' gives white two rights on the a-side of its king"
    );
}

#[test]
fn chess_en_passant_invariants() {
    // Black to move after e2e4 with a black pawn on d4: e3 is legal.
    let pieces = [KINGS[0], KINGS[1], (28, WP), (27, BP)];
    let legal = chess_bytes(&pieces, 1, 20, 0, 1);
    assert_eq!(
        Chess::unpack(&legal).map(|p| p.to_string()),
        Ok("4k3/8/8/8/3pP3/8/8/4K3 b - e3 0 1".to_owned())
    );
    assert_eq!(
        reason::<Chess>(&chess_bytes(&pieces, 1, 21, 0, 1)),
        "en passant square f3 needs a white pawn just past it and the two squares behind it empty"
    );
    assert_eq!(
        reason::<Chess>(&chess_bytes(&pieces, 1, 44, 0, 1)),
        "the en passant field must be '-' or a square on rank 3, found 'e6'"
    );
    assert_eq!(
        reason::<Chess>(&chess_bytes(&pieces, 1, 65, 0, 1)),
        "en passant byte 65, expected a square 0-63 or 64 for none"
    );
    // Without the black pawn the push leaves no capture: the parser stores
    // none, so the square is not a second packing of the same position.
    let alone = [KINGS[0], KINGS[1], (28, WP)];
    assert_eq!(
        reason::<Chess>(&chess_bytes(&alone, 1, 20, 0, 1)),
        "en passant square e3 allows no legal capture, so it is stored as none"
    );
}
