//! Gumbel root search (Danihelka et al., "Policy improvement by planning
//! with Gumbel", ICLR 2022), for self-play: which root move each simulation
//! explores, which move is played, and the policy target.
//!
//! Why: with PUCT, a search of few simulations spends them on the moves the
//! network already likes, and its visit counts are a poor policy target
//! (a move visited once looks as bad as one never tried). Gumbel root
//! search samples the moves to consider without replacement (Gumbel-top-k
//! on the network's logits), splits the simulations over them by
//! sequential halving, plays the survivor, and trains the policy on
//! `softmax(logits + σ(completed Q))` — an improvement of the network's
//! own policy by the search values, even at 16 simulations. Self-play can
//! then play many more games per CPU-hour.
//!
//! Pure: [`GumbelRoot`] holds one move's plan; the tree below the root is
//! still searched by PUCT ([`super::mcts::Tree::select_under`]).

use crate::game::MAX_SIDE;
use rand::Rng;

/// `σ(q) = (C_VISIT + max visits) · C_SCALE · q`, q in [0, 1]: the paper's
/// constants.
const C_VISIT: f32 = 50.0;
const C_SCALE: f32 = 1.0;

/// What the search knows of one root move.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RootMove {
    pub col: usize,
    /// The network's prior probability (before any noise).
    pub prior: f32,
    /// All visits of the move's subtree (from earlier moves' searches too).
    pub visits: u32,
    /// The move's mean value for the player to move at the root, in
    /// [−1, 1] (exact when proven); `None` before its first visit.
    pub q: Option<f32>,
}

/// One move's search plan at the root.
#[derive(Clone, Debug)]
pub struct GumbelRoot {
    /// `g(a) + logit(a)` per column (−∞ for columns not considered).
    base: [f32; MAX_SIDE],
    /// Visits given to each column by this search.
    visits: [u32; MAX_SIDE],
    /// For the k-th simulation, the visit count (within this search) that
    /// the move it explores must have: sequential halving's schedule.
    schedule: Vec<u32>,
    step: usize,
}

/// Sequential halving's visit schedule for `considered` moves and
/// `simulations` (as in DeepMind's mctx): each round gives every move
/// still in the race the same number of visits, then the race halves
/// (never below 2); entry k is how many visits the move explored at
/// simulation k already has.
pub fn halving_schedule(considered: usize, simulations: u32) -> Vec<u32> {
    let n = simulations as usize;
    let mut out = Vec::with_capacity(n);
    if considered == 0 {
        return out;
    }
    let rounds = (considered as f64).log2().ceil().max(1.0) as usize;
    let mut visits = vec![0u32; considered];
    let mut racing = considered;
    while out.len() < n {
        let extra = (n / (rounds * racing)).max(1);
        for _ in 0..extra {
            for v in visits.iter_mut().take(racing) {
                out.push(*v);
                *v += 1;
            }
        }
        racing = (racing / 2).max(2).min(considered);
    }
    out.truncate(n);
    out
}

/// The value of each root move for ranking and targets: its own mean where
/// visited, else `v_mix` — the root's value blended with the visited moves'
/// values weighted by their priors (the paper's completed Q).
pub fn completed_q(moves: &[RootMove], root_value: f32) -> Vec<f32> {
    let total: u32 = moves.iter().map(|m| m.visits).sum();
    let (mut pq, mut p) = (0.0f32, 0.0f32);
    for m in moves {
        if let (Some(q), true) = (m.q, m.visits > 0) {
            pq += m.prior * q;
            p += m.prior;
        }
    }
    let v_mix = if p > 0.0 {
        (root_value + total as f32 * pq / p) / (1.0 + total as f32)
    } else {
        root_value
    };
    moves.iter().map(|m| m.q.unwrap_or(v_mix)).collect()
}

