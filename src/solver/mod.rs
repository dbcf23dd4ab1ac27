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
//! - null-window probes: [`Solver::solve`] finds the score with windows
//!   `(s, s + 1)`, which cut far more than one wide window, by MTD(f): the
//!   first at 0, each next at the last result (fail-soft, so it may jump);
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
//!   looked up before any is searched, in case one's stored bound cuts;
//! - a move right below one's own winning cell is ordered last;
//! - a move that leaves two threats the opponent cannot both stop wins at
//!   once, without a search;
//! - a score search starts from the bounds the table already holds;
//! - Allis' claimeven as bounds: where the opponent (or the side to move,
//!   after one move) can answer every move on top of it, the other side
//!   gets only the lower cells of the pairs, and if those make no line its
//!   score is at most a draw; and a threat of the follower's that the
//!   leader must at last play under wins (see `Geometry::claimeven`).
//!
//! A node budget bounds any call: past it the answer is `None`, never a guess,
//! and nothing half-searched enters the table.

pub mod book;
mod columns;
#[cfg(test)]
mod measure;
mod outcome;
mod position;
pub mod scores;
mod search;
pub mod sets;
mod table;
#[cfg(test)]
mod tests;
mod words;

pub use book::Book;
pub use position::{centre_order, Pos};
pub use scores::{Disagreement, ScoreBook};
pub use words::{describe_score, outcome_moves};

use crate::game::{Board, BoardConfig};
use position::{Geometry, MAX_COLS};
use std::sync::atomic::AtomicBool;
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
    /// The score found by null-window probes (else one full window).
    pub null_window: bool,
    /// With null windows: the first probe at 0 (most early positions are
    /// near a draw), then galloping outwards from the last bound (steps 1,
    /// 2, 4, …); it comes before [`Techniques::first_guess`], which is used
    /// when this is off.
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
    /// With [`MoveOrder::CentreThenThreats`]: a move right below one's own
    /// winning cell goes last (it lets the opponent block the threat by
    /// playing on top of it).
    pub spoil_order: bool,
    /// With `non_losing`: a move that leaves two playable winning cells, or
    /// one with another right above it, wins by force (the opponent cannot
    /// win at once and can block only one): the node's best score is known
    /// without searching any move.
    pub double_threat: bool,
    /// Start a score search from the bounds the table already holds for
    /// the position (proved while solving other columns of the same root).
    pub root_bounds: bool,
    /// With null windows: MTD(f) (Plaat et al.): the first probe at a
    /// guess (the floor a score book gives, else 0: most positions a
    /// solver is asked about are near a draw), each next one at the last
    /// result, so a score near the guess takes two probes; else a binary
    /// search of the range. Measured on ten fresh ply-8 positions, every
    /// column: 0 as the guess took 9% fewer nodes than the previous
    /// column's score, and 18% fewer than the binary search.
    pub first_guess: bool,
    /// The table holds only positions with an even number of empty cells;
    /// the others use enhanced transposition cutoffs on their children
    /// instead (half the entries compete for the slots).
    pub even_table: bool,
    /// Allis' *claimeven* as bounds on the score (`Geometry::claimeven`):
    /// where one side can answer every move on top of it, the other draws
    /// at best if the cells left to it make no line, and loses if the
    /// answering side's sure cells, or a threat the other must at last
    /// play under, make one. The node is cut at once when the window is
    /// past the bound.
    pub claimeven: bool,
    /// Not a technique of the search but of its code: the copies of the
    /// search compiled for the classic 6×7 board (its masks and shifts
    /// constants) and for x86-64 CPUs with `popcnt` and BMI (see
    /// `search.rs`), where they apply; off, the one portable copy. The same
    /// nodes either way, only faster.
    pub specialised: bool,
    /// With [`MoveOrder::CentreThenThreats`]: a winning cell a move makes
    /// counts one and a half when it lies on the mover's rows (the first
    /// player's 1st, 3rd, 5th … from the bottom, the second player's 2nd,
    /// 4th …), where Allis' parity rules make threats decide games.
    pub threat_parity: bool,
    /// With [`MoveOrder::CentreThenThreats`]: a winning cell a move makes
    /// counts for nothing when it lies above one of the opponent's in the
    /// same column: to fill the column up to it, someone must first play
    /// under the opponent's, and blocking that only lets the opponent
    /// block ours on top.
    pub dead_threats: bool,
}

impl Techniques {
    /// What [`Solver::new`] uses: everything on but the aspiration probes,
    /// which measured slower.
    pub const ALL: Techniques = Techniques {
        null_window: true,
        // On the 10 fresh ply-8 lines of docs/solver.md, MTD(f) from 0
        // took 53.4 M nodes, galloping 58.7 M.
        aspiration: false,
        order: MoveOrder::CentreThenThreats,
        non_losing: true,
        table: true,
        symmetry: true,
        etc: true,
        spoil_order: true,
        double_threat: true,
        root_bounds: true,
        first_guess: true,
        even_table: false,
        claimeven: true,
        specialised: true,
        threat_parity: true,
        dead_threats: true,
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
        spoil_order: false,
        double_threat: false,
        root_bounds: false,
        first_guess: false,
        even_table: false,
        claimeven: false,
        specialised: false,
        threat_parity: false,
        dead_threats: false,
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
    /// A solver for `cfg` with a table of `2^table_log2` entries (8 bytes
    /// each; 19 gives 4 MiB, 24 128 MiB; two in each of `2^(table_log2 -
    /// 1)` buckets, more on boards whose keys pass 44 bits + `table_log2`,
    /// fewer where the board has fewer keys). Errors name the limit that
    /// `cfg` breaks.
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
        self.solve_at_least(pos, budget, None)
    }

    /// [`Solver::solve`] for a position known to score at least `floor`
    /// (from the scores one ply up: minus a parent's score); the search
    /// starts there. A wrong floor gives a wrong score: only a checked book
    /// may give it.
    pub fn solve_at_least(&mut self, pos: &Pos, budget: Option<u64>, floor: Option<i32>) -> Option<i32> {
        self.check(pos);
        self.start_budget(budget);
        let s = self.solve_above(pos, floor, floor.unwrap_or(0));
        (!self.aborted).then_some(s)
    }
}
