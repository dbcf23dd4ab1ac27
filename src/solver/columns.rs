//! Every column's score, on one thread or several, and the best move: the
//! root drivers above the search of `search.rs`.

use super::position::Pos;
use super::Solver;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;

impl Solver {
    /// The score of each column for the side to move: `None` for a full
    /// column, or when the budget (for the whole call, spent on the columns
    /// from left to right) ran out before it was known. A winning column
    /// scores the immediate win (known even past the budget); any other
    /// scores minus the score of the position after it.
    pub fn scores(&mut self, pos: &Pos, budget: Option<u64>) -> Vec<Option<i32>> {
        self.scores_under(pos, budget, None)
    }

    /// [`Solver::scores`] under a `ceiling` (see
    /// [`Solver::scores_threaded_at_most`]).
    fn scores_under(&mut self, pos: &Pos, budget: Option<u64>, ceiling: Option<i32>) -> Vec<Option<i32>> {
        self.check(pos);
        self.start_budget(budget);
        let cols = self.geo.cols;
        let mirror = pos.is_symmetric();
        let mut scores: Vec<Option<i32>> = Vec::with_capacity(cols as usize);
        for c in 0..cols {
            let v = if mirror && right_half(cols, c) {
                scores[(cols - 1 - c) as usize]
            } else {
                self.column_score(pos, c, ceiling)
            };
            scores.push(v);
        }
        scores
    }

    /// [`Solver::scores`] on `threads` threads (1 is the plain call): columns
    /// go to the next free thread, centre first, and all threads share this
    /// solver's table (lock-free), so what one proves the others reuse. A
    /// thread with no column left helps with one still being searched
    /// (Lazy SMP: the same column with the other probe sequence, see
    /// [`Techniques::aspiration`], filling the shared table with other
    /// bounds); the first to finish gives the score and stops the others.
    /// `budget` is the whole call's, split evenly between the threads.
    pub fn scores_threaded(&mut self, pos: &Pos, budget: Option<u64>, threads: usize) -> Vec<Option<i32>> {
        self.scores_threaded_at_most(pos, budget, threads, None)
    }

