//! A perfect-play solver for two-player boards, after Pascal Pons'
//! "Solving Connect 4" (blog.gamesolver.org): exact scores, not estimates.
//!
//! Pure code: no I/O; threads only inside [`Solver::scores_threaded`]. It imports only [`crate::game`].
//!
//! # Boards
//! Any two-player board whose bitboard fits 64 bits with one sentinel row per
//! column, `(rows + 1) × cols ≤ 64` (6×7, 7×6, 8×7, 9×6, 4×12, …), and any
//! `win_length` the rules allow. Four in a row has an unrolled line test; other
//! lengths use the general one (see `position.rs`).
//!
//! # Scores
//! Pons' convention, from the view of the side to move. On a board of `cells`
//! cells, in a position where `n` plies have been played:
//! - a win whose winning piece is played after `m` plies in all (`m ≥ n`, same
//!   parity as `n`) scores `(cells + 1 - m) / 2` (integer division), at least 1;
//! - a loss to the opponent's winning piece after `m` plies scores
//!   `-(cells + 1 - m) / 2`;
//! - a draw scores 0.
//!
//! So the sooner the win the larger the score, and the later the loss the
//! closer to 0. On 6×7 (42 cells) a win with one's own 4th piece scores
//! 22 - 4 = 18: the score is `cells / 2 + 1` minus the winner's number of
//! pieces at the end, for even `cells`. The best score from `n` plies is
//! `(cells + 1 - n) / 2` (win with the next move), the worst
//! `-(cells - n) / 2` (the opponent wins with its next move).
//!
//! [`describe_score`] turns a score into words: "wins in N" where N counts the
//! side to move's own moves up to and including its winning move, "loses in
//! N" where N counts its own moves still to play before the opponent's
//! winning move (equally: the opponent wins with its N-th move), or "draw".
//!
//! # Search
//! Negamax alpha–beta over these scores, with, each switchable through
//! [`Techniques`] so their effect on node counts can be measured:
//! - null-window probes: [`Solver::solve`] binary-searches the score with
//!   windows `(s, s + 1)`, which cut far more than one wide window;
//! - move order: centre columns first, then (stable) by how many winning cells
//!   the move creates;
//! - non-losing moves: a forced block is the only move, two threats lose at
//!   once, and no move goes right below an opponent's winning cell, which also
//!   settles the last two plies as a draw without searching them;
//! - a transposition table of lower and upper bounds in 8-byte words
//!   (`table_log2` sets its size), shared lock-free between the threads of
//!   [`Solver::scores_threaded`], keyed by the smaller of the position's and its mirror's key so a
//!   position and its mirror image share one entry;
//! - enhanced transposition cutoffs: far from the end, the children are
//!   looked up before any is searched, in case one's stored bound cuts.
//!
//! A node budget bounds any call: past it the answer is `None`, never a guess,
//! and nothing half-searched enters the table.

pub mod book;
mod position;
pub mod scores;
pub mod sets;
mod table;
#[cfg(test)]
mod tests;

pub use book::Book;
pub use position::{centre_order, Pos};
pub use scores::ScoreBook;

use crate::game::{Board, BoardConfig};
use position::{Geometry, MAX_COLS};
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use table::Table;

/// Largest `table_log2` accepted: 2^30 entries of 8 bytes is 8 GiB.
pub const MAX_TABLE_LOG2: u32 = 30;

/// How moves are ordered inside the search.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MoveOrder {
    /// Column 0 first: the baseline for measurements.
    LeftToRight,
    /// Centre columns first ([`centre_order`]).
    Centre,
    /// Centre first, then stably by the number of winning cells created.
    CentreThenThreats,
}

/// The search techniques, each of which can be turned off to measure what it
/// saves. Every combination gives the same exact scores; only the node count
/// (and time) changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Techniques {
    /// Binary search of the score with null windows (else one full window).
    pub null_window: bool,
    /// With null windows: the first probe at 0 (most early positions are
    /// near a draw), then galloping outwards from the last bound (steps 1,
    /// 2, 4, …), so most probes are near the score; else a binary search
    /// from the middle of the range.
    pub aspiration: bool,
    pub order: MoveOrder,
    /// Forced blocks and never playing below an opponent's winning cell.
    pub non_losing: bool,
    /// The transposition table.
    pub table: bool,
    /// One table entry for a position and its mirror image.
    pub symmetry: bool,
    /// Enhanced transposition cutoffs: before searching the moves, look
    /// each child up in the table for a bound that already cuts.
    pub etc: bool,
}

