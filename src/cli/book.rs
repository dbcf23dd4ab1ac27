//! `c4sim book build` and `c4sim book scores`: the shells around
//! [`c4sim::solver::Book`] (best moves) and [`c4sim::solver::ScoreBook`]
//! (every position's score up to a ply): solving the positions a book still
//! needs on every core, a progress bar, and the file.
//!
//! Resumable: the book file is the progress. It is rewritten atomically
//! (a temporary file renamed over it) every `save_every` and at the end, and
//! a new run loads it and solves only what is still missing. Deterministic:
//! the positions come in a fixed order and every best move is the solver's
//! (ties to the centre-most column), so two builds give the same bytes.

use c4sim::game::BoardConfig;
use c4sim::solver::book::BookFileError;
use c4sim::solver::{Book, Pos, ScoreBook, Solver, SolverError};
use c4sim::util::write_atomic;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Why a book build stops. The texts are the lines people read after
/// `error: ` (exit code 2).
#[derive(Debug, thiserror::Error)]
pub enum BookError {
    #[error(transparent)]
    Solver(#[from] SolverError),
    /// The book file could not be read or written.
    #[error("{}: {source}", path.display())]
    File { path: PathBuf, source: std::io::Error },
    /// The book file is not a book this build can resume.
    #[error("{}: {source}", path.display())]
    Damaged { path: PathBuf, source: BookFileError },
    #[error(
        "{} holds scores up to ply {plies} for another board or depth; remove it or choose another --out",
        path.display()
    )]
    OtherScores { path: PathBuf, plies: u32 },
    #[error(
        "{} holds scores up to ply {plies} for another board or depth; --from takes a 6×7 score book of fewer plies than --plies",
        path.display()
    )]
    NotShallower { path: PathBuf, plies: u32 },
    #[error("a book position without a move")]
    NoMove,
    #[error("a position without a score")]
    NoScore,
    #[error(transparent)]
    Wrong(#[from] c4sim::solver::Disagreement),
}

/// How a build solves and saves, the same for both books (`c4sim book build`
/// and `c4sim book scores` take these flags).
#[derive(clap::Args, Clone, Copy, Debug)]
pub struct SolveRun {
    /// Transposition-table entries as a power of two (shared by the threads).
    #[arg(long, default_value_t = 25)]
    pub table_log2: u32,
    /// Seconds between saves.
    #[arg(long, default_value_t = 30)]
    pub save_every: u64,
    /// Solver threads (positions shared between them).
    #[arg(long, default_value_t = 2)]
    pub threads: usize,
}

impl SolveRun {
    fn save_every(&self) -> Duration {
        Duration::from_secs(self.save_every)
    }
}

/// What `c4sim book build` builds.
#[derive(Clone, Debug)]
pub struct BookBuildOptions {
    /// Entries for positions of fewer than this many plies.
    pub plies: u32,
    /// Also from every opening of this many plies ([`Book::with_openings`]).
    pub openings: u32,
    pub out: PathBuf,
    pub run: SolveRun,
}

/// The book in `o.out` to resume (at the depth and openings `o` asks for),
/// or a new one when there is no file yet.
fn open_book(o: &BookBuildOptions, solver: &Solver, log: &mut dyn Write) -> Result<Book, BookError> {
    match std::fs::read(&o.out) {
        Ok(bytes) => {
            let b = Book::from_bytes(solver, &bytes).map_err(|source| BookError::Damaged {
                path: o.out.clone(),
                source,
            })?;
            let _ = writeln!(log, "resuming {}: {} entries", o.out.display(), b.len());
            Ok(b.with_depth(o.plies).with_openings(o.openings))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Book::new(solver, o.plies).with_openings(o.openings)),
        Err(source) => Err(BookError::File {
            path: o.out.clone(),
            source,
        }),
    }
}

/// A round's log line: time so far, entries, and the positions it solves.
fn say_round(log: &mut dyn Write, start: Instant, entries: usize, todo: &[Pos]) {
    let plies = todo
        .iter()
        .map(|p| p.moves())
        .fold((usize::MAX, 0), |(a, b), m| (a.min(m), b.max(m)));
    let _ = writeln!(
        log,
        "{:.0} s: {} entries; solving {} positions of plies {}-{}",
        start.elapsed().as_secs_f64(),
        entries,
        todo.len(),
        plies.0,
        plies.1
    );
}

