//! Exact value targets (`self_play.exact_value_nodes`): the perfect solver
//! rescores a finished self-play game's positions that it proves within a
//! small node budget, as Lc0 rescores its games with tablebases.
//!
//! Why: the game result `z` is one noisy sample of a position's value (a
//! won position lost by a later blunder teaches "lost"), and the search
//! value `q` is only as good as the network. A proven result is the truth,
//! and positions late in a game are cheap to prove. The network still
//! learns everything else from self-play: only value targets change, never
//! the policy targets, and positions the solver cannot prove within the
//! budget (openings) keep their self-play targets.
//!
//! Deterministic: the table is cleared before every game, so a game's
//! labels depend on the game alone, not on which worker labelled what
//! before it.

use crate::game::BoardConfig;
use crate::solver::Solver;

/// Table of 2^18 entries (2 MiB) per self-play worker: the budgets this
/// is for (thousands to a few hundred thousand nodes) fit it.
const TABLE_LOG2: u32 = 18;

/// Consecutive unproven positions (walking from the game's end back to its
/// start) after which the earlier ones are not tried: positions get harder
/// towards the opening, so the rest would only spend the budget in vain.
const GIVE_UP_AFTER: usize = 2;

/// A solver with a per-position node budget.
pub struct ExactValues {
    solver: Solver,
    nodes: u64,
}

impl ExactValues {
    /// `None` when the solver cannot hold `cfg` (its bitboard must fit 64
    /// bits with a sentinel row) or `nodes` is 0 (off).
    pub fn new(cfg: BoardConfig, nodes: u64) -> Option<ExactValues> {
        if nodes == 0 {
            return None;
        }
        let solver = Solver::new(cfg, TABLE_LOG2).ok()?;
        Some(ExactValues { solver, nodes })
    }

    /// For each of `plies` (positions of the game `moves`, the position
    /// after `moves[..ply]`), the exact result for the side to move there
    /// (+1 win, 0 draw, −1 loss) when the solver proves it within the
    /// budget, else `None`.
    pub fn label(&mut self, moves: &[usize], plies: &[usize]) -> Vec<Option<f32>> {
        self.solver.clear_table();
        let mut out = vec![None; plies.len()];
        let mut order: Vec<usize> = (0..plies.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(plies[i]));
        let mut misses = 0;
        for i in order {
            let Ok(pos) = self.solver.position(&moves[..plies[i]]) else {
                continue;
            };
            match self.solver.solve(&pos, Some(self.nodes)) {
                Some(score) => {
                    out[i] = Some(score.signum() as f32);
                    misses = 0;
                }
                None => {
                    misses += 1;
                    if misses >= GIVE_UP_AFTER {
                        break;
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn six_by_seven() -> BoardConfig {
        BoardConfig::new(6, 7, 4).unwrap()
    }

    /// A line of `plies` moves that ends no game, from a seed.
    fn line(plies: usize, seed: u64) -> Vec<usize> {
        let s = Solver::new(six_by_seven(), 10).unwrap();
        s.quiet_line(plies, &mut ChaCha8Rng::seed_from_u64(seed)).0
    }

    /// The exact result for the side to move after `moves`, without budget.
    fn truth(moves: &[usize]) -> f32 {
        let mut s = Solver::new(six_by_seven(), 20).unwrap();
        let p = s.position(moves).unwrap();
        s.solve(&p, None).unwrap().signum() as f32
    }

    #[test]
    fn off_or_unfit_boards_give_none() {
        assert!(ExactValues::new(six_by_seven(), 0).is_none());
        // 9 × 9 needs 90 bits: beyond the solver.
        assert!(ExactValues::new(BoardConfig::new(9, 9, 4).unwrap(), 1000).is_none());
    }

    #[test]
    fn late_positions_get_their_exact_results_and_the_opening_does_not() {
        let mut ex = ExactValues::new(six_by_seven(), 20_000).unwrap();
        for seed in 0..4 {
            let moves = line(30, seed);
            let l = ex.label(&moves, &[0, 26, 28, 30]);
            // The empty board needs far more than 20,000 nodes.
            assert_eq!(l[0], None, "seed {seed}");
            for (k, ply) in [(1, 26), (2, 28), (3, 30)] {
                assert_eq!(l[k], Some(truth(&moves[..ply])), "seed {seed}, ply {ply}");
            }
        }
    }

    #[test]
    fn labels_do_not_depend_on_what_was_labelled_before() {
        let moves = line(32, 7);
        let plies: Vec<usize> = (0..=32).collect();
        let mut a = ExactValues::new(six_by_seven(), 5_000).unwrap();
        let first = a.label(&moves, &plies);
        let _ = a.label(&line(30, 8), &[20, 25, 30]);
        assert_eq!(a.label(&moves, &plies), first);
        let mut b = ExactValues::new(six_by_seven(), 5_000).unwrap();
        assert_eq!(b.label(&moves, &plies), first);
        assert!(first[32].is_some() && first[0].is_none(), "{first:?}");
    }
}