impl Techniques {
    /// What [`Solver::new`] uses: everything on but the aspiration probes,
    /// which measured slower.
    pub const ALL: Techniques = Techniques {
        null_window: true,
        // Measured on ply-4 lines of 6×7: binary search fewer nodes on 3 of 4.
        aspiration: false,
        order: MoveOrder::CentreThenThreats,
        non_losing: true,
        table: true,
        symmetry: true,
        etc: true,
    };
    /// Plain alpha–beta on bitboards, columns left to right.
    pub const NONE: Techniques = Techniques {
        null_window: false,
        aspiration: false,
        order: MoveOrder::LeftToRight,
        non_losing: false,
        table: false,
        symmetry: false,
        etc: false,
    };
}

impl Default for Techniques {
    fn default() -> Self {
        Techniques::ALL
    }
}

/// Enhanced transposition cutoffs only with at least this many empty cells.
const ETC_MIN_EMPTY: i32 = 12;

/// Table bounds meaning "nothing known" (scores stay within ±32).
const NO_LO: i32 = -64;
const NO_HI: i32 = 63;

/// The solver: a board shape, a transposition table and counters. The table
/// persists between calls (its bounds stay true), so solving related
/// positions one after another gets cheaper.
pub struct Solver {
    cfg: BoardConfig,
    geo: Geometry,
    /// Shared with the helper threads of [`Solver::scores_threaded`].
    table: Arc<Table>,
    tech: Techniques,
    /// Nodes visited since the last [`Solver::reset_stats`].
    nodes: u64,
    /// The search stops when `nodes` reaches this.
    limit: u64,
    aborted: bool,
    /// Set by another thread when the column this solver searches is
    /// already known ([`Solver::scores_threaded`]); checked every 4096 nodes.
    cancel: Option<Arc<AtomicBool>>,
    /// The last abort came from `cancel`, not the budget.
    cancelled: bool,
}

impl std::fmt::Debug for Solver {
    /// The shape, techniques and counters; not the table's contents.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Solver")
            .field("cfg", &self.cfg)
            .field("table_entries", &self.table.len())
            .field("tech", &self.tech)
            .field("nodes", &self.nodes)
            .finish()
    }
}

/// Why the solver cannot take a board, a table size or a position.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SolverError {
    #[error(transparent)]
    Board(#[from] crate::game::board::BoardError),
    #[error(
        "the solver needs (rows + 1) × cols ≤ 64 bits (one sentinel row per column); {}×{} needs {}",
        .0.rows, .0.cols, (.0.rows + 1) * .0.cols
    )]
    TooManyBits(BoardConfig),
    #[error("the solver takes at most {MAX_COLS} columns, got {0}")]
    TooManyCols(usize),
    #[error("table_log2 must be at most {MAX_TABLE_LOG2}, got {0}")]
    Table(u32),
    #[error("move {ply} (column {col}): {why}")]
    AtMove {
        ply: usize,
        col: usize,
        why: Box<SolverError>,
    },
    #[error("the board is {0}, the solver's {1}")]
    OtherBoard(BoardConfig, BoardConfig),
    #[error("the solver plays two seats (0 and 1), not seat {0}")]
    ToMove(usize),
    #[error("the solver plays two seats, the board has seat {0}")]
    ThirdSeat(usize),
    #[error("seat {to_move} cannot be to move with {mine} pieces against {theirs}")]
    Counts { to_move: usize, mine: usize, theirs: usize },
    #[error("the game is over: a line is on the board")]
    Over,
    #[error("column {col} is out of range (0 to {})", cols - 1)]
    Column { col: usize, cols: usize },
    #[error("column {0} is full")]
    Full(usize),
    #[error("column {0} ends the game with a line")]
    Ends(usize),
}

