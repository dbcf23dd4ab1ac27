//! Solver-labelled test sets and how a move is judged against them: the
//! pure core of `c4sim bench accuracy`, kept here (floor 2) so that both the
//! benchmark and training's `eval.accuracy` judge moves the same way.
//!
//! No I/O: the caller reads the sets file and hands its text to
//! [`parse_sets`]. How the sets are made (seeded lines, terciles by solver
//! nodes) is told in `src/bench/accuracy.rs`, which makes them.
//!
//! # A mistake
//! A move is a W/D/L mistake when its class (win > draw > loss, the sign of
//! its exact score) is worse than the best column's; it is exact-best when
//! its score equals the best score (fastest win, slowest loss). Rates come
//! with the binomial standard error √(p(1−p)/n).

use crate::game::BoardConfig;
use serde::{Deserialize, Serialize};

/// The committed sets file.
pub const DEFAULT_SETS: &str = "benches/accuracy/sets-v1.jsonl";
/// What the header's `format` says.
pub const FORMAT: &str = "c4sim-accuracy-sets";
/// The file format's version.
pub const VERSION: u64 = 1;
/// Plies of the begin group. Plies 0–7 are left out: without an opening
/// book the solver needs up to minutes a position there (a trial from ply 4
/// took 225 s for 15 positions), which would make every begin-hard position
/// a ply-4 to 6 one.
pub const BEGIN: (usize, usize) = (8, 14);
pub const MIDDLE: (usize, usize) = (15, 26);
pub const END: (usize, usize) = (27, 38);
/// The groups by plies, in order.
pub const GROUPS: [(&str, (usize, usize)); 3] = [("begin", BEGIN), ("middle", MIDDLE), ("end", END)];
/// Each group's split by the solver's nodes, in order.
pub const LEVELS: [&str; 3] = ["easy", "medium", "hard"];
/// Names of the totals.
pub const BEGIN_MIDDLE: &str = "begin+middle";
pub const ALL: &str = "all";

/// Why a sets file or a choice of sets cannot be read. Converts to the
/// message the shells print, so `?` works where they return a message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SetsError {
    #[error("{0}: empty")]
    Empty(String),
    #[error("{origin}:1: header: {why}")]
    Header { origin: String, why: String },
    #[error("{origin}:1: expected format {FORMAT} version {VERSION}, got {format} {version}")]
    Format {
        origin: String,
        format: String,
        version: String,
    },
    #[error("{origin}:{line}: {why}")]
    Line { origin: String, line: usize, why: String },
    #[error("no set `{part}`: give sets, groups (begin, middle, end) or `all`, joined by `+`; sets: {names}")]
    NoSet { part: String, names: String },
}

/// Every set's name, in order: begin-easy … end-hard.
pub fn set_names() -> Vec<String> {
    GROUPS
        .iter()
        .flat_map(|(g, _)| LEVELS.iter().map(move |l| format!("{g}-{l}")))
        .collect()
}

/// The 6×7 board the sets are on.
pub fn board() -> BoardConfig {
    BoardConfig::new(6, 7, 4).expect("6x7x4 is a board")
}

/// One labelled position of the sets file.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct Labelled {
    pub set: String,
    /// Columns from 1.
    pub moves: String,
    pub ply: usize,
    /// Solver nodes to label it from an empty table.
    pub nodes: u64,
    /// Every column's exact score for the side to move; `None` for a full column.
    pub scores: Vec<Option<i32>>,
}

/// The sets file: its header and positions.
#[derive(Clone, Debug)]
pub struct Sets {
    pub header: serde_json::Value,
    pub positions: Vec<Labelled>,
}

/// Parses the text of a sets file, checking its header; errors name
/// `origin` (the file) and the line.
pub fn parse_sets(text: &str, origin: &str) -> Result<Sets, SetsError> {
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
    let (_, first) = lines.next().ok_or_else(|| SetsError::Empty(origin.to_string()))?;
    let header: serde_json::Value = serde_json::from_str(first).map_err(|e| SetsError::Header {
        origin: origin.to_string(),
        why: e.to_string(),
    })?;
    if header["format"] != FORMAT || header["version"] != VERSION {
        return Err(SetsError::Format {
            origin: origin.to_string(),
            format: header["format"].to_string(),
            version: header["version"].to_string(),
        });
    }
    let mut positions = Vec::new();
    for (i, line) in lines {
        let p: Labelled = serde_json::from_str(line).map_err(|e| SetsError::Line {
            origin: origin.to_string(),
            line: i + 1,
            why: e.to_string(),
        })?;
        positions.push(p);
    }
    Ok(Sets { header, positions })
}

