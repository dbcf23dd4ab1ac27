//! Elo ratings fitted to all games at once, as Ordo and BayesElo do.
//!
//! Model: Bradley–Terry on the Elo scale, P(i beats j) = 1 / (1 + 10^((r_j − r_i)/400)),
//! with a draw counted as half a win and half a loss. The maximum-likelihood
//! ratings are found with the minorise–maximise iteration of Hunter (2004),
//! then centred on the pool average (or shifted so the anchor player has its
//! given rating).
//!
//! Error bars: 95% intervals (±1.96 σ) from the covariance of the fit, i.e.
//! the inverse of the Fisher information at the optimum (the pseudo-inverse
//! for the average-centred ratings, the reduced inverse with an anchor).
//! Counting a draw as half a win treats it as a coin flip, which slightly
//! overstates the variance of drawish players — the conservative side.
//!
//! A player who won (or lost) every game, or a group of players that never
//! lost to another group, has no finite maximum-likelihood rating. As in
//! BayesElo, a prior of one virtual draw between every two players who met
//! keeps every rating finite; its weight fades as real games accumulate (at
//! 75% over 1,100 games it moves the estimate by under 0.2 Elo). The
//! covariance includes the prior (a Laplace approximation of the posterior).
//! A player who won (or lost) every game is still flagged as a lower (or
//! upper) bound: "at least this strong".

/// Virtual draws added between every two players who played each other.
pub const PRIOR_DRAWS: f64 = 1.0;

use nalgebra::DMatrix;

const K: f64 = std::f64::consts::LN_10 / 400.0;

/// One game's result between two players (by index), from `a`'s view:
/// 1 win, 0.5 draw, 0 loss.
#[derive(Clone, Copy, Debug)]
pub struct Result2 {
    pub a: usize,
    pub b: usize,
    pub score_a: f64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Bound {
    /// The player won every game: its true rating is at least this.
    Lower,
    /// The player lost every game: its true rating is at most this.
    Upper,
}

#[derive(Clone, Debug)]
pub struct Ratings {
    pub elo: Vec<f64>,
    /// Half-width of the 95% interval.
    pub error: Vec<f64>,
    pub bound: Vec<Option<Bound>>,
    /// Covariance matrix of the ratings (Elo²).
    pub cov: Vec<Vec<f64>>,
}

/// Probability that a player rated `diff` Elo above another wins (draws half).
pub fn expected(diff: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf(-diff / 400.0))
}

/// The Elo difference that gives `score` (0 < score < 1).
pub fn elo_from_score(score: f64) -> f64 {
    -400.0 * (1.0 / score - 1.0).log10()
}

/// Standard normal cumulative distribution.
pub fn phi(x: f64) -> f64 {
    0.5 * (1.0 + libm::erf(x / std::f64::consts::SQRT_2))
}

/// Fits ratings for `n` players. `anchor`: a player whose rating is fixed.
pub fn fit(n: usize, games: &[Result2], anchor: Option<(usize, f64)>) -> Ratings {
    // Pairwise games and scores.
    let mut played = vec![vec![0.0f64; n]; n];
    let mut score = vec![0.0f64; n];
    let mut total = vec![0.0f64; n];
    for g in games {
        played[g.a][g.b] += 1.0;
        played[g.b][g.a] += 1.0;
        score[g.a] += g.score_a;
        score[g.b] += 1.0 - g.score_a;
        total[g.a] += 1.0;
        total[g.b] += 1.0;
    }
    let mut bound = vec![None; n];
    for i in 0..n {
        if total[i] > 0.0 && score[i] >= total[i] {
            bound[i] = Some(Bound::Lower);
        } else if total[i] > 0.0 && score[i] <= 0.0 {
            bound[i] = Some(Bound::Upper);
        }
    }
    for (i, row) in played.iter_mut().enumerate() {
        for (j, games) in row.iter_mut().enumerate() {
            if i != j && *games > 0.0 {
                *games += PRIOR_DRAWS;
                score[i] += 0.5 * PRIOR_DRAWS;
                total[i] += PRIOR_DRAWS;
            }
        }
    }
    // MM iterations on gamma = 10^(r/400).
    let mut gamma = vec![1.0f64; n];
    for _ in 0..20_000 {
        let mut next = gamma.clone();
        let mut change = 0.0f64;
        for i in 0..n {
            if total[i] == 0.0 {
                continue;
            }
            let denom: f64 = (0..n)
                .filter(|&j| j != i)
                .map(|j| played[i][j] / (gamma[i] + gamma[j]))
                .sum();
            if denom > 0.0 {
                next[i] = (score[i] / denom).max(1e-300);
            }
        }
        // Keep the scale fixed (geometric mean 1) so values stay representable.
        let lg: f64 = next.iter().map(|g| g.ln()).sum::<f64>() / n as f64;
        for (g, old) in next.iter_mut().zip(&gamma) {
            *g = (g.ln() - lg).exp();
            change = change.max((g.ln() - old.ln()).abs());
        }
        gamma = next;
        if change < 1e-10 {
            break;
        }
    }
    let mut elo: Vec<f64> = gamma.iter().map(|g| 400.0 * g.log10()).collect();
    let mean = elo.iter().sum::<f64>() / n as f64;
    let shift = match anchor {
        Some((a, r)) => r - elo[a],
        None => -mean,
    };
    for e in elo.iter_mut() {
        *e += shift;
    }
    let cov = covariance(n, &played, &elo, anchor.map(|a| a.0));
    let error = (0..n).map(|i| 1.96 * cov[i][i].max(0.0).sqrt()).collect();
    Ratings { elo, error, bound, cov }
}

