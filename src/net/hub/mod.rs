//! The lobby server's state, pure: sessions, lobbies and matches, and every
//! protocol rule about them (docs/lobby-protocol.md). It does no I/O and
//! knows no actors: each call returns the [`Effect`]s to carry out — lines
//! to send, connections to close, timers to set, matches to start — in the
//! order they must happen, so the rules are unit-tested here call by call
//! and the hub actor (`server.rs`) only moves messages.
//!
//! The hub never decides a game: the referee asks for moves and decides
//! legality, turn order and results. This state only turns the referee's
//! messages into lines and lines into the referee's answers. Illegal moves
//! go through to the referee as answers; only what is not a move at all (no
//! `type`, a `move` that is not a whole number) is refused here.
//!
//! One [`HubState`], its calls split by job:
//!
//! - this file: the public types, the state itself, its timers and the
//!   helpers that queue lines to send;
//! - `sessions.rs`: connections and sessions: opening and closing, the
//!   connection limits, `session.hello`, `session.login` (names and
//!   tokens), `session.resume` and the reconnect grace;
//! - `lobbies.rs`: `lobby.subscribe`, `lobby.ready` and `lobby.leave`, the
//!   countdown, and the start of a match when it ends;
//! - `relay.rs`: a running match between its players and the referee: its
//!   questions and verdicts out as events, `game.action` and `game.leave`
//!   back as its answers;
//! - `dispatch.rs`: a request's checks in the spec's order, then its method;
//! - `testkit.rs`: the helpers the unit tests beside each part share.

mod dispatch;
mod lobbies;
mod relay;
mod sessions;
#[cfg(test)]
mod testkit;

pub use relay::{match_id, reason_word};
pub use sessions::new_token;

use super::codec::ServerMsg;
use super::lobby::Lobby;
use crate::game::BoardConfig;
use crate::scenario::net::{GameKind, ServerSettings};
use serde_json::Value;
use std::collections::HashMap;
use std::net::IpAddr;
use std::time::Duration;

pub type ConnId = u64;

/// Player names: what `session.login` accepts.
pub const MAX_NAME: usize = 32;

/// A timer the state asked for; handed back to [`HubState::timer`] when it
/// fires. Each carries what tells a stale timer from a live one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Timer {
    /// The connection must be logged in by now.
    Hello(ConnId),
    /// The reconnect grace of this disconnect (its epoch) is over.
    Grace { name: String, epoch: u64 },
    /// The lobby's countdown of this epoch ended.
    Countdown { game: GameKind, epoch: u64 },
}

/// The referee's open question to a seat, answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SeatAnswer {
    /// The player's `game.action`, for the referee to judge.
    Column(i64),
    /// The seat will not answer any more: `resigned` or `disconnected`.
    Gone(&'static str),
}

/// A match to seat at the referee.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MatchStart {
    pub match_id: String,
    /// The referee's game number (the match id is `m<number>`).
    pub number: u64,
    pub cfg: BoardConfig,
    /// In turn order.
    pub names: Vec<String>,
}

/// What the hub actor must do, in order.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    Send(ConnId, ServerMsg),
    /// End the connection's tasks (lines already queued may still go out).
    Close(ConnId),
    /// Call [`HubState::timer`] with this after the delay.
    After(Duration, Timer),
    /// The lobby's countdown stopped: its timer may be cancelled.
    StopCountdown(GameKind),
    StartMatch(MatchStart),
    /// Answer the referee's pending question to a seat.
    Answer {
        match_id: String,
        seat: usize,
        answer: SeatAnswer,
    },
    /// A line for the server's standard output (the operator's log).
    Print(String),
}

