//! The engines as oracles for learning agents, on batches of positions: the
//! perfect solver's every-column scores (the score book first on 6×7, as
//! `analyze` and the page do), and the AlphaZero network's policy and value
//! on observations as the environments give them.

use crate::az::encode::PLANES;
use crate::az::mcts::masked_softmax;
use crate::game::BoardConfig;
use crate::players::alphazero::AlphaZeroBot;
use crate::players::solver::{read_scores, DEFAULT_TABLE_LOG2};
use crate::solver::scores::ScoreBook;
use crate::solver::{Solver, SolverError, MAX_TABLE_LOG2};
use std::path::Path;
use std::sync::Arc;

/// A full column in a score row.
pub const FULL: i32 = -1000;
/// A column not proven within the node budget (never a guess).
pub const UNKNOWN: i32 = -999;
/// The shipped score book, looked up like every shipped file (`util::data`).
pub const SHIPPED_SCORES: &str = "models/solver-scores-6x7.bin";

/// Why a position of a batch was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("position {index}: {why}")]
pub struct PositionError {
    pub index: usize,
    pub why: String,
}

/// Why the solver oracle cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OracleError {
    #[error("table_log2 is at most {max}, got {got}")]
    Table { max: u32, got: u32 },
    /// The solver cannot hold the board.
    #[error(transparent)]
    Solver(#[from] SolverError),
}

/// Every-column scores of many positions, one solver per thread.
pub struct SolverOracle {
    cfg: BoardConfig,
    nodes: Option<u64>,
    solvers: Vec<Solver>,
    book: Option<Arc<ScoreBook>>,
}

impl SolverOracle {
    /// `threads` 0 is one per core; `nodes` caps each column's search;
    /// `table_log2` sizes each thread's table (None: the solver player's
    /// default, as `c4sim analyze` uses). On 6×7 the shipped score book
    /// answers early positions when it is found.
    pub fn new(
        cfg: BoardConfig,
        nodes: Option<u64>,
        threads: usize,
        table_log2: Option<u32>,
    ) -> Result<SolverOracle, OracleError> {
        let threads = crate::util::threads_or_cores(threads as u32);
        let table_log2 = table_log2.unwrap_or(DEFAULT_TABLE_LOG2);
        if table_log2 > MAX_TABLE_LOG2 {
            return Err(OracleError::Table {
                max: MAX_TABLE_LOG2,
                got: table_log2,
            });
        }
        let solvers = (0..threads)
            .map(|_| Solver::new(cfg, table_log2))
            .collect::<Result<Vec<_>, _>>()?;
        let book = match read_scores(Path::new(SHIPPED_SCORES)) {
            Ok(b) if b.fits(cfg) => Some(Arc::new(b)),
            _ => None,
        };
        Ok(SolverOracle {
            cfg,
            nodes,
            solvers,
            book,
        })
    }

    pub fn config(&self) -> BoardConfig {
        self.cfg
    }