/// The covariance of the fitted ratings, in Elo².
fn covariance(n: usize, played: &[Vec<f64>], elo: &[f64], anchor: Option<usize>) -> Vec<Vec<f64>> {
    let mut info = DMatrix::<f64>::zeros(n, n);
    for i in 0..n {
        for j in 0..n {
            if i != j && played[i][j] > 0.0 {
                let p = expected(elo[i] - elo[j]);
                let w = K * K * played[i][j] * p * (1.0 - p);
                info[(i, i)] += w;
                info[(i, j)] -= w;
            }
        }
    }
    let mut cov = vec![vec![0.0; n]; n];
    match anchor {
        Some(a) => {
            let keep: Vec<usize> = (0..n).filter(|&i| i != a).collect();
            let reduced = DMatrix::from_fn(keep.len(), keep.len(), |r, c| info[(keep[r], keep[c])]);
            if let Some(inv) = reduced.try_inverse() {
                for (r, &i) in keep.iter().enumerate() {
                    for (c, &j) in keep.iter().enumerate() {
                        cov[i][j] = inv[(r, c)];
                    }
                }
            }
        }
        None => {
            // Pseudo-inverse on the sum-zero subspace: (I + J/n)^-1 - J/n.
            let j = DMatrix::from_element(n, n, 1.0 / n as f64);
            if let Some(inv) = (&info + &j).try_inverse() {
                let p = inv - j;
                for (r, row) in cov.iter_mut().enumerate() {
                    for (c, v) in row.iter_mut().enumerate() {
                        *v = p[(r, c)];
                    }
                }
            }
        }
    }
    cov
}

impl Ratings {
    /// Likelihood that player `i` is stronger than player `j`.
    pub fn los(&self, i: usize, j: usize) -> f64 {
        let var = self.cov[i][i] + self.cov[j][j] - 2.0 * self.cov[i][j];
        if var <= 0.0 {
            return if self.elo[i] > self.elo[j] { 1.0 } else { 0.5 };
        }
        phi((self.elo[i] - self.elo[j]) / var.sqrt())
    }
}

/// The classic summary of a two-player match.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct HeadToHead {
    pub games: u32,
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    pub score: f64,
    /// Elo difference and the half-width of its 95% interval; `None` when
    /// the score is 0% or 100% (no finite estimate).
    pub elo_diff: Option<f64>,
    pub elo_error: Option<f64>,
    /// Likelihood of superiority (normal approximation on wins and losses).
    pub los: f64,
    pub draw_ratio: f64,
}

