//! The one error type of scenario parsing, and the "did you mean" helper.
//!
//! Every problem in a scenario is reported as `FILE:LINE:COLUMN: MESSAGE`, the
//! form editors and terminals turn into a link, so a user lands on the line
//! to fix. Messages say what is wrong *and* what is allowed, because a user
//! reading one should not need to open the documentation to fix the file.

use super::tree::Loc;
use std::path::{Path, PathBuf};

/// A problem in a scenario or player profile, with where it was written.
///
/// `line` and `column` are 1-based; when no location is known they are 1, 1
/// (the start of the file), so the `FILE:LINE:COLUMN` form always holds.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}:{line}:{column}: {message}", file.display())]
pub struct ScenarioError {
    pub file: PathBuf,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

/// A problem found after parsing that concerns a scenario as a whole (a
/// player that cannot play on its board, openings that cannot be had),
/// said after the file's name.
#[derive(Debug, thiserror::Error)]
#[error("{}: {source}", file.display())]
pub struct InScenario<E: std::error::Error + 'static> {
    pub file: PathBuf,
    #[source]
    pub source: E,
}

impl ScenarioError {
    pub fn new(file: impl Into<PathBuf>, line: usize, column: usize, message: impl Into<String>) -> Self {
        ScenarioError {
            file: file.into(),
            line: line.max(1),
            column: column.max(1),
            message: message.into(),
        }
    }

    pub(crate) fn at(file: &Path, pos: Loc, message: impl Into<String>) -> Self {
        ScenarioError::new(file, pos.line, pos.column, message)
    }
}

/// The candidate closest to `word`, if one is close enough to be a likely
/// typo. Two measures are combined because they catch different mistakes:
/// the edit distance catches swapped/missing letters (`gmes` → `games`),
/// Jaro-Winkler catches truncations that keep the prefix (`win_len` →
/// `win_length`). Comparison ignores case (`Games` → `games`).
pub(crate) fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let w = word.to_lowercase();
    let mut best: Option<(&'a str, usize, f64, u32)> = None;
    for c in candidates {
        let lc = c.to_lowercase();
        let d = strsim::damerau_levenshtein(&w, &lc);
        let jw = strsim::jaro_winkler(&w, &lc);
        let longest = w.chars().count().max(lc.chars().count());
        let close = d <= (longest / 3).max(1) || jw >= 0.88;
        if !close {
            continue;
        }
        // Last tie-break: how far apart the differing characters are, so
        // `minimax9` suggests `minimax8` rather than `minimax2`.
        let gap: u32 = w
            .chars()
            .zip(lc.chars())
            .map(|(a, b)| (a as u32).abs_diff(b as u32))
            .sum();
        let better = match best {
            None => true,
            Some((_, bd, bjw, bgap)) => d < bd || (d == bd && (jw > bjw || (jw == bjw && gap < bgap))),
        };
        if better {
            best = Some((c, d, jw, gap));
        }
    }
    best.map(|(c, _, _, _)| c)
}

/// `unknown WHAT `word`CONTEXT; did you mean `x`? allowed: a, b, c` — the
/// shared shape of every "not one of these" message.
pub(crate) fn unknown_message(what: &str, word: &str, context: &str, allowed: &[&str]) -> String {
    let mut msg = format!("unknown {what} `{word}`{context}");
    if let Some(s) = did_you_mean(word, allowed.iter().copied()) {
        msg.push_str(&format!("; did you mean `{s}`?"));
    } else {
        msg.push(';');
    }
    msg.push_str(&format!(" allowed: {}", allowed.join(", ")));
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_is_file_line_column_message() {
        let e = ScenarioError::new("s.yaml", 3, 7, "boom");
        assert_eq!(e.to_string(), "s.yaml:3:7: boom");
        assert_eq!(ScenarioError::new("s.yaml", 0, 0, "x").to_string(), "s.yaml:1:1: x");
    }

    #[test]
    fn suggestions() {
        let keys = ["games", "swap_colors"];
        assert_eq!(did_you_mean("gmes", keys), Some("games"));
        assert_eq!(did_you_mean("Games", keys), Some("games"));
        assert_eq!(did_you_mean("swap_colours", keys), Some("swap_colors"));
        assert_eq!(did_you_mean("xyz", keys), None);
        assert_eq!(
            did_you_mean("win_len", ["rows", "cols", "win_length"]),
            Some("win_length")
        );
        assert_eq!(
            did_you_mean("minmax", crate::scenario::PlayerKind::names()),
            Some("minimax")
        );
        assert_eq!(
            did_you_mean("minimax9", ["minimax2", "minimax4", "minimax8"]),
            Some("minimax8")
        );
        let m = unknown_message("key", "gmes", " in `match`", &keys);
        assert_eq!(
            m,
            "unknown key `gmes` in `match`; did you mean `games`? allowed: games, swap_colors"
        );
        let m = unknown_message("key", "zzz", " in `match`", &keys);
        assert_eq!(m, "unknown key `zzz` in `match`; allowed: games, swap_colors");
    }
}