/// Runs `solve` on every position of `todo` (a position, or one with what is
/// known of it) on `threads` threads (this one
/// included), each taking the next position, all sharing `solver`'s table;
/// `on` gets each answer on this thread as it comes, and an error from it
/// stops the work. Exact answers, so what is built does not depend on which
/// thread solved what.
fn solve_each<I: Copy + Send + Sync, T: Send>(
    solver: &mut Solver,
    threads: usize,
    todo: &[I],
    solve: impl Fn(&mut Solver, &I) -> T + Sync,
    mut on: impl FnMut(I, T) -> Result<(), BookError>,
) -> Result<(), BookError> {
    let next = AtomicUsize::new(0);
    let (tx, rx) = mpsc::channel();
    let mut workers: Vec<Solver> = (1..threads.max(1)).map(|_| solver.helper()).collect();
    let work = |s: &mut Solver, tx: mpsc::Sender<(I, T)>| {
        while let Some(p) = todo.get(next.fetch_add(1, Ordering::Relaxed)) {
            if tx.send((*p, solve(s, p))).is_err() {
                break;
            }
        }
    };
    std::thread::scope(|scope| -> Result<(), BookError> {
        for w in workers.iter_mut() {
            let tx = tx.clone();
            scope.spawn(move || work(w, tx));
        }
        let tx_main = tx.clone();
        drop(tx);
        scope.spawn(move || work(solver, tx_main));
        for (p, answer) in rx {
            if let Err(e) = on(p, answer) {
                // Stop the workers: they see a closed channel at their next send.
                next.store(todo.len(), Ordering::Relaxed);
                return Err(e);
            }
        }
        Ok(())
    })
}

/// Builds (or resumes) the 6×7 book; returns it. `log` gets one line per
/// round and a summary.
pub fn build_book(o: &BookBuildOptions, log: &mut dyn Write) -> Result<Book, BookError> {
    let mut solver = Solver::new(BoardConfig::default(), o.run.table_log2)?;
    let mut book = open_book(o, &solver, log)?;
    let start = Instant::now();
    let bar = c4sim::events::bar("positions").start(0);
    let save = |b: &Book| {
        write_atomic(&o.out, &b.to_bytes()).map_err(|source| BookError::File {
            path: o.out.clone(),
            source,
        })
    };
    let mut last_save = Instant::now();
    loop {
        let (todo, known) = book.missing(&solver);
        if todo.is_empty() {
            break;
        }
        // The walk reveals the next layer only once this one is solved: the
        // bar's length grows round by round.
        bar.set_length((known + todo.len()) as u64);
        bar.set_position(known as u64);
        // Also a line per round, for logs where no bar is drawn.
        say_round(log, start, book.len(), &todo);
        // Positions of a round are independent; each gets its best move
        // ([`Solver::best_move`]: one solve, then one null window per column,
        // cheaper than every column's exact score).
        solve_each(
            &mut solver,
            o.run.threads,
            &todo,
            |s, p| s.best_move(p, None),
            |p, best| {
                let (col, score) = best.ok_or(BookError::NoMove)?;
                book.insert(&p, col, score);
                bar.set_message(format!("ply {}", p.moves()));
                bar.inc(1);
                if last_save.elapsed() >= o.run.save_every() {
                    save(&book)?;
                    last_save = Instant::now();
                }
                Ok(())
            },
        )?;
        save(&book)?;
    }
    bar.finish_and_clear();
    save(&book)?;
    let _ = writeln!(
        log,
        "book: {} entries for positions under {} plies, {} bytes in {}, built (this run) in {:.1} s",
        book.len(),
        book.depth(),
        book.to_bytes().len(),
        o.out.display(),
        start.elapsed().as_secs_f64()
    );
    Ok(book)
}

/// The score book in `out` to resume, or a new one; a file of another
/// shape or depth is refused rather than mixed in.
fn open_scores(plies: u32, out: &Path, solver: &Solver, log: &mut dyn Write) -> Result<ScoreBook, BookError> {
    let Some(b) = read_scores(out)? else {
        return Ok(ScoreBook::new(solver, plies));
    };
    if !b.fits(solver.config()) || b.plies() != plies {
        return Err(BookError::OtherScores {
            path: out.to_path_buf(),
            plies: b.plies(),
        });
    }
    let _ = writeln!(log, "resuming {}: {} entries", out.display(), b.len());
    Ok(b)
}

