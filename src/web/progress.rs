//! The analysis board's search, answered as it goes: every open column's
//! outcome (win, draw, loss) first, centre columns first, then every
//! column's exact score, each sent as soon as it is proven, so no column
//! waits for the slowest. Columns go to the next free thread, all threads
//! sharing one solver's table. It stops when every column is exact, when
//! the request is cancelled (the page asked about another position, or
//! left), or at the cap: [`CAP_NODES`] nodes or [`CAP_TIME`].

use crate::solver::{centre_order, describe_score, Pos, Solver};
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The most nodes one request searches, all threads together.
pub const CAP_NODES: u64 = 2_000_000_000;
/// The longest one request searches.
pub const CAP_TIME: Duration = Duration::from_secs(60);

/// What a request knows of a position so far.
#[derive(Clone, Debug)]
pub struct Known {
    pub pos: String,
    cells: usize,
    ply: usize,
    /// Per column: can it be played.
    open: Vec<bool>,
    /// Per column: its exact score (Pons' convention, side to move).
    pub scores: Vec<Option<i32>>,
    /// Per column: +1 win, 0 draw, -1 loss for the side to move.
    pub outcomes: Vec<Option<i32>>,
}

impl Known {
    /// Nothing known yet of `pos` (`ply` plies played on a board of
    /// `cells` cells, `open` its playable columns).
    pub fn new(pos: &str, cells: usize, ply: usize, open: Vec<bool>) -> Known {
        let n = open.len();
        Known {
            pos: pos.to_string(),
            cells,
            ply,
            open,
            scores: vec![None; n],
            outcomes: vec![None; n],
        }
    }

    /// Sets column `c`'s exact score (and so its outcome).
    pub fn set_score(&mut self, c: usize, s: i32) {
        self.scores[c] = Some(s);
        self.outcomes[c] = Some(s.signum());
    }

    /// Sets every column's score that `scores` knows (a score book's
    /// answer, or the solver's within a budget).
    pub fn set_scores(&mut self, scores: Vec<Option<i32>>) {
        for (c, s) in scores.into_iter().enumerate() {
            if let Some(s) = s {
                self.set_score(c, s);
            }
        }
    }

    /// Every open column is exact.
    pub fn proven(&self) -> bool {
        (0..self.open.len()).all(|c| !self.open[c] || self.scores[c].is_some())
    }

    /// The open columns not yet exact.
    fn working(&self) -> Vec<usize> {
        (0..self.open.len())
            .filter(|&c| self.open[c] && self.scores[c].is_none())
            .collect()
    }

    /// The `analysis` message's data: `final` on the request's last message
    /// (then nothing is being worked on), `nodes` the request's cap.
    pub fn message(&self, last: bool, nodes: Option<u64>) -> Value {
        let words: Vec<Option<String>> = self
            .scores
            .iter()
            .map(|s| s.map(|s| describe_score(self.cells, self.ply, s)))
            .collect();
        let working = if last { Vec::new() } else { self.working() };
        json!({
            "pos": self.pos,
            "scores": self.scores,
            "words": words,
            "outcomes": self.outcomes,
            "working": working,
            "proven": self.proven(),
            "final": last,
            "nodes": nodes,
        })
    }
}

#[derive(Clone, Copy, Debug)]
enum Task {
    Outcome(usize),
    Exact(usize),
}

/// What the threads of one search share.
struct Shared<'a> {
    pos: &'a Pos,
    ceiling: Option<i32>,
    /// Every open column's outcome, centre first, then every exact score.
    tasks: Vec<Task>,
    next: AtomicUsize,
    state: Mutex<Known>,
    /// Set by the watchdog: stops every thread's search.
    stop: Arc<AtomicBool>,
    /// Each thread's share of [`CAP_NODES`].
    per_thread: u64,
    send: &'a (dyn Fn(Value) + Sync),
}

impl Shared<'_> {
    /// One thread's work: the next task until none is left, the thread's
    /// share of the cap is spent, or the search is stopped.
    fn work(&self, s: &mut Solver) {
        s.set_cancel(Some(Arc::clone(&self.stop)));
        let start = s.nodes();
        while !self.stop.load(Relaxed) {
            let Some(&task) = self.tasks.get(self.next.fetch_add(1, Relaxed)) else {
                break;
            };
            let (Task::Outcome(c) | Task::Exact(c)) = task;
            if self.state.lock().unwrap().scores[c].is_some() {
                continue;
            }
            let left = Some(self.per_thread.saturating_sub(s.nodes() - start));
            let found = match task {
                Task::Outcome(c) => s.column_outcome(self.pos, c, left, self.ceiling).map(|o| (o, None)),
                Task::Exact(c) => s
                    .column_exact(self.pos, c, left, self.ceiling)
                    .map(|v| (v.signum(), Some(v))),
            };
            let Some((outcome, score)) = found else { break };
            let mut k = self.state.lock().unwrap();
            match score {
                Some(v) => k.set_score(c, v),
                None => k.outcomes[c] = Some(outcome),
            }
            if !k.proven() && !self.stop.load(Relaxed) {
                (self.send)(k.message(false, Some(CAP_NODES)));
            }
        }
        s.set_cancel(None);
    }
}

