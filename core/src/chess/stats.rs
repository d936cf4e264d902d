//! Chess statistics in the Grand Chess Tree's categories: every leaf move
//! (a move played at the last ply) classified by what it does and by the
//! check it gives.
//!
//! A check is split by where its checkers stand. A checker on the square
//! the move landed on (the moved piece; the promoted piece; for castling
//! the rook, on its castled square) checks directly; any other checker was
//! uncovered by the move, a discovered check. Checks and mates are counted
//! apart: a checkmate counts only as a mate.
//!
//! Most leaf moves give no check, and a plain move or capture is known not
//! to without playing it ([`CheckLines`]); only the others are played and
//! their checkers and replies looked at.

use super::attacks;
use super::bitboard::{BETWEEN, BISHOP_RAYS, KNIGHT, LINE, ROOK_RAYS, Square, Squares, bit};
use super::castling;
use super::movegen;
use super::position::{Chess, ChessMove, ChessMoves, MoveKind, Piece, pawn_attackers_of};
use crate::count::Leaves;
use crate::kernel::{Isa, Portable};
use crate::stats::{GameStats, LeafStats, checked_sum, tally};

tally! {
    /// Chess leaves by kind, as the Grand Chess Tree publishes them. The
    /// Chess Programming Wiki's "checks" are `total_checks + total_mates`
    /// and its "double checks" `direct_discovered_checks +
    /// double_discovered_checks` (mates excluded), its "discovery checks"
    /// `single_discovered_checks`.
    ChessStats {
        /// Leaf moves that take a piece, en passant included.
        captures,
        /// Leaf moves that take en passant.
        enpassants,
        /// Leaf moves that castle.
        castles,
        /// Leaf moves that promote (each of the four pieces counts).
        promotions,
        /// Checks, not mate, by the moved piece alone.
        direct_checks,
        /// Checks, not mate, by one uncovered piece alone.
        single_discovered_checks,
        /// Checks, not mate, by the moved piece and an uncovered one.
        direct_discovered_checks,
        /// Checks, not mate, by two uncovered pieces (only en passant
        /// uncovers two).
        double_discovered_checks,
        /// Every check that is not mate: the four kinds above.
        total_checks,
        /// Mates by the moved piece alone.
        direct_mates,
        /// Mates by one uncovered piece alone.
        single_discovered_mates,
        /// Mates by the moved piece and an uncovered one.
        direct_discovered_mates,
        /// Mates by two uncovered pieces.
        double_discovered_mates,
        /// Every mate: the four kinds above.
        total_mates,
    }
}

impl ChessStats {
    /// Whether the totals are the sums of their kinds and en passant
    /// captures are among the captures.
    fn parts_add_up(&self) -> bool {
        let checks = [
            self.direct_checks,
            self.single_discovered_checks,
            self.direct_discovered_checks,
            self.double_discovered_checks,
        ];
        let mates = [
            self.direct_mates,
            self.single_discovered_mates,
            self.direct_discovered_mates,
            self.double_discovered_mates,
        ];
        self.enpassants <= self.captures
            && checked_sum(&checks) == Some(self.total_checks)
            && checked_sum(&mates) == Some(self.total_mates)
    }
}

/// The counts of one node's leaf moves: at most [`super::MAX_MOVES`] of
/// each, so plain `u64` adds cannot overflow.
#[derive(Default)]
struct Tally64 {
    captures: u64,
    enpassants: u64,
    castles: u64,
    promotions: u64,
    /// Direct, single discovered, direct and discovered, double discovered.
    checks: [u64; 4],
    /// The same split for mates.
    mates: [u64; 4],
}

impl From<Tally64> for ChessStats {
    fn from(t: Tally64) -> ChessStats {
        let [c0, c1, c2, c3] = t.checks.map(u128::from);
        let [m0, m1, m2, m3] = t.mates.map(u128::from);
        ChessStats {
            captures: t.captures.into(),
            enpassants: t.enpassants.into(),
            castles: t.castles.into(),
            promotions: t.promotions.into(),
            direct_checks: c0,
            single_discovered_checks: c1,
            direct_discovered_checks: c2,
            double_discovered_checks: c3,
            total_checks: c0 + c1 + c2 + c3,
            direct_mates: m0,
            single_discovered_mates: m1,
            direct_discovered_mates: m2,
            double_discovered_mates: m3,
            total_mates: m0 + m1 + m2 + m3,
        }
    }
}

/// Where the side to move's pieces would check the opponent's king from,
/// for one node: a plain move (or capture, or double push) checks exactly
/// when its piece lands on a square from which that piece type attacks the
/// king, or it leaves the line between the king and one of its own
/// sliders of which it was the only blocker. (A piece never uncovers a
/// check along the line it moves on: it would have been checking already.)
struct CheckLines {
    king: Square,
    pawn: u64,
    knight: u64,
    bishop: u64,
    rook: u64,
    /// The side to move's pieces that alone stand between one of its
    /// sliders and the opponent's king.
    uncovering: u64,
}

