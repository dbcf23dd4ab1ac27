//! The `solver` kind: perfect play from [`crate::solver`]. It plays the
//! fastest win, the slowest loss, or a draw when the position is drawn,
//! ties going to the centre-most column, and says so ("wins in 7").
//!
//! With a `nodes` budget a move may not be proven in time: the player then
//! says it is not exact and plays minimax depth [`FALLBACK_DEPTH`]'s choice.
//! Boards must fit the solver's 64-bit bitboard ((rows + 1) × cols ≤ 64) and
//! have two players.
//!
//! With a `book` (built by `c4sim book build`) it plays the book's move in
//! the early positions the book holds, on boards of the book's shape; that is
//! what makes the empty 6×7 board take a second instead of minutes. The
//! book's moves are the solver's own, so a book never changes a game.
//! With `scores` (a score book, built by `c4sim book scores`) every column's
//! score of an early position is known at once: analysis answers without a
//! search, and so does a move there.
//!
//! `level` makes it beatable: below `perfect`, before each move it makes a
//! mistake with the level's probability ([`LEVELS`]), playing a column drawn
//! from all legal ones by weights that favour the better scores, so a slip
//! is more often a small one.

use super::keys::{budget_key, optional_path_key, FitError, Key, KeyType, KeyValue, KindKeys};
use crate::game::{Answer, BoardConfig};
use crate::players::{Strategy, TurnView};
use crate::search::minimax::Minimax;
use crate::solver::book::BookFileError;
use crate::solver::{centre_order, describe_score, Book, Pos, ScoreBook, Solver, SolverError, MAX_TABLE_LOG2};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::json;
use std::path::{Path, PathBuf};

/// The `level` key's values, weakest last, with the chance of a mistake
/// before each move.
pub const LEVELS: [&str; 4] = ["perfect", "hard", "medium", "easy"];
const MISTAKE_CHANCE: [f64; 4] = [0.0, 0.1, 0.3, 0.6];
/// Nodes a mistake may spend on scoring the columns (about a tenth of a
/// second); a column not scored within it counts as the worst.
const MISTAKE_NODES: u64 = 2_000_000;

/// The minimax depth a budgeted solver falls back to.
pub const FALLBACK_DEPTH: u32 = 8;
/// Transposition-table entries as a power of two when `table_log2` is not
/// given: 2^19 words, 4 MiB. A small table stays in the fast caches: a
/// probe per node, at random, waits on memory, and on this project's
/// 2-core machine 2^19 beat 2^22 on every group of positions measured
/// (every column of 10 fresh ply-8 positions 0.80–0.91× in four runs, of
/// ply 7, 10 and 12 and the labelled sets 0.73–0.92×), though it searches
/// 14% more nodes (docs/solver.md, "Table size").
pub const DEFAULT_TABLE_LOG2: u32 = 19;

/// Without `table_log2`, an exact analysis (every column, no node budget)
/// of a position with at least this many empty cells grows the table to
/// [`DEEP_TABLE_LOG2`] first: such searches run for minutes, and their
/// time falls with the table's size (the empty 6×7 board on 2 threads:
/// 2^22 entries 355 s, 2^27 100.6 s). From ply 7 on 6×7 (35 empty cells)
/// a search takes a second or two and the small default table is faster
/// (see [`DEFAULT_TABLE_LOG2`]): 36 is ply 6.
pub const DEEP_EMPTY_CELLS: usize = 36;
/// The table a deep analysis grows to (1 GiB), or the largest power of two
/// within a quarter of the memory available (Linux), whichever is smaller.
pub const DEEP_TABLE_LOG2: u32 = 27;

/// A `solver` player's keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SolverSpec {
    /// Transposition-table entries as a power of two (`None`:
    /// [`DEFAULT_TABLE_LOG2`], grown for deep analyses, see
    /// [`DEEP_EMPTY_CELLS`]).
    pub table_log2: Option<u32>,
    /// Node budget per move (`None`: always exact).
    pub nodes: Option<u64>,
    /// An opening book built by `c4sim book build`.
    pub book: Option<PathBuf>,
    /// A score book built by `c4sim book scores`.
    pub scores: Option<PathBuf>,
    /// One of [`LEVELS`].
    pub level: String,
    /// Threads that score the columns for analysis (`None`: every core).
    /// A move is one search on one thread.
    pub threads: Option<u32>,
}