/// Lets the shells that still speak in messages use `?` on a solver error.
impl From<SolverError> for String {
    fn from(e: SolverError) -> String {
        e.to_string()
    }
}

impl Solver {
    /// A solver for `cfg` with a table of about `2^table_log2` entries (8
    /// bytes each; 24 gives 128 MiB; the largest prime at most that many,
    /// more on boards whose keys pass 49 bits + `table_log2`). Errors name the limit that `cfg` breaks.
    pub fn new(cfg: BoardConfig, table_log2: u32) -> Result<Solver, SolverError> {
        let geo = Geometry::new(cfg)?;
        if table_log2 > MAX_TABLE_LOG2 {
            return Err(SolverError::Table(table_log2));
        }
        let key_bits = geo.h1 * geo.cols;
        Ok(Solver {
            cfg,
            geo,
            table: Arc::new(Table::new(table_log2, key_bits)),
            tech: Techniques::ALL,
            nodes: 0,
            limit: u64::MAX,
            aborted: false,
            cancel: None,
            cancelled: false,
        })
    }

    pub fn config(&self) -> BoardConfig {
        self.cfg
    }

    /// Entries in the transposition table.
    pub fn table_entries(&self) -> usize {
        self.table.len()
    }

    pub fn techniques(&self) -> Techniques {
        self.tech
    }

    /// Switches techniques (for measurements). Clears the table, whose
    /// entries may have been keyed differently.
    pub fn set_techniques(&mut self, tech: Techniques) {
        self.tech = tech;
        self.table.clear();
    }

    /// Forgets every stored bound.
    pub fn clear_table(&mut self) {
        self.table.clear();
    }

    /// Nodes searched since the solver was made or [`Solver::reset_stats`].
    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    pub fn reset_stats(&mut self) {
        self.nodes = 0;
    }

    /// The empty board.
    pub fn start(&self) -> Pos {
        Pos::empty(&self.geo)
    }

    /// The position after `moves` (columns from 0) from the empty board.
    /// Errors on a column out of range or full, and on a move list that ends
    /// the game (a line is made) before or on its last move: a finished game
    /// has nothing to solve. A full board without a line is a position (a
    /// draw, score 0, no moves).
    pub fn position(&self, moves: &[usize]) -> Result<Pos, SolverError> {
        let mut p = self.start();
        for (i, &c) in moves.iter().enumerate() {
            p = self.play(&p, c).map_err(|e| SolverError::AtMove {
                ply: i + 1,
                col: c,
                why: Box::new(e),
            })?;
        }
        Ok(p)
    }

    /// The position on `board`, with seat `to_move` (0 or 1) to move: for
    /// callers that hold a referee's board rather than its move list. Errors
    /// on another shape, a third seat's piece, piece counts that do not fit
    /// that side being to move, or a line already made.
    pub fn position_from_board(&self, board: &Board, to_move: usize) -> Result<Pos, SolverError> {
        let g = &self.geo;
        if board.config() != self.cfg {
            return Err(SolverError::OtherBoard(board.config(), self.cfg));
        }
        if to_move > 1 {
            return Err(SolverError::ToMove(to_move));
        }
        let mut p = self.start();
        let mut counts = [0usize; 2];
        for col in 0..g.cols {
            for row in 0..g.rows {
                let Some(seat) = board.cell(row as usize, col as usize) else {
                    continue;
                };
                if seat > 1 {
                    return Err(SolverError::ThirdSeat(seat));
                }
                counts[seat] += 1;
                let bit = 1u64 << (col * g.h1 + row);
                let mbit = 1u64 << ((g.cols - 1 - col) * g.h1 + row);
                p.mask |= bit;
                p.mmask |= mbit;
                if seat == to_move {
                    p.current |= bit;
                    p.mcurrent |= mbit;
                }
            }
        }
        let (mine, theirs) = (counts[to_move], counts[1 - to_move]);
        if theirs != mine && theirs != mine + 1 {
            return Err(SolverError::Counts { to_move, mine, theirs });
        }
        if g.has_line(p.current) || g.has_line(p.current ^ p.mask) {
            return Err(SolverError::Over);
        }
        p.moves = (mine + theirs) as u32;
        Ok(p)
    }