    /// Writes every column's score of each position into `out`
    /// (`positions.len()·cols`, [`FULL`] and [`UNKNOWN`] marked); the
    /// positions are split over the threads, each its own solver.
    pub fn scores(&mut self, positions: &[Vec<usize>], out: &mut [i32]) -> Result<(), PositionError> {
        let cols = self.cfg.cols;
        assert_eq!(out.len(), positions.len() * cols);
        // Every position is checked before any is solved.
        let solver = &self.solvers[0];
        let checked = positions
            .iter()
            .enumerate()
            .map(|(index, m)| {
                solver.position(m).map_err(|e| PositionError {
                    index,
                    why: e.to_string(),
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        // Positions are handed out one at a time: a batch sorted by
        // difficulty (as position sets often are) still keeps every thread busy.
        let next = std::sync::atomic::AtomicUsize::new(0);
        let (nodes, book, checked) = (self.nodes, self.book.as_deref(), &checked);
        let rows: Vec<Vec<(usize, Vec<i32>)>> = std::thread::scope(|s| {
            let handles: Vec<_> = self
                .solvers
                .iter_mut()
                .map(|solver| {
                    let next = &next;
                    s.spawn(move || {
                        let mut done = Vec::new();
                        loop {
                            let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            let Some(p) = checked.get(i) else { break done };
                            let scores = book
                                .and_then(|b| b.column_scores(solver, p))
                                .unwrap_or_else(|| solver.scores(p, nodes));
                            let row = (0..cols)
                                .map(|c| match scores[c] {
                                    Some(s) => s,
                                    None if solver.can_play(p, c) => UNKNOWN,
                                    None => FULL,
                                })
                                .collect();
                            done.push((i, row));
                        }
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("a solver thread panicked"))
                .collect()
        });
        for (i, row) in rows.into_iter().flatten() {
            out[i * cols..(i + 1) * cols].copy_from_slice(&row);
        }
        Ok(())
    }
}

/// A best column of a score row (ties to the centre-most, as the solver
/// player picks), or `None` when a column is not proven: an unproven
/// column might be better than every proven one, and this never guesses.
pub fn best_column(row: &[i32]) -> Option<usize> {
    if row.contains(&UNKNOWN) {
        return None;
    }
    let cols = row.len();
    let mut order: Vec<usize> = (0..cols).collect();
    order.sort_by_key(|&c| (2 * c).abs_diff(cols - 1));
    order
        .into_iter()
        .filter(|&c| row[c] != FULL)
        .max_by_key(|&c| (row[c], std::cmp::Reverse((2 * c).abs_diff(cols - 1))))
}

/// The network's policy over the legal columns and its value for `n`
/// observations (`n·rows·cols·2` int8, row 0 the top row, channel 0 the
/// mover's pieces): `(n·cols policy, n values)`.
pub fn policy_value(bot: &mut AlphaZeroBot, obs: &[i8], n: usize) -> (Vec<f32>, Vec<f32>) {
    let b = bot.board();
    let (rows, cols) = (b.rows, b.cols);
    let cells = rows * cols;
    let mut planes = vec![0f32; n * cells * PLANES];
    let mut legal = vec![0u32; n];
    for (k, (o, p)) in obs.chunks(cells * 2).zip(planes.chunks_mut(cells * PLANES)).enumerate() {
        for r in 0..rows {
            for c in 0..cols {
                // The network's planes count rows from the bottom.
                let from = ((rows - 1 - r) * cols + c) * 2;
                let to = (r * cols + c) * PLANES;
                p[to] = f32::from(o[from]);
                p[to + 1] = f32::from(o[from + 1]);
                p[to + 2] = 1.0;
            }
        }
        for c in 0..cols {
            if o[c * 2] == 0 && o[c * 2 + 1] == 0 {
                legal[k] |= 1 << c;
            }
        }
    }
    let (logits, values) = bot.evaluate_planes(&planes, n);
    let mut policy = vec![0f32; n * cols];
    for (k, (l, p)) in logits.chunks(cols).zip(policy.chunks_mut(cols)).enumerate() {
        masked_softmax(l, legal[k], p);
    }
    (policy, values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_mark_full_and_unproven_columns_and_agree_across_threads() {
        let cfg = BoardConfig::new(4, 5, 4).unwrap();
        // Column 0 full; the rest open.
        let positions = vec![vec![0, 0, 0, 0], vec![], vec![2, 2, 1]];
        let mut one = SolverOracle::new(cfg, None, 1, None).unwrap();
        let mut a = vec![0; 15];
        one.scores(&positions, &mut a).unwrap();
        assert_eq!(a[0], FULL);
        assert!(a.iter().all(|&s| s != UNKNOWN));
        let mut two = SolverOracle::new(cfg, None, 2, Some(16)).unwrap();
        let mut b = vec![0; 15];
        two.scores(&positions, &mut b).unwrap();
        assert_eq!(a, b);
        // A budget of one node proves nothing on the empty board.
        let mut tiny = SolverOracle::new(cfg, Some(1), 1, None).unwrap();
        tiny.scores(&positions[1..2], &mut b[..5]).unwrap();
        assert!(b[..5].contains(&UNKNOWN), "{:?}", &b[..5]);
        let err = one.scores(&[vec![], vec![9]], &mut a[..10]).unwrap_err();
        assert_eq!(err.index, 1);
    }

    #[test]
    fn the_best_column_prefers_the_centre_on_ties_skips_full_and_never_guesses() {
        assert_eq!(best_column(&[1, 1, 1]), Some(1));
        assert_eq!(best_column(&[2, 1, FULL]), Some(0));
        assert_eq!(best_column(&[UNKNOWN, FULL, UNKNOWN]), None);
        assert_eq!(best_column(&[0, UNKNOWN, 0, -1]), None);
        assert_eq!(best_column(&[FULL, 0, FULL, -1]), Some(1));
    }
}