impl Default for SolverSpec {
    fn default() -> Self {
        SolverSpec {
            table_log2: None,
            nodes: None,
            book: None,
            scores: None,
            level: LEVELS[0].to_string(),
            threads: None,
        }
    }
}

impl KindKeys for SolverSpec {
    const KEYS: &'static [Key<Self>] = &[
        Key {
            name: "table_log2",
            ty: KeyType::Count(10),
            set: |s, v| s.table_log2 = Some(v.count()),
            get: |s| s.table_log2.map(KeyValue::Count),
        },
        budget_key!("nodes", nodes),
        optional_path_key!("book", book),
        optional_path_key!("scores", scores),
        Key {
            name: "level",
            ty: KeyType::Choice(&LEVELS),
            set: |s, v| s.level = v.word(),
            get: |s| Some(KeyValue::Word(s.level.clone())),
        },
        Key {
            name: "threads",
            ty: KeyType::Count(1),
            set: |s, v| s.threads = Some(v.count()),
            get: |s| s.threads.map(KeyValue::Count),
        },
    ];

    fn fits(&self, cfg: BoardConfig) -> Result<(), FitError> {
        Ok(fits(cfg)?)
    }
}

/// Why a solver player cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum SolverBotError {
    /// `table_log2` above the largest table the solver makes.
    #[error("`table_log2` is at most {max}, got {got}")]
    Table { max: u32, got: u32 },
    /// A book file (`what`: "book" or "score book") cannot be read.
    #[error("{what} {}: {source}", path.display())]
    Read {
        what: &'static str,
        path: PathBuf,
        source: std::io::Error,
    },
    /// A book file is not a book of its kind.
    #[error("{what} {}: {source}", path.display())]
    Parse {
        what: &'static str,
        path: PathBuf,
        source: BookFileError,
    },
}

impl SolverSpec {
    /// The player; a table too large or a book that cannot be read is
    /// refused now, before any game.
    pub fn build(&self) -> Result<SolverBot, SolverBotError> {
        SolverBot::from_spec(self)
    }
}

/// What [`SolverBot::solver_at`] has for a position.
pub enum SolverAt<'a> {
    /// Every column's score, from the score book.
    Book(Vec<Option<i32>>),
    /// The solver to search it with, the position, the threads to use,
    /// and the position's own score if the score book holds it (no column
    /// scores more: see [`Solver::scores_threaded_at_most`]).
    Search {
        solver: &'a mut Solver,
        pos: Pos,
        threads: usize,
        ceiling: Option<i32>,
    },
}

/// A perfect player (within its node budget).
pub struct SolverBot {
    table_log2: u32,
    /// `table_log2` was not given: a deep analysis may grow the table.
    grow_table: bool,
    nodes: Option<u64>,
    /// Threads for every column's score (`column_scores`).
    threads: usize,
    /// The opening book, if given (used on boards of its shape only).
    book: Option<Book>,
    /// The score book, if given (used on boards of its shape only).
    scores: Option<ScoreBook>,
    /// The chance of a mistake before each move (0 at `perfect`).
    mistakes: f64,
    rng: ChaCha8Rng,
    /// Built for the first board seen, rebuilt when the board changes.
    solver: Option<Solver>,
    fallback: Minimax,
    last_note: Option<String>,
}