impl CheckLines {
    #[inline(always)]
    fn of<I: Isa>(pos: &Chess, isa: I) -> CheckLines {
        let us = pos.side;
        let king = pos.king(us.other());
        let k = usize::from(king);
        let occupied = pos.occupied();
        let ours = pos.colours[us.index()];
        let queens = pos.pieces[Piece::Queen.index()];
        let rooks = (pos.pieces[Piece::Rook.index()] | queens) & ours;
        let bishops = (pos.pieces[Piece::Bishop.index()] | queens) & ours;
        let mut uncovering = 0;
        for slider in Squares((ROOK_RAYS[k] & rooks) | (BISHOP_RAYS[k] & bishops)) {
            let between = BETWEEN[k][usize::from(slider)] & occupied;
            if between.count_ones() == 1 {
                uncovering |= between & ours;
            }
        }
        CheckLines {
            king,
            pawn: pawn_attackers_of(us, king),
            knight: KNIGHT[k],
            bishop: attacks::bishop(isa, king, occupied),
            rook: attacks::rook(isa, king, occupied),
            uncovering,
        }
    }

    /// Whether `mv`, a plain move, capture or double push, gives check.
    #[inline(always)]
    fn checks(&self, mv: ChessMove) -> bool {
        let to = bit(mv.to);
        let from_here = match mv.piece {
            Piece::Pawn => self.pawn,
            Piece::Knight => self.knight,
            Piece::Bishop => self.bishop,
            Piece::Rook => self.rook,
            Piece::Queen => self.bishop | self.rook,
            Piece::King => 0,
        };
        let uncovers = self.uncovering & bit(mv.from) != 0
            && LINE[usize::from(mv.from)][usize::from(self.king)] & to == 0;
        from_here & to != 0 || uncovers
    }
}

/// Adds the kinds of `mv`, a legal move of `pos` played at the last ply;
/// `lines` are `pos`'s.
#[inline(always)]
fn classify<I: Isa>(pos: &Chess, isa: I, lines: &CheckLines, mv: ChessMove, tally: &mut Tally64) {
    let us = pos.side;
    let them = us.other();
    let landed = match mv.kind {
        MoveKind::Normal | MoveKind::DoublePush => bit(mv.to),
        MoveKind::EnPassant => {
            tally.enpassants += 1;
            tally.captures += 1;
            bit(mv.to)
        }
        MoveKind::Castle => {
            tally.castles += 1;
            bit(castling::destinations(mv.from, mv.to).1)
        }
        MoveKind::Promotion(_) => {
            tally.promotions += 1;
            bit(mv.to)
        }
    };
    // A castling move's `to` is its own rook: never a capture.
    if mv.kind != MoveKind::EnPassant && pos.colours[them.index()] & bit(mv.to) != 0 {
        tally.captures += 1;
    }
    if matches!(mv.kind, MoveKind::Normal | MoveKind::DoublePush) && !lines.checks(mv) {
        return;
    }
    let child = pos.play_board_only(isa, mv);
    let checkers = child.attackers(isa, child.king(them), us, child.occupied(), 0);
    if checkers == 0 {
        return;
    }
    let direct = checkers & landed != 0;
    let discovered = (checkers & !landed).count_ones();
    let kind = match (direct, discovered) {
        (true, 0) => 0,
        (false, 1) => 1,
        (true, _) => 2,
        (false, _) => 3,
    };
    if movegen::count_moves_on(&child, isa) == 0 {
        tally.mates[kind] += 1;
    } else {
        tally.checks[kind] += 1;
    }
}

impl GameStats for Chess {
    type Stats = ChessStats;

    /// A leaf no move led to has no kind.
    fn node_kinds(&self) -> ChessStats {
        ChessStats::default()
    }

    /// Every legal move played and its child looked at: captures and the
    /// special moves from the move, checks from the child's checkers, mate
    /// from the child's move count.
    #[inline(always)]
    fn children_stats<I: Isa>(&self, isa: I) -> LeafStats<ChessStats> {
        let mut moves = ChessMoves::new();
        movegen::generate_into(self, &mut moves, isa);
        let lines = CheckLines::of(self, isa);
        let mut tally = Tally64::default();
        for &mv in moves.iter() {
            classify(self, isa, &lines, mv, &mut tally);
        }
        LeafStats {
            leaves: Leaves::full(moves.len() as u128),
            kinds: tally.into(),
        }
    }

    fn move_kinds(&self, mv: ChessMove) -> ChessStats {
        let mut tally = Tally64::default();
        classify(self, Portable, &CheckLines::of(self, Portable), mv, &mut tally);
        tally.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chess::playouts::Playouts;
    use crate::game::Game;

    /// The shortcut says "check" exactly when the played move checks, for
    /// every plain move, capture and double push of the positions of
    /// random playouts (from the start and from Kiwipete).
    #[test]
    fn check_lines_agree_with_playing_the_move() {
        let mut playouts = Playouts::new(0x2545_F491_4F6C_DD1D);
        let (mut checks, mut tested) = (0, 0);
        let kiwipete = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
        for game in 0..400 {
            let start = if game % 2 == 0 {
                Chess::start()
            } else {
                kiwipete.parse().unwrap()
            };
            for pos in std::iter::once(start).chain(playouts.line(start, 150)) {
                let moves = pos.legal_moves();
                let lines = CheckLines::of(&pos, Portable);
                for &mv in moves.iter() {
                    if !matches!(mv.kind, MoveKind::Normal | MoveKind::DoublePush) {
                        continue;
                    }
                    let child = Game::play(&pos, mv);
                    assert_eq!(lines.checks(mv), child.in_check(), "{pos} {}", mv.uci());
                    checks += usize::from(child.in_check());
                    tested += 1;
                }
            }
        }
        assert!(
            checks > 2000 && tested > 40_000,
            "{checks} checks in {tested} moves"
        );
    }
}
