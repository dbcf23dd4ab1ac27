//! External programs speaking docs/external-player.md over stdin/stdout.
//!
//! Every read is bounded (line length and bytes per answer), so a bot that
//! floods its output costs an illegal move, never memory. The child runs in
//! its own process group with a parent-death signal, and is killed with its
//! group when the run ends or the game is abandoned: no process outlives
//! the run.

use super::keys::{optional_path_key, Key, KeyError, KeyType, KeyValue, KindKeys};
use super::TurnView;
use crate::game::colour_name;
use crate::game::{Answer, Board};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// Longest line read from a bot.
pub const MAX_LINE: usize = 64 * 1024;
/// Most bytes read for one answer before it is called malformed.
pub const MAX_ANSWER_BYTES: usize = 1024 * 1024;

/// Process groups of every bot started by this process, so an interrupted
/// run can still kill them all.
static CHILD_GROUPS: std::sync::Mutex<Vec<i32>> = std::sync::Mutex::new(Vec::new());

/// Kills every bot program still running (called on exit and on Ctrl-C).
pub fn kill_all_children() {
    let groups = std::mem::take(&mut *CHILD_GROUPS.lock().unwrap_or_else(|e| e.into_inner()));
    for g in groups {
        // SAFETY: plain syscall on a process group we created.
        unsafe {
            libc::kill(-g, libc::SIGKILL);
        }
    }
}

fn forget_group(pid: i32) {
    CHILD_GROUPS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .retain(|&g| g != pid);
}

/// An `external` player's keys.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ExternalSpec {
    /// The program and its arguments (never empty once parsed: see
    /// [`ExternalSpec::complete`]).
    pub command: Vec<String>,
    /// Working directory.
    pub cwd: Option<PathBuf>,
    /// Extra environment variables.
    pub env: BTreeMap<String, String>,
}

impl KindKeys for ExternalSpec {
    const KEYS: &'static [Key<Self>] = &[
        Key {
            name: "command",
            ty: KeyType::Command,
            set: |s, v| s.command = v.command(),
            get: |s| Some(KeyValue::Command(s.command.clone())),
        },
        optional_path_key!("cwd", cwd),
        Key {
            name: "env",
            ty: KeyType::Env,
            set: |s, v| s.env = v.env(),
            get: |s| (!s.env.is_empty()).then(|| KeyValue::Env(s.env.clone())),
        },
    ];

    /// Checks that the entry gave a command (completing "player 2 …").
    fn complete(&self) -> Result<(), KeyError> {
        if self.command.is_empty() {
            Err(KeyError::Missing {
                kind: "external",
                key: "command",
                hint: "give the program and its arguments as a list, like `command: [python3, bot.py]`",
            })
        } else {
            Ok(())
        }
    }
}

impl ExternalSpec {
    /// How its program is started.
    pub fn launch(&self) -> Launch {
        Launch {
            command: self.command.clone(),
            cwd: self.cwd.clone(),
            env: self.env.clone().into_iter().collect(),
        }
    }
}

/// How a bot's program is started.
#[derive(Clone, Debug)]
pub struct Launch {
    pub command: Vec<String>,
    pub cwd: Option<PathBuf>,
    pub env: Vec<(String, String)>,
}

/// The outcome of asking the program for a move.
#[derive(Debug, PartialEq, Eq)]
pub enum ExternalReply {
    Answer(Answer),
    /// The program exited, crashed or closed its output.
    Gone(String),
}

/// One line read with a bound.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    Text(String),
    TooLong,
    Eof,
}

/// Reads one line of at most `max` bytes; a longer line is consumed up to
/// its end and reported as [`Line::TooLong`] without being stored.
pub async fn read_line_bounded<R: AsyncBufRead + Unpin>(
    r: &mut R,
    max: usize,
    budget: &mut usize,
) -> std::io::Result<Line> {
    let mut buf: Vec<u8> = Vec::new();
    let mut too_long = false;
    loop {
        let chunk = r.fill_buf().await?;
        if chunk.is_empty() {
            return Ok(if buf.is_empty() && !too_long {
                Line::Eof
            } else if too_long {
                Line::TooLong
            } else {
                Line::Text(String::from_utf8_lossy(&buf).into_owned())
            });
        }
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        if !too_long {
            if buf.len() + take > max + 1 {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(&chunk[..take]);
            }
        }
        r.consume(take);
        *budget = budget.saturating_sub(take);
        if done {
            if too_long {
                return Ok(Line::TooLong);
            }
            while matches!(buf.last(), Some(b'\n' | b'\r')) {
                buf.pop();
            }
            return Ok(Line::Text(String::from_utf8_lossy(&buf).into_owned()));
        }
        if *budget == 0 {
            return Ok(Line::TooLong);
        }
    }
}

