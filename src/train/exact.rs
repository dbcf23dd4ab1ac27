//! Exact value targets (`self_play.exact_value_nodes`): the perfect solver
//! rescores a finished self-play game's positions that it proves within a
//! small node budget, as Lc0 rescores its games with tablebases.
//!
//! Why: the game result `z` is one noisy sample of a position's value (a
//! won position lost by a later blunder teaches "lost"), and the search
//! value `q` is only as good as the network. A proven result is the truth,
//! and positions late in a game are cheap to prove. The network still
//! learns everything else from self-play: positions the solver cannot
//! prove within the budget (openings) keep their self-play targets.
//!
//! Exact policy targets (`self_play.exact_policy_nodes`, off by default): a
//! position whose value was proven also gets every column scored, within
//! its own budget; when every legal column is proven, the policy target is
//! the solver's best moves, shared evenly, instead of the search's visit
//! shares. Why: a 100-simulation search's visits are a blurred picture of
//! the best move, and the network is judged by the moves it picks; where
//! the truth is cheap (late in a game) it is the sharper target.
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
    /// Budget for scoring every column of a proven position (0: no exact
    /// policy targets).
    policy_nodes: u64,
}

/// What the solver proved about one recorded position.
#[derive(Clone, Debug, PartialEq)]
pub struct Label {
    /// +1 win, 0 draw, −1 loss for the side to move.
    pub value: f32,
    /// The columns with the best exact score, when every legal column was
    /// proven within the policy budget (`None` when off or not proven).
    pub best: Option<Vec<usize>>,
}

impl ExactValues {
    /// `None` when the solver cannot hold `cfg` (its bitboard must fit 64
    /// bits with a sentinel row) or `nodes` is 0 (off).
    pub fn new(cfg: BoardConfig, nodes: u64) -> Option<ExactValues> {
        if nodes == 0 {
            return None;
        }
        let solver = Solver::new(cfg, TABLE_LOG2).ok()?;
        Some(ExactValues {
            solver,
            nodes,
            policy_nodes: 0,
        })
    }

    /// Also scores every column of each proven position, `nodes` for the
    /// whole position (0: off).
    pub fn with_policy(mut self, nodes: u64) -> ExactValues {
        self.policy_nodes = nodes;
        self
    }

    /// For each of `plies` (positions of the game `moves`, the position
    /// after `moves[..ply]`), the exact result for the side to move there
    /// (+1 win, 0 draw, −1 loss) when the solver proves it within the
    /// budget, else `None`; with [`ExactValues::with_policy`], also its
    /// best columns.
    pub fn label(&mut self, moves: &[usize], plies: &[usize]) -> Vec<Option<Label>> {
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
                    let best = (self.policy_nodes > 0).then(|| self.best_columns(&pos)).flatten();
                    out[i] = Some(Label {
                        value: score.signum() as f32,
                        best,
                    });
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

    /// The columns of `pos` with the best exact score, or `None` when some
    /// legal column is not proven within the policy budget.
    fn best_columns(&mut self, pos: &crate::solver::Pos) -> Option<Vec<usize>> {
        let scores = self.solver.scores(pos, Some(self.policy_nodes));
        let legal: Vec<(usize, Option<i32>)> = scores
            .into_iter()
            .enumerate()
            .filter(|&(c, _)| self.solver.can_play(pos, c))
            .collect();
        let proven: Vec<(usize, i32)> = legal.iter().filter_map(|&(c, s)| Some((c, s?))).collect();
        if proven.len() < legal.len() {
            return None;
        }
        let top = proven.iter().map(|p| p.1).max()?;
        Some(proven.iter().filter(|p| p.1 == top).map(|p| p.0).collect())
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
            assert!(l.iter().flatten().all(|x| x.best.is_none()), "policy off");
            for (k, ply) in [(1, 26), (2, 28), (3, 30)] {
                assert_eq!(
                    l[k].as_ref().map(|x| x.value),
                    Some(truth(&moves[..ply])),
                    "seed {seed}, ply {ply}"
                );
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
        let mut c = ExactValues::new(six_by_seven(), 5_000).unwrap().with_policy(50_000);
        let with = c.label(&moves, &plies);
        // Scoring the columns fills the table, which can prove more values
        // later in the walk; what both prove agrees, and labels stay a
        // function of the game alone.
        for (a, b) in first.iter().zip(&with) {
            if let (Some(a), Some(b)) = (a, b) {
                assert_eq!(a.value, b.value);
            }
        }
        assert_eq!(c.label(&moves, &plies), with);
        assert_eq!(c.label(&line(30, 8), &[20, 25, 30]).len(), 3);
        assert_eq!(c.label(&moves, &plies), with);
    }

    /// Every column's exact score for the side to move after `moves`.
    fn all_scores(moves: &[usize]) -> Vec<Option<i32>> {
        let mut s = Solver::new(six_by_seven(), 20).unwrap();
        let p = s.position(moves).unwrap();
        s.scores(&p, None)
    }

    #[test]
    fn proven_positions_get_the_solvers_best_columns() {
        let mut ex = ExactValues::new(six_by_seven(), 20_000).unwrap().with_policy(200_000);
        let mut seen = 0;
        for seed in 0..4 {
            let moves = line(28, seed);
            let plies = [0, 22, 25, 28];
            for (k, l) in ex.label(&moves, &plies).into_iter().enumerate() {
                let Some(Label { best: Some(best), .. }) = l else {
                    continue;
                };
                let scores = all_scores(&moves[..plies[k]]);
                let top = scores.iter().flatten().max().copied();
                let want: Vec<usize> = (0..7).filter(|&c| scores[c].is_some() && scores[c] == top).collect();
                assert_eq!(best, want, "seed {seed}, ply {}", plies[k]);
                seen += 1;
            }
        }
        assert!(seen >= 8, "late positions are proven within the budget ({seen})");
    }
}
