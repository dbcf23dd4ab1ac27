//! A column's outcome (win, draw or loss) without its exact score: two
//! null-window probes of the position after it, usually far cheaper than
//! the score search, so a caller can say which columns win long before it
//! knows in how many moves. And a way for a caller's own threads to stop a
//! search from outside.

use super::position::Pos;
use super::Solver;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

impl Solver {
    /// Whether playing `col` wins (+1), draws (0) or loses (-1) for the side
    /// to move in `pos`; `None` for a column that cannot be played, or when
    /// `budget` nodes (for this call) or a cancel ([`Solver::set_cancel`])
    /// stop the search first. A column that wins at once is +1 even past
    /// the budget. `ceiling`: `pos`'s own score if known (a checked score
    /// book's), which no column exceeds: below 0 every column loses, at 0
    /// none wins, without a probe.
    pub fn column_outcome(&mut self, pos: &Pos, col: usize, budget: Option<u64>, ceiling: Option<i32>) -> Option<i32> {
        self.check(pos);
        if !self.can_play(pos, col) {
            return None;
        }
        if self.is_winning_move(pos, col) {
            return Some(1);
        }
        self.start_budget(budget);
        let mut child = *pos;
        child.play(&self.geo, col as u32);
        // The opponent wins at once: a loss (negamax must not be asked).
        if child.can_win_next(&self.geo) {
            return Some(-1);
        }
        if ceiling.is_some_and(|v| v < 0) {
            return Some(-1);
        }
        // Is the child's score above 0 (the opponent wins)?
        let r = self.negamax(&child, 0, 1);
        if self.aborted {
            return None;
        }
        if r >= 1 {
            return Some(-1);
        }
        if ceiling == Some(0) {
            return Some(0);
        }
        // The child scores at most 0: below 0 (we win) or a draw.
        let r = self.negamax(&child, -1, 0);
        if self.aborted {
            return None;
        }
        Some(if r <= -1 { 1 } else { 0 })
    }

    /// Stops this solver's searches (within 4096 nodes) once `flag` is set,
    /// as a node budget would: the call in progress answers `None`.
    /// `None` removes the flag; call it before the solver serves anyone
    /// else (it also forgets that the last abort was a cancel).
    pub fn set_cancel(&mut self, flag: Option<Arc<AtomicBool>>) {
        self.cancel = flag;
        self.cancelled = false;
        self.aborted = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::BoardConfig;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;
    use std::sync::atomic::Ordering;

    /// On random positions of 5×5 (four in a row), every column's outcome
    /// is the sign of its exact score, and a full column has none.
    #[test]
    fn outcomes_are_the_signs_of_the_scores() {
        let cfg = BoardConfig::new(5, 5, 4).unwrap();
        let mut exact = Solver::new(cfg, 16).unwrap();
        let mut probe = Solver::new(cfg, 16).unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let mut seen = [0usize; 3];
        for i in 0..120 {
            let (_, pos) = exact.quiet_line(4 + i % 18, &mut rng);
            let scores = exact.scores(&pos, None);
            // The position's own score, as a score book would give it.
            let best = scores.iter().flatten().max().copied();
            for (c, s) in scores.iter().enumerate() {
                let o = probe.column_outcome(&pos, c, None, None);
                assert_eq!(o, s.map(i32::signum), "column {c} of position {i}");
                let under = probe.column_outcome(&pos, c, None, best);
                assert_eq!(under, o, "column {c} of position {i} under {best:?}");
                let exact_under = probe.column_exact(&pos, c, None, best);
                assert_eq!(exact_under, *s, "column {c} of position {i} under {best:?}");
                if let Some(o) = o {
                    seen[(o + 1) as usize] += 1;
                }
            }
        }
        assert!(seen.iter().all(|&n| n > 0), "wins, draws and losses all met: {seen:?}");
    }

    /// A budget too small, or a cancel, answers `None`; a column the
    /// opponent answers with a win is known past both; after `set_cancel(None)` the solver answers again.
    #[test]
    fn budgets_and_cancels_stop_it() {
        let cfg = BoardConfig::default();
        let mut s = Solver::new(cfg, 16).unwrap();
        let pos = s.position(&[3, 3]).unwrap();
        assert_eq!(s.column_outcome(&pos, 3, Some(10), None), None);
        let flag = Arc::new(AtomicBool::new(true));
        s.set_cancel(Some(Arc::clone(&flag)));
        assert_eq!(s.column_outcome(&pos, 2, Some(1_000_000), None), None);
        let win = s.position(&[0, 6, 1, 6, 2]).unwrap();
        assert_eq!(
            s.column_outcome(&win, 4, Some(1), None),
            Some(-1),
            "the opponent's three in a row"
        );
        flag.store(false, Ordering::Relaxed);
        s.set_cancel(None);
        let (_, late) = s.quiet_line(20, &mut ChaCha8Rng::seed_from_u64(3));
        let scores = s.scores(&late, None);
        for (c, sc) in scores.iter().enumerate() {
            assert_eq!(s.column_outcome(&late, c, None, None), sc.map(i32::signum));
        }
    }
}