/// Searches `pos` with `solver` and `threads - 1` helpers sharing its table
/// (`ceiling`: `pos`'s own score if a score book holds it, which no column
/// exceeds, see [`Solver::scores_threaded_at_most`]),
/// filling `known` and calling `send` with a (not final) message after each
/// column's outcome or score, as long as some column is left. Returns what
/// is known at the end, or `None` when `cancel` was set (nothing more is
/// sent then). The solver is left without a cancel flag.
pub fn search(
    solver: &mut Solver,
    pos: &Pos,
    threads: usize,
    ceiling: Option<i32>,
    known: Known,
    cancel: &AtomicBool,
    send: &(dyn Fn(Value) + Sync),
) -> Option<Known> {
    let mut known = known;
    let cols = known.open.len();
    for c in 0..cols {
        if known.open[c] && solver.is_winning_move(pos, c) {
            known.set_score(c, solver.win_now_score(pos));
        }
    }
    if known.proven() {
        return Some(known);
    }
    send(known.message(false, Some(CAP_NODES)));
    let order: Vec<usize> = centre_order(cols)
        .into_iter()
        .filter(|&c| known.open[c] && known.scores[c].is_none())
        .collect();
    let threads = threads.clamp(1, order.len());
    let shared = Shared {
        pos,
        ceiling,
        tasks: order
            .iter()
            .map(|&c| Task::Outcome(c))
            .chain(order.iter().map(|&c| Task::Exact(c)))
            .collect(),
        next: AtomicUsize::new(0),
        state: Mutex::new(known),
        stop: Arc::new(AtomicBool::new(false)),
        per_thread: CAP_NODES / threads as u64,
        send,
    };
    let finished = AtomicBool::new(false);
    let deadline = Instant::now() + CAP_TIME;
    let mut helpers: Vec<Solver> = (1..threads).map(|_| solver.helper()).collect();
    std::thread::scope(|scope| {
        // The watchdog: the request's cancel, or the time cap, stops every
        // thread within 4096 of its nodes.
        scope.spawn(|| {
            while !finished.load(Relaxed) {
                if cancel.load(Relaxed) || Instant::now() >= deadline {
                    shared.stop.store(true, Relaxed);
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        let shared = &shared;
        let handles: Vec<_> = helpers
            .iter_mut()
            .map(|h| scope.spawn(move || shared.work(h)))
            .collect();
        shared.work(solver);
        for h in handles {
            let _ = h.join();
        }
        finished.store(true, Relaxed);
    });
    if cancel.load(Relaxed) {
        return None;
    }
    Some(shared.state.into_inner().unwrap())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::BoardConfig;

    fn open_of(s: &Solver, pos: &Pos) -> Vec<bool> {
        (0..s.config().cols).map(|c| s.can_play(pos, c)).collect()
    }

    /// On 6×7 at ply 10, every column ends exact, the messages before the
    /// last show outcomes before scores, every outcome is its score's sign,
    /// and the scores are the solver's own.
    #[test]
    fn every_column_ends_exact_and_outcomes_come_first() {
        let cfg = BoardConfig::default();
        let mut s = Solver::new(cfg, 22).unwrap();
        let moves = [3, 3, 3, 3, 2, 4, 4, 2, 1, 5];
        let pos = s.position(&moves).unwrap();
        let known = Known::new("4444353526", 42, moves.len(), open_of(&s, &pos));
        let sent = Mutex::new(Vec::new());
        let never = AtomicBool::new(false);
        let end = search(&mut s, &pos, 2, None, known, &never, &|v| sent.lock().unwrap().push(v)).unwrap();
        assert!(end.proven());
        let msg = end.message(true, Some(CAP_NODES));
        assert_eq!(msg["final"], true);
        assert_eq!(msg["working"], json!([]));
        let sent = sent.into_inner().unwrap();
        assert!(sent.len() > 1, "{} messages", sent.len());
        assert!(sent.iter().all(|m| m["final"] == false && m["pos"] == "4444353526"));
        let first = &sent[1];
        let outcomes = first["outcomes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|o| !o.is_null())
            .count();
        assert!(outcomes >= 1, "{first}");
        let mut fresh = Solver::new(cfg, 20).unwrap();
        let want = fresh.scores(&pos, None);
        assert_eq!(end.scores, want);
        // The same under the position's own score as a score book gives it.
        let best = want.iter().flatten().max().copied();
        let mut booked = Solver::new(cfg, 22).unwrap();
        let known = Known::new("4444353526", 42, moves.len(), open_of(&booked, &pos));
        let end = search(&mut booked, &pos, 2, best, known, &never, &|_| {}).unwrap();
        assert_eq!(end.scores, want);
        for m in &sent {
            for (c, o) in m["outcomes"].as_array().unwrap().iter().enumerate() {
                if let Some(o) = o.as_i64() {
                    assert_eq!(o as i32, want[c].unwrap().signum(), "column {c}: {m}");
                }
            }
        }
    }

    /// A cancel set before the search answers `None` at once, and the
    /// solver answers normally afterwards.
    #[test]
    fn a_cancelled_search_answers_nothing() {
        let cfg = BoardConfig::default();
        let mut s = Solver::new(cfg, 20).unwrap();
        let pos = s.position(&[3, 3]).unwrap();
        let known = Known::new("44", 42, 2, open_of(&s, &pos));
        let yes = AtomicBool::new(true);
        let t = Instant::now();
        assert!(search(&mut s, &pos, 2, None, known, &yes, &|_| {}).is_none());
        assert!(t.elapsed() < Duration::from_secs(5));
        let late = s.position(&[3, 3, 3, 3, 2, 4, 4, 2, 1, 5, 5, 1]).unwrap();
        assert!(s.scores(&late, None).iter().all(Option::is_some));
    }
}