/// `σ` of a value in [−1, 1] given the most visits of any root move.
fn sigma(q: f32, max_visits: u32) -> f32 {
    (C_VISIT + max_visits as f32) * C_SCALE * (q + 1.0) / 2.0
}

/// The log of a prior, finite even for 0.
fn logit(prior: f32) -> f32 {
    prior.max(1e-12).ln()
}

impl GumbelRoot {
    /// A plan for `simulations` at a root with `moves` (the legal ones).
    /// `noise`: draw Gumbel noise from it (self-play's exploring moves);
    /// without, the plan is deterministic (the network's top moves).
    pub fn new(moves: &[RootMove], simulations: u32, noise: Option<&mut dyn rand::RngCore>) -> GumbelRoot {
        let mut base = [f32::NEG_INFINITY; MAX_SIDE];
        let mut rng = noise;
        for m in moves {
            let g = match rng.as_mut() {
                Some(r) => {
                    let u: f64 = r.gen_range(f64::MIN_POSITIVE..1.0);
                    -(-u.ln()).ln() as f32
                }
                None => 0.0,
            };
            base[m.col] = g + logit(m.prior);
        }
        GumbelRoot {
            base,
            visits: [0; MAX_SIDE],
            schedule: halving_schedule(moves.len(), simulations),
            step: 0,
        }
    }

    /// The index in `moves` of the best by `g + logit + σ(completed Q)`
    /// among those whose visits in this search pass `keep`.
    fn best_where(&self, moves: &[RootMove], root_value: f32, keep: impl Fn(u32) -> bool) -> Option<usize> {
        let completed = completed_q(moves, root_value);
        let max_visits = moves.iter().map(|m| m.visits).max().unwrap_or(0);
        let score = |i: usize| self.base[moves[i].col] + sigma(completed[i], max_visits);
        (0..moves.len())
            .filter(|&i| keep(self.visits[moves[i].col]))
            .max_by(|&a, &b| score(a).total_cmp(&score(b)))
    }

    /// The root move the next simulation explores: among the moves whose
    /// visits in this search equal the schedule's entry, the best by
    /// `g + logit + σ(completed Q)`. Counts the visit.
    pub fn next(&mut self, moves: &[RootMove], root_value: f32) -> usize {
        let want = self.schedule.get(self.step).copied();
        self.step += 1;
        let pick = self
            .best_where(moves, root_value, |v| want.map_or(true, |w| v == w))
            .or_else(|| self.survivor(moves, root_value))
            .expect("a root with moves");
        self.visits[moves[pick].col] += 1;
        moves[pick].col
    }

    /// The most visited move of this search, ties by score.
    fn survivor(&self, moves: &[RootMove], root_value: f32) -> Option<usize> {
        let most = moves.iter().map(|m| self.visits[m.col]).max()?;
        self.best_where(moves, root_value, |v| v == most)
    }

    /// Visits this search gave each of `cols` columns.
    pub fn search_visits(&self, cols: usize) -> Vec<u32> {
        self.visits[..cols].to_vec()
    }

    /// The move to play: the survivor of the halving (most visited in this
    /// search, ties by score).
    pub fn choose(&self, moves: &[RootMove], root_value: f32) -> usize {
        self.survivor(moves, root_value).map_or(0, |i| moves[i].col)
    }
}

