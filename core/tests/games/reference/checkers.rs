//! A naive English draughts mover on an 8x8 array (no bitboards, no code
//! shared with the engine): men step and jump forward, kings both ways;
//! captures are compulsory and completed, a piece is never jumped twice,
//! a man crowned mid-capture stops there, and sequences over the same
//! pieces in another order are different moves. Perft with statistics
//! over it is what the engine's are checked against. Included by the tests
//! that use it (`#[path]`).

#![allow(dead_code)]

/// A piece on a square.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    pub dark: bool,
    pub king: bool,
}

/// Rows 0..8 from dark's back row (squares 1-4) to light's (29-32),
/// columns 0..8; only the squares of the 1-32 numbering are used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Board {
    pub cells: [[Option<Piece>; 8]; 8],
    pub dark_to_move: bool,
}

/// Row and column of square `n` (1-32): four a row, on the odd columns of
/// even rows and the even columns of odd rows.
pub fn coords(n: u32) -> (i32, i32) {
    let row = (n - 1) / 4;
    let column = 2 * ((n - 1) % 4) + u32::from(row.is_multiple_of(2));
    (row as i32, column as i32)
}

/// A board from PDN FEN: `B:W21-32:B1-12`, `W:W25:BK30` (side to move,
/// then each colour's squares, `K` before a king, ranges allowed).
pub fn parse(fen: &str) -> Board {
    let mut board = Board {
        cells: [[None; 8]; 8],
        dark_to_move: fen.starts_with('B'),
    };
    for part in fen.split(':').skip(1) {
        let dark = part.starts_with('B');
        for item in part[1..].split(',').filter(|item| !item.is_empty()) {
            let king = item.starts_with('K');
            let item = item.trim_start_matches('K');
            let (low, high) = match item.split_once('-') {
                Some((low, high)) => (low.parse().unwrap(), high.parse().unwrap()),
                None => (item.parse().unwrap(), item.parse().unwrap()),
            };
            for n in low..=high {
                let (row, column) = coords(n);
                board.cells[row as usize][column as usize] = Some(Piece { dark, king });
            }
        }
    }
    board
}

/// A move as its landings, with what it takes and whether it crowns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Move {
    pub from: (i32, i32),
    pub landings: Vec<(i32, i32)>,
    pub captured: Vec<(i32, i32)>,
    pub crowns: bool,
}

const DIAGONALS: [(i32, i32); 4] = [(1, 1), (1, -1), (-1, 1), (-1, -1)];

fn on_board((row, column): (i32, i32)) -> bool {
    (0..8).contains(&row) && (0..8).contains(&column)
}

impl Board {
    fn at(&self, (row, column): (i32, i32)) -> Option<Piece> {
        self.cells[row as usize][column as usize]
    }

    /// The row a man of the side to move is crowned on.
    fn crown_row(&self) -> i32 {
        if self.dark_to_move { 7 } else { 0 }
    }

    /// The diagonals a piece may move along: forward only for a man.
    fn directions(&self, king: bool) -> Vec<(i32, i32)> {
        let forward = if self.dark_to_move { 1 } else { -1 };
        DIAGONALS
            .into_iter()
            .filter(|&(dr, _)| king || dr == forward)
            .collect()
    }

    /// Continues a capture sequence of the piece that left `from` and
    /// stands on `at`, having taken `captured`, into `out`.
    fn jumps(&self, from: (i32, i32), at: (i32, i32), king: bool, path: &mut Move, out: &mut Vec<Move>) {
        let mut extended = false;
        for (dr, dc) in self.directions(king) {
            let over = (at.0 + dr, at.1 + dc);
            let land = (at.0 + 2 * dr, at.1 + 2 * dc);
            if !on_board(land) {
                continue;
            }
            let takes = matches!(self.at(over), Some(p) if p.dark != self.dark_to_move);
            let free = self.at(land).is_none() || land == from;
            if !takes || !free || path.captured.contains(&over) {
                continue;
            }
            extended = true;
            path.landings.push(land);
            path.captured.push(over);
            if !king && land.0 == self.crown_row() {
                let mut done = path.clone();
                done.crowns = true;
                out.push(done);
            } else {
                self.jumps(from, land, king, path, out);
            }
            path.landings.pop();
            path.captured.pop();
        }
        if !extended && !path.captured.is_empty() {
            out.push(path.clone());
        }
    }

    /// Every legal move: the captures if there is one, else the steps.
    pub fn moves(&self) -> Vec<Move> {
        let mut captures = Vec::new();
        let mut steps = Vec::new();
        for row in 0..8 {
            for column in 0..8 {
                let from = (row, column);
                let Some(piece) = self.at(from) else { continue };
                if piece.dark != self.dark_to_move {
                    continue;
                }
                let mut path = Move {
                    from,
                    landings: Vec::new(),
                    captured: Vec::new(),
                    crowns: false,
                };
                self.jumps(from, from, piece.king, &mut path, &mut captures);
                for (dr, dc) in self.directions(piece.king) {
                    let to = (row + dr, column + dc);
                    if on_board(to) && self.at(to).is_none() {
                        steps.push(Move {
                            from,
                            landings: vec![to],
                            captured: Vec::new(),
                            crowns: !piece.king && to.0 == self.crown_row(),
                        });
                    }
                }
            }
        }
        if captures.is_empty() { steps } else { captures }
    }

    /// The board after `mv`.
    pub fn play(&self, mv: &Move) -> Board {
        let mut next = *self;
        let mut piece = self.at(mv.from).expect("a move starts on a piece");
        next.cells[mv.from.0 as usize][mv.from.1 as usize] = None;
        for &(row, column) in &mv.captured {
            next.cells[row as usize][column as usize] = None;
        }
        piece.king |= mv.crowns;
        let to = *mv.landings.last().expect("a move lands");
        next.cells[to.0 as usize][to.1 as usize] = Some(piece);
        next.dark_to_move = !self.dark_to_move;
        next
    }
}

/// Leaves and their kinds as the statistics define them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReferenceStats {
    pub leaves: u128,
    /// Leaf moves taking one piece or more.
    pub captures: u128,
    /// Leaf moves taking two or more.
    pub multi_jumps: u128,
    /// Leaf moves crowning a man.
    pub crownings: u128,
}

/// Perft with statistics: a side without a move has no children and
/// counts nothing above full depth.
pub fn reference_stats(board: &Board, depth: u32) -> ReferenceStats {
    if depth == 0 {
        return ReferenceStats {
            leaves: 1,
            ..ReferenceStats::default()
        };
    }
    let mut total = ReferenceStats::default();
    for mv in board.moves() {
        if depth == 1 {
            total.leaves += 1;
            total.captures += u128::from(!mv.captured.is_empty());
            total.multi_jumps += u128::from(mv.captured.len() >= 2);
            total.crownings += u128::from(mv.crowns);
        } else {
            let below = reference_stats(&board.play(&mv), depth - 1);
            total.leaves += below.leaves;
            total.captures += below.captures;
            total.multi_jumps += below.multi_jumps;
            total.crownings += below.crownings;
        }
    }
    total
}
