//! A tournament split across machines: `c4sim run FILE --shard K/N` plays
//! only its share of the games, into files of its own in the report
//! directory; `c4sim report FILE` merges every record found there and
//! writes the report the unsharded run would have written.
//!
//! Shard K of N (K from 1 to N) plays game number g (numbered from 1 in
//! schedule order) exactly when g mod N = K mod N — games K, K+N, K+2N, …
//! Its files are `games.shard-K-of-N.jsonl` and `state.shard-K-of-N.json`,
//! so no two shards (and no unsharded run, which owns `games.jsonl` and
//! `state.json`) write the same file. A shard writes no report. Every game
//! is seeded by its number alone, so the merged records are the games an
//! unsharded run plays.

use super::report;
use super::sprt::Sequential;
use super::store::GameLine;
use crate::actors::mode::ModeError;
use crate::scenario::{InScenario, Scenario};
use crate::tournament::TournamentError;
use std::collections::BTreeMap;
use std::fmt;
use std::io::Write;
use std::path::{Path, PathBuf};

/// A `--shard` value that is not `K/N` with 1 ≤ K ≤ N (`text` as given).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("--shard takes K/N with 1 ≤ K ≤ N (like 1/4), got `{text}`")]
pub struct BadShard {
    pub text: String,
}

/// Why the records in a report directory cannot be merged.
#[derive(Debug, thiserror::Error)]
pub enum ShardError {
    /// A file or the directory cannot be read.
    #[error("{}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    /// Line `line` (from 1) of a record file is not a game record.
    #[error("{}:{line}: not a game record: {source}", path.display())]
    NotARecord {
        path: PathBuf,
        line: usize,
        source: serde_json::Error,
    },
    /// A state file is not JSON.
    #[error("{}: {source}", path.display())]
    NotAState { path: PathBuf, source: serde_json::Error },
    /// Two files record game `game` differently.
    #[error("game {game} is recorded differently in {} and {}", first.display(), second.display())]
    Differs { game: u64, first: PathBuf, second: PathBuf },
    /// A state file of another tournament (`scenario`: the one it names).
    #[error(
        "{} belongs to another tournament (different players, settings or seed) than {scenario}",
        path.display()
    )]
    Another { path: PathBuf, scenario: String },
    #[error("no game records (games.jsonl or games.shard-K-of-N.jsonl) in {}", dir.display())]
    NoRecords { dir: PathBuf },
}

/// Shard K of N.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    pub k: u32,
    pub n: u32,
}

impl Shard {
    /// Reads `K/N` (1 ≤ K ≤ N).
    pub fn parse(text: &str) -> Result<Shard, BadShard> {
        let bad = || BadShard { text: text.to_string() };
        let (k, n) = text.trim().split_once('/').ok_or_else(bad)?;
        let (k, n) = (
            k.trim().parse::<u32>().map_err(|_| bad())?,
            n.trim().parse::<u32>().map_err(|_| bad())?,
        );
        if k == 0 || n == 0 || k > n {
            return Err(bad());
        }
        Ok(Shard { k, n })
    }

    /// Whether this shard plays game `game` (numbered from 1).
    pub fn plays(&self, game: u64) -> bool {
        game % self.n as u64 == self.k as u64 % self.n as u64
    }

    /// This shard's record file.
    pub fn games_file(&self) -> String {
        format!("games.shard-{}-of-{}.jsonl", self.k, self.n)
    }

    /// This shard's state file (which tournament its records belong to).
    pub fn state_file(&self) -> String {
        format!("state.shard-{}-of-{}.json", self.k, self.n)
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.k, self.n)
    }
}

/// Whether `name` is a record file: `games.jsonl` or a shard's.
fn is_records(name: &str) -> bool {
    name == "games.jsonl" || (name.starts_with("games.shard-") && name.ends_with(".jsonl"))
}

/// Whether `name` is a state file: `state.json` or a shard's.
fn is_state(name: &str) -> bool {
    name == "state.json" || (name.starts_with("state.shard-") && name.ends_with(".json"))
}