    /// The position after the side to move plays `col`. Errors on a column
    /// out of range or full, or when the move completes a line.
    pub fn play(&self, pos: &Pos, col: usize) -> Result<Pos, SolverError> {
        self.check(pos);
        let g = &self.geo;
        if col >= g.cols as usize {
            return Err(SolverError::Column {
                col,
                cols: g.cols as usize,
            });
        }
        if !pos.can_play(g, col as u32) {
            return Err(SolverError::Full(col));
        }
        if pos.is_winning_move(g, col as u32) {
            return Err(SolverError::Ends(col));
        }
        let mut next = *pos;
        next.play(g, col as u32);
        Ok(next)
    }

    /// A seeded random line of at most `plies` moves, none of which makes a
    /// line: each move is drawn uniformly among the playable columns that do
    /// not win at once; the line stops early when there is none. Returns the
    /// moves and the position they reach.
    pub fn quiet_line(&self, plies: usize, rng: &mut impl rand::Rng) -> (Vec<usize>, Pos) {
        let cols = self.config().cols;
        let mut p = self.start();
        let mut moves = Vec::with_capacity(plies);
        while moves.len() < plies {
            let quiet: Vec<usize> = (0..cols)
                .filter(|&c| self.can_play(&p, c) && !self.is_winning_move(&p, c))
                .collect();
            if quiet.is_empty() {
                break;
            }
            let c = quiet[rng.gen_range(0..quiet.len())];
            p = self.play(&p, c).expect("a quiet move is legal");
            moves.push(c);
        }
        (moves, p)
    }

    /// Whether `col` can be played in `pos`.
    pub fn can_play(&self, pos: &Pos, col: usize) -> bool {
        col < self.geo.cols as usize && pos.can_play(&self.geo, col as u32)
    }

    /// Whether playing `col` (which must be playable) wins at once.
    pub fn is_winning_move(&self, pos: &Pos, col: usize) -> bool {
        self.can_play(pos, col) && pos.is_winning_move(&self.geo, col as u32)
    }

    /// The score of a column that wins at once in `pos`: the best score
    /// there is from `pos` (see the module doc).
    pub fn win_now_score(&self, pos: &Pos) -> i32 {
        (self.geo.cells as i32 + 1 - pos.moves as i32) / 2
    }

    /// A position belongs to one board shape; mixing shapes is a bug.
    fn check(&self, pos: &Pos) {
        let g = &self.geo;
        assert_eq!(
            pos.shape,
            (g.rows as u8, g.cols as u8, g.win as u8),
            "a solver position used with a solver of another board shape"
        );
    }

    fn start_budget(&mut self, budget: Option<u64>) {
        self.limit = budget.map_or(u64::MAX, |b| self.nodes.saturating_add(b));
        self.aborted = false;
    }

    /// The exact score of `pos` (see the module doc), or `None` when the
    /// search needs more than `budget` nodes.
    pub fn solve(&mut self, pos: &Pos, budget: Option<u64>) -> Option<i32> {
        self.check(pos);
        self.start_budget(budget);
        let s = self.solve_inner(pos);
        (!self.aborted).then_some(s)
    }