struct Conn {
    ip: IpAddr,
    hello: bool,
    player: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Place {
    Idle,
    Lobby(GameKind),
    Match(String),
}

struct Player {
    token: String,
    conn: Option<ConnId>,
    place: Place,
    /// Bumped on every disconnect and resume, so only the grace timer of
    /// the latest disconnect can expire the token.
    grace_epoch: u64,
}

struct SeatState {
    name: String,
    /// Not yet knocked out by the referee.
    active: bool,
    /// The `game.result` this player got (`result`, `reason`); once set, the
    /// player has left the match as far as the protocol goes.
    result: Option<(&'static str, &'static str)>,
    /// Why the seat answers "gone" the next time it is asked.
    gone: Option<&'static str>,
    /// The referee asked this seat and has had no [`Effect::Answer`] yet.
    asked: bool,
    /// The id of the `game.action` handed to the referee, awaiting its verdict.
    action: Option<String>,
}

struct MatchState {
    game: GameKind,
    cfg: BoardConfig,
    seats: Vec<SeatState>,
    /// (seat, column, row) of every move.
    moves: Vec<(usize, usize, usize)>,
    to_move: Option<usize>,
}

impl MatchState {
    fn seat_of(&self, name: &str) -> Option<usize> {
        self.seats.iter().position(|s| s.name == name && s.result.is_none())
    }
    fn active_count(&self) -> usize {
        self.seats.iter().filter(|s| s.active).count()
    }
}

/// Every session, lobby and match of one server.
pub struct HubState {
    settings: ServerSettings,
    /// Standard output lines as JSON objects instead of text.
    json: bool,
    conns: HashMap<ConnId, Conn>,
    per_ip: HashMap<IpAddr, usize>,
    players: HashMap<String, Player>,
    tokens: HashMap<String, String>,
    lobbies: HashMap<GameKind, Lobby>,
    matches: HashMap<String, MatchState>,
    next_conn: ConnId,
    next_match: u64,
    /// Effects of the call in progress.
    out: Vec<Effect>,
}

impl HubState {
    pub fn new(settings: ServerSettings, json: bool) -> Self {
        let lobbies = settings.games.iter().map(|&g| (g, Lobby::new(g))).collect();
        HubState {
            settings,
            json,
            conns: HashMap::new(),
            per_ip: HashMap::new(),
            players: HashMap::new(),
            tokens: HashMap::new(),
            lobbies,
            matches: HashMap::new(),
            next_conn: 0,
            next_match: 0,
            out: Vec::new(),
        }
    }

    fn effects(&mut self) -> Vec<Effect> {
        std::mem::take(&mut self.out)
    }

    pub fn has_conn(&self, conn: ConnId) -> bool {
        self.conns.contains_key(&conn)
    }

    pub fn has_match(&self, match_id: &str) -> bool {
        self.matches.contains_key(match_id)
    }

    /// A timer of an earlier [`Effect::After`] fired.
    pub fn timer(&mut self, timer: Timer) -> Vec<Effect> {
        match timer {
            Timer::Hello(id) => {
                if self.conns.get(&id).is_some_and(|c| c.player.is_none()) {
                    tracing::info!("connection {id}: not logged in within the hello timeout, closed");
                    self.drop_conn(id);
                }
            }
            Timer::Grace { name, epoch } => self.grace_over(&name, epoch),
            Timer::Countdown { game, epoch } => {
                let names = self.lobbies.get_mut(&game).and_then(|l| l.take_all(epoch));
                if let Some(names) = names {
                    self.start_match(game, names);
                }
            }
        }
        self.effects()
    }

    // ---- sending ----

    fn send_conn(&mut self, conn: ConnId, msg: ServerMsg) {
        if self.conns.contains_key(&conn) {
            self.out.push(Effect::Send(conn, msg));
        }
    }

    fn send_player(&mut self, name: &str, msg: ServerMsg) {
        if let Some(conn) = self.players.get(name).and_then(|p| p.conn) {
            self.send_conn(conn, msg);
        }
    }

    fn send_lobby(&mut self, game: GameKind, msg: ServerMsg) {
        let names: Vec<String> = self.lobbies.get(&game).map_or(Vec::new(), |l| l.players().to_vec());
        for n in names {
            self.send_player(&n, msg.clone());
        }
    }

    /// Sends a match event to everyone still in the match.
    fn send_match(&mut self, match_id: &str, msg: ServerMsg, except: Option<usize>) {
        let names: Vec<String> = match self.matches.get(match_id) {
            Some(m) => m
                .seats
                .iter()
                .enumerate()
                .filter(|(i, s)| s.result.is_none() && Some(*i) != except)
                .map(|(_, s)| s.name.clone())
                .collect(),
            None => return,
        };
        for n in names {
            self.send_player(&n, msg.clone());
        }
    }

    fn ok(&mut self, conn: ConnId, id: &str, body: Option<Value>) {
        self.send_conn(conn, ServerMsg::ok(id, body));
    }
}
