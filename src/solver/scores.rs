//! A score book: the exact score of every position up to a ply, so that
//! every column's score of any position before that ply is known at once
//! (analysis, the page's "show the solution"). Pure: solving the frontier
//! (the slow part, on every core, resumably) is `c4sim book scores`'s job;
//! this module holds the entries, lists the frontier positions still
//! unsolved, derives every earlier score from its children by negamax, and
//! reads and writes the bytes.
//!
//! # What it holds
//! Every position reachable in `plies` plies or fewer without a line made,
//! one entry per position and its mirror (the symmetric key). Only the
//! positions at exactly `plies` need the solver: a position before them
//! scores the best over its columns, where a column that wins at once scores
//! the immediate win and any other minus the score of the position after it.
//!
//! # Bytes
//! `c4sim-score-book 1 ROWS COLS WIN PLIES COUNT\n`, then COUNT entries
//! sorted by key, each 9 bytes: the key (8, little-endian) and the score (1,
//! signed).

use super::{Pos, Solver};
use std::collections::{BTreeMap, HashSet};

const MAGIC: &str = "c4sim-score-book 1";

/// See the module doc.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScoreBook {
    /// (rows, cols, win_length).
    shape: (u8, u8, u8),
    plies: u32,
    entries: BTreeMap<u64, i8>,
}

impl ScoreBook {
    /// An empty book for `solver`'s board, for positions of up to `plies` plies.
    pub fn new(solver: &Solver, plies: u32) -> ScoreBook {
        let c = solver.config();
        ScoreBook {
            shape: (c.rows as u8, c.cols as u8, c.win_length as u8),
            plies,
            entries: BTreeMap::new(),
        }
    }