/// How one move fares against the exact scores.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// Its win/draw/loss class is worse than the best column's (an illegal
    /// or unlabelled move counts as one).
    pub mistake: bool,
    /// Its score is the best score.
    pub exact_best: bool,
}

/// Judges `col` (from 0) against every column's exact score.
pub fn judge(scores: &[Option<i32>], col: usize) -> Verdict {
    let best = scores.iter().flatten().copied().max();
    match (best, scores.get(col).copied().flatten()) {
        (Some(best), Some(s)) => Verdict {
            mistake: s.signum() < best.signum(),
            exact_best: s == best,
        },
        _ => Verdict {
            mistake: true,
            exact_best: false,
        },
    }
}

/// Whether the columns' win/draw/loss classes differ, so that a W/D/L
/// mistake can be made.
pub fn has_choice(scores: &[Option<i32>]) -> bool {
    let mut classes = scores.iter().flatten().map(|s| s.signum());
    let first = classes.next();
    classes.any(|c| Some(c) != first)
}

/// One player's tally on one set.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Tally {
    pub n: usize,
    pub mistakes: usize,
    pub exact_best: usize,
    pub seconds: f64,
}

impl Tally {
    /// Counts one judged move that took `seconds`.
    pub fn record(&mut self, v: Verdict, seconds: f64) {
        self.n += 1;
        self.mistakes += v.mistake as usize;
        self.exact_best += v.exact_best as usize;
        self.seconds += seconds;
    }
    pub fn add(&mut self, o: &Tally) {
        self.n += o.n;
        self.mistakes += o.mistakes;
        self.exact_best += o.exact_best;
        self.seconds += o.seconds;
    }
    pub fn mistake_rate(&self) -> f64 {
        rate(self.mistakes, self.n)
    }
    pub fn exact_rate(&self) -> f64 {
        rate(self.exact_best, self.n)
    }
    /// Binomial standard error of the mistake rate.
    pub fn mistake_se(&self) -> f64 {
        se(self.mistake_rate(), self.n)
    }
    pub fn exact_se(&self) -> f64 {
        se(self.exact_rate(), self.n)
    }
    pub fn ms_per_move(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            1000.0 * self.seconds / self.n as f64
        }
    }
}

fn rate(k: usize, n: usize) -> f64 {
    if n == 0 {
        0.0
    } else {
        k as f64 / n as f64
    }
}

fn se(p: f64, n: usize) -> f64 {
    if n == 0 {
        0.0
    } else {
        (p * (1.0 - p) / n as f64).sqrt()
    }
}

/// Tallies verdicts (one per position, with its seconds) by set, in
/// `set_order`, then the totals [`BEGIN_MIDDLE`] and [`ALL`]. Positions of
/// a set not in `set_order` count in neither.
pub fn tally_by_set(
    positions: &[&Labelled],
    verdicts: &[(Verdict, f64)],
    set_order: &[String],
) -> Vec<(String, Tally)> {
    let mut tallies: Vec<(String, Tally)> = set_order.iter().map(|s| (s.clone(), Tally::default())).collect();
    for (p, &(v, seconds)) in positions.iter().zip(verdicts) {
        if let Some((_, tally)) = tallies.iter_mut().find(|(s, _)| *s == p.set) {
            tally.record(v, seconds);
        }
    }
    let mut bm = Tally::default();
    let mut all = Tally::default();
    for (s, t) in &tallies {
        if s.starts_with("begin-") || s.starts_with("middle-") {
            bm.add(t);
        }
        all.add(t);
    }
    tallies.push((BEGIN_MIDDLE.into(), bm));
    tallies.push((ALL.into(), all));
    tallies
}