impl SolverBot {
    pub fn from_spec(spec: &SolverSpec) -> Result<Self, SolverBotError> {
        // Checks the table size now, so a bad key fails before any game.
        if let Some(got) = spec.table_log2.filter(|&t| t > MAX_TABLE_LOG2) {
            return Err(SolverBotError::Table {
                max: MAX_TABLE_LOG2,
                got,
            });
        }
        let book = spec.book.as_deref().map(read_book).transpose()?;
        let scores = spec.scores.as_deref().map(read_scores).transpose()?;
        let level = LEVELS.iter().position(|l| *l == spec.level).unwrap_or(0);
        Ok(SolverBot {
            table_log2: spec.table_log2.unwrap_or(DEFAULT_TABLE_LOG2),
            grow_table: spec.table_log2.is_none(),
            nodes: spec.nodes,
            threads: spec.threads.map_or_else(crate::util::cores, |t| t as usize),
            book,
            scores,
            mistakes: MISTAKE_CHANCE[level],
            rng: ChaCha8Rng::seed_from_u64(0),
            solver: None,
            fallback: Minimax::new(FALLBACK_DEPTH),
            last_note: None,
        })
    }

    fn solver_for(&mut self, cfg: BoardConfig) -> Result<&mut Solver, SolverError> {
        if self.solver.as_ref().map(|s| s.config()) != Some(cfg) {
            self.solver = Some(Solver::new(cfg, self.table_log2)?);
        }
        Ok(self.solver.as_mut().expect("set above"))
    }

    /// The exact best move and its score, or `None` past the budget.
    fn decide(&mut self, v: &TurnView) -> Result<Option<(usize, i32)>, SolverError> {
        let budget = self.nodes;
        let solver = self.solver_for(v.board.config())?;
        let pos = solver.position(&v.moves)?;
        let cfg = solver.config();
        if let Some(hit) = self.book.as_ref().filter(|b| b.fits(cfg)).and_then(|b| b.lookup(&pos)) {
            return Ok(Some(hit));
        }
        if let Some(scores) = self.book_scores(&pos) {
            return Ok(best_of(&scores));
        }
        // Just past the score book, the book still knows the position's
        // own score, so only the columns' null windows are searched.
        let known = self.book_ceiling(&pos);
        let solver = self.solver.as_mut().expect("made above");
        Ok(solver.best_move_scoring(&pos, budget, known))
    }

    /// The solver and the score book, if there is one for its board.
    fn score_book(&self) -> Option<(&Solver, &ScoreBook)> {
        let solver = self.solver.as_ref()?;
        let book = self.scores.as_ref().filter(|b| b.fits(solver.config()))?;
        Some((solver, book))
    }

    /// Every column's score of `pos` from the score book, if it knows them all.
    fn book_scores(&self, pos: &Pos) -> Option<Vec<Option<i32>>> {
        let (solver, book) = self.score_book()?;
        book.column_scores(solver, pos)
    }

    /// The score of `pos` itself from the score book (its last ply holds
    /// positions whose columns it does not know).
    fn book_ceiling(&self, pos: &Pos) -> Option<i32> {
        self.score_book()?.1.score(pos)
    }

    /// Every column's score in `v`'s position (`None` for a full column or
    /// one not proven): from the score book, else solved within `budget`
    /// on the player's `threads`.
    pub fn column_scores(&mut self, v: &TurnView, budget: Option<u64>) -> Result<Vec<Option<i32>>, SolverError> {
        self.scores_on(v, budget, self.threads)
    }

