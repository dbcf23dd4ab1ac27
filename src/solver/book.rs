//! An opening book: the best exact move (and its score) for every position a
//! solver player can meet up to a depth, as either colour. Pure: building
//! (the slow solving, progress, files) is the caller's; this module holds
//! the entries, says which positions still need one, and reads and writes
//! the bytes.
//!
//! # What it holds
//! A player only meets the positions reached by its own book moves and any
//! opponent's moves, so the book follows its own moves: at a position where
//! the player is to move it holds one entry and follows that move; where the
//! opponent is to move it follows every legal move. Both colours: the
//! player moves at even plies in one walk and at odd plies in the other.
//! Positions with fewer than `depth` plies played get entries. With
//! [`Book::with_openings`] the walk also follows every move of both sides
//! in the first plies, for players that meet forced tournament openings
//! (the file stores entries only; the walk is the builder's option).
//!
//! Entries are keyed by the position's symmetric key, so a position and its
//! mirror share one; the column is stored for the orientation with the
//! smaller key and mirrored back on lookup.
//!
//! # Bytes
//! `c4sim-solver-book 1 ROWS COLS WIN DEPTH COUNT\n`, then COUNT entries
//! sorted by key, each 10 bytes: the key (8, little-endian), the column (1)
//! and the score (1, signed).

use super::{Pos, Solver};
use std::collections::BTreeMap;

/// Why the bytes of a book file (the opening book or the score book) are
/// not a book c4sim can use; `what` names the kind of file.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BookFileError {
    #[error("not a {what}: no header line")]
    NoHeader { what: &'static str },
    #[error("not a {what}: header is not text")]
    HeaderNotText { what: &'static str },
    #[error("not a {what} ({magic}): {header:?}")]
    Magic {
        what: &'static str,
        magic: &'static str,
        header: String,
    },
    #[error("bad header field {0:?}")]
    Field(String),
    #[error("the header needs 5 numbers, got {0:?}")]
    Numbers(String),
    #[error("the header names no board: {0:?}")]
    NoBoard(String),
    #[error("{count} entries announced ({expected} bytes), {got} bytes follow")]
    Length { count: u64, expected: u64, got: usize },
    #[error("an entry's column {0} is off the board")]
    Column(u8),
    #[error("the book is for {rows}x{cols} (win {win}), the solver's board is {board}")]
    OtherBoard {
        rows: u8,
        cols: u8,
        win: u8,
        board: crate::game::BoardConfig,
    },
}

const MAGIC: &str = "c4sim-solver-book 1";

/// See the module doc.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Book {
    /// (rows, cols, win_length).
    shape: (u8, u8, u8),
    /// How deep [`Book::missing`] walks: entries for positions of fewer
    /// plies. A build option, like `openings`.
    walk: u32,
    /// The deepest walk any build of these entries made: what the
    /// file's header records (a shallower walk added later, such as one
    /// from forced openings, does not make the book look shallower).
    depth: u32,
    /// Plies at the start that any move may fill, for both sides (forced
    /// tournament openings): the walk follows every move there. A build
    /// option, not stored in the file.
    openings: u32,
    entries: BTreeMap<u64, (u8, i8)>,
}

impl Book {
    /// An empty book for `solver`'s board, for positions of fewer than
    /// `depth` plies.
    pub fn new(solver: &Solver, depth: u32) -> Book {
        let c = solver.config();
        Book {
            shape: (c.rows as u8, c.cols as u8, c.win_length as u8),
            walk: depth,
            depth,
            openings: 0,
            entries: BTreeMap::new(),
        }
    }

    /// The same entries, walked also from every opening of `plies` plies
    /// (both sides' moves forced there, as a tournament's openings are), so
    /// a player that starts after such an opening finds its moves.
    pub fn with_openings(mut self, plies: u32) -> Book {
        self.openings = plies;
        self
    }

    /// The same entries, for positions of fewer than `depth` plies (every
    /// entry stays true; a deeper book only needs more).
    pub fn with_depth(mut self, depth: u32) -> Book {
        self.walk = depth;
        self.depth = self.depth.max(depth);
        self
    }