/// The policy target: `softmax(logit + σ(completed Q))` over the root's
/// moves, as a distribution over `cols` columns.
pub fn improved_policy(moves: &[RootMove], root_value: f32, cols: usize) -> Vec<f32> {
    let completed = completed_q(moves, root_value);
    let max_visits = moves.iter().map(|m| m.visits).max().unwrap_or(0);
    let z: Vec<f32> = moves
        .iter()
        .zip(&completed)
        .map(|(m, &q)| logit(m.prior) + sigma(q, max_visits))
        .collect();
    let top = z.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let e: Vec<f32> = z.iter().map(|x| (x - top).exp()).collect();
    let sum: f32 = e.iter().sum();
    let mut out = vec![0f32; cols];
    for (m, x) in moves.iter().zip(e) {
        out[m.col] = x / sum;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    fn moves(priors: &[f32]) -> Vec<RootMove> {
        priors
            .iter()
            .enumerate()
            .map(|(col, &prior)| RootMove {
                col,
                prior,
                visits: 0,
                q: None,
            })
            .collect()
    }

    #[test]
    fn the_schedule_halves_the_race_and_spends_the_budget() {
        let s = halving_schedule(4, 8);
        assert_eq!(s, vec![0, 0, 0, 0, 1, 1, 2, 2]);
        for (m, n) in [(7, 16), (7, 32), (7, 100), (2, 5), (1, 4), (3, 50)] {
            let s = halving_schedule(m, n);
            assert_eq!(s.len(), n as usize, "{m} moves, {n} sims");
            // The first round visits every move once.
            assert!(s[..m.min(n as usize)].iter().all(|&v| v == 0));
        }
        assert!(halving_schedule(0, 10).is_empty());
    }

    /// Plays a search where each move's value is fixed: returns the visits
    /// per column and the chosen move.
    fn run(values: &[f32], priors: &[f32], sims: u32, seed: Option<u64>) -> (Vec<u32>, usize) {
        let mut ms = moves(priors);
        let mut rng = seed.map(ChaCha8Rng::seed_from_u64);
        let mut plan = GumbelRoot::new(&ms, sims, rng.as_mut().map(|r| r as &mut dyn rand::RngCore));
        for _ in 0..sims {
            let c = plan.next(&ms, 0.0);
            ms[c].visits += 1;
            ms[c].q = Some(values[c]);
        }
        (ms.iter().map(|m| m.visits).collect(), plan.choose(&ms, 0.0))
    }

    #[test]
    fn halving_keeps_the_move_the_search_finds_best() {
        // The network likes column 0; the search finds column 5 wins.
        let priors = [0.5, 0.1, 0.1, 0.1, 0.1, 0.05, 0.05];
        let values = [-0.5, -0.2, -0.3, 0.0, -0.1, 0.9, -0.4];
        let (visits, chosen) = run(&values, &priors, 16, None);
        assert_eq!(chosen, 5, "{visits:?}");
        assert_eq!(visits.iter().sum::<u32>(), 16);
        assert!(visits.iter().all(|&v| v >= 1), "every move is tried: {visits:?}");
        assert_eq!(visits.iter().copied().max(), Some(visits[5]));
    }

    #[test]
    fn noise_makes_other_moves_explored_and_is_reproducible() {
        let priors = [0.3, 0.2, 0.1, 0.1, 0.1, 0.1, 0.1];
        let values = [0.0; 7];
        let chosen: std::collections::BTreeSet<usize> = (0..40).map(|s| run(&values, &priors, 16, Some(s)).1).collect();
        assert!(chosen.len() >= 4, "equal values: the noise decides ({chosen:?})");
        assert_eq!(run(&values, &priors, 16, Some(3)), run(&values, &priors, 16, Some(3)));
        // Without noise and equal values, the network's favourite.
        assert_eq!(run(&values, &priors, 16, None).1, 0);
    }

    #[test]
    fn the_improved_policy_moves_towards_better_values() {
        let mut ms = moves(&[0.4, 0.3, 0.3]);
        ms[0].visits = 4;
        ms[0].q = Some(-0.8);
        ms[1].visits = 4;
        ms[1].q = Some(0.6);
        let p = improved_policy(&ms, 0.0, 4);
        assert!((p.iter().sum::<f32>() - 1.0).abs() < 1e-5);
        assert_eq!(p[3], 0.0);
        assert!(p[1] > 0.9, "{p:?}");
        // The unvisited move gets the blended value: between the two.
        let q = completed_q(&ms, 0.0);
        assert!(q[2] > -0.8 && q[2] < 0.6, "{q:?}");
    }
}
