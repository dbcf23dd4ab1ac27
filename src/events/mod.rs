//! The `--json` event stream: every object a run prints on standard output
//! with `--json`, as one typed enum serialized in one place ([`Event::line`]),
//! so the field names users and tests read (docs/events.md) cannot drift
//! between the modes that print them. Also the terminal's counterpart, the
//! progress bar ([`bar`]), hidden whenever the events own standard output.
//!
//! Keys come out in field order (serde_json's `preserve_order`), `event`
//! first. A field that a line omits when there is nothing to say is
//! `skip_serializing_if`; every other `Option` prints `null`.

mod bar;

pub use bar::{bar, Bar};

use crate::az::meta::{BoardMeta, Row};
use crate::az::network::NetShape;
use crate::game::rules::EndReason;
use crate::record::Tally;
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;

/// One `--json` line. Variants that share an `event` name (the `summary` of
/// each mode, the two `game_over`s and `match_started`s) are told apart by
/// the mode that prints them; docs/events.md lists each one's fields.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    // ---- games (`mode: match`, and a lobby client's own boards) ----
    /// A game begins.
    GameStart {
        game: u64,
        players: Vec<String>,
        rows: usize,
        cols: usize,
        win_length: usize,
        /// Opening moves the referee played, columns from 0.
        opening: Vec<usize>,
        seed: u64,
    },
    /// A legal move, column and row from 0 (row 0 is the bottom).
    Move {
        game: u64,
        player: String,
        column: usize,
        row: usize,
        /// What the player thinks of its move; absent when it said nothing.
        #[serde(skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    /// A refused answer; `tries_left` more are allowed this turn.
    IllegalMove {
        game: u64,
        player: String,
        reason: String,
        tries_left: u32,
    },
    /// A seat knocked out of a game of three or more.
    PlayerOut {
        game: u64,
        player: String,
        reason: EndReason,
        /// Present (and `true`) only when the seat resigned.
        #[serde(skip_serializing_if = "is_false")]
        resigned: bool,
    },
    /// A `mode: match` game ended.
    GameOver {
        game: u64,
        /// `win` or `draw`.
        result: String,
        /// `null` for a draw.
        winner: Option<String>,
        reason: EndReason,
        moves: Vec<usize>,
        players: Vec<String>,
        opening: Vec<usize>,
        duration_ms: u64,
        think_ms: Vec<u64>,
        turns: Vec<u32>,
        /// Who resigned, by name; absent when nobody did.
        #[serde(skip_serializing_if = "Option::is_none")]
        resigned: Option<Vec<String>>,
    },
    /// The last line of `mode: match` and `mode: join`: each player's tally.
    #[serde(rename = "summary")]
    MatchSummary { players: Vec<TallyLine> },

    // ---- tournaments ----
    /// A tournament game ended: `event` and then its line of `games.jsonl`
    /// as written (docs/tournaments.md), which the store owns.
    #[serde(rename = "game_over")]
    TournamentGame {
        #[serde(flatten)]
        line: serde_json::Map<String, serde_json::Value>,
    },
    /// After each tournament game: games done of `total`, the leader, and
    /// under an SPRT the test's state.
    Progress {
        done: usize,
        total: u64,
        leader: String,
        #[serde(skip_serializing_if = "Option::is_none")]
        sprt: Option<serde_json::Value>,
    },
    /// The last line of a `--shard K/N` run.
    #[serde(rename = "summary")]
    ShardSummary {
        shard: String,
        games: usize,
        total: u64,
        #[serde(serialize_with = "lossy")]
        records: PathBuf,
    },
    /// The last line of a tournament: standings and the report's folder.
    #[serde(rename = "summary")]
    TournamentSummary {
        players: Vec<RatedLine>,
        #[serde(serialize_with = "lossy")]
        report: PathBuf,
        #[serde(skip_serializing_if = "Option::is_none")]
        sprt: Option<serde_json::Value>,
    },
    /// The last line of `c4sim report` (shards merged): the report's full
    /// standings, the SPRT (`null` without one), and the files read.
    #[serde(rename = "summary")]
    ReportSummary {
        players: serde_json::Value,
        sprt: Option<serde_json::Value>,
        games: u64,
        total: u64,
        records: Vec<String>,
        #[serde(serialize_with = "lossy")]
        report: PathBuf,
    },

    // ---- the lobby server (`mode: serve`) ----
    /// The server is listening.
    Listening { addr: String, games: Vec<String> },
    /// A match began on the server.
    MatchStarted {
        #[serde(flatten)]
        table: ServerMatch,
    },
    /// A match ended on the server.
    MatchOver {
        #[serde(flatten)]
        table: ServerMatch,
        moves: Vec<usize>,
        results: Vec<SeatResult>,
        reason: EndReason,
        duration_ms: u64,
    },

    // ---- a lobby client (`mode: join`) ----
    /// One of this run's players was put in a match.
    #[serde(rename = "match_started")]
    JoinedMatch {
        #[serde(flatten)]
        seat: ClientSeat,
    },
    /// One of this run's players finished a match.
    Result {
        #[serde(flatten)]
        seat: ClientSeat,
        /// `WIN`, `LOSS` or `DRAW`, as the server said.
        result: String,
        reason: String,
        moves: usize,
    },

    // ---- training (`mode: train`) ----
    /// The run's first line.
    TrainStart {
        name: String,
        #[serde(serialize_with = "lossy")]
        out: PathBuf,
        device: String,
        workers: usize,
        resumed_from: u32,
        iterations: u32,
        board: BoardMeta,
        network: NetShape,
        simulations: u32,
        games_per_iteration: u32,
    },
    /// An iteration finished: its metrics row (the columns of
    /// `metrics.csv`) and the checkpoint written.
    Iteration {
        #[serde(flatten)]
        row: Row,
        #[serde(serialize_with = "lossy")]
        checkpoint: PathBuf,
    },
    /// The last line of a training run.
    #[serde(rename = "summary")]
    TrainSummary {
        iterations: u32,
        #[serde(serialize_with = "lossy")]
        out: PathBuf,
        done: bool,
        /// The last iteration's row (`null` if none ran); absent when the
        /// run was already complete.
        #[serde(skip_serializing_if = "Option::is_none")]
        last: Option<Option<Row>>,
    },
    /// A distributed trainer's intake set a file aside.
    FileRejected {
        #[serde(serialize_with = "lossy")]
        file: PathBuf,
        why: String,
    },
    /// A distributed trainer has had no new file for a while.
    Waiting {
        #[serde(serialize_with = "lossy")]
        dir: PathBuf,
        workers_seen: Vec<String>,
    },
    /// A self-play worker began.
    WorkerStart {
        worker: String,
        #[serde(serialize_with = "lossy")]
        out: PathBuf,
        threads: usize,
        next_batch: u64,
    },
    /// A worker waits on the shared directory (said at most once a minute).
    WorkerWaiting { worker: String, why: String },
    /// A worker's scenario plays games differently from the trainer's.
    WorkerSettingsDiffer { worker: String, sections: Vec<String> },
    /// A worker wrote a batch file.
    Batch {
        worker: String,
        batch: u64,
        games: u32,
        positions: u64,
        network: u32,
        seconds: f64,
        #[serde(serialize_with = "lossy")]
        file: PathBuf,
    },
    /// A worker stopped: the run is done.
    WorkerDone { worker: String },
}