    /// The deepest walk's depth: entries exist for positions of fewer plies.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn check(&self, pos: &Pos) {
        assert_eq!(pos.shape, self.shape, "a book position of another board shape");
    }

    /// Whether the position's own key is the stored orientation.
    fn canonical(pos: &Pos) -> bool {
        pos.key() <= pos.mcurrent + pos.mmask
    }

    /// The best move (column from 0) and exact score for `pos`, if the book
    /// has it.
    pub fn lookup(&self, pos: &Pos) -> Option<(usize, i32)> {
        self.check(pos);
        let &(col, score) = self.entries.get(&pos.symmetric_key())?;
        let col = if Book::canonical(pos) {
            col
        } else {
            self.shape.1 - 1 - col
        };
        Some((col as usize, score as i32))
    }

    /// Records `col` (scoring `score`) as the best move in `pos`.
    pub fn insert(&mut self, pos: &Pos, col: usize, score: i32) {
        self.check(pos);
        let c = col as u8;
        let stored = if Book::canonical(pos) { c } else { self.shape.1 - 1 - c };
        self.entries.insert(pos.symmetric_key(), (stored, score as i8));
    }

    /// The positions the book still needs, in a fixed order (by walk, then
    /// breadth first, columns left to right): those a player following the
    /// book meets with fewer than `depth` plies played and no entry. Empty
    /// when the book is complete. Also returns how many positions the walk
    /// met that have entries.
    pub fn missing(&self, solver: &Solver) -> (Vec<Pos>, usize) {
        let cols = solver.config().cols;
        let mut todo = Vec::new();
        let mut todo_keys = std::collections::HashSet::new();
        let mut known = std::collections::HashSet::new();
        for parity in 0..2u32 {
            let mut layer = vec![solver.start()];
            let mut seen = std::collections::HashSet::new();
            for _ in 0..self.walk {
                let mut next = Vec::new();
                for p in layer {
                    if !seen.insert(p.symmetric_key()) {
                        continue;
                    }
                    let mine = p.moves % 2 == parity;
                    let forced = p.moves < self.openings;
                    let follow: Vec<usize> = if mine && !forced {
                        if (0..cols).any(|c| solver.is_winning_move(&p, c)) {
                            // A win at once needs no book.
                            continue;
                        }
                        match self.lookup(&p) {
                            Some((c, _)) => {
                                known.insert(p.symmetric_key());
                                vec![c]
                            }
                            None => {
                                if todo_keys.insert(p.symmetric_key()) {
                                    todo.push(p);
                                }
                                continue;
                            }
                        }
                    } else {
                        (0..cols).filter(|&c| solver.can_play(&p, c)).collect()
                    };
                    for c in follow {
                        // A move that ends the game leads nowhere.
                        if let Ok(child) = solver.play(&p, c) {
                            next.push(child);
                        }
                    }
                }
                layer = next;
            }
        }
        (todo, known.len())
    }

    /// Solves every missing position on this thread (small boards and
    /// tests; `c4sim book build` does the same on every core, resumably).
    pub fn complete(&mut self, solver: &mut Solver) {
        loop {
            let (todo, _) = self.missing(solver);
            if todo.is_empty() {
                return;
            }
            for p in todo {
                let (c, v) = solver.best_move(&p, None).expect("a book position has a move");
                self.insert(&p, c, v);
            }
        }
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let (r, c, w) = self.shape;
        let mut out = format!("{MAGIC} {r} {c} {w} {} {}\n", self.depth, self.entries.len()).into_bytes();
        for (&k, &(col, score)) in &self.entries {
            out.extend_from_slice(&k.to_le_bytes());
            out.push(col);
            out.push(score as u8);
        }
        out
    }

    /// Reads [`Book::to_bytes`]' output for `solver`'s board.
    pub fn from_bytes(solver: &Solver, bytes: &[u8]) -> Result<Book, BookFileError> {
        let book = Book::parse(bytes)?;
        if !book.fits(solver.config()) {
            let (rows, cols, win) = book.shape;
            return Err(BookFileError::OtherBoard {
                rows,
                cols,
                win,
                board: solver.config(),
            });
        }
        Ok(book)
    }

    /// Whether this book is for boards of `cfg`'s shape.
    pub fn fits(&self, cfg: crate::game::BoardConfig) -> bool {
        (cfg.rows, cfg.cols, cfg.win_length) == (self.shape.0 as usize, self.shape.1 as usize, self.shape.2 as usize)
    }

    /// Reads [`Book::to_bytes`]' output for whatever board it names.
    pub fn parse(bytes: &[u8]) -> Result<Book, BookFileError> {
        let ([r, c, w, depth, count], body) = read_header(bytes, MAGIC, "solver book")?;
        let mut book = Book {
            shape: (r as u8, c as u8, w as u8),
            walk: depth as u32,
            depth: depth as u32,
            openings: 0,
            entries: BTreeMap::new(),
        };
        if body.len() as u64 != count * 10 {
            return Err(BookFileError::Length {
                count,
                expected: count.saturating_mul(10),
                got: body.len(),
            });
        }
        for e in body.chunks_exact(10) {
            let key = u64::from_le_bytes(e[..8].try_into().unwrap());
            if e[8] as u64 >= c {
                return Err(BookFileError::Column(e[8]));
            }
            book.entries.insert(key, (e[8], e[9] as i8));
        }
        Ok(book)
    }
}