    /// The score book's every column of `v`'s position if it knows them
    /// all, else this player's solver (its table kept between calls) and
    /// the position on it, for a caller that drives the search itself
    /// (the page's analysis, column by column); and the player's threads.
    pub fn solver_at(&mut self, v: &TurnView) -> Result<SolverAt<'_>, SolverError> {
        let pos = self.solver_for(v.board.config())?.position(&v.moves)?;
        if let Some(scores) = self.book_scores(&pos) {
            return Ok(SolverAt::Book(scores));
        }
        let (threads, ceiling) = (self.threads, self.book_ceiling(&pos));
        let solver = self.solver.as_mut().expect("made above");
        Ok(SolverAt::Search {
            solver,
            pos,
            threads,
            ceiling,
        })
    }

    /// Rebuilds the solver with the deep analysis table (once; it stays).
    fn grow_for_deep_analysis(&mut self, cfg: BoardConfig) -> Result<(), SolverError> {
        let log2 = deep_table_log2(available_memory());
        if log2 > self.table_log2 {
            self.table_log2 = log2;
            self.solver = Some(Solver::new(cfg, log2)?);
        }
        Ok(())
    }

    /// [`SolverBot::column_scores`] on `threads` threads.
    fn scores_on(
        &mut self,
        v: &TurnView,
        budget: Option<u64>,
        threads: usize,
    ) -> Result<Vec<Option<i32>>, SolverError> {
        let pos = self.solver_for(v.board.config())?.position(&v.moves)?;
        if let Some(scores) = self.book_scores(&pos) {
            return Ok(scores);
        }
        let cells = v.board.config().cells();
        if budget.is_none() && self.grow_table && cells - v.moves.len() >= DEEP_EMPTY_CELLS {
            self.grow_for_deep_analysis(v.board.config())?;
        }
        let ceiling = self.book_ceiling(&pos);
        Ok(self
            .solver
            .as_mut()
            .expect("made above")
            .scores_threaded_at_most(&pos, budget, threads, ceiling))
    }

    /// Below `perfect`: with the level's chance, a column drawn from every
    /// legal one, weighted by its score against the best (weight
    /// `1 / (1 + best − score)`; a column not scored in time weighs as the
    /// worst), with a note that says so. `None`: play the best move.
    fn slip(&mut self, v: &TurnView) -> Option<Answer> {
        if self.mistakes == 0.0 || !self.rng.gen_bool(self.mistakes) {
            return None;
        }
        // One thread: which columns a budget reaches must not depend on
        // how threads race, or a seed would not replay the same slips.
        let scores = self.scores_on(v, Some(MISTAKE_NODES), 1).ok()?;
        let open: Vec<usize> = (0..scores.len())
            .filter(|&c| v.board.height(c) < v.board.rows())
            .collect();
        let known = open.iter().filter_map(|&c| scores[c]);
        let (best, worst) = known.fold((i32::MIN, i32::MAX), |(b, w), s| (b.max(s), w.min(s)));
        if best == i32::MIN {
            return None;
        }
        let weights: Vec<f64> = open
            .iter()
            .map(|&c| 1.0 / (1.0 + (best - scores[c].unwrap_or(worst)) as f64))
            .collect();
        let mut x = self.rng.gen::<f64>() * weights.iter().sum::<f64>();
        let pick = open
            .iter()
            .zip(&weights)
            .find(|(_, w)| {
                x -= **w;
                x < 0.0
            })
            .map_or(open[open.len() - 1], |(&c, _)| c);
        self.last_note = Some(format!("plays at its level: column {}, not its best", pick + 1));
        Some(Answer::Column(pick as i64))
    }
}

/// Reads a book file, saying which file when it cannot.
pub fn read_book(path: &Path) -> Result<Book, SolverBotError> {
    read_file("book", path, Book::parse)
}

/// Reads a score book file, saying which file when it cannot.
pub fn read_scores(path: &Path) -> Result<ScoreBook, SolverBotError> {
    read_file("score book", path, ScoreBook::parse)
}

/// Reads and parses a file; an error names `what` and its path.
fn read_file<T>(
    what: &'static str,
    path: &Path,
    parse: fn(&[u8]) -> Result<T, BookFileError>,
) -> Result<T, SolverBotError> {
    let path = path.to_path_buf();
    let bytes = match std::fs::read(crate::util::data::find(&path)) {
        Ok(b) => b,
        Err(source) => return Err(SolverBotError::Read { what, path, source }),
    };
    parse(&bytes).map_err(|source| SolverBotError::Parse { what, path, source })
}

/// The best column of `scores` and its score, ties to the centre-most
/// column, as [`Solver::best_move`] picks; `None` when none is known.
fn best_of(scores: &[Option<i32>]) -> Option<(usize, i32)> {
    centre_order(scores.len())
        .into_iter()
        .filter_map(|c| scores[c].map(|s| (c, s)))
        .fold(None, |b: Option<(usize, i32)>, (c, s)| match b {
            Some((_, bs)) if bs >= s => b,
            _ => Some((c, s)),
        })
}

