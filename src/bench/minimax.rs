//! A small, reproducible benchmark of the minimax opponent against the plain
//! negamax it must agree with.
//!
//! The positions are mid-game 6 × 7 positions (the empty board is not
//! typical: almost every column is open and nothing is decided), generated
//! by seeded random play so every run times the same work. The baseline is
//! measured in the same run, so the speed-up does not depend on the machine.

use crate::game::bitboard::{Geometry, Position, Status};
use crate::game::{Board, BoardConfig};
use crate::search::minimax::Minimax;
use crate::search::reference;
use crate::util::median;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::Instant;

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