/// Reads a choice of sets: names joined by `+`, each a set (`middle-hard`),
/// a group (`begin`: its three sets) or `all`; so the benchmark's total
/// `begin+middle` reads as the six begin and middle sets. Returns the set
/// names in file order, each once.
pub fn parse_choice(text: &str) -> Result<Vec<String>, SetsError> {
    let names = set_names();
    let mut chosen = vec![false; names.len()];
    for part in text.split('+').map(str::trim) {
        let hits: Vec<usize> = (0..names.len())
            .filter(|&i| {
                part == ALL || names[i] == part || names[i].strip_prefix(part).is_some_and(|r| r.starts_with('-'))
            })
            .collect();
        if part.is_empty() || hits.is_empty() {
            return Err(SetsError::NoSet {
                part: part.to_string(),
                names: names.join(", "),
            });
        }
        for i in hits {
            chosen[i] = true;
        }
    }
    Ok(names
        .into_iter()
        .zip(chosen)
        .filter_map(|(n, c)| c.then_some(n))
        .collect())
}

/// A fixed subset of `n` positions of the sets `order`: shared out evenly
/// between the sets (the first sets get one more when `n` does not divide),
/// and within a set spread evenly over the file's order, which runs from
/// the fewest solver nodes to the most, so a small subset still spans easy
/// to hard. No randomness: every call (every training iteration, and
/// `bench accuracy --positions`) picks the same positions. Grouped by set,
/// in `order`.
pub fn subset<'a>(sets: &'a Sets, order: &[String], n: usize) -> Vec<&'a Labelled> {
    let k = order.len().max(1);
    let mut chosen = Vec::new();
    for (i, name) in order.iter().enumerate() {
        let of_set: Vec<&Labelled> = sets.positions.iter().filter(|p| &p.set == name).collect();
        let want = (n / k + usize::from(i < n % k)).min(of_set.len());
        chosen.extend((0..want).map(|j| of_set[j * of_set.len() / want]));
    }
    chosen
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::Solver;

    fn verdict(mistake: bool, exact_best: bool) -> Verdict {
        Verdict { mistake, exact_best }
    }

    #[test]
    fn judge_classes_and_exact_best() {
        // Column 2 wins fastest, column 3 wins slower, 1 draws, 0 loses, 4 full.
        let s = [Some(-3), Some(0), Some(5), Some(2), None, Some(-1), Some(-8)];
        assert_eq!(judge(&s, 2), verdict(false, true));
        assert_eq!(judge(&s, 3), verdict(false, false));
        assert_eq!(judge(&s, 1), verdict(true, false));
        assert_eq!(judge(&s, 0), verdict(true, false));
        // A full column or one off the board is a mistake.
        assert!(judge(&s, 4).mistake);
        assert!(judge(&s, usize::MAX).mistake);
        // When the best is a draw, a loss is a mistake and another draw is not.
        let d = [Some(0), Some(-2), Some(0)];
        assert_eq!(judge(&d, 2), verdict(false, true));
        assert!(judge(&d, 1).mistake);
        // When every move loses, none is a W/D/L mistake; the slowest loss is exact.
        let l = [Some(-5), Some(-2)];
        assert_eq!(judge(&l, 0), verdict(false, false));
        assert_eq!(judge(&l, 1), verdict(false, true));
        assert!(has_choice(&s) && has_choice(&d) && !has_choice(&l));
        assert!(!has_choice(&[None, Some(3), Some(1)]));
    }

    #[test]
    fn judge_on_a_solved_position() {
        // Moves 121212 (columns from 1): each side has three in its column
        // and the first player is to move. Column 1 wins at once; columns
        // 3–7 let the second player win in column 2 at once. (Column 2, the
        // block, needs a deep search and is left unlabelled here.)
        let mut solver = Solver::new(board(), 16).unwrap();
        let pos = solver.position(&[0, 1, 0, 1, 0, 1]).unwrap();
        let mut scores = vec![None; 7];
        for c in [0, 2, 3, 4, 5, 6] {
            scores[c] = Some(if solver.is_winning_move(&pos, c) {
                (42 + 1 - 7) / 2
            } else {
                -solver.solve(&solver.play(&pos, c).unwrap(), None).unwrap()
            });
        }
        assert_eq!(scores[0], Some(18), "a win with one's 4th piece scores 22 - 4");
        assert_eq!(judge(&scores, 0), verdict(false, true));
        for c in 2..7 {
            assert!(scores[c] < Some(0), "column {c}: the opponent wins with its next move");
            assert_eq!(judge(&scores, c), verdict(true, false));
        }
    }

    #[test]
    fn tallies_and_standard_error() {
        let mut t = Tally {
            n: 99,
            mistakes: 9,
            exact_best: 50,
            seconds: 0.99,
        };
        t.record(verdict(true, false), 0.01);
        assert_eq!((t.n, t.mistakes, t.exact_best), (100, 10, 50));
        assert!((t.mistake_rate() - 0.1).abs() < 1e-12);
        assert!((t.mistake_se() - 0.03).abs() < 1e-12);
        assert!((t.ms_per_move() - 10.0).abs() < 1e-12);
        let mut sum = Tally::default();
        sum.add(&t);
        sum.add(&t);
        assert_eq!((sum.n, sum.mistakes), (200, 20));
        assert_eq!(Tally::default().mistake_se(), 0.0);
    }

    #[test]
    fn tallies_by_set_with_totals() {
        let p = |set: &str| Labelled {
            set: set.into(),
            moves: String::new(),
            ply: 0,
            nodes: 0,
            scores: vec![],
        };
        let ps = [p("begin-easy"), p("end-hard"), p("begin-easy"), p("middle-hard")];
        let refs: Vec<&Labelled> = ps.iter().collect();
        let v = [
            (verdict(true, false), 1.0),
            (verdict(true, false), 1.0),
            (verdict(false, true), 1.0),
            (verdict(false, false), 1.0),
        ];
        let order = parse_choice("begin-easy+middle-hard+end-hard").unwrap();
        let t = tally_by_set(&refs, &v, &order);
        let names: Vec<&str> = t.iter().map(|(s, _)| s.as_str()).collect();
        assert_eq!(names, ["begin-easy", "middle-hard", "end-hard", BEGIN_MIDDLE, ALL]);
        let counts: Vec<(usize, usize, usize)> = t.iter().map(|(_, t)| (t.n, t.mistakes, t.exact_best)).collect();
        assert_eq!(counts, [(2, 1, 1), (1, 0, 0), (1, 1, 0), (3, 1, 1), (4, 2, 1)]);
        // A set left out of the order counts nowhere.
        let t = tally_by_set(&refs, &v, &order[..1]);
        assert_eq!(t.last().unwrap().1.n, 2);
    }

    #[test]
    fn choices_of_sets() {
        let bm = parse_choice("begin+middle").unwrap();
        assert_eq!(bm.len(), 6);
        assert_eq!(bm[0], "begin-easy");
        assert_eq!(bm[5], "middle-hard");
        assert_eq!(parse_choice("all").unwrap(), set_names());
        // File order, each once, whatever order they were named in.
        assert_eq!(
            parse_choice("end-hard + middle-hard+end").unwrap(),
            ["middle-hard", "end-easy", "end-medium", "end-hard"]
        );
        for bad in ["", "beginning", "begin-", "middle+", "hard"] {
            let e = parse_choice(bad).unwrap_err().to_string();
            assert!(e.contains("no set") && e.contains("begin-easy"), "{bad}: {e}");
        }
    }

    #[test]
    fn parses_sets_and_picks_a_fixed_spread_subset() {
        let mut text = format!("{{\"format\": \"{FORMAT}\", \"version\": {VERSION}}}\n");
        for set in ["begin-easy", "begin-medium"] {
            for i in 0..10 {
                text += &format!(
                    "{{\"set\":\"{set}\",\"moves\":\"44\",\"ply\":2,\"nodes\":{i},\"scores\":[0,0,0,1,0,0,0]}}\n"
                );
            }
        }
        let sets = parse_sets(&text, "x.jsonl").unwrap();
        assert_eq!(sets.positions.len(), 20);
        let order = parse_choice("begin").unwrap();
        let picked = subset(&sets, &order, 5);
        let got: Vec<(&str, u64)> = picked.iter().map(|p| (p.set.as_str(), p.nodes)).collect();
        // Shares 2, 2 and 1 (begin-hard holds none here), spread over each set's 10.
        assert_eq!(
            got,
            [
                ("begin-easy", 0),
                ("begin-easy", 5),
                ("begin-medium", 0),
                ("begin-medium", 5)
            ]
        );
        let three: Vec<u64> = subset(&sets, &order[..1], 3).iter().map(|p| p.nodes).collect();
        assert_eq!(three, [0, 3, 6]);
        assert_eq!(subset(&sets, &order, 100).len(), 20, "never more than a set holds");
        assert!(parse_sets("{\"format\": \"other\"}\n", "y")
            .unwrap_err()
            .to_string()
            .starts_with("y:1:"));
        let e = parse_sets(&format!("{}\n{{}}\n", text.lines().next().unwrap()), "z")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("z:2:"), "{e}");
    }
}