    /// The deepest ply it holds scores for.
    pub fn plies(&self) -> u32 {
        self.plies
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Whether the book is for boards of `cfg`'s shape.
    pub fn fits(&self, cfg: crate::game::BoardConfig) -> bool {
        self.shape == (cfg.rows as u8, cfg.cols as u8, cfg.win_length as u8)
    }

    /// The exact score of `pos` (the solver's convention), if the book holds it.
    pub fn score(&self, pos: &Pos) -> Option<i32> {
        self.entries.get(&pos.symmetric_key()).map(|&s| s as i32)
    }

    /// Records `score` as the exact score of `pos`.
    pub fn insert(&mut self, pos: &Pos, score: i32) {
        self.entries.insert(pos.symmetric_key(), score as i8);
    }

    /// Every column's exact score in `pos` for the side to move, as
    /// [`Solver::scores`] gives them (`None` for a full column), when the book
    /// knows all of them; `None` when one is missing (a position at or past
    /// the book's last ply, or a book still being built).
    pub fn column_scores(&self, solver: &Solver, pos: &Pos) -> Option<Vec<Option<i32>>> {
        (0..solver.config().cols)
            .map(|c| {
                if !solver.can_play(pos, c) {
                    Some(None)
                } else if solver.is_winning_move(pos, c) {
                    Some(Some(solver.win_now_score(pos)))
                } else {
                    let child = solver.play(pos, c).expect("a playable, not winning column");
                    self.score(&child).map(|s| Some(-s))
                }
            })
            .collect()
    }

    /// The positions of exactly `plies` plies (one per mirror pair, in a
    /// fixed order: breadth first, columns left to right) that have no
    /// score yet: what the solver must still do.
    pub fn frontier(&self, solver: &Solver) -> Vec<Pos> {
        self.frontier_with_floors(solver).into_iter().map(|(p, _)| p).collect()
    }

    /// [`ScoreBook::frontier`], each position with the least score it is
    /// known to reach where the book already holds the ply before (taken
    /// over from a shallower book, [`ScoreBook::take_over`]): minus the
    /// best score of its parents, since a parent scores at least minus each
    /// child's score. About a third of ply 9 scores exactly its floor.
    pub fn frontier_with_floors(&self, solver: &Solver) -> Vec<(Pos, Option<i32>)> {
        let mut all = layers(solver, self.plies);
        let last = all.pop().unwrap_or_default();
        let mut floors = std::collections::HashMap::new();
        for parent in all.last().into_iter().flatten() {
            let Some(v) = self.score(parent) else { continue };
            for c in 0..solver.config().cols {
                if let Ok(child) = solver.play(parent, c) {
                    let f = floors.entry(child.symmetric_key()).or_insert(-v);
                    *f = (*f).max(-v);
                }
            }
        }
        last.into_iter()
            .filter(|p| self.score(p).is_none())
            .map(|p| (p, floors.get(&p.symmetric_key()).copied()))
            .collect()
    }

    /// Takes over every entry of `shallower`, a book of the same board and
    /// fewer plies (the shipped one, when building a deeper one): its last
    /// ply then gives the new frontier its floors, and [`ScoreBook::fill`]
    /// checks every taken entry against the new scores. Returns how many it
    /// took, or `None` (nothing taken) for a book of another board or as deep.
    pub fn take_over(&mut self, shallower: &ScoreBook) -> Option<usize> {
        if shallower.shape != self.shape || shallower.plies >= self.plies {
            return None;
        }
        let before = self.len();
        self.entries.extend(&shallower.entries);
        Some(self.len() - before)
    }

    /// Scores every position before the last ply from its columns' scores
    /// (deepest first), where all of them are known; returns how many
    /// entries it added. An entry already there (taken over from a
    /// shallower book) must equal what its columns give, or the first that
    /// does not is the error (`solved` there is the columns' best).
    pub fn fill(&mut self, solver: &Solver) -> Result<usize, Disagreement> {
        let before = self.len();
        let mut all = layers(solver, self.plies);
        all.pop();
        for layer in all.iter().rev() {
            for p in layer {
                let best = self
                    .column_scores(solver, p)
                    .and_then(|v| v.into_iter().flatten().max());
                match (self.score(p), best) {
                    (Some(had), Some(s)) if had != s => {
                        return Err(Disagreement {
                            key: p.symmetric_key(),
                            plies: p.moves(),
                            book: had,
                            solved: s,
                        })
                    }
                    (None, Some(s)) => self.insert(p, s),
                    _ => {}
                }
            }
        }
        Ok(self.len() - before)
    }

    /// Checks up to `n` entries against a fresh search (the table cleared
    /// first, so nothing the build stored is reused): evenly spread over the
    /// last ply (the solver's own answers) and the ply before (`fill`'s).
    /// Returns how many were checked, or the first entry that disagrees.
    pub fn check(&self, solver: &mut Solver, n: usize) -> Result<usize, Disagreement> {
        let mut all = layers(solver, self.plies);
        let last_two = all.split_off(all.len().saturating_sub(2));
        let per_layer = n.div_ceil(last_two.len());
        solver.clear_table();
        let mut checked = 0;
        for layer in &last_two {
            let step = (layer.len() / per_layer.max(1)).max(1);
            for p in layer.iter().step_by(step).take(per_layer) {
                let Some(book) = self.score(p) else { continue };
                let solved = solver.solve(p, None).expect("no budget");
                if solved != book {
                    return Err(Disagreement {
                        key: p.symmetric_key(),
                        plies: p.moves(),
                        book,
                        solved,
                    });
                }
                checked += 1;
            }
        }
        Ok(checked)
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let (r, c, w) = self.shape;
        let mut out = format!("{MAGIC} {r} {c} {w} {} {}\n", self.plies, self.entries.len()).into_bytes();
        for (&k, &s) in &self.entries {
            out.extend_from_slice(&k.to_le_bytes());
            out.push(s as u8);
        }
        out
    }

    /// Reads a score book's bytes, checking its header and its length.
    pub fn parse(bytes: &[u8]) -> Result<ScoreBook, super::book::BookFileError> {
        let ([r, c, w, plies, count], body) = super::book::read_header(bytes, MAGIC, "c4sim score book")?;
        if body.len() as u64 != count.saturating_mul(9) {
            return Err(super::book::BookFileError::Length {
                count,
                expected: count.saturating_mul(9),
                got: body.len(),
            });
        }
        let entries = body
            .chunks_exact(9)
            .map(|e| (u64::from_le_bytes(e[..8].try_into().expect("8 bytes")), e[8] as i8))
            .collect();
        Ok(ScoreBook {
            shape: (r as u8, c as u8, w as u8),
            plies: plies as u32,
            entries,
        })
    }
}

/// A book entry that a fresh search (or, for an entry taken over from a
/// shallower book, its columns' scores) scores differently: the book is
/// wrong (or the solver is), and it must not be shipped.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("the score book says {book} for the position of {plies} plies with key {key:#x}, but it scores {solved}")]
pub struct Disagreement {
    pub key: u64,
    pub plies: usize,
    pub book: i32,
    pub solved: i32,
}

/// The positions after 0, 1, … `plies` plies without a line made, one per
/// mirror pair, each layer in breadth-first order (columns left to right).
fn layers(solver: &Solver, plies: u32) -> Vec<Vec<Pos>> {
    let cols = solver.config().cols;
    let mut out = vec![vec![solver.start()]];
    for _ in 0..plies {
        let mut seen = HashSet::new();
        let next: Vec<Pos> = out
            .last()
            .expect("at least the start")
            .iter()
            .flat_map(|p| (0..cols).filter_map(move |c| solver.play(p, c).ok()))
            .filter(|child| seen.insert(child.symmetric_key()))
            .collect();
        out.push(next);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::BoardConfig;

    fn solver(rows: usize, cols: usize, win: usize) -> Solver {
        Solver::new(BoardConfig::new(rows, cols, win).unwrap(), 16).unwrap()
    }

    /// A book built the way `c4sim book scores` does (frontier solved, then
    /// filled) gives every position's exact score and every column's score
    /// the solver gives, for every position before its last ply.
    #[test]
    fn filled_scores_equal_the_solvers() {
        let mut s = solver(4, 5, 4);
        let mut book = ScoreBook::new(&s, 4);
        for p in book.frontier(&s) {
            let v = s.solve(&p, None).unwrap();
            book.insert(&p, v);
        }
        assert!(book.frontier(&s).is_empty());
        let added = book.fill(&s).unwrap();
        assert!(added > 0);
        let all = layers(&s, 4);
        assert_eq!(book.len(), all.iter().map(Vec::len).sum::<usize>());
        for layer in &all[..4] {
            for p in layer {
                assert_eq!(book.score(p), s.solve(p, None), "position of {} plies", p.moves());
                assert_eq!(book.column_scores(&s, p), Some(s.scores(p, None)));
            }
        }
        // At the last ply the columns lead past the book.
        assert_eq!(book.column_scores(&s, &all[4][0]), None);
    }

    /// The build's check passes on a true book and names a wrong entry.
    #[test]
    fn the_check_catches_a_wrong_entry() {
        let mut s = solver(4, 5, 4);
        let mut book = ScoreBook::new(&s, 4);
        for p in book.frontier(&s) {
            let v = s.solve(&p, None).unwrap();
            book.insert(&p, v);
        }
        book.fill(&s).unwrap();
        assert_eq!(book.check(&mut s, 6), Ok(6));
        // Spoil the first entry of the ply before the last, which the check samples.
        let p = layers(&s, 4)[3][0];
        let right = book.score(&p).unwrap();
        book.insert(&p, right + 1);
        let err = book.check(&mut s, 6).unwrap_err();
        assert_eq!((err.key, err.book, err.solved), (p.symmetric_key(), right + 1, right));
    }

    /// A complete book of plies 0–`plies`, built as `c4sim book scores` does.
    fn built(s: &mut Solver, plies: u32) -> ScoreBook {
        let mut book = ScoreBook::new(s, plies);
        for p in book.frontier(s) {
            let v = s.solve(&p, None).unwrap();
            book.insert(&p, v);
        }
        book.fill(s).unwrap();
        book
    }

    /// Built over a shallower book, a deeper one is the same book: every
    /// floor is at most the exact score (some equal it), the search from
    /// the floor gives the exact score, and fill checks every taken entry,
    /// naming a spoiled one.
    #[test]
    fn a_deeper_book_built_over_a_shallower_one_is_the_same_and_checks_it() {
        let mut s = solver(4, 5, 4);
        let shallow = built(&mut s, 3);
        let mut deep = ScoreBook::new(&s, 4);
        assert_eq!(deep.take_over(&shallow), Some(shallow.len()));
        assert_eq!(ScoreBook::new(&s, 3).take_over(&shallow), None, "as deep");
        let todo = deep.frontier_with_floors(&s);
        assert!(
            todo.iter().all(|(_, f)| f.is_some()),
            "every ply-4 position has a parent"
        );
        let mut on_floor = 0;
        for (p, f) in todo {
            let exact = s.solve(&p, None).unwrap();
            let f = f.unwrap();
            assert!(f <= exact, "floor {f} above {exact}");
            on_floor += usize::from(f == exact);
            s.clear_table();
            assert_eq!(s.solve_at_least(&p, None, Some(f)), Some(exact));
            deep.insert(&p, exact);
        }
        assert!(on_floor > 0);
        let mut spoiled = deep.clone();
        assert_eq!(deep.fill(&s), Ok(0), "plies 0-3 all taken over, and all agree");
        assert_eq!(deep, built(&mut s, 4));
        let p = layers(&s, 4)[2][1];
        let right = spoiled.score(&p).unwrap();
        spoiled.insert(&p, right - 1);
        let err = spoiled.fill(&s).unwrap_err();
        assert_eq!((err.key, err.book, err.solved), (p.symmetric_key(), right - 1, right));
    }

    #[test]
    fn mirrored_positions_share_an_entry() {
        let s = solver(4, 5, 4);
        let mut book = ScoreBook::new(&s, 2);
        book.insert(&s.position(&[0, 1]).unwrap(), 3);
        assert_eq!(book.score(&s.position(&[4, 3]).unwrap()), Some(3));
        assert_eq!(book.score(&s.position(&[0, 2]).unwrap()), None);
    }

    #[test]
    fn bytes_round_trip_and_damage_is_refused() {
        let s = solver(4, 5, 4);
        let mut book = ScoreBook::new(&s, 2);
        book.insert(&s.start(), 0);
        book.insert(&s.position(&[2]).unwrap(), -2);
        let bytes = book.to_bytes();
        assert_eq!(ScoreBook::parse(&bytes).unwrap(), book);
        assert!(ScoreBook::parse(&bytes[..bytes.len() - 1]).is_err());
        assert!(ScoreBook::parse(b"c4sim-solver-book 1 6 7 4 8 0\n").is_err());
        assert!(ScoreBook::parse(b"").is_err());
    }
}