/// The score book in the file at `path`, or `None` when there is no file.
fn read_scores(path: &Path) -> Result<Option<ScoreBook>, BookError> {
    match std::fs::read(path) {
        Ok(bytes) => ScoreBook::parse(&bytes).map(Some).map_err(|source| BookError::Damaged {
            path: path.to_path_buf(),
            source,
        }),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(BookError::File {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Builds (or resumes) the 6×7 score book of every position up to `plies`
/// in `out`: solves the positions of its last ply on `run.threads` threads
/// (saved every `run.save_every` seconds, so a kill loses at most that
/// much), then scores every earlier position from its children, and checks
/// `check` entries against a fresh search. With `from` (a complete book of
/// fewer plies), its entries are taken over: the frontier's searches start
/// at the scores their parents prove, and every taken entry is checked
/// against the new scores when the book is filled.
pub fn build_scores(
    plies: u32,
    out: &Path,
    from: Option<&Path>,
    check: usize,
    run: SolveRun,
    log: &mut dyn Write,
) -> Result<ScoreBook, BookError> {
    let mut solver = Solver::new(BoardConfig::default(), run.table_log2)?;
    let mut book = open_scores(plies, out, &solver, log)?;
    if let Some(from) = from {
        let shallower = read_scores(from)?.ok_or_else(|| BookError::File {
            path: from.to_path_buf(),
            source: std::io::ErrorKind::NotFound.into(),
        })?;
        let took = book.take_over(&shallower).ok_or(BookError::NotShallower {
            path: from.to_path_buf(),
            plies: shallower.plies(),
        })?;
        let _ = writeln!(log, "took over {took} new entries from {}", from.display());
    }
    let start = Instant::now();
    let save = |b: &ScoreBook| {
        write_atomic(out, &b.to_bytes()).map_err(|source| BookError::File {
            path: out.to_path_buf(),
            source,
        })
    };
    let todo = book.frontier_with_floors(&solver);
    let _ = writeln!(log, "solving {} positions of ply {plies}", todo.len());
    let bar = c4sim::events::bar("positions").start(0);
    bar.set_length(todo.len() as u64);
    let mut last_save = Instant::now();
    solve_each(
        &mut solver,
        run.threads,
        &todo,
        |s, &(p, floor)| s.solve_at_least(&p, None, floor),
        |(p, _), score| {
            book.insert(&p, score.ok_or(BookError::NoScore)?);
            bar.inc(1);
            if last_save.elapsed() >= run.save_every() {
                save(&book)?;
                last_save = Instant::now();
            }
            Ok(())
        },
    )?;
    bar.finish_and_clear();
    let derived = book.fill(&solver)?;
    save(&book)?;
    let checked = book.check(&mut solver, check)?;
    let _ = writeln!(log, "checked {checked} entries against a fresh search: all agree");
    let _ = writeln!(
        log,
        "score book: {} entries ({derived} derived from their children) for every position up to ply {}, \
         {} bytes in {}, built (this run) in {:.1} s",
        book.len(),
        book.plies(),
        book.to_bytes().len(),
        out.display(),
        start.elapsed().as_secs_f64()
    );
    Ok(book)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shallow_book_builds_resumes_and_is_deterministic() {
        let dir = tempfile::tempdir().unwrap();
        let o = BookBuildOptions {
            plies: 2,
            openings: 0,
            out: dir.path().join("book.bin"),
            run: SolveRun {
                table_log2: 16,
                save_every: 60,
                threads: 1,
            },
        };
        // Ply 0 and 1 of 6x7 are far too slow for a test: start from a book
        // that already has the empty board, and check only the walk.
        let s = Solver::new(BoardConfig::default(), 4).unwrap();
        let mut b = Book::new(&s, 1);
        b.insert(&s.start(), 3, 1);
        write_atomic(&o.out, &b.to_bytes()).unwrap();
        let o1 = BookBuildOptions { plies: 1, ..o };
        let built = build_book(&o1, &mut Vec::new()).unwrap();
        assert_eq!(built, b);
        assert_eq!(std::fs::read(&o1.out).unwrap(), b.to_bytes());
    }

    /// `--from` takes only a book of fewer plies, and says so before any
    /// search; the book being built is left as it was.
    #[test]
    fn a_score_book_builds_only_over_a_shallower_one() {
        let dir = tempfile::tempdir().unwrap();
        let s = Solver::new(BoardConfig::default(), 4).unwrap();
        let from = dir.path().join("deep.bin");
        write_atomic(&from, &ScoreBook::new(&s, 9).to_bytes()).unwrap();
        let out = dir.path().join("scores.bin");
        let run = SolveRun {
            table_log2: 16,
            save_every: 60,
            threads: 1,
        };
        let err = build_scores(9, &out, Some(&from), 0, run, &mut Vec::new()).unwrap_err();
        assert!(matches!(err, BookError::NotShallower { plies: 9, .. }), "{err}");
        assert!(err.to_string().contains("fewer plies"), "{err}");
        assert!(!out.exists());
    }
}