/// The request block for one turn (docs/external-player.md).
pub fn request_block(v: &TurnView) -> String {
    let mut s = String::new();
    if let Some(e) = &v.error {
        s.push_str(&format!("ERROR: {}\n", e.describe(1)));
    }
    let others: Vec<String> = (0..v.seats)
        .filter(|&x| x != v.seat)
        .map(|x| v.letters[x].to_string())
        .collect();
    let last = match v.last_move() {
        None => "Game start".to_string(),
        Some((seat, col)) => format!("{} played column {}", colour_name(seat), col + 1),
    };
    s.push_str(&format!(
        "BOARD: {}\nROWS: {}\nCOLS: {}\nWIN_LENGTH: {}\nTURN: {}\nYOUR_PIECE: {}\nOPPONENT_PIECE: {}\nLAST_MOVE: {}\n\n",
        v.board.to_board_string(&v.letters),
        v.board.rows(),
        v.board.cols(),
        v.board.config().win_length,
        v.moves.len(),
        v.letters[v.seat],
        others.join(","),
        last
    ));
    s
}

/// A `BOARD:` line that is not the board after the move (an illegal answer).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum BoardLineError {
    #[error("BOARD has {got} characters, expected {expected}")]
    Length { got: usize, expected: usize },
    /// The first cell that differs, row and column from 1 (rows from the top).
    #[error("BOARD is wrong at row {row} from the top, column {col}: expected `{expected}`, got `{got}`")]
    Cell {
        row: usize,
        col: usize,
        expected: char,
        got: char,
    },
}

/// A `MOVE:` line whose answer (`shown`: its first 40 characters) is not a number.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`MOVE: {shown}` does not name a column")]
pub struct MoveLineError {
    pub shown: String,
}

/// Why an external program cannot be started.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    #[error("empty command")]
    EmptyCommand,
    /// The system refused to run `command` (the program and its arguments).
    #[error("cannot start `{command}`: {source}")]
    Spawn { command: String, source: std::io::Error },
}

/// Checks a `BOARD:` line sent with a move: it must be the board after the
/// player's piece is dropped in `col`.
pub fn check_board(v: &TurnView, col: usize, claimed: &str) -> Result<(), BoardLineError> {
    let mut after: Board = v.board.clone();
    if after.drop_piece(col, v.seat).is_err() {
        return Ok(()); // the move itself is refused by the referee
    }
    let expected = after.to_board_string(&v.letters);
    let claimed = claimed.trim();
    if claimed.chars().count() != expected.chars().count() {
        return Err(BoardLineError::Length {
            got: claimed.chars().count(),
            expected: expected.chars().count(),
        });
    }
    if let Some(i) = claimed.chars().zip(expected.chars()).position(|(a, b)| a != b) {
        let cols = v.board.cols();
        return Err(BoardLineError::Cell {
            row: i / cols + 1,
            col: i % cols + 1,
            expected: expected.chars().nth(i).unwrap_or('?'),
            got: claimed.chars().nth(i).unwrap_or('?'),
        });
    }
    Ok(())
}

/// Interprets a `MOVE:` line; `Err` is a malformed answer.
pub fn parse_move_line(line: &str) -> Option<Result<i64, MoveLineError>> {
    let rest = line.strip_prefix("MOVE:")?;
    Some(rest.trim().parse::<i64>().map(|n| n - 1).map_err(|_| MoveLineError {
        shown: rest.trim().chars().take(40).collect(),
    }))
}

/// A running (or not yet started) bot program.
pub struct ExternalProcess {
    name: String,
    launch: Launch,
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    stdout: Option<BufReader<ChildStdout>>,
}

impl ExternalProcess {
    pub fn new(name: String, launch: Launch) -> Self {
        ExternalProcess {
            name,
            launch,
            child: None,
            stdin: None,
            stdout: None,
        }
    }

    pub fn is_running(&self) -> bool {
        self.child.is_some()
    }