pub fn head_to_head(wins: u32, draws: u32, losses: u32) -> HeadToHead {
    let n = (wins + draws + losses) as f64;
    let score = if n > 0.0 {
        (wins as f64 + 0.5 * draws as f64) / n
    } else {
        0.5
    };
    let (elo_diff, elo_error) = if n > 0.0 && score > 0.0 && score < 1.0 {
        let var = (wins as f64 * (1.0 - score).powi(2)
            + draws as f64 * (0.5 - score).powi(2)
            + losses as f64 * score.powi(2))
            / n;
        let se = (var / n).sqrt();
        let lo = elo_from_score((score - 1.96 * se).max(1e-6));
        let hi = elo_from_score((score + 1.96 * se).min(1.0 - 1e-6));
        (Some(elo_from_score(score)), Some((hi - lo) / 2.0))
    } else {
        (None, None)
    };
    let decisive = (wins + losses) as f64;
    let los = if decisive > 0.0 {
        phi((wins as f64 - losses as f64) / decisive.sqrt())
    } else {
        0.5
    };
    HeadToHead {
        games: n as u32,
        wins,
        draws,
        losses,
        score,
        elo_diff,
        elo_error,
        los,
        draw_ratio: if n > 0.0 { draws as f64 / n } else { 0.0 },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn games(a: usize, b: usize, w: u32, d: u32, l: u32) -> Vec<Result2> {
        let mut v = Vec::new();
        v.extend((0..w).map(|_| Result2 { a, b, score_a: 1.0 }));
        v.extend((0..d).map(|_| Result2 { a, b, score_a: 0.5 }));
        v.extend((0..l).map(|_| Result2 { a, b, score_a: 0.0 }));
        v
    }

    #[test]
    fn seventy_five_percent_is_191_elo() {
        assert!((elo_from_score(0.75) - 190.85).abs() < 0.01);
        let r = fit(2, &games(0, 1, 600, 300, 100), None); // 75%
        assert!(((r.elo[0] - r.elo[1]) - 190.85).abs() < 0.3, "{:?}", r.elo);
        assert!((r.elo[0] + r.elo[1]).abs() < 1e-6, "centred on the average");
        let h = head_to_head(600, 300, 100);
        assert!((h.elo_diff.unwrap() - 190.85).abs() < 0.01);
        assert!(h.los > 0.999 && (h.draw_ratio - 0.3).abs() < 1e-12);
    }

    #[test]
    fn separated_groups_stay_finite() {
        // A and B never lose to C and D.
        let mut g = games(0, 1, 5, 0, 5);
        g.extend(games(2, 3, 5, 0, 5));
        for (a, b) in [(0, 2), (0, 3), (1, 2), (1, 3)] {
            g.extend(games(a, b, 10, 0, 0));
        }
        let r = fit(4, &g, None);
        assert!(r.elo.iter().all(|e| e.is_finite() && e.abs() < 1000.0), "{:?}", r.elo);
        assert!(r.error.iter().all(|e| e.is_finite() && *e < 500.0), "{:?}", r.error);
        assert!(r.elo[0] > r.elo[2] + 300.0);
        assert!(r.los(1, 2) > 0.99);
    }

    #[test]
    fn equal_scores_give_equal_ratings() {
        let mut g = games(0, 1, 5, 2, 5);
        g.extend(games(1, 2, 3, 4, 3));
        g.extend(games(0, 2, 1, 8, 1));
        let r = fit(3, &g, None);
        for e in &r.elo {
            assert!(e.abs() < 1e-6, "{:?}", r.elo);
        }
        assert!((r.los(0, 1) - 0.5).abs() < 1e-6);
    }

    #[test]
    fn a_perfect_score_is_a_finite_lower_bound() {
        let mut g = games(0, 1, 10, 0, 0);
        g.extend(games(1, 2, 5, 0, 5));
        g.extend(games(0, 2, 10, 0, 0));
        let r = fit(3, &g, None);
        assert_eq!(r.bound, vec![Some(Bound::Lower), None, None]);
        assert!(r.elo[0].is_finite() && r.elo[0] > r.elo[1] + 200.0);
        assert!(r.error[0].is_finite());
        assert!((r.elo[1] - r.elo[2]).abs() < 1e-6);
        let h = head_to_head(10, 0, 0);
        assert_eq!(h.elo_diff, None);
    }

    #[test]
    fn error_bars_shrink_with_more_games_and_match_the_binomial() {
        let small = fit(2, &games(0, 1, 30, 0, 10), None);
        let big = fit(2, &games(0, 1, 3000, 0, 1000), None);
        assert!(big.error[0] < small.error[0] / 9.0);
        // Two players: the difference's σ equals the binomial σ of the score
        // mapped through the Elo curve's slope (the one virtual draw aside).
        let p: f64 = 3000.5 / 4001.0;
        let n = 4001.0;
        let sd_diff = (p * (1.0 - p) / n).sqrt() / (K * p * (1.0 - p));
        let var_diff = big.cov[0][0] + big.cov[1][1] - 2.0 * big.cov[0][1];
        assert!(
            (var_diff.sqrt() - sd_diff).abs() / sd_diff < 1e-3,
            "{} vs {sd_diff}",
            var_diff.sqrt()
        );
    }

    #[test]
    fn anchor_fixes_one_rating() {
        let r = fit(2, &games(0, 1, 750, 0, 250), Some((1, 1500.0)));
        assert!((r.elo[1] - 1500.0).abs() < 1e-9);
        assert!((r.elo[0] - 1690.85).abs() < 0.5);
        assert_eq!(r.error[1], 0.0);
    }
}
