//! A tournament's state on disk: `games.jsonl` (one finished game a line,
//! appended as each game ends) and `state.json` (which tournament this
//! directory belongs to). A kill at any moment loses at most the games in
//! progress: a half-written last line is dropped on the next start, and
//! every other file is replaced atomically (temp file + rename).

use crate::game::EndReason;
use crate::record::GameRecord;
use serde::{Deserialize, Serialize};
use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

/// One game as `games.jsonl` stores it: the `game_over` fields of `--json`
/// plus players in seat order, opening, duration and seed, and each seat's
/// thinking time and turns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameLine {
    pub game: u64,
    pub result: String,
    pub winner: Option<String>,
    pub reason: EndReason,
    pub moves: Vec<usize>,
    pub players: Vec<String>,
    pub opening: Vec<usize>,
    pub duration_ms: u64,
    pub seed: u64,
    /// [`GameRecord::think_ms`]. Defaults to empty so a `games.jsonl`
    /// written before these fields existed still resumes.
    #[serde(default)]
    pub think_ms: Vec<u64>,
    /// [`GameRecord::turns`]; empty in older files, as `think_ms`.
    #[serde(default)]
    pub turns: Vec<u32>,
    /// [`GameRecord::forfeits`]; absent when nobody forfeited.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forfeits: Vec<crate::record::Forfeit>,
}

impl From<&GameRecord> for GameLine {
    fn from(r: &GameRecord) -> Self {
        GameLine {
            game: r.game,
            result: r.result_word().to_string(),
            winner: r.winner_name().map(str::to_string),
            reason: r.outcome.reason,
            moves: r.moves.clone(),
            players: r.players.clone(),
            opening: r.opening.clone(),
            duration_ms: r.duration_ms,
            seed: r.seed,
            think_ms: r.think_ms.clone(),
            turns: r.turns.clone(),
            forfeits: r.forfeits.clone(),
        }
    }
}

impl GameLine {
    /// Seat 0's score: 1 win, 0.5 draw, 0 loss.
    pub fn first_seat_score(&self) -> f64 {
        match &self.winner {
            None => 0.5,
            Some(w) if *w == self.players[0] => 1.0,
            Some(_) => 0.0,
        }
    }
}

/// Why a tournament's directory cannot be opened or resumed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: std::io::Error },
    #[error("{}: {why}", path.display())]
    State { path: PathBuf, why: String },
    #[error(
        "{} holds another tournament (from {scenario}: different players, settings or seed); run with --fresh to start over, or set report.dir",
        dir.display()
    )]
    Another { dir: PathBuf, scenario: String },
    #[error("{}:{line}: not a game record: {why}", path.display())]
    Line { path: PathBuf, line: usize, why: String },
}

#[derive(Serialize, Deserialize, PartialEq, Debug)]
struct State {
    fingerprint: String,
    total_games: u64,
    scenario: String,
}

use crate::util::write_atomic;

/// The open record file of a tournament.
#[derive(Debug)]
pub struct Store {
    pub dir: PathBuf,
    file: File,
}

impl Store {
    pub fn games_path(dir: &Path) -> PathBuf {
        dir.join("games.jsonl")
    }

    /// Opens (or starts) the tournament in `dir` and returns the games
    /// already finished. Refuses a directory that holds another tournament.
    pub fn open(
        dir: &Path,
        fingerprint: &str,
        total: u64,
        scenario: &Path,
        fresh: bool,
    ) -> Result<(Store, Vec<GameLine>), StoreError> {
        Self::open_as(dir, ("games.jsonl", "state.json"), fingerprint, total, scenario, fresh)
    }

    /// [`Store::open`] with other names for the record and state files
    /// (a shard's own: see `shard.rs`); `--fresh` removes only these two.
    pub fn open_as(
        dir: &Path,
        (games_name, state_name): (&str, &str),
        fingerprint: &str,
        total: u64,
        scenario: &Path,
        fresh: bool,
    ) -> Result<(Store, Vec<GameLine>), StoreError> {
        let ctx = |source| StoreError::Io {
            path: dir.to_path_buf(),
            source,
        };
        fs::create_dir_all(dir).map_err(ctx)?;
        let games = dir.join(games_name);
        let state_path = dir.join(state_name);
        if fresh {
            for p in [&games, &state_path] {
                if p.exists() {
                    fs::remove_file(p).map_err(ctx)?;
                }
            }
        }
        let state = State {
            fingerprint: fingerprint.to_string(),
            total_games: total,
            scenario: scenario.display().to_string(),
        };
        if let Ok(text) = fs::read_to_string(&state_path) {
            let old: State = serde_json::from_str(&text).map_err(|e| StoreError::State {
                path: state_path.clone(),
                why: e.to_string(),
            })?;
            if old.fingerprint != state.fingerprint {
                return Err(StoreError::Another {
                    dir: dir.to_path_buf(),
                    scenario: old.scenario,
                });
            }
        } else {
            let json = serde_json::to_vec_pretty(&state).expect("a state serializes");
            write_atomic(&state_path, &json).map_err(ctx)?;
        }
        let done = Self::read_games(&games)?;
        let file = OpenOptions::new().create(true).append(true).open(&games).map_err(ctx)?;
        Ok((
            Store {
                dir: dir.to_path_buf(),
                file,
            },
            done,
        ))
    }