/// A book file's header line, `MAGIC R C W DEPTH COUNT` (a board of 1 to
/// 64 on each count): its five numbers and the bytes after it; `what` names
/// the kind of file in errors.
pub(super) fn read_header<'a>(
    bytes: &'a [u8],
    magic: &'static str,
    what: &'static str,
) -> Result<([u64; 5], &'a [u8]), BookFileError> {
    let nl = bytes
        .iter()
        .position(|&b| b == b'\n')
        .ok_or(BookFileError::NoHeader { what })?;
    let header = std::str::from_utf8(&bytes[..nl]).map_err(|_| BookFileError::HeaderNotText { what })?;
    let rest = header.strip_prefix(magic).ok_or_else(|| BookFileError::Magic {
        what,
        magic,
        header: header.to_string(),
    })?;
    let nums: Vec<u64> = rest
        .split_whitespace()
        .map(|t| t.parse::<u64>().map_err(|_| BookFileError::Field(t.to_string())))
        .collect::<Result<_, _>>()?;
    let nums: [u64; 5] = nums
        .try_into()
        .map_err(|_| BookFileError::Numbers(header.to_string()))?;
    if nums[..3].iter().any(|&n| n == 0 || n > 64) {
        return Err(BookFileError::NoBoard(header.to_string()));
    }
    Ok((nums, &bytes[nl + 1..]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::BoardConfig;

    fn small() -> Solver {
        Solver::new(BoardConfig::new(4, 5, 3).unwrap(), 12).unwrap()
    }

    fn build(s: &mut Solver, depth: u32) -> Book {
        let mut b = Book::new(s, depth);
        b.complete(s);
        b
    }

    #[test]
    fn a_built_book_gives_the_solvers_moves_and_survives_bytes() {
        let mut s = small();
        let b = build(&mut s, 5);
        assert!(!b.is_empty());
        assert!(b.missing(&s).0.is_empty());
        let again = Book::from_bytes(&s, &b.to_bytes()).unwrap();
        assert_eq!(again, b);
        // Every position the walk meets, and its mirror, answers the solver's
        // own best move.
        let p = s.start();
        assert_eq!(b.lookup(&p), s.best_move(&p, None));
        for line in [vec![0], vec![4], vec![1, 2], vec![3, 2]] {
            let p = s.position(&line).unwrap();
            if let Some((c, v)) = b.lookup(&p) {
                let (bc, bv) = s.best_move(&p, None).unwrap();
                assert_eq!(v, bv, "{line:?}");
                // The book's column scores the best score too (ties may differ
                // by orientation).
                assert_eq!(s.scores(&p, None)[c], Some(bv), "{line:?} {bc}");
            }
        }
    }

    #[test]
    fn a_book_with_openings_answers_after_any_forced_opening() {
        let mut s = small();
        let mut plain = Book::new(&s, 4);
        plain.complete(&mut s);
        let mut wide = plain.clone().with_openings(2);
        wide.complete(&mut s);
        assert!(wide.len() > plain.len());
        // After every two-ply opening, the side to move (the first player)
        // and, after any reply, the second player find their moves.
        for a in 0..5 {
            for b in 0..5 {
                let p = s.position(&[a, b]).unwrap();
                if (0..5).any(|c| s.is_winning_move(&p, c)) {
                    continue;
                }
                let (c, v) = wide.lookup(&p).unwrap_or_else(|| panic!("{a}{b}"));
                assert_eq!(s.best_move(&p, None).unwrap().1, v);
                assert_eq!(s.scores(&p, None)[c], Some(v));
                for r in 0..5 {
                    if let Ok(q) = s.play(&p, r) {
                        if !(0..5).any(|c| s.is_winning_move(&q, c)) {
                            assert!(wide.lookup(&q).is_some(), "{a}{b}{r}");
                        }
                    }
                }
            }
        }
        assert!(plain.lookup(&s.position(&[0, 1]).unwrap()).is_none());
        // A shallower walk added to a deeper book keeps the deeper header.
        let shallow = plain.with_depth(3).with_openings(2);
        assert_eq!(shallow.depth(), 4);
        assert!(String::from_utf8_lossy(&shallow.to_bytes()).starts_with("c4sim-solver-book 1 4 5 3 4 "));
    }

    #[test]
    fn mirrored_positions_share_an_entry() {
        let s = small();
        let mut b = Book::new(&s, 3);
        let p = s.position(&[0]).unwrap();
        let m = s.position(&[4]).unwrap();
        b.insert(&p, 1, 2);
        assert_eq!(b.len(), 1);
        assert_eq!(b.lookup(&p), Some((1, 2)));
        assert_eq!(b.lookup(&m), Some((3, 2)));
    }

    #[test]
    fn bad_bytes_are_refused() {
        let s = small();
        assert!(Book::from_bytes(&s, b"nonsense").is_err());
        assert!(Book::from_bytes(&s, b"c4sim-solver-book 1 6 7 4 3 0\n").is_err());
        assert!(Book::from_bytes(&s, b"c4sim-solver-book 1 4 5 3 3 1\n").is_err());
        assert!(Book::from_bytes(&s, b"c4sim-solver-book 1 4 5 3 3 0\n").is_ok());
    }
}