/// One player's tally in a [`Event::MatchSummary`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TallyLine {
    pub name: String,
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
}

impl From<&Tally> for TallyLine {
    fn from(t: &Tally) -> Self {
        TallyLine {
            name: t.name.clone(),
            wins: t.wins,
            draws: t.draws,
            losses: t.losses,
        }
    }
}

/// One player's standing in a [`Event::TournamentSummary`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct RatedLine {
    pub name: String,
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
    pub elo: f64,
    /// Half-width of the 95% interval.
    pub elo_error: f64,
    /// `null` when none of the player's turns was timed.
    pub ms_per_move: Option<f64>,
}

/// One match on the lobby server: what its `match_started` and
/// `match_over` lines both say first.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ServerMatch {
    #[serde(rename = "match")]
    pub match_id: String,
    pub game: String,
    pub players: Vec<String>,
    pub width: usize,
    pub height: usize,
}

/// A lobby client's player in one match: what its `match_started` and
/// `result` lines both say first.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClientSeat {
    pub player: String,
    #[serde(rename = "match")]
    pub match_id: String,
    pub game: String,
    pub participants: Vec<String>,
    pub width: usize,
    pub height: usize,
}

/// One seat's end of a server match ([`Event::MatchOver`]).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SeatResult {
    pub player: String,
    pub result: String,
    pub reason: String,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A path as text, any bytes that are not UTF-8 replaced, so that no event
/// can fail to serialize.
fn lossy<S: serde::Serializer>(p: &std::path::Path, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&p.to_string_lossy())
}

impl Event {
    /// The event as one line of JSON, without the newline: the one place an
    /// event is serialized.
    pub fn line(&self) -> String {
        // Cannot fail: strings, numbers, lists and maps with string keys,
        // and paths written as (lossy) text.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// The event as a JSON value (tests, and callers that hand it on).
    pub fn value(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

/// Writes `ev` as one line on standard output, flushed at once so a
/// watching process sees it as it happens.
pub fn emit(ev: &Event) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{}", ev.line());
    let _ = out.flush();
}

#[cfg(test)]
mod tests;
