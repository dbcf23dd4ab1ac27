//! The plain reference negamax: no pruning, no tables, the heuristic computed
//! naively from the referee board's cells. It is the specification in code;
//! the tests compare [`super::minimax::Minimax`] with it and the bench times it as baseline.

use crate::game::Board;
use crate::search::minimax::LeafView;

pub const WIN: i32 = 1000;

/// The window rows of docs/alphazero.md, as one exclusive if/else-if chain in
/// the order of the table (it matters for win lengths 1 and 2, where an
/// empty window matches several rows).
fn window(mine: usize, theirs: usize, len: usize) -> i32 {
    let empty = len - mine - theirs;
    if mine == len {
        1000
    } else if theirs == len {
        -1000
    } else if mine > 0 && theirs > 0 {
        0
    } else if mine + 1 == len && mine + empty == len {
        5
    } else if mine + 2 == len && mine + empty == len {
        2
    } else if theirs + 1 == len && theirs + empty == len {
        -50
    } else if theirs + 2 == len && theirs + empty == len {
        -2
    } else {
        0
    }
}

/// The heuristic from `me`'s view: every other seat's pieces count as
/// the opponent's. One-cell windows are counted once, not once per
/// direction (as in [`crate::game::bitboard::Geometry`]).
pub fn heuristic(board: &Board, me: usize) -> i32 {
    let (rows, cols) = (board.rows() as isize, board.cols() as isize);
    let len = board.config().win_length as isize;
    let mut total = 0;
    for (dr, dc) in [(0isize, 1isize), (1, 0), (1, 1), (1, -1)] {
        if len == 1 && (dr, dc) != (0, 1) {
            continue;
        }
        for r in 0..rows {
            for c in 0..cols {
                let (er, ec) = (r + dr * (len - 1), c + dc * (len - 1));
                if er < 0 || er >= rows || ec < 0 || ec >= cols {
                    continue;
                }
                let (mut mine, mut theirs) = (0, 0);
                for k in 0..len {
                    match board.cell((r + dr * k) as usize, (c + dc * k) as usize) {
                        Some(s) if s == me => mine += 1,
                        Some(_) => theirs += 1,
                        None => {}
                    }
                }
                total += window(mine, theirs, len as usize);
            }
        }
    }
    let centre = board.cols() / 2;
    for r in 0..board.rows() {
        match board.cell(r, centre) {
            Some(s) if s == me => total += 3,
            Some(_) => total -= 3,
            None => {}
        }
    }
    total
}

/// Score for `me` of dropping into `col`, then `rem` more plies with
/// `other` to move next; terminal positions come before the depth limit.
/// At the limit the heuristic is taken from `view`'s side, negated when
/// that side is `other`.
pub fn move_score(board: &Board, me: usize, other: usize, col: usize, rem: u32, view: LeafView) -> i32 {
    let mut b = board.clone();
    let row = b.drop_piece(col, me).expect("legal column");
    if b.wins_at(row, col) {
        WIN
    } else if b.is_full() {
        0
    } else if rem == 0 {
        match view {
            LeafView::Mover => heuristic(&b, me),
            LeafView::ToMove => -heuristic(&b, other),
        }
    } else {
        -negamax(&b, other, me, rem, view)
    }
}

/// Negamax value for `me` (to move) of a position that is not over.
pub fn negamax(board: &Board, me: usize, other: usize, depth: u32, view: LeafView) -> i32 {
    board
        .legal_moves()
        .into_iter()
        .map(|c| move_score(board, me, other, c, depth - 1, view))
        .max()
        .expect("a legal move")
}

/// Every column's score (`None` when full) at `depth` ≥ 1 and the chosen
/// column: the highest score, ties to the lowest column. Two seats.
pub fn scores(board: &Board, to_move: usize, depth: u32, view: LeafView) -> (usize, Vec<Option<i32>>) {
    let other = 1 - to_move;
    let scores: Vec<Option<i32>> = (0..board.cols())
        .map(|c| {
            board
                .is_legal(c)
                .then(|| move_score(board, to_move, other, c, depth - 1, view))
        })
        .collect();
    let mut best: Option<(i32, usize)> = None;
    for (c, s) in scores.iter().enumerate() {
        if let Some(v) = *s {
            if best.map_or(true, |(b, _)| v > b) {
                best = Some((v, c));
            }
        }
    }
    (best.expect("a legal move").1, scores)
}
