//! Opening suites and move strings.
//!
//! Deterministic players repeat the same game forever; starting games from
//! different openings makes a set of games informative. A move string names
//! columns from 1 as people do (`4453`); for boards wider than 9 columns the
//! columns are separated by commas or spaces (`10,11,4`).

use super::board::{BoardConfig, BoardError};
use super::rules::{Answer, Game, Step};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Parses a move string into columns numbered from 0.
pub fn parse_move_string(s: &str, cols: usize) -> Result<Vec<usize>, BoardError> {
    let s = s.trim();
    if s.is_empty() {
        return Ok(Vec::new());
    }
    let tokens: Vec<String> = if s.contains([',', ' ', '\t']) {
        s.split([',', ' ', '\t'])
            .filter(|t| !t.is_empty())
            .map(str::to_string)
            .collect()
    } else {
        s.chars().map(|c| c.to_string()).collect()
    };
    tokens
        .iter()
        .map(|t| match t.parse::<usize>() {
            Ok(n) if n >= 1 && n <= cols => Ok(n - 1),
            _ => Err(BoardError::NotAColumn(t.clone(), cols)),
        })
        .collect()
}

/// Writes columns (from 0) as a move string (from 1).
pub fn move_string(moves: &[usize], cols: usize) -> String {
    let parts: Vec<String> = moves.iter().map(|m| (m + 1).to_string()).collect();
    if cols > 9 {
        parts.join(",")
    } else {
        parts.concat()
    }
}

/// Every legal sequence of `plies` moves that does not end the game, in
/// lexicographic order.
pub fn all_openings(cfg: BoardConfig, plies: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut prefix = Vec::new();
    fn walk(g: &Game, plies: usize, prefix: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if prefix.len() == plies {
            out.push(prefix.clone());
            return;
        }
        for c in g.board().legal_moves() {
            let mut next = g.clone();
            if let Step::Moved { .. } = next.submit(Answer::Column(c as i64)) {
                if !next.is_over() {
                    prefix.push(c);
                    walk(&next, plies, prefix, out);
                    prefix.pop();
                }
            }
        }
    }
    walk(&Game::new(cfg, 2, 1), plies, &mut prefix, &mut out);
    out
}

/// [`all_openings`] in a fixed order derived from `seed`.
pub fn shuffled_openings(cfg: BoardConfig, plies: usize, seed: u64) -> Vec<Vec<usize>> {
    let mut v = all_openings(cfg, plies);
    v.shuffle(&mut ChaCha8Rng::seed_from_u64(seed ^ 0x0be1_1a5e));
    v
}

/// The two-player game after the move string `s` (columns from 1) on
/// `cfg`, with its moves (columns from 0): refused when a column is out of
/// range or full, or when the moves already end the game.
pub fn game_after(s: &str, cfg: BoardConfig) -> Result<(Vec<usize>, Game), BoardError> {
    let moves = parse_move_string(s, cfg.cols)?;
    let game = Game::with_opening(cfg, 2, 1, &moves)?;
    Ok((moves, game))
}

/// Why an opening file was refused: the first bad line (from 1) and what
/// is wrong with its opening.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {source}")]
pub struct OpeningsError {
    pub line: usize,
    #[source]
    pub source: BoardError,
}

/// Reads an opening file: one move string a line; blank lines and lines
/// starting with `#` are skipped. Each opening is checked against the board.
pub fn parse_opening_file(text: &str, cfg: BoardConfig) -> Result<Vec<Vec<usize>>, OpeningsError> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let (moves, _) = game_after(line, cfg).map_err(|source| OpeningsError { line: n + 1, source })?;
        out.push(moves);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_of_openings() {
        let cfg = BoardConfig::default();
        assert_eq!(all_openings(cfg, 0), vec![Vec::<usize>::new()]);
        assert_eq!(all_openings(cfg, 1).len(), 7);
        assert_eq!(all_openings(cfg, 2).len(), 49);
        assert_eq!(all_openings(cfg, 3).len(), 343);
        // win 1: every first move ends the game, so there are no 1-ply openings
        assert!(all_openings(BoardConfig::new(2, 2, 1).unwrap(), 1).is_empty());
    }

    #[test]
    fn shuffle_is_seeded() {
        let cfg = BoardConfig::default();
        let a = shuffled_openings(cfg, 2, 7);
        assert_eq!(a, shuffled_openings(cfg, 2, 7));
        assert_ne!(a, shuffled_openings(cfg, 2, 8));
    }

    #[test]
    fn move_strings() {
        assert_eq!(parse_move_string("4453", 7).unwrap(), vec![3, 3, 4, 2]);
        assert_eq!(parse_move_string("", 7).unwrap(), Vec::<usize>::new());
        assert_eq!(parse_move_string("10, 2", 12).unwrap(), vec![9, 1]);
        assert!(parse_move_string("48", 7).is_err());
        assert_eq!(move_string(&[3, 3, 4, 2], 7), "4453");
        assert_eq!(move_string(&[9, 1], 12), "10,2");
    }

    #[test]
    fn opening_files() {
        let cfg = BoardConfig::default();
        let v = parse_opening_file("# comment\n44\n\n123\n", cfg).unwrap();
        assert_eq!(v, vec![vec![3, 3], vec![0, 1, 2]]);
        assert!(parse_opening_file("9\n", cfg)
            .unwrap_err()
            .to_string()
            .starts_with("line 1"));
    }
}