    /// Starts the program if it is not running (first game, or after it died).
    pub fn ensure_started(&mut self) -> Result<(), StartError> {
        if self.child.is_some() {
            return Ok(());
        }
        let (prog, args) = self.launch.command.split_first().ok_or(StartError::EmptyCommand)?;
        let mut cmd = Command::new(prog);
        cmd.args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .process_group(0);
        if let Some(cwd) = &self.launch.cwd {
            cmd.current_dir(cwd);
        }
        for (k, v) in &self.launch.env {
            cmd.env(k, v);
        }
        // SAFETY: prctl is async-signal-safe; it only asks the kernel to kill
        // the child if c4sim dies without cleaning up.
        #[cfg(target_os = "linux")]
        unsafe {
            cmd.pre_exec(|| {
                libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
                Ok(())
            });
        }
        let mut child = cmd.spawn().map_err(|source| StartError::Spawn {
            command: self.launch.command.join(" "),
            source,
        })?;
        self.stdin = child.stdin.take();
        self.stdout = child.stdout.take().map(BufReader::new);
        if let Some(err) = child.stderr.take() {
            let name = self.name.clone();
            tokio::spawn(async move {
                let mut r = BufReader::new(err);
                loop {
                    let mut budget = usize::MAX;
                    match read_line_bounded(&mut r, MAX_LINE, &mut budget).await {
                        Ok(Line::Text(l)) => tracing::info!(target: "c4sim::external", "[{name}] {l}"),
                        Ok(Line::TooLong) => {
                            tracing::info!(target: "c4sim::external", "[{name}] (a line over {MAX_LINE} bytes)")
                        }
                        _ => break,
                    }
                }
            });
        }
        tracing::debug!("started external player {} (pid {:?})", self.name, child.id());
        if let Some(pid) = child.id() {
            CHILD_GROUPS.lock().unwrap_or_else(|e| e.into_inner()).push(pid as i32);
        }
        self.child = Some(child);
        Ok(())
    }

    /// Sends the turn and reads the answer (bounded). Cancelling this future
    /// (the referee gave up waiting) leaves the process in an unknown state:
    /// callers then [`ExternalProcess::kill`] it.
    pub async fn ask(&mut self, v: &TurnView) -> ExternalReply {
        if let Err(e) = self.ensure_started() {
            return ExternalReply::Gone(e.to_string());
        }
        let block = request_block(v);
        let (Some(stdin), Some(stdout)) = (self.stdin.as_mut(), self.stdout.as_mut()) else {
            return ExternalReply::Gone("the program is not running".into());
        };
        if stdin.write_all(block.as_bytes()).await.is_err() || stdin.flush().await.is_err() {
            self.kill().await;
            return ExternalReply::Gone("the program closed its input".into());
        }
        let mut budget = MAX_ANSWER_BYTES;
        loop {
            let line = match read_line_bounded(stdout, MAX_LINE, &mut budget).await {
                Ok(Line::Text(l)) => l,
                Ok(Line::TooLong) => {
                    return ExternalReply::Answer(Answer::Malformed(format!(
                        "an answer line longer than {MAX_LINE} bytes"
                    )))
                }
                Ok(Line::Eof) | Err(_) => {
                    self.kill().await;
                    return ExternalReply::Gone("the program exited or closed its output".into());
                }
            };
            if budget == 0 {
                return ExternalReply::Answer(Answer::Malformed(format!(
                    "more than {MAX_ANSWER_BYTES} bytes without a move"
                )));
            }
            if line.starts_with('#') || line.starts_with("INFO:") {
                tracing::debug!(target: "c4sim::external", "[{}] {line}", self.name);
                continue;
            }
            if line.trim().is_empty() {
                continue;
            }
            let Some(parsed) = parse_move_line(&line) else {
                let shown: String = line.chars().take(60).collect();
                return ExternalReply::Answer(Answer::Malformed(format!("expected `MOVE: <column>`, got `{shown}`")));
            };
            let col = match parsed {
                Ok(c) => c,
                Err(e) => return ExternalReply::Answer(Answer::Malformed(e.to_string())),
            };
            // An optional BOARD line follows at once when the bot sends one.
            if let Ok(Ok(buf)) = tokio::time::timeout(Duration::from_millis(2), stdout.fill_buf()).await {
                if buf.starts_with(b"BOARD:") {
                    if let Ok(Line::Text(b)) = read_line_bounded(stdout, MAX_LINE, &mut budget).await {
                        if col >= 0 {
                            if let Err(e) = check_board(v, col as usize, &b["BOARD:".len()..]) {
                                return ExternalReply::Answer(Answer::Malformed(e.to_string()));
                            }
                        }
                    }
                }
            }
            return ExternalReply::Answer(Answer::Column(col));
        }
    }