    /// The score of each column for the side to move: `None` for a full
    /// column, or when the budget (for the whole call, spent on the columns
    /// from left to right) ran out before it was known. A winning column
    /// scores the immediate win (known even past the budget); any other
    /// scores minus the score of the position after it.
    pub fn scores(&mut self, pos: &Pos, budget: Option<u64>) -> Vec<Option<i32>> {
        self.check(pos);
        self.start_budget(budget);
        (0..self.geo.cols).map(|c| self.column_score(pos, c)).collect()
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
        use std::sync::atomic::{AtomicUsize, Ordering};
        use std::sync::Mutex;
        self.check(pos);
        let threads = threads.clamp(1, self.geo.cols as usize);
        if threads == 1 {
            return self.scores(pos, budget);
        }
        let share = budget.map(|b| b / threads as u64);
        let order: Vec<u32> = self.geo.order[..self.geo.cols as usize]
            .iter()
            .map(|&c| c as u32)
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
                let v = s.column_score(pos, col);
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
        results.into_inner().unwrap()
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

    /// The score of playing `col` for the side to move, within the budget
    /// already set: `None` if full or past the budget.
    fn column_score(&mut self, pos: &Pos, col: u32) -> Option<i32> {
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
        let s = -self.solve_inner(&child);
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
        let v = self.solve_inner(pos);
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

    /// The score, with `self.aborted` set if the budget ran out (the value is
    /// then meaningless).
    fn solve_inner(&mut self, pos: &Pos) -> i32 {
        let (cells, n) = (self.geo.cells as i32, pos.moves as i32);
        if pos.can_win_next(&self.geo) {
            return (cells + 1 - n) / 2;
        }
        let mut min = -(cells - n) / 2;
        let mut max = (cells + 1 - n) / 2;
        if !self.tech.null_window {
            return self.negamax(pos, min, max);
        }
        if self.tech.aspiration {
            return self.gallop(pos, min, max);
        }
        while min < max {
            // Probe halfway, but nearer 0 first: most positions are close
            // to a draw, and probes near 0 are the cheapest.
            let mut med = min + (max - min) / 2;
            if med <= 0 && min / 2 < med {
                med = min / 2;
            } else if med >= 0 && max / 2 > med {
                med = max / 2;
            }
            let r = self.negamax(pos, med, med + 1);
            if self.aborted {
                return 0;
            }
            if r <= med {
                max = r;
            } else {
                min = r;
            }
        }
        min
    }

    /// The score in `[min, max]` by null-window probes: the first at 0
    /// (clamped into the range), then outwards from the bound that moved,
    /// by steps doubling while it keeps moving the same way.
    fn gallop(&mut self, pos: &Pos, mut min: i32, mut max: i32) -> i32 {
        if min >= max {
            return min;
        }
        let mut med = 0.clamp(min, max - 1);
        let (mut step, mut last_up) = (1, None);
        while min < max {
            let r = self.negamax(pos, med, med + 1);
            if self.aborted {
                return 0;
            }
            let up = r > med;
            if up {
                min = r;
            } else {
                max = r;
            }
            step = if last_up == Some(up) { step * 2 } else { 1 };
            last_up = Some(up);
            // Up: is the score above min + step - 1? Down: at least
            // max - step + 1?
            med = if up { min + step - 1 } else { max - step };
            med = med.clamp(min, (max - 1).max(min));
        }
        min
    }

    /// Fail-hard negamax: a result `r <= alpha` means score ≤ r, `r >= beta`
    /// means score ≥ r, anything between is exact. The side to move must not
    /// be able to win at once (every caller checks).
    fn negamax(&mut self, pos: &Pos, mut alpha: i32, mut beta: i32) -> i32 {
        self.nodes += 1;
        if self.nodes >= self.limit {
            self.aborted = true;
            return 0;
        }
        if self.nodes & 4095 == 0 && self.cancel.as_ref().is_some_and(|c| c.load(Relaxed)) {
            self.aborted = true;
            self.cancelled = true;
            return 0;
        }
        let g = &self.geo;
        let tech = self.tech;
        let (cells, n) = (g.cells as i32, pos.moves as i32);

        let next = if tech.non_losing {
            let next = pos.non_losing_moves(g);
            if next == 0 {
                // Every move lets the opponent win at once.
                return -(cells - n) / 2;
            }
            if n >= cells - 2 {
                // Neither of the last two plies can make a line.
                return 0;
            }
            // The opponent cannot win with its next move.
            let min = -(cells - 2 - n) / 2;
            if alpha < min {
                alpha = min;
                if alpha >= beta {
                    return alpha;
                }
            }
            next
        } else {
            let next = pos.possible(g);
            if next == 0 {
                return 0;
            }
            next
        };
        // We cannot win with this move, so at best with the one after.
        let mut max = (cells - 1 - n) / 2;

        let key = if tech.symmetry { pos.symmetric_key() } else { pos.key() };
        let slot = self.table.slot(key);
        if tech.table {
            if let Some((lo, hi)) = self.table.get_at(slot) {
                if alpha < lo {
                    alpha = lo;
                    if alpha >= beta {
                        return alpha;
                    }
                }
                max = max.min(hi);
            }
        }
        if beta > max {
            beta = max;
            if alpha >= beta {
                return beta;
            }
        }

        // Candidate moves, best first.
        let mut list = [(0u32, 0u32); MAX_COLS];
        let mut len = 0;
        for i in 0..g.cols {
            let col = match tech.order {
                MoveOrder::LeftToRight => i,
                _ => g.order[i as usize] as u32,
            };
            let mv = next & g.column_mask(col);
            if mv == 0 {
                continue;
            }
            let score = if tech.order == MoveOrder::CentreThenThreats {
                pos.move_score(g, mv)
            } else {
                0
            };
            // Insertion sort, stable: equal scores keep the centre order.
            let mut j = len;
            while j > 0 && list[j - 1].1 < score {
                list[j] = list[j - 1];
                j -= 1;
            }
            list[j] = (col, score);
            len += 1;
        }

        // Enhanced transposition cutoff: a child whose stored upper bound
        // already puts this move at or above beta ends the node without a
        // search. Only far from the end, where a saved search is worth the
        // extra probes.
        if tech.table && tech.etc && n + ETC_MIN_EMPTY <= cells {
            for &(col, _) in &list[..len] {
                let mut child = *pos;
                child.play(&self.geo, col);
                let ckey = if tech.symmetry {
                    child.symmetric_key()
                } else {
                    child.key()
                };
                if let Some((_, hi)) = self.table.get(ckey) {
                    if -hi >= beta {
                        return -hi;
                    }
                }
            }
        }

        let alpha0 = alpha;
        for &(col, _) in &list[..len] {
            let mut child = *pos;
            child.play(&self.geo, col);
            let s = if !tech.non_losing && child.can_win_next(&self.geo) {
                // Without the non-losing filter the child may win at once,
                // which negamax must not be asked.
                -(cells - n) / 2
            } else {
                -self.negamax(&child, -beta, -alpha)
            };
            if self.aborted {
                return 0;
            }
            if s >= beta {
                if tech.table {
                    self.table.put_at(slot, s, NO_HI);
                }
                return s;
            }
            if s > alpha {
                alpha = s;
            }
        }
        if tech.table {
            // A child inside the window makes alpha exact; else it is only
            // an upper bound.
            let lo = if alpha > alpha0 { alpha } else { NO_LO };
            self.table.put_at(slot, lo, alpha);
        }
        alpha
    }
}

/// A score in words, for a position with `moves` plies played on a board of
/// `cells` cells: "wins in N" (N of its own moves, the winning one included),
/// "loses in N" (N of its own moves before the opponent's winning move, which
/// is the opponent's N-th), or "draw". See the module doc for the formula.
pub fn describe_score(cells: usize, moves: usize, score: i32) -> String {
    match outcome_moves(cells, moves, score) {
        None => "draw".to_string(),
        Some((true, k)) => format!("wins in {k}"),
        Some((false, k)) => format!("loses in {k}"),
    }
}

/// `None` for a draw, else (whether the side to move wins, N) with N as in
/// [`describe_score`].
pub fn outcome_moves(cells: usize, moves: usize, score: i32) -> Option<(bool, usize)> {
    if score == 0 {
        return None;
    }
    let s = score.unsigned_abs() as usize;
    let (cells, n) = (cells as i64, moves as i64);
    // The plies played before the winning piece: the one of `cells + 1 - 2s`
    // and `cells - 2s` whose parity is the winner's (the mover's for a win).
    let winner_parity = if score > 0 { n & 1 } else { (n + 1) & 1 };
    let mut m = cells + 1 - 2 * s as i64;
    if m & 1 != winner_parity {
        m -= 1;
    }
    let k = if score > 0 { (m - n) / 2 + 1 } else { (m - n + 1) / 2 };
    Some((score > 0, k.max(1) as usize))
}