/// Whether the solver can play on `cfg` at all (before any game starts).
pub fn fits(cfg: BoardConfig) -> Result<(), SolverError> {
    Solver::new(cfg, 10).map(drop)
}

impl Strategy for SolverBot {
    fn choose(&mut self, v: &TurnView) -> Answer {
        if v.seats != 2 {
            self.last_note = None;
            return Answer::Malformed("the solver plays two-player games only".into());
        }
        if let Some(slip) = self.slip(v) {
            return slip;
        }
        match self.decide(v) {
            Ok(Some((col, score))) => {
                let cells = v.board.rows() * v.board.cols();
                self.last_note = Some(describe_score(cells, v.moves.len(), score));
                Answer::Column(col as i64)
            }
            Ok(None) => {
                let col = self.fallback.choose(&v.board, v.seat);
                self.last_note = Some(format!(
                    "not exact within {} nodes: minimax depth {FALLBACK_DEPTH}'s choice",
                    self.nodes.unwrap_or(0)
                ));
                Answer::Column(col as i64)
            }
            Err(e) => {
                self.last_note = None;
                Answer::Malformed(e.to_string())
            }
        }
    }

    /// Every column's exact score (`null` for a full column, or one not
    /// proven within the budget), and the best move. When every open column
    /// is proven the move is taken from those scores (the best, ties to the
    /// centre, as [`Solver::best_move`] picks), so the position is solved once.
    fn analyze(&mut self, v: &TurnView) -> (Answer, Option<serde_json::Value>) {
        if v.seats != 2 {
            return (self.choose(v), None);
        }
        let budget = self.nodes;
        let scores = match self.column_scores(v, budget) {
            Ok(scores) => scores,
            Err(e) => return (self.choose(v), Some(json!({ "error": e.to_string() }))),
        };
        let open = |c: usize| v.board.height(c) < v.board.rows();
        let proven = (0..scores.len()).all(|c| !open(c) || scores[c].is_some());
        let answer = match best_of(&scores) {
            Some((col, score)) if proven => {
                let cells = v.board.rows() * v.board.cols();
                self.last_note = Some(describe_score(cells, v.moves.len(), score));
                Answer::Column(col as i64)
            }
            _ => self.choose(v),
        };
        (answer, Some(json!(scores)))
    }

    fn fits(&self, cfg: BoardConfig) -> Result<(), FitError> {
        Ok(fits(cfg)?)
    }

    fn new_game(&mut self, seed: u64) {
        self.rng = ChaCha8Rng::seed_from_u64(seed);
    }

    fn is_heavy(&self) -> bool {
        true
    }

    fn explain(&self) -> Option<String> {
        self.last_note.clone()
    }
}

/// The table a deep analysis grows to with `available` bytes of memory
/// free (`None`: unknown): [`DEEP_TABLE_LOG2`], or the largest power of two
/// of 8-byte entries within a quarter of it, never below the default.
fn deep_table_log2(available: Option<u64>) -> u32 {
    let fits = available.map_or(DEEP_TABLE_LOG2, |bytes| (bytes / 4 / 8).max(1).ilog2());
    fits.clamp(DEFAULT_TABLE_LOG2, DEEP_TABLE_LOG2)
}