    /// Reads finished games; a half-written last line (a kill mid-write) is
    /// dropped and the file rewritten without it.
    fn read_games(path: &Path) -> Result<Vec<GameLine>, StoreError> {
        let Ok(text) = fs::read_to_string(path) else {
            return Ok(Vec::new());
        };
        let mut out: Vec<GameLine> = Vec::new();
        let mut good_len = 0;
        for (n, line) in text.split_inclusive('\n').enumerate() {
            let complete = line.ends_with('\n');
            match serde_json::from_str::<GameLine>(line.trim_end()) {
                Ok(g) if complete => {
                    if !out.iter().any(|o| o.game == g.game) {
                        out.push(g);
                    }
                    good_len += line.len();
                }
                _ if !complete => break, // the interrupted last write
                Err(e) => {
                    return Err(StoreError::Line {
                        path: path.to_path_buf(),
                        line: n + 1,
                        why: e.to_string(),
                    })
                }
                Ok(_) => unreachable!(),
            }
        }
        if good_len < text.len() {
            write_atomic(path, &text.as_bytes()[..good_len]).map_err(|source| StoreError::Io {
                path: path.to_path_buf(),
                source,
            })?;
        }
        Ok(out)
    }

    /// Appends one finished game (one `write` of one line).
    pub fn append(&mut self, g: &GameLine) -> std::io::Result<()> {
        let mut line = serde_json::to_string(g).map_err(std::io::Error::other)?;
        line.push('\n');
        self.file.write_all(line.as_bytes())?;
        self.file.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(game: u64) -> GameLine {
        GameLine {
            game,
            result: "win".into(),
            winner: Some("A".into()),
            reason: EndReason::Win,
            moves: vec![0, 1],
            players: vec!["A".into(), "B".into()],
            opening: vec![],
            duration_ms: 1,
            seed: 9,
            think_ms: vec![],
            turns: vec![],
            forfeits: vec![],
        }
    }

    #[test]
    fn resume_drops_a_half_written_line_and_refuses_another_tournament() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("r");
        let (mut s, done) = Store::open(&d, "fp1", 3, Path::new("x.yaml"), false).unwrap();
        assert!(done.is_empty());
        s.append(&line(1)).unwrap();
        s.append(&line(2)).unwrap();
        drop(s);
        let mut f = OpenOptions::new().append(true).open(Store::games_path(&d)).unwrap();
        f.write_all(b"{\"game\":3,\"res").unwrap();
        let (_, done) = Store::open(&d, "fp1", 3, Path::new("x.yaml"), false).unwrap();
        assert_eq!(done.iter().map(|g| g.game).collect::<Vec<_>>(), vec![1, 2]);
        assert!(fs::read_to_string(Store::games_path(&d)).unwrap().ends_with("}\n"));
        let e = Store::open(&d, "fp2", 3, Path::new("y.yaml"), false).unwrap_err();
        assert!(matches!(e, StoreError::Another { .. }), "{e}");
        assert!(e.to_string().contains("--fresh"));
        let (_, done) = Store::open(&d, "fp2", 3, Path::new("y.yaml"), true).unwrap();
        assert!(done.is_empty());
    }

    #[test]
    fn a_line_written_before_thinking_time_was_recorded_still_loads() {
        let old = r#"{"game":1,"result":"win","winner":"Solver","reason":"WIN","moves":[0,0,3],"players":["Solver","Minimax8"],"opening":[0,0],"duration_ms":72070,"seed":6092491164297022655}"#;
        let g: GameLine = serde_json::from_str(old).unwrap();
        assert_eq!((g.game, g.duration_ms), (1, 72070));
        assert!(g.think_ms.is_empty() && g.turns.is_empty());
        // And a resume reads it among new lines.
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path().join("r");
        std::fs::create_dir_all(&d).unwrap();
        let new = serde_json::to_string(&GameLine {
            think_ms: vec![4, 5],
            turns: vec![1, 0],
            ..line(2)
        })
        .unwrap();
        fs::write(Store::games_path(&d), format!("{old}\n{new}\n")).unwrap();
        let (_, done) = Store::open(&d, "fp", 2, Path::new("x.yaml"), false).unwrap();
        assert_eq!(done.len(), 2);
        assert_eq!(
            (done[1].think_ms.clone(), done[1].turns.clone()),
            (vec![4, 5], vec![1, 0])
        );
    }
}