    /// Tells the program how its game ended.
    pub async fn game_over(&mut self, result: &str, reason: &str) {
        if let Some(stdin) = self.stdin.as_mut() {
            let line = format!("GAME_OVER: {result} {reason}\n\n");
            if stdin.write_all(line.as_bytes()).await.is_err() || stdin.flush().await.is_err() {
                self.kill().await;
            }
        }
    }

    /// Closes its input, gives it a moment to exit, then kills its group.
    pub async fn shutdown(&mut self) {
        self.stdin = None;
        if let Some(child) = self.child.as_mut() {
            if tokio::time::timeout(Duration::from_millis(500), child.wait())
                .await
                .is_err()
            {
                tracing::debug!("external player {} did not exit; killing it", self.name);
            }
        }
        self.kill().await;
    }

    /// Kills the program and its process group at once.
    pub async fn kill(&mut self) {
        self.stdin = None;
        self.stdout = None;
        if let Some(mut child) = self.child.take() {
            if let Some(pid) = child.id() {
                // SAFETY: plain syscall; the group id is the child's pid (process_group(0)).
                unsafe {
                    libc::kill(-(pid as i32), libc::SIGKILL);
                }
                forget_group(pid as i32);
            }
            let _ = child.kill().await;
        }
    }
}

impl Drop for ExternalProcess {
    fn drop(&mut self) {
        if let Some(child) = self.child.as_ref() {
            if let Some(pid) = child.id() {
                // SAFETY: as in `kill`.
                unsafe {
                    libc::kill(-(pid as i32), libc::SIGKILL);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{BoardConfig, DEFAULT_LETTERS};

    fn view(moves: &[usize]) -> TurnView {
        let mut board = Board::new(BoardConfig::default());
        for (i, &c) in moves.iter().enumerate() {
            board.drop_piece(c, i % 2).unwrap();
        }
        TurnView {
            game: 1,
            board,
            seat: moves.len() % 2,
            seats: 2,
            letters: DEFAULT_LETTERS.to_vec(),
            moves: moves.to_vec(),
            error: None,
            tries_left: 5,
        }
    }

    #[test]
    fn request_block_follows_the_spec() {
        let b = request_block(&view(&[3]));
        assert!(b.starts_with("BOARD: "));
        assert!(b.contains("\nTURN: 1\nYOUR_PIECE: Y\nOPPONENT_PIECE: R\nLAST_MOVE: Red played column 4\n\n"));
        assert!(request_block(&view(&[])).contains("LAST_MOVE: Game start"));
    }

    #[test]
    fn board_check() {
        let v = view(&[3]);
        let mut after = v.board.clone();
        after.drop_piece(2, 1).unwrap();
        let good = after.to_board_string(&v.letters);
        assert!(check_board(&v, 2, &good).is_ok());
        assert!(check_board(&v, 4, &good).unwrap_err().to_string().contains("wrong"));
        assert!(check_board(&v, 2, "RY").unwrap_err().to_string().contains("characters"));
    }

    #[test]
    fn move_lines() {
        assert_eq!(parse_move_line("MOVE: 4"), Some(Ok(3)));
        assert!(parse_move_line("MOVE: x").unwrap().is_err());
        assert_eq!(parse_move_line("hello"), None);
    }

    #[tokio::test]
    async fn bounded_reads() {
        let data = format!("short\n{}\nnext", "x".repeat(100));
        let mut r = BufReader::new(data.as_bytes());
        let mut budget = usize::MAX;
        assert_eq!(
            read_line_bounded(&mut r, 10, &mut budget).await.unwrap(),
            Line::Text("short".into())
        );
        assert_eq!(read_line_bounded(&mut r, 10, &mut budget).await.unwrap(), Line::TooLong);
        assert_eq!(
            read_line_bounded(&mut r, 10, &mut budget).await.unwrap(),
            Line::Text("next".into())
        );
        assert_eq!(read_line_bounded(&mut r, 10, &mut budget).await.unwrap(), Line::Eof);
    }
}