    /// [`Solver::scores_threaded`] for a position whose own score is known
    /// to be `ceiling` (a score book's: the score is the best column's, so
    /// no column scores more). Each column's search then starts from its
    /// child's floor, `-ceiling` (on the 100 ply-9 positions of
    /// `docs/solver.md`'s coverage runs, just past the score book, 10%
    /// fewer nodes). A wrong ceiling gives wrong scores: only a checked
    /// book may give it.
    pub fn scores_threaded_at_most(
        &mut self,
        pos: &Pos,
        budget: Option<u64>,
        threads: usize,
        ceiling: Option<i32>,
    ) -> Vec<Option<i32>> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Mutex;
        self.check(pos);
        let threads = threads.clamp(1, self.geo.cols as usize);
        if threads == 1 {
            return self.scores_under(pos, budget, ceiling);
        }
        let share = budget.map(|b| b / threads as u64);
        // On its own mirror image, the right half scores as the left.
        let (cols, mirror) = (self.geo.cols, pos.is_symmetric());
        let order: Vec<u32> = self.geo.order[..cols as usize]
            .iter()
            .map(|&c| c as u32)
            .filter(|&c| !(mirror && right_half(cols, c)))
            .collect();
        let next = AtomicUsize::new(0);
        let results = Mutex::new(vec![None; self.geo.cols as usize]);
        let done: Vec<Arc<AtomicBool>> = (0..self.geo.cols).map(|_| Arc::new(AtomicBool::new(false))).collect();
        let mut helpers: Vec<Solver> = (1..threads).map(|_| self.helper()).collect();
        let work = |s: &mut Solver| {
            s.start_budget(share);
            let tech = s.tech;
            loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let (col, helping) = match order.get(i) {
                    Some(&c) => (c, false),
                    None => match order.iter().find(|&&c| !done[c as usize].load(Relaxed)) {
                        Some(&c) if !s.aborted => (c, true),
                        _ => break,
                    },
                };
                if helping {
                    s.tech.aspiration = !tech.aspiration;
                }
                s.cancel = Some(Arc::clone(&done[col as usize]));
                let v = s.column_score(pos, col, ceiling);
                s.cancel = None;
                s.tech = tech;
                if s.cancelled {
                    s.cancelled = false;
                    s.aborted = false;
                    continue;
                }
                if !done[col as usize].swap(true, Relaxed) {
                    results.lock().unwrap()[col as usize] = v;
                }
            }
        };
        std::thread::scope(|scope| {
            for h in helpers.iter_mut() {
                scope.spawn(|| work(h));
            }
            work(self);
        });
        self.nodes += helpers.iter().map(|h| h.nodes).sum::<u64>();
        let mut scores = results.into_inner().unwrap();
        if mirror {
            for c in (0..cols).filter(|&c| right_half(cols, c)) {
                scores[c as usize] = scores[(cols - 1 - c) as usize];
            }
        }
        scores
    }

    /// A solver for another thread: the same shape and techniques, sharing
    /// this one's table (what either proves, the other reuses), with its own
    /// counters.
    pub fn helper(&self) -> Solver {
        Solver {
            cfg: self.cfg,
            geo: self.geo.clone(),
            table: Arc::clone(&self.table),
            tech: self.tech,
            nodes: 0,
            limit: u64::MAX,
            aborted: false,
            cancel: None,
            cancelled: false,
        }
    }

    /// The exact score of playing `col` (from 0) for the side to move in
    /// `pos`, whose own score is at most `ceiling` if given (see
    /// [`Solver::scores_threaded_at_most`]): `None` for a column that cannot
    /// be played, or when `budget` nodes (for this call) or a cancel stop
    /// the search first.
    pub fn column_exact(&mut self, pos: &Pos, col: usize, budget: Option<u64>, ceiling: Option<i32>) -> Option<i32> {
        self.check(pos);
        self.start_budget(budget);
        if col >= self.geo.cols as usize {
            return None;
        }
        self.column_score(pos, col as u32, ceiling)
    }

    /// The score of playing `col` for the side to move, within the budget
    /// already set: `None` if full or past the budget.
    fn column_score(&mut self, pos: &Pos, col: u32, ceiling: Option<i32>) -> Option<i32> {
        let g = &self.geo;
        if !pos.can_play(g, col) {
            return None;
        }
        // A column that wins at once is known even past the budget.
        if pos.is_winning_move(g, col) {
            return Some(self.win_now_score(pos));
        }
        if self.aborted {
            return None;
        }
        let mut child = *pos;
        child.play(g, col);
        let s = -self.solve_above(&child, ceiling.map(|v| -v), 0);
        (!self.aborted).then_some(s)
    }

    /// The best exact move and its score: the fastest win, else a draw, else
    /// the slowest loss, ties going to the centre-most column
    /// ([`centre_order`]). `None` on a full board or past the budget (the
    /// whole call's).
    ///
    /// Cheaper than taking the best of [`Solver::scores`]: it solves `pos`
    /// once, then only asks of each column in centre order, with one null
    /// window, whether it reaches that score.
    pub fn best_move(&mut self, pos: &Pos, budget: Option<u64>) -> Option<(usize, i32)> {
        self.best_move_scoring(pos, budget, None)
    }

    /// [`Solver::best_move`] for a position whose own score is `known`
    /// (a checked score book's), which it then need not solve: only the
    /// columns' null windows are left. A wrong score gives a wrong move.
    pub fn best_move_scoring(&mut self, pos: &Pos, budget: Option<u64>, known: Option<i32>) -> Option<(usize, i32)> {
        self.check(pos);
        self.start_budget(budget);
        let g = self.geo.clone();
        let (cells, n) = (g.cells as i32, pos.moves as i32);
        let playable: Vec<u32> = g.order[..g.cols as usize]
            .iter()
            .map(|&c| c as u32)
            .filter(|&c| pos.can_play(&g, c))
            .collect();
        if playable.is_empty() {
            return None;
        }
        if let Some(&c) = playable.iter().find(|&&c| pos.is_winning_move(&g, c)) {
            return Some((c as usize, self.win_now_score(pos)));
        }
        let v = match known {
            Some(v) => v,
            None => self.solve_inner(pos),
        };
        if self.aborted {
            return None;
        }
        for &c in &playable {
            let mut child = *pos;
            child.play(&g, c);
            // The score of playing c is at most v; it is the best move when
            // the child's score is at most -v.
            let reaches = if child.can_win_next(&g) {
                -(cells - n) / 2 >= v
            } else {
                let r = self.negamax(&child, -v, -v + 1);
                if self.aborted {
                    return None;
                }
                r <= -v
            };
            if reaches {
                return Some((c as usize, v));
            }
        }
        unreachable!("some move reaches the position's own score {v}")
    }
}

/// Whether column `c` lies right of the board's middle: on a position that
/// is its own mirror image, it scores as its mirror column `cols - 1 - c`.
fn right_half(cols: u32, c: u32) -> bool {
    c > cols - 1 - c
}
