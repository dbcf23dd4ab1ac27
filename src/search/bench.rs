//! A small, reproducible benchmark of the minimax opponent against the plain
//! negamax it must agree with.
//!
//! The positions are mid-game 6 × 7 positions (the empty board is not
//! typical: almost every column is open and nothing is decided), generated
//! by seeded random play so every run times the same work. The baseline is
//! measured in the same run, so the speed-up does not depend on the machine.

use super::minimax::Minimax;
use crate::bench::median;
use crate::game::bitboard::{Geometry, Position, Status};
use crate::game::{Board, BoardConfig};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::Instant;

/// The plain reference negamax: no pruning, no tables, the heuristic computed
/// naively from the referee board's cells. It is the specification in code;
/// the tests compare [`Minimax`] with it and the bench times it as baseline.
pub(crate) mod reference {
    use crate::game::Board;
    use crate::search::minimax::LeafView;

    pub const WIN: i32 = 1000;

    /// The window rows of alphazero.md, as one exclusive if/else-if chain in
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
}

/// Fixed, deterministic set of mid-game 6 × 7 positions: `count` move lists
/// reached by seeded random play of 8 to 16 plies, none over and none where
/// the mover can win at once (those are decided, not searched).
pub fn midgame_positions(count: usize, seed: u64) -> Vec<Vec<usize>> {
    let geo = Geometry::<u64>::new(BoardConfig::default());
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::with_capacity(count);
    while out.len() < count {
        let plies = rng.gen_range(8..=16);
        let mut pos = Position::<u64>::empty();
        let mut moves = Vec::with_capacity(plies);
        let mut ok = true;
        while moves.len() < plies {
            let legal: Vec<usize> = (0..7).filter(|&c| pos.is_legal(&geo, c)).collect();
            let c = legal[rng.gen_range(0..legal.len())];
            let (next, status) = pos.play(&geo, c);
            moves.push(c);
            pos = next;
            if status != Status::Ongoing {
                ok = false;
                break;
            }
        }
        let immediate_win = (0..7).any(|c| pos.is_legal(&geo, c) && pos.play(&geo, c).1 == Status::Won);
        if ok && !immediate_win && !out.contains(&moves) {
            out.push(moves);
        }
    }
    out
}

/// What [`minimax_bench`] measured.
#[derive(Clone, Copy, Debug)]
pub struct MinimaxBenchFigures {
    /// Mean over the positions of each one's median time per move, in ms.
    pub mean_ms: f64,
    /// Median over the positions of the same, in ms.
    pub median_ms: f64,
    /// Mean time of the reference negamax per move on the baseline positions.
    pub baseline_mean_ms: f64,
    /// `baseline_mean_ms` over the fast search's mean on the same positions.
    pub ratio: f64,
}

fn board_of(moves: &[usize]) -> Board {
    let mut b = Board::new(BoardConfig::default());
    for (i, &c) in moves.iter().enumerate() {
        b.drop_piece(c, i % 2).expect("legal bench move");
    }
    b
}

/// Times [`Minimax::choose`] at `depth` on each position (a cold table each
/// time, several repetitions, the median per position), and as a baseline the
/// plain reference negamax on the first `baseline_positions` positions. The
/// chosen columns must agree; prints a small table and the speed-up to `out`.
pub fn minimax_bench(
    depth: u32,
    positions: &[Vec<usize>],
    baseline_positions: usize,
    out: &mut dyn std::io::Write,
) -> std::io::Result<MinimaxBenchFigures> {
    const REPS: usize = 5;
    let mut mm = Minimax::new(depth);
    writeln!(
        out,
        "minimax depth {depth}: {} positions, {REPS} repetitions each",
        positions.len()
    )?;
    writeln!(
        out,
        "{:>4} {:<18} {:>6} {:>10} {:>10}",
        "#", "moves", "column", "ms/move", "nodes"
    )?;
    let mut per_pos = Vec::with_capacity(positions.len());
    let mut chosen = Vec::with_capacity(positions.len());
    for (i, moves) in positions.iter().enumerate() {
        let board = board_of(moves);
        let to_move = moves.len() % 2;
        let mut times = Vec::with_capacity(REPS);
        let mut col = 0;
        let mut nodes = 0;
        for _ in 0..REPS {
            mm.clear();
            let n0 = mm.nodes();
            let t = Instant::now();
            col = mm.choose(&board, to_move);
            times.push(t.elapsed().as_secs_f64() * 1e3);
            nodes = mm.nodes() - n0;
        }
        let med = median(&mut times);
        let text: String = moves.iter().map(|c| char::from(b'1' + *c as u8)).collect();
        writeln!(out, "{:>4} {:<18} {:>6} {:>10.3} {:>10}", i + 1, text, col, med, nodes)?;
        per_pos.push(med);
        chosen.push(col);
    }
    let mean_ms = per_pos.iter().sum::<f64>() / per_pos.len().max(1) as f64;
    let median_ms = median(&mut per_pos.clone());
    let nb = baseline_positions.min(positions.len());
    let mut base_total = 0.0;
    for (i, moves) in positions.iter().take(nb).enumerate() {
        let board = board_of(moves);
        let t = Instant::now();
        let (col, _) = reference::scores(&board, moves.len() % 2, depth, mm.view());
        let ms = t.elapsed().as_secs_f64() * 1e3;
        base_total += ms;
        let agree = if col == chosen[i] { "agrees" } else { "DIFFERS" };
        writeln!(out, "baseline #{:<3} column {col} ({agree}) {ms:>12.1} ms", i + 1)?;
    }
    let baseline_mean_ms = if nb > 0 { base_total / nb as f64 } else { f64::NAN };
    let fast_same = per_pos.iter().take(nb).sum::<f64>() / nb.max(1) as f64;
    let ratio = baseline_mean_ms / fast_same;
    writeln!(out, "mean {mean_ms:.3} ms/move, median {median_ms:.3} ms/move")?;
    writeln!(
        out,
        "plain negamax {baseline_mean_ms:.1} ms/move on {nb} positions: speed-up ×{ratio:.0}"
    )?;
    Ok(MinimaxBenchFigures {
        mean_ms,
        median_ms,
        baseline_mean_ms,
        ratio,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_deterministic_and_midgame() {
        let a = midgame_positions(20, 1);
        assert_eq!(a, midgame_positions(20, 1));
        assert_eq!(a.len(), 20);
        assert!(a.iter().all(|m| (8..=16).contains(&m.len())));
        assert_ne!(a, midgame_positions(20, 2));
    }

    #[test]
    fn bench_runs_and_agrees() {
        let pos = midgame_positions(3, 5);
        let mut buf = Vec::new();
        let f = minimax_bench(3, &pos, 2, &mut buf).unwrap();
        let text = String::from_utf8(buf).unwrap();
        assert!(!text.contains("DIFFERS"), "{text}");
        assert!(f.mean_ms >= 0.0 && f.ratio > 0.0);
    }

    /// The figures quoted in the docs: `cargo test --release -- --ignored bench_depth8 --nocapture`.
    #[test]
    #[ignore]
    fn bench_depth8() {
        let pos = midgame_positions(20, 2024);
        let mut out = std::io::stdout();
        let f = minimax_bench(8, &pos, 2, &mut out).unwrap();
        println!("{f:?}");
    }
}