/// The memory available for new allocations (Linux's `MemAvailable`), in
/// bytes; `None` elsewhere.
fn available_memory() -> Option<u64> {
    let info = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = info.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Game, DEFAULT_LETTERS};

    /// A 4 × 5 board, three in a row: small enough to solve at once.
    const SMALL: BoardConfig = BoardConfig {
        rows: 4,
        cols: 5,
        win_length: 3,
    };

    fn view(moves: &[usize]) -> TurnView {
        let g = Game::with_opening(SMALL, 2, 1, moves).unwrap();
        TurnView::of(&g, 1, moves.len() % 2, &DEFAULT_LETTERS[..2], None)
    }

    #[test]
    fn takes_the_win_and_says_how_soon() {
        let mut b = SolverBot::from_spec(&SolverSpec::default()).unwrap();
        // Red has two in the bottom row (columns 0, 1) and moves.
        let v = view(&[0, 0, 1, 1]);
        assert_eq!(b.choose(&v), Answer::Column(2));
        assert_eq!(b.explain().as_deref(), Some("wins in 1"));
        let (_, scores) = b.analyze(&v);
        let scores = scores.unwrap();
        // (cells + 1 - 5) / 2 for a win with the 5th piece of 20 cells.
        assert_eq!(scores[2], json!(8));
        assert!(scores[4].as_i64().unwrap() < 8);
    }

    #[test]
    fn blocks_a_loss_and_falls_back_past_its_budget() {
        let mut spec = SolverSpec::default();
        let mut b = SolverBot::from_spec(&spec).unwrap();
        // Yellow must block column 2.
        let v = view(&[0, 4, 1]);
        assert_eq!(b.choose(&v), Answer::Column(2));
        spec.nodes = Some(1);
        let mut b = SolverBot::from_spec(&spec).unwrap();
        let _ = b.choose(&view(&[]));
        assert!(b.explain().unwrap().starts_with("not exact"), "{:?}", b.explain());
    }

    #[test]
    fn plays_its_books_moves_on_the_books_board_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("book.bin");
        let mut s = Solver::new(SMALL, 12).unwrap();
        let mut book = Book::new(&s, 3);
        book.complete(&mut s);
        let best = s.best_move(&s.start(), None).unwrap();
        // A book that (wrongly) says column 0 on the empty board shows the
        // player reads it rather than searching.
        let wrong = (best.0 + 1) % SMALL.cols;
        book.insert(&s.start(), wrong, best.1);
        std::fs::write(&path, book.to_bytes()).unwrap();
        let mut spec = SolverSpec {
            book: Some(path.clone()),
            ..SolverSpec::default()
        };
        let mut b = SolverBot::from_spec(&spec).unwrap();
        assert_eq!(b.choose(&view(&[])), Answer::Column(wrong as i64));
        // Past the book's depth it searches.
        let v = view(&[0, 4, 1]);
        assert_eq!(b.choose(&v), Answer::Column(2));
        // On another board the book is not used.
        let g = Game::with_opening(BoardConfig::new(4, 5, 4).unwrap(), 2, 1, &[]).unwrap();
        let other = TurnView::of(&g, 1, 0, &DEFAULT_LETTERS[..2], None);
        assert_eq!(b.choose(&other), Answer::Column(2));
        // A missing or broken file is refused when the player is made.
        spec.book = Some(dir.path().join("none.bin"));
        assert!(SolverBot::from_spec(&spec)
            .err()
            .unwrap()
            .to_string()
            .contains("none.bin"));
        std::fs::write(&path, b"junk").unwrap();
        spec.book = Some(path);
        assert!(SolverBot::from_spec(&spec)
            .err()
            .unwrap()
            .to_string()
            .contains("not a solver book"));
    }

    #[test]
    fn refuses_boards_too_large_for_its_bitboard() {
        assert!(fits(BoardConfig::default()).is_ok());
        assert!(fits(BoardConfig {
            rows: 8,
            cols: 8,
            win_length: 4
        })
        .is_err());
    }

    #[test]
    fn analyze_picks_the_move_choose_picks() {
        let mut b = SolverBot::from_spec(&SolverSpec::default()).unwrap();
        for moves in [
            vec![],
            vec![2],
            vec![0, 1],
            vec![2, 2, 3],
            vec![4, 4, 4, 0],
            vec![1, 3, 1, 3, 0],
        ] {
            let v = view(&moves);
            let chosen = b.choose(&v);
            let note = b.explain();
            let (analysed, _) = b.analyze(&v);
            assert_eq!(analysed, chosen, "{moves:?}");
            assert_eq!(b.explain(), note, "{moves:?}");
        }
    }

    /// A score book changes nothing a player does or says: the same moves,
    /// notes and analysed scores with and without it, where it knows the
    /// columns and where it does not.
    #[test]
    fn a_score_book_answers_as_the_search_does() {
        let mut solver = Solver::new(SMALL, 16).unwrap();
        let mut book = ScoreBook::new(&solver, 3);
        for p in book.frontier(&solver) {
            let v = solver.solve(&p, None).unwrap();
            book.insert(&p, v);
        }
        book.fill(&solver).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("scores.bin");
        std::fs::write(&path, book.to_bytes()).unwrap();
        let with = SolverSpec {
            scores: Some(path),
            ..SolverSpec::default()
        };
        let mut a = SolverBot::from_spec(&with).unwrap();
        let mut b = SolverBot::from_spec(&SolverSpec::default()).unwrap();
        // Ply 3, the book's last: its own score, not its columns' (the
        // searches start under it).
        for moves in [
            vec![],
            vec![2],
            vec![0, 1],
            vec![2, 2, 3],
            vec![1, 3, 0],
            vec![4, 4, 4, 0],
        ] {
            let v = view(&moves);
            assert_eq!(a.choose(&v), b.choose(&v), "{moves:?}");
            assert_eq!(a.explain(), b.explain(), "{moves:?}");
            assert_eq!(a.analyze(&v).1, b.analyze(&v).1, "{moves:?}");
        }
        assert!(a.book_scores(&solver.position(&[2]).unwrap()).is_some());
        let last = solver.position(&[2, 2, 3]).unwrap();
        assert!(a.book_scores(&last).is_none() && a.book_ceiling(&last).is_some());
    }

    /// `perfect` never slips; `easy` slips on about 60% of moves, each slip
    /// a legal column, the same ones for the same seed.
    #[test]
    fn levels_slip_as_often_as_they_say() {
        let spec = |level: &str| SolverSpec {
            level: level.to_string(),
            ..SolverSpec::default()
        };
        let best: Vec<Answer> = {
            let mut b = SolverBot::from_spec(&spec("perfect")).unwrap();
            (0..40).map(|i| b.choose(&view(&[i % 5, (i / 5) % 5]))).collect()
        };
        let play = |level: &str, seed: u64| -> (usize, Vec<Answer>) {
            let mut b = SolverBot::from_spec(&spec(level)).unwrap();
            b.new_game(seed);
            let answers: Vec<Answer> = (0..40).map(|i| b.choose(&view(&[i % 5, (i / 5) % 5]))).collect();
            let slips = answers.iter().zip(&best).filter(|(a, b)| a != b).count();
            (slips, answers)
        };
        assert_eq!(play("perfect", 1).0, 0);
        let (slips, easy) = play("easy", 1);
        // A slip may land on the best column by chance; at 60% over 40
        // moves, fewer than 8 differing would be far out.
        assert!((8..=32).contains(&slips), "{slips} slips");
        assert!(easy
            .iter()
            .all(|a| matches!(a, Answer::Column(c) if (0..5).contains(c))));
        assert_eq!(play("easy", 1).1, easy);
        assert!(play("hard", 1).0 < slips);
    }

    #[test]
    fn a_deep_analysis_table_fits_a_quarter_of_free_memory() {
        assert_eq!(deep_table_log2(None), DEEP_TABLE_LOG2);
        assert_eq!(deep_table_log2(Some(64 << 30)), DEEP_TABLE_LOG2);
        // 2 GiB free: a quarter is 512 MiB, 2^26 entries of 8 bytes.
        assert_eq!(deep_table_log2(Some(2 << 30)), 26);
        // 100 MiB free: a quarter holds 2^21 entries, still above the default.
        assert_eq!(deep_table_log2(Some(100 << 20)), 21);
        assert_eq!(deep_table_log2(Some(10 << 20)), DEFAULT_TABLE_LOG2);
        assert_eq!(deep_table_log2(Some(0)), DEFAULT_TABLE_LOG2);
        let given = SolverSpec {
            table_log2: Some(12),
            ..SolverSpec::default()
        };
        assert!(!SolverBot::from_spec(&given).unwrap().grow_table);
        assert!(SolverBot::from_spec(&SolverSpec::default()).unwrap().grow_table);
    }
}