/// The record and state files in `dir`, sorted by name.
fn files(dir: &Path, keep: fn(&str) -> bool) -> Result<Vec<PathBuf>, ShardError> {
    let rd = std::fs::read_dir(dir).map_err(|source| ShardError::Read {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut v: Vec<PathBuf> = rd
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_str().is_some_and(keep))
        .map(|e| e.path())
        .collect();
    v.sort();
    Ok(v)
}

/// The games of one record file, without changing it: a half-written last
/// line (a shard still running, or killed mid-write) is left out.
pub fn read_records(path: &Path) -> Result<Vec<GameLine>, ShardError> {
    let text = std::fs::read_to_string(path).map_err(|source| ShardError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let mut out = Vec::new();
    for (n, line) in text.split_inclusive('\n').enumerate() {
        if !line.ends_with('\n') {
            break;
        }
        if line.trim().is_empty() {
            continue;
        }
        let g: GameLine = serde_json::from_str(line.trim_end()).map_err(|source| ShardError::NotARecord {
            path: path.to_path_buf(),
            line: n + 1,
            source,
        })?;
        out.push(g);
    }
    Ok(out)
}

/// Every game recorded in `dir` (all shards and `games.jsonl`), one per
/// number, sorted by number, and the files read. Two different records of
/// one game number are refused (records from different tournaments).
pub fn merge(dir: &Path) -> Result<(Vec<GameLine>, Vec<PathBuf>), ShardError> {
    let paths = files(dir, is_records)?;
    let mut by_game: BTreeMap<u64, (GameLine, &Path)> = BTreeMap::new();
    for p in &paths {
        for g in read_records(p)? {
            match by_game.get(&g.game) {
                Some((old, from)) if !same_game(old, &g) => {
                    return Err(ShardError::Differs {
                        game: g.game,
                        first: from.to_path_buf(),
                        second: p.clone(),
                    })
                }
                Some(_) => {}
                None => {
                    by_game.insert(g.game, (g, p));
                }
            }
        }
    }
    Ok((by_game.into_values().map(|(g, _)| g).collect(), paths))
}

/// Equal but for what the clock measured (duration, thinking time) and the
/// turn counts beside it, which records written before they existed lack:
/// the same game recorded by two runs, or by an older c4sim, still agrees.
fn same_game(a: &GameLine, b: &GameLine) -> bool {
    let untimed = |g: &GameLine| GameLine {
        duration_ms: 0,
        think_ms: Vec::new(),
        turns: Vec::new(),
        forfeits: vec![],
        ..g.clone()
    };
    untimed(a) == untimed(b)
}

/// Checks that every state file in `dir` belongs to this tournament.
fn check_states(dir: &Path, fingerprint: &str) -> Result<(), ShardError> {
    for p in files(dir, is_state)? {
        let text = match std::fs::read_to_string(&p) {
            Ok(text) => text,
            Err(source) => return Err(ShardError::Read { path: p, source }),
        };
        let v: serde_json::Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(source) => return Err(ShardError::NotAState { path: p, source }),
        };
        if v["fingerprint"].as_str() != Some(fingerprint) {
            let scenario = v["scenario"].as_str().unwrap_or("this scenario").to_string();
            return Err(ShardError::Another { path: p, scenario });
        }
    }
    Ok(())
}

/// `c4sim report FILE`: the report of a tournament from every game
/// recorded in its report directory, written as the run writes it.
/// Returns the exit code.
pub fn report_command(sc: &Scenario, json: bool) -> Result<(), ModeError> {
    let t = sc.tournament.clone().unwrap_or_default();
    let rs = sc.report.clone().unwrap_or_default();
    let dir = rs.dir_for(&sc.path);
    let openings = super::schedule::load_openings(&t.openings, sc.board, sc.seed, &sc.path).map_err(|e| {
        ModeError::usage(InScenario {
            file: sc.path.clone(),
            source: TournamentError::Openings(e),
        })
    })?;
    let (pairs, per) = super::schedule::pairings(t.schedule, sc.players.len(), t.games_per_pair);
    let total = super::schedule::plan(&pairs, per, &openings).len() as u64;
    let usage = |e: ShardError| ModeError::usage(TournamentError::Records(e));
    check_states(&dir, &super::fingerprint(sc, &t, &openings)).map_err(usage)?;
    let (mut games, paths) = merge(&dir).map_err(usage)?;
    if paths.is_empty() {
        return Err(usage(ShardError::NoRecords { dir }));
    }
    games.retain(|g| g.game >= 1 && g.game <= total);
    let names: Vec<String> = sc.players.iter().map(|p| p.name.clone()).collect();
    let anchor = t
        .anchor
        .as_ref()
        .and_then(|(n, e)| names.iter().position(|p| p == n).map(|i| (i, *e)));
    let sprt = t.sprt.as_ref().map(|s| {
        let mut q = Sequential::new(s, &names);
        for g in &games {
            q.add(g);
        }
        q
    });
    if let Some(q) = &sprt {
        games.retain(|g| q.counts_game(g.game));
    }
    let mut rep = report::build(&sc.name, t.schedule.as_str(), &names, &games, total, anchor);
    rep.sprt = sprt.map(|q| q.summary().clone());
    super::write_reports(&dir, &rep, &games, &rs).map_err(|source| {
        ModeError::failed(TournamentError::WriteReport {
            dir: dir.clone(),
            source,
        })
    })?;
    let read: Vec<String> = paths
        .iter()
        .filter_map(|p| p.file_name().map(|f| f.to_string_lossy().into_owned()))
        .collect();
    if json {
        crate::events::emit(&crate::events::Event::ReportSummary {
            players: serde_json::to_value(&rep.standings).unwrap_or_default(),
            sprt: rep.sprt.as_ref().map(|s| s.json()),
            games: rep.finished_games,
            total,
            records: read,
            report: dir,
        });
    } else {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(
            out,
            "{}\nMerged {} of {total} games from {}.\nReport written to {}",
            report::markdown(&rep),
            rep.finished_games,
            read.join(", "),
            dir.display()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_split_the_games_exactly_once() {
        assert_eq!(Shard::parse("2/3"), Ok(Shard { k: 2, n: 3 }));
        for bad in ["0/3", "4/3", "3", "a/b", "1/0", ""] {
            assert!(Shard::parse(bad).is_err(), "{bad}");
        }
        let n = 3;
        for g in 1..=100u64 {
            let owners: Vec<u32> = (1..=n).filter(|&k| Shard { k, n }.plays(g)).collect();
            assert_eq!(owners.len(), 1, "game {g}");
        }
        let one = Shard { k: 1, n: 3 };
        assert!(one.plays(1) && one.plays(4) && !one.plays(3));
        assert!(Shard { k: 3, n: 3 }.plays(3));
        assert!(Shard { k: 1, n: 1 }.plays(7));
        assert_eq!(one.games_file(), "games.shard-1-of-3.jsonl");
        assert!(is_records(&one.games_file()) && is_state(&one.state_file()));
        assert!(!is_records("games.jsonl.tmp") && !is_state("state.json.tmp"));
    }

    #[test]
    fn merge_reads_every_record_file_and_skips_a_half_line() {
        let dir = tempfile::tempdir().unwrap();
        let line = |g: u64, ms: u64| {
            format!(
                "{{\"game\":{g},\"result\":\"draw\",\"winner\":null,\"reason\":\"TIE\",\"moves\":[],\"players\":[\"A\",\"B\"],\"opening\":[],\"duration_ms\":{ms},\"seed\":1}}\n"
            )
        };
        std::fs::write(
            dir.path().join("games.shard-1-of-2.jsonl"),
            line(1, 5) + &line(3, 5) + "{\"game\":5,",
        )
        .unwrap();
        std::fs::write(dir.path().join("games.shard-2-of-2.jsonl"), line(2, 5)).unwrap();
        std::fs::write(dir.path().join("games.jsonl"), line(1, 9)).unwrap();
        let (games, paths) = merge(dir.path()).unwrap();
        assert_eq!(games.iter().map(|g| g.game).collect::<Vec<_>>(), vec![1, 2, 3]);
        assert_eq!(paths.len(), 3);
        std::fs::write(dir.path().join("games.jsonl"), line(2, 9).replace("TIE", "WIN")).unwrap();
        assert!(merge(dir.path()).unwrap_err().to_string().contains("game 2"));
    }
}
