//! The lobby server's state, pure: sessions, lobbies and matches, and every
//! protocol rule about them (spec/lobby-protocol.md). It does no I/O and
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

use super::codec::{ErrorCode, Event, Method, Request, ServerMsg};
use super::lobby::{Countdown, Lobby};
use crate::game::{BoardConfig, EndReason, Refusal};
use crate::record::{GameRecord, PlayerResult};
use crate::scenario::net::{GameKind, ServerSettings};
use rand::RngCore;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::net::IpAddr;
use std::time::Duration;

pub type ConnId = u64;

/// Player names: what `session.login` accepts.
pub const MAX_NAME: usize = 32;

/// A new token: 256 bits from the operating system's generator, as hex.
/// Tokens are the only proof of identity on resume, so they must not be
/// guessable from earlier ones (a seeded generator would be).
pub fn new_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The protocol's match id for the referee's game number.
pub fn match_id(number: u64) -> String {
    format!("m{number}")
}

/// `game.result` / `game.player_out` reasons from the referee's end reasons.
/// `gone` is why a seat answered "gone" (FORFEIT): resigned or disconnected.
pub fn reason_word(result: PlayerResult, reason: EndReason, gone: Option<&'static str>) -> &'static str {
    match (result, reason) {
        (PlayerResult::Draw, _) => "board_full",
        (PlayerResult::Win, EndReason::Win) | (PlayerResult::Loss, EndReason::Win) => "normal",
        // Won because everyone else went out.
        (PlayerResult::Win, _) => "last_player",
        (PlayerResult::Loss, EndReason::Timeout) => "timeout",
        (PlayerResult::Loss, EndReason::Forfeit) => gone.unwrap_or("disconnected"),
        (PlayerResult::Loss, EndReason::TooManyInvalid) => "invalid_moves",
        (PlayerResult::Loss, EndReason::Tie) => "board_full",
    }
}

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

type Failure = (ErrorCode, String);

fn fail<T>(code: ErrorCode, msg: impl Into<String>) -> Result<T, Failure> {
    Err((code, msg.into()))
}

fn field<'a>(params: &'a Option<Map<String, Value>>, key: &str) -> Result<&'a Value, Failure> {
    params
        .as_ref()
        .and_then(|p| p.get(key))
        .ok_or_else(|| (ErrorCode::BadRequest, format!("missing field `{key}`")))
}

fn string_field<'a>(params: &'a Option<Map<String, Value>>, key: &str) -> Result<&'a str, Failure> {
    field(params, key)?
        .as_str()
        .ok_or_else(|| (ErrorCode::BadRequest, format!("`{key}` must be a string")))
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

    fn lobby_update(&mut self, game: GameKind) {
        let Some(l) = self.lobbies.get(&game) else { return };
        let msg = ServerMsg::event(None, Event::LobbyUpdate, Some(l.update_body()));
        self.send_lobby(game, msg);
    }

    fn ok(&mut self, conn: ConnId, id: &str, body: Option<Value>) {
        self.send_conn(conn, ServerMsg::ok(id, body));
    }

    // ---- connections and sessions ----

    /// A connection opened from `ip`: its id, or `None` when a connection
    /// limit refuses it.
    pub fn open(&mut self, ip: IpAddr) -> Option<(ConnId, Vec<Effect>)> {
        let s = &self.settings;
        let from_ip = self.per_ip.get(&ip).copied().unwrap_or(0);
        if self.conns.len() >= s.max_connections || from_ip >= s.max_connections_per_address {
            tracing::warn!("refused a connection from {ip}: connection limit");
            return None;
        }
        self.next_conn += 1;
        let id = self.next_conn;
        *self.per_ip.entry(ip).or_insert(0) += 1;
        self.conns.insert(
            id,
            Conn {
                ip,
                hello: false,
                player: None,
            },
        );
        // A connection that never logs in is closed: it must not hold a
        // slot of the connection limits for ever.
        Some((id, vec![Effect::After(s.hello_timeout, Timer::Hello(id))]))
    }

    /// The connection's reader ended.
    pub fn closed(&mut self, conn: ConnId) -> Vec<Effect> {
        self.drop_conn(conn);
        self.effects()
    }

    /// The connection stopped reading its lines (its outbox overflowed):
    /// dropped, as a disconnect.
    pub fn kicked(&mut self, conn: ConnId) -> Vec<Effect> {
        if self.conns.contains_key(&conn) {
            tracing::info!("connection {conn}: not reading its lines, dropped");
            self.drop_conn(conn);
        }
        self.effects()
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

    fn drop_conn(&mut self, conn: ConnId) {
        let Some(c) = self.conns.remove(&conn) else { return };
        self.out.push(Effect::Close(conn));
        if let Some(n) = self.per_ip.get_mut(&c.ip) {
            *n -= 1;
            if *n == 0 {
                self.per_ip.remove(&c.ip);
            }
        }
        let Some(name) = c.player else { return };
        let Some(p) = self.players.get_mut(&name) else { return };
        if p.conn != Some(conn) {
            return;
        }
        p.conn = None;
        p.grace_epoch += 1;
        let epoch = p.grace_epoch;
        if let Place::Lobby(g) = p.place.clone() {
            p.place = Place::Idle;
            self.leave_lobby(g, &name);
        }
        let grace = self.settings.reconnect_grace;
        tracing::info!("{name} disconnected; token valid for {grace:?}");
        self.out.push(Effect::After(grace, Timer::Grace { name, epoch }));
    }

    /// The reconnect grace ended without a resume: the token dies, the name
    /// is free again, and a seat in a match is gone ("disconnected").
    fn grace_over(&mut self, name: &str, epoch: u64) {
        match self.players.get(name) {
            Some(p) if p.conn.is_none() && p.grace_epoch == epoch => {}
            _ => return,
        }
        let p = self.players.remove(name).expect("checked above");
        self.tokens.remove(&p.token);
        tracing::info!("{name}: reconnect grace over, token expired");
        let Place::Match(m) = p.place else { return };
        let Some(i) = self.matches.get(&m).and_then(|st| st.seat_of(name)) else {
            return;
        };
        let s = &mut self.matches.get_mut(&m).expect("checked").seats[i];
        s.gone = Some("disconnected");
        // Nobody can act for this seat any more, not even a new player who
        // takes the freed name.
        s.result = Some(("LOSS", "disconnected"));
        if s.action.is_none() && s.asked {
            self.answer_seat(&m, i, SeatAnswer::Gone("disconnected"));
        }
    }

    /// Answers the referee's open question to a seat.
    fn answer_seat(&mut self, match_id: &str, seat: usize, answer: SeatAnswer) {
        if let Some(st) = self.matches.get_mut(match_id) {
            st.seats[seat].asked = false;
        }
        self.out.push(Effect::Answer {
            match_id: match_id.to_string(),
            seat,
            answer,
        });
    }

    fn leave_lobby(&mut self, game: GameKind, name: &str) {
        let Some(l) = self.lobbies.get_mut(&game) else { return };
        if let Ok(effect) = l.leave(name) {
            self.lobby_update(game);
            self.countdown(game, effect);
        }
    }

    fn countdown(&mut self, game: GameKind, effect: Countdown) {
        match effect {
            Countdown::Keep => {}
            Countdown::Stop => {
                self.out.push(Effect::StopCountdown(game));
                let msg = ServerMsg::event(None, Event::LobbyCountdown, Some(json!({ "seconds": null })));
                self.send_lobby(game, msg);
            }
            Countdown::Start => {
                let d = self.settings.countdown;
                let seconds = if d.subsec_nanos() == 0 {
                    json!(d.as_secs())
                } else {
                    json!(d.as_secs_f64())
                };
                let msg = ServerMsg::event(None, Event::LobbyCountdown, Some(json!({ "seconds": seconds })));
                self.send_lobby(game, msg);
                let epoch = self.lobbies[&game].epoch();
                self.out.push(Effect::After(d, Timer::Countdown { game, epoch }));
            }
        }
    }

    // ---- matches ----

    fn start_match(&mut self, game: GameKind, names: Vec<String>) {
        self.next_match += 1;
        let number = self.next_match;
        let match_id = match_id(number);
        let cfg = game.board(names.len());
        self.matches.insert(
            match_id.clone(),
            MatchState {
                game,
                cfg,
                seats: names
                    .iter()
                    .map(|n| SeatState {
                        name: n.clone(),
                        active: true,
                        result: None,
                        gone: None,
                        asked: false,
                        action: None,
                    })
                    .collect(),
                moves: Vec::new(),
                to_move: Some(0),
            },
        );
        let body = json!({
            "participants": names, "to_move": names[0], "width": cfg.cols, "height": cfg.rows
        });
        let msg = ServerMsg::event(Some(&match_id), Event::MatchStarted, Some(body));
        for n in &names {
            if let Some(p) = self.players.get_mut(n) {
                p.place = Place::Match(match_id.clone());
            }
            self.send_player(n, msg.clone());
        }
        tracing::info!(
            "{match_id} {} starts: {} on {}x{}",
            game.as_str(),
            names.join(", "),
            cfg.cols,
            cfg.rows
        );
        let line = if self.json {
            json!({"event": "match_started", "match": match_id, "game": game.as_str(), "players": names,
                   "width": cfg.cols, "height": cfg.rows})
            .to_string()
        } else {
            format!(
                "{match_id} started: {} ({}, {}×{})",
                names.join(", "),
                game.as_str(),
                cfg.cols,
                cfg.rows
            )
        };
        self.out.push(Effect::Print(line));
        self.out.push(Effect::StartMatch(MatchStart {
            match_id,
            number,
            cfg,
            names,
        }));
    }

    /// Gives a player its `game.result` (once) and lets it leave the match.
    fn finish_seat(&mut self, match_id: &str, seat: usize, result: &'static str, reason: &'static str) {
        let Some(st) = self.matches.get_mut(match_id) else {
            return;
        };
        let s = &mut st.seats[seat];
        if s.result.is_some() {
            return;
        }
        s.result = Some((result, reason));
        let name = s.name.clone();
        let body = json!({ "result": result, "reason": reason });
        self.send_player(&name, ServerMsg::event(Some(match_id), Event::Result, Some(body)));
        if let Some(p) = self.players.get_mut(&name) {
            if p.place == Place::Match(match_id.to_string()) {
                p.place = Place::Idle;
            }
        }
    }

    /// A seat the referee knocked out while the others play on.
    fn seat_out(&mut self, match_id: &str, seat: usize, reason: &'static str) {
        let Some(st) = self.matches.get_mut(match_id) else {
            return;
        };
        st.seats[seat].active = false;
        let still_playing = st.active_count() >= 2;
        let name = st.seats[seat].name.clone();
        self.finish_seat(match_id, seat, "LOSS", reason);
        if still_playing {
            let body = json!({ "player": name, "reason": reason });
            let msg = ServerMsg::event(Some(match_id), Event::PlayerOut, Some(body));
            self.send_match(match_id, msg, Some(seat));
        }
    }

    /// The referee asks a seat for a move. `Err` with the reason when the
    /// seat is gone (the referee gets that answer at once); otherwise the
    /// player is told `game.your_turn` and the question stays open until
    /// an [`Effect::Answer`] for it.
    pub fn seat_asked(&mut self, match_id: &str, seat: usize) -> Result<Vec<Effect>, &'static str> {
        let Some(st) = self.matches.get_mut(match_id) else {
            return Err("disconnected");
        };
        let s = &mut st.seats[seat];
        if let Some(why) = s.gone {
            return Err(why);
        }
        s.asked = true;
        s.action = None;
        let name = s.name.clone();
        st.to_move = Some(seat);
        self.send_player(&name, ServerMsg::event(Some(match_id), Event::YourTurn, None));
        Ok(self.effects())
    }

    /// The referee stopped waiting for a seat (its move time ran out); an
    /// action it was judging is answered too late.
    pub fn seat_abandoned(&mut self, match_id: &str, seat: usize) -> Vec<Effect> {
        if let Some(st) = self.matches.get_mut(match_id) {
            let s = &mut st.seats[seat];
            s.asked = false;
            if let Some(id) = s.action.take() {
                let name = s.name.clone();
                let msg = ServerMsg::err(&id, ErrorCode::NotYourTurn, "too late: your move time ran out");
                self.send_player(&name, msg);
            }
        }
        self.effects()
    }

    /// The referee's verdict for one seat at the end of the game.
    pub fn seat_ended(&mut self, match_id: &str, seat: usize, result: PlayerResult, reason: EndReason) -> Vec<Effect> {
        if let Some(st) = self.matches.get_mut(match_id) {
            let s = &mut st.seats[seat];
            s.active = false;
            let reason = reason_word(result, reason, s.gone);
            self.finish_seat(match_id, seat, result.word(), reason);
        }
        self.effects()
    }

    /// The referee accepted a move; `next` is the seat it asks next.
    pub fn moved(&mut self, match_id: &str, seat: usize, col: usize, row: usize, next: Option<usize>) -> Vec<Effect> {
        if let Some(st) = self.matches.get_mut(match_id) {
            st.moves.push((seat, col, row));
            st.to_move = next;
            let s = &mut st.seats[seat];
            let name = s.name.clone();
            if let Some(id) = s.action.take() {
                self.send_player(&name, ServerMsg::ok(&id, None));
            }
            tracing::debug!("{match_id}: {name} plays column {col}, row {row}");
            let body = json!({ "type": "move", "player": name, "move": col, "row": row });
            self.send_match(
                match_id,
                ServerMsg::event(Some(match_id), Event::Action, Some(body)),
                None,
            );
        }
        self.effects()
    }

    /// The referee refused a seat's answer; at no tries left it knocked the
    /// seat out (it sends no separate out event for that).
    pub fn illegal(&mut self, match_id: &str, seat: usize, refusal: &Refusal, tries_left: u32) -> Vec<Effect> {
        if let Some(st) = self.matches.get_mut(match_id) {
            let s = &mut st.seats[seat];
            let name = s.name.clone();
            if let Some(id) = s.action.take() {
                let message = format!(
                    "{}; {tries_left} tr{} left this turn",
                    refusal.describe(0),
                    if tries_left == 1 { "y" } else { "ies" }
                );
                self.send_player(&name, ServerMsg::err(&id, ErrorCode::InvalidMove, message));
            }
            if tries_left == 0 {
                self.seat_out(match_id, seat, "invalid_moves");
            }
        }
        self.effects()
    }

    /// The referee knocked a seat out (time, forfeit) while others play on.
    pub fn out(&mut self, match_id: &str, seat: usize, reason: EndReason) -> Vec<Effect> {
        if let Some(st) = self.matches.get(match_id) {
            let why = reason_word(PlayerResult::Loss, reason, st.seats[seat].gone);
            self.seat_out(match_id, seat, why);
        }
        self.effects()
    }

    /// The referee finished a match: everyone still in it is free again,
    /// and the operator's log gets the results.
    pub fn match_over(&mut self, match_id: &str, record: &GameRecord) -> Vec<Effect> {
        let Some(st) = self.matches.remove(match_id) else {
            return Vec::new();
        };
        let results: Vec<(String, &str, &str)> = st
            .seats
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let (r, why) = s.result.unwrap_or_else(|| {
                    let r = record.result_of(i);
                    (r.word(), reason_word(r, record.reason_for(i), s.gone))
                });
                (s.name.clone(), r, why)
            })
            .collect();
        for s in &st.seats {
            if let Some(p) = self.players.get_mut(&s.name) {
                if p.place == Place::Match(match_id.to_string()) {
                    p.place = Place::Idle;
                }
            }
        }
        let summary: Vec<String> = results.iter().map(|(n, r, w)| format!("{n} {r} ({w})")).collect();
        tracing::info!(
            "{match_id} over after {} moves: {}",
            record.moves.len(),
            summary.join(", ")
        );
        let line = if self.json {
            json!({
                "event": "match_over", "match": match_id, "game": st.game.as_str(), "players": record.players,
                "width": st.cfg.cols, "height": st.cfg.rows, "moves": record.moves,
                "results": results.iter().map(|(n, r, w)| json!({"player": n, "result": r, "reason": w})).collect::<Vec<_>>(),
                "reason": record.outcome.reason, "duration_ms": record.duration_ms,
            })
            .to_string()
        } else {
            format!(
                "{match_id} over after {} moves: {}",
                record.moves.len(),
                summary.join(", ")
            )
        };
        vec![Effect::Print(line)]
    }

    // ---- requests ----

    /// A well-formed request from `conn`: whether it was refused
    /// `BAD_REQUEST` (the connection counts those) and the effects; `None`
    /// when the connection is gone.
    pub fn request(&mut self, conn: ConnId, req: Request) -> Option<(bool, Vec<Effect>)> {
        if !self.conns.contains_key(&conn) {
            return None;
        }
        let bad = match self.handle(conn, &req) {
            Ok(()) => false,
            Err((code, message)) => {
                self.send_conn(conn, ServerMsg::err(&req.id, code, message));
                code == ErrorCode::BadRequest
            }
        };
        Some((bad, self.effects()))
    }

    /// The checks in the spec's order (`HELLO_REQUIRED`, `UNKNOWN_METHOD`,
    /// `LOGIN_REQUIRED`, then the method's own), then the method.
    fn handle(&mut self, conn: ConnId, req: &Request) -> Result<(), Failure> {
        let c = self.conns.get(&conn).expect("the caller checked");
        if !c.hello && req.method != Ok(Method::Hello) {
            return fail(ErrorCode::HelloRequired, "say session.hello first");
        }
        let method = match &req.method {
            Ok(m) => *m,
            Err(name) => {
                let all: Vec<&str> = Method::ALL.iter().map(|m| m.as_str()).collect();
                return fail(
                    ErrorCode::UnknownMethod,
                    format!("unknown method `{name}`; methods: {}", all.join(", ")),
                );
            }
        };
        let player = c.player.clone();
        if player.is_none() && method.needs_login() {
            return fail(ErrorCode::LoginRequired, "log in first with session.login");
        }
        match (&req.match_id, method.in_match()) {
            (Some(_), false) => return fail(ErrorCode::BadRequest, format!("`{method}` takes no match id")),
            (None, true) => {
                return fail(
                    ErrorCode::BadRequest,
                    format!("game requests name their match: REQ <id> <m> {method}"),
                )
            }
            _ => {}
        }
        let logged_in = || player.clone().expect("checked by needs_login");
        match method {
            Method::Hello => self.hello(conn, req),
            Method::Login => self.login(conn, req, player),
            Method::Resume => self.resume(conn, req, player),
            Method::Subscribe => self.subscribe(conn, req, &logged_in()),
            Method::Ready | Method::LobbyLeave => self.ready_or_leave(conn, req, method, &logged_in()),
            Method::Action => self.action(req, &logged_in()),
            Method::GameLeave => self.resign(conn, req, &logged_in()),
        }
    }

    fn hello(&mut self, conn: ConnId, req: &Request) -> Result<(), Failure> {
        let v = field(&req.params, "version")?;
        if !v.is_number() {
            return fail(ErrorCode::BadRequest, "`version` must be a number");
        }
        if v.as_u64() != Some(1) {
            return fail(
                ErrorCode::UnsupportedVersion,
                format!("version {v} is not supported; use 1"),
            );
        }
        self.conns.get_mut(&conn).expect("checked").hello = true;
        self.ok(conn, &req.id, None);
        Ok(())
    }

    fn seat_for(&self, match_id: &str, name: &str) -> Result<usize, Failure> {
        self.matches
            .get(match_id)
            .and_then(|st| st.seat_of(name))
            .ok_or_else(|| {
                (
                    ErrorCode::NotInMatch,
                    format!("you are not playing in match `{match_id}`"),
                )
            })
    }

    fn login(&mut self, conn: ConnId, req: &Request, player: Option<String>) -> Result<(), Failure> {
        if let Some(p) = player {
            return fail(
                ErrorCode::BadRequest,
                format!("this connection is already logged in as {p}"),
            );
        }
        let name = string_field(&req.params, "player")?;
        let chars = name.chars().count();
        if name.trim().is_empty() || chars > MAX_NAME || name.chars().any(char::is_control) || name.trim() != name {
            return fail(
                ErrorCode::BadRequest,
                format!("a player name is 1 to {MAX_NAME} characters, no control characters, no spaces at the ends"),
            );
        }
        if self.players.contains_key(name) {
            return fail(ErrorCode::NameTaken, format!("`{name}` is already logged in"));
        }
        let token = new_token();
        self.tokens.insert(token.clone(), name.to_string());
        self.players.insert(
            name.to_string(),
            Player {
                token: token.clone(),
                conn: Some(conn),
                place: Place::Idle,
                grace_epoch: 0,
            },
        );
        self.conns.get_mut(&conn).expect("checked").player = Some(name.to_string());
        tracing::info!("connection {conn}: {name} logged in");
        self.ok(conn, &req.id, Some(json!({ "session_token": token })));
        Ok(())
    }

    fn resume(&mut self, conn: ConnId, req: &Request, player: Option<String>) -> Result<(), Failure> {
        let token = string_field(&req.params, "session_token")?;
        let Some(name) = self.tokens.get(token).cloned() else {
            return fail(ErrorCode::BadToken, "unknown or expired session token");
        };
        if let Some(p) = player.filter(|p| *p != name) {
            return fail(
                ErrorCode::BadRequest,
                format!("this connection is already logged in as {p}"),
            );
        }
        let p = self.players.get_mut(&name).expect("tokens and players agree");
        p.grace_epoch += 1;
        let old = p.conn.replace(conn);
        let place = p.place.clone();
        if let Some(old) = old.filter(|&o| o != conn) {
            // Taking the seat over: the old connection closes, without the
            // disconnect handling (the player is still here).
            if let Some(c) = self.conns.get_mut(&old) {
                c.player = None;
            }
            self.drop_conn(old);
        }
        self.conns.get_mut(&conn).expect("checked").player = Some(name.clone());
        let (match_id, moves, to_move, ask) = match &place {
            Place::Match(m) => match self.matches.get(m) {
                Some(st) => {
                    let moves: Vec<Value> = st
                        .moves
                        .iter()
                        .map(|&(s, c, r)| json!([st.seats[s].name, c, r]))
                        .collect();
                    let to_move = st.to_move.map(|t| st.seats[t].name.clone());
                    let ask = st
                        .seat_of(&name)
                        .is_some_and(|i| st.seats[i].asked && st.seats[i].action.is_none());
                    (Some(m.clone()), moves, to_move, ask)
                }
                None => (None, Vec::new(), None, false),
            },
            _ => (None, Vec::new(), None, false),
        };
        tracing::info!("connection {conn}: {name} resumed");
        self.ok(
            conn,
            &req.id,
            Some(json!({ "player": name, "match": match_id, "moves": moves, "to_move": to_move })),
        );
        if let (true, Some(m)) = (ask, &match_id) {
            self.send_conn(conn, ServerMsg::event(Some(m), Event::YourTurn, None));
        }
        Ok(())
    }

    fn subscribe(&mut self, conn: ConnId, req: &Request, name: &str) -> Result<(), Failure> {
        let game_name = string_field(&req.params, "game")?;
        let game = GameKind::parse(game_name)
            .filter(|g| self.lobbies.contains_key(g))
            .ok_or_else(|| {
                let hosted: Vec<&str> = self.settings.games.iter().map(|g| g.as_str()).collect();
                (
                    ErrorCode::UnknownGame,
                    format!("this server hosts {}, not `{game_name}`", hosted.join(", ")),
                )
            })?;
        let place = self.players[name].place.clone();
        match place {
            Place::Match(m) => {
                return fail(
                    ErrorCode::BadRequest,
                    format!("you are playing in match `{m}`; finish it or leave it (game.leave) first"),
                )
            }
            Place::Lobby(g) if g == game => {
                self.ok(conn, &req.id, None);
                self.lobby_update(game);
                return Ok(());
            }
            _ => {}
        }
        let lobby = self.lobbies.get_mut(&game).expect("checked");
        if lobby.players().len() >= game.max_players() {
            return fail(
                ErrorCode::LobbyFull,
                format!("the {} lobby holds its {} players", game.as_str(), game.max_players()),
            );
        }
        if let Place::Lobby(old) = place {
            self.leave_lobby(old, name);
        }
        let effect = self
            .lobbies
            .get_mut(&game)
            .expect("checked")
            .subscribe(name)
            .map_err(|_| (ErrorCode::LobbyFull, "the lobby is full".to_string()))?;
        self.players.get_mut(name).expect("checked").place = Place::Lobby(game);
        self.ok(conn, &req.id, None);
        self.lobby_update(game);
        self.countdown(game, effect);
        Ok(())
    }

    fn ready_or_leave(&mut self, conn: ConnId, req: &Request, method: Method, name: &str) -> Result<(), Failure> {
        let Some(Place::Lobby(game)) = self.players.get(name).map(|p| p.place.clone()) else {
            return fail(ErrorCode::NotInLobby, "you are not in a lobby");
        };
        let lobby = self.lobbies.get_mut(&game).expect("a hosted game");
        let leaving = method == Method::LobbyLeave;
        let effect = if leaving { lobby.leave(name) } else { lobby.ready(name) }
            .map_err(|_| (ErrorCode::NotInLobby, "you are not in a lobby".to_string()))?;
        if leaving {
            self.players.get_mut(name).expect("checked").place = Place::Idle;
        }
        self.ok(conn, &req.id, None);
        self.lobby_update(game);
        self.countdown(game, effect);
        Ok(())
    }

    fn action(&mut self, req: &Request, name: &str) -> Result<(), Failure> {
        let m = req.match_id.as_deref().expect("checked");
        let seat = self.seat_for(m, name)?;
        let kind = req.params.as_ref().and_then(|p| p.get("type"));
        if kind.and_then(Value::as_str) != Some("move") {
            return fail(
                ErrorCode::UnknownAction,
                match kind {
                    None => "an action needs a `type`; the only one is \"move\"".to_string(),
                    Some(k) => format!("unknown action type {k}; the only one is \"move\""),
                },
            );
        }
        let column = field(&req.params, "move")?.as_i64().ok_or_else(|| {
            (
                ErrorCode::BadRequest,
                "`move` must be a whole number, the column from 0".to_string(),
            )
        })?;
        let s = &mut self.matches.get_mut(m).expect("checked").seats[seat];
        if s.action.is_some() || !s.asked {
            return fail(ErrorCode::NotYourTurn, "it is not your turn");
        }
        s.action = Some(req.id.clone());
        // The referee decides: its verdict comes back through `moved` or
        // `illegal`, and the answer to this request goes out then.
        self.answer_seat(m, seat, SeatAnswer::Column(column));
        Ok(())
    }

    fn resign(&mut self, conn: ConnId, req: &Request, name: &str) -> Result<(), Failure> {
        let m = req.match_id.as_deref().expect("checked");
        let seat = self.seat_for(m, name)?;
        self.ok(conn, &req.id, None);
        let s = &mut self.matches.get_mut(m).expect("checked").seats[seat];
        s.gone = Some("resigned");
        if s.action.is_none() && s.asked {
            self.answer_seat(m, seat, SeatAnswer::Gone("resigned"));
        }
        tracing::info!("{m}: {name} resigns");
        self.finish_seat(m, seat, "LOSS", "resigned");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::Outcome;
    use crate::net::codec::parse_request;
    use std::net::Ipv4Addr;

    const COUNTDOWN: Duration = Duration::from_secs(10);
    const GRACE: Duration = Duration::from_secs(30);
    const HELLO: Duration = Duration::from_secs(5);

    fn state() -> HubState {
        HubState::new(
            ServerSettings {
                countdown: COUNTDOWN,
                reconnect_grace: GRACE,
                hello_timeout: HELLO,
                max_connections: 6,
                max_connections_per_address: 5,
                ..ServerSettings::default()
            },
            true,
        )
    }

    fn ip(n: u8) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(10, 0, 0, n))
    }

    fn open(s: &mut HubState) -> ConnId {
        s.open(ip(1)).expect("under the limits").0
    }

    /// Sends one raw line; returns whether it was refused BAD_REQUEST, and the effects.
    fn send(s: &mut HubState, conn: ConnId, line: &str) -> (bool, Vec<Effect>) {
        let req = parse_request(line.as_bytes()).expect("a well-formed line");
        s.request(conn, req).expect("an open connection")
    }

    /// The lines `conn` gets from `fx`, without their line ends.
    fn lines(fx: &[Effect], conn: ConnId) -> Vec<String> {
        fx.iter()
            .filter_map(|e| match e {
                Effect::Send(c, m) if *c == conn => Some(m.line().trim_end().to_string()),
                _ => None,
            })
            .collect()
    }

    /// The error code of the answer to request `id` in `fx`.
    fn code(fx: &[Effect], id: &str) -> Option<ErrorCode> {
        fx.iter().find_map(|e| match e {
            Effect::Send(_, ServerMsg::Err { id: Some(i), code, .. }) if i == id => Some(*code),
            _ => None,
        })
    }

    /// Sends a line and returns the error code it is answered with.
    fn refused(s: &mut HubState, conn: ConnId, line: &str) -> ErrorCode {
        let id = line.split(' ').nth(1).expect("REQ <id> ...");
        let (_, fx) = send(s, conn, line);
        code(&fx, id).unwrap_or_else(|| panic!("{line} was not refused: {fx:?}"))
    }

    fn is_ok(fx: &[Effect], id: &str) -> bool {
        fx.iter()
            .any(|e| matches!(e, Effect::Send(_, ServerMsg::Ok { id: i, .. }) if i == id))
    }

    /// Opens a connection, says hello and logs in; returns it and the token.
    fn login(s: &mut HubState, name: &str) -> (ConnId, String) {
        let c = open(s);
        assert!(is_ok(&send(s, c, r#"REQ h session.hello {"version": 1}"#).1, "h"));
        let fx = send(s, c, &format!(r#"REQ l session.login {{"player": "{name}"}}"#)).1;
        let token = fx
            .iter()
            .find_map(|e| match e {
                Effect::Send(_, ServerMsg::Ok { body: Some(b), .. }) => b["session_token"].as_str().map(str::to_string),
                _ => None,
            })
            .unwrap_or_else(|| panic!("{name} logs in: {fx:?}"));
        (c, token)
    }

    fn countdown_timer(fx: &[Effect]) -> Option<Timer> {
        fx.iter().find_map(|e| match e {
            Effect::After(d, t @ Timer::Countdown { .. }) if *d == COUNTDOWN => Some(t.clone()),
            _ => None,
        })
    }

    /// Logs everyone in, subscribes and readies them; returns the
    /// connections and the effects of the last ready.
    fn lobby(s: &mut HubState, game: &str, names: &[&str]) -> (Vec<ConnId>, Vec<Effect>) {
        let mut conns = Vec::new();
        let mut last = Vec::new();
        for n in names {
            let (c, _) = login(s, n);
            assert!(is_ok(
                &send(s, c, &format!(r#"REQ s lobby.subscribe {{"game": "{game}"}}"#)).1,
                "s"
            ));
            conns.push(c);
        }
        for &c in &conns {
            last = send(s, c, "REQ r lobby.ready").1;
            assert!(is_ok(&last, "r"));
        }
        (conns, last)
    }

    /// A started match of `names`: the connections, the match id and the
    /// effects of the countdown's end.
    fn started(s: &mut HubState, game: &str, names: &[&str]) -> (Vec<ConnId>, String, Vec<Effect>) {
        let (conns, fx) = lobby(s, game, names);
        let timer = countdown_timer(&fx).expect("the countdown starts");
        let fx = s.timer(timer);
        let m = fx
            .iter()
            .find_map(|e| match e {
                Effect::StartMatch(st) => Some(st.match_id.clone()),
                _ => None,
            })
            .expect("the match starts");
        (conns, m, fx)
    }

    fn answers(fx: &[Effect]) -> Vec<(usize, SeatAnswer)> {
        fx.iter()
            .filter_map(|e| match e {
                Effect::Answer { seat, answer, .. } => Some((*seat, answer.clone())),
                _ => None,
            })
            .collect()
    }

    fn record(m: &str, players: &[&str], winner: Option<usize>) -> GameRecord {
        GameRecord {
            game: m[1..].parse().unwrap(),
            players: players.iter().map(|p| p.to_string()).collect(),
            moves: vec![0, 1, 0],
            opening: Vec::new(),
            outcome: Outcome {
                winner,
                reason: EndReason::Win,
                eliminated: Vec::new(),
                resigned: Vec::new(),
            },
            seed: 0,
            duration_ms: 5,
            think_ms: Vec::new(),
            turns: Vec::new(),
        }
    }

    #[test]
    fn tokens_are_long_random_and_distinct() {
        let a = new_token();
        let b = new_token();
        assert_eq!(a.len(), 64, "256 bits as hex");
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn reasons_follow_the_protocol() {
        use EndReason as E;
        use PlayerResult as P;
        assert_eq!(reason_word(P::Win, E::Win, None), "normal");
        assert_eq!(reason_word(P::Loss, E::Win, None), "normal");
        assert_eq!(reason_word(P::Draw, E::Tie, None), "board_full");
        assert_eq!(reason_word(P::Win, E::Timeout, None), "last_player");
        assert_eq!(reason_word(P::Win, E::Forfeit, None), "last_player");
        assert_eq!(reason_word(P::Loss, E::Timeout, None), "timeout");
        assert_eq!(reason_word(P::Loss, E::Forfeit, Some("resigned")), "resigned");
        assert_eq!(reason_word(P::Loss, E::Forfeit, None), "disconnected");
        assert_eq!(reason_word(P::Loss, E::TooManyInvalid, None), "invalid_moves");
    }

    #[test]
    fn hello_comes_before_anything_even_an_unknown_method() {
        let mut s = state();
        let c = open(&mut s);
        let (bad, fx) = send(&mut s, c, r#"REQ 1 session.login {"player": "a"}"#);
        assert_eq!((bad, code(&fx, "1")), (false, Some(ErrorCode::HelloRequired)));
        assert_eq!(refused(&mut s, c, "REQ 2 foo.bar"), ErrorCode::HelloRequired);
        assert_eq!(
            refused(&mut s, c, r#"REQ 3 session.hello {"version": 2}"#),
            ErrorCode::UnsupportedVersion
        );
        let (bad, fx) = send(&mut s, c, r#"REQ 4 session.hello {"version": "1"}"#);
        assert_eq!(
            (bad, code(&fx, "4")),
            (true, Some(ErrorCode::BadRequest)),
            "BAD_REQUEST counts"
        );
        let (bad, fx) = send(&mut s, c, r#"REQ 5 session.hello {"version": 1}"#);
        assert_eq!((bad, lines(&fx, c)), (false, vec!["RES 5 OK".to_string()]));
    }

    #[test]
    fn unknown_methods_then_login_are_checked_in_the_spec_order() {
        let mut s = state();
        let c = open(&mut s);
        send(&mut s, c, r#"REQ h session.hello {"version": 1}"#);
        let (_, fx) = send(&mut s, c, "REQ 1 foo.bar");
        assert_eq!(code(&fx, "1"), Some(ErrorCode::UnknownMethod));
        let line = &lines(&fx, c)[0];
        assert!(line.contains("session.hello, session.login"), "{line}");
        assert_eq!(
            refused(&mut s, c, r#"REQ 2 lobby.subscribe {"game": "connect4"}"#),
            ErrorCode::LoginRequired
        );
        assert_eq!(
            refused(&mut s, c, r#"REQ 3 m1 game.action {"type": "move", "move": 0}"#),
            ErrorCode::LoginRequired
        );
    }

    #[test]
    fn login_checks_the_name_and_gives_a_token() {
        let mut s = state();
        let (a, token) = login(&mut s, "ann");
        assert_eq!(token.len(), 64);
        assert_eq!(
            refused(&mut s, a, r#"REQ 1 session.login {"player": "bob"}"#),
            ErrorCode::BadRequest,
            "one login a connection"
        );
        let c = open(&mut s);
        send(&mut s, c, r#"REQ h session.hello {"version": 1}"#);
        assert_eq!(
            refused(&mut s, c, r#"REQ 2 session.login {"player": "ann"}"#),
            ErrorCode::NameTaken
        );
        let long = "x".repeat(MAX_NAME + 1);
        for bad in [" ann", "", "a\\u0007b", long.as_str()] {
            let (was_bad, fx) = send(&mut s, c, &format!(r#"REQ 3 session.login {{"player": "{bad}"}}"#));
            assert_eq!(
                (was_bad, code(&fx, "3")),
                (true, Some(ErrorCode::BadRequest)),
                "{bad:?}"
            );
        }
        assert_eq!(
            refused(&mut s, c, r#"REQ 4 session.login {"player": 7}"#),
            ErrorCode::BadRequest
        );
        assert!(is_ok(
            &send(
                &mut s,
                c,
                &format!(r#"REQ 5 session.login {{"player": "{}"}}"#, "y".repeat(MAX_NAME))
            )
            .1,
            "5"
        ));
    }

    #[test]
    fn only_game_methods_name_a_match() {
        let mut s = state();
        let (c, _) = login(&mut s, "ann");
        assert_eq!(refused(&mut s, c, "REQ 1 m1 lobby.ready"), ErrorCode::BadRequest);
        assert_eq!(refused(&mut s, c, "REQ 2 game.leave"), ErrorCode::BadRequest);
        assert_eq!(refused(&mut s, c, "REQ 3 m9 game.leave"), ErrorCode::NotInMatch);
    }

    #[test]
    fn subscribing_updates_everyone_in_the_lobby() {
        let mut s = state();
        let (a, _) = login(&mut s, "ann");
        let (b, _) = login(&mut s, "bob");
        send(&mut s, a, r#"REQ 1 lobby.subscribe {"game": "connect4"}"#);
        let (_, fx) = send(&mut s, b, r#"REQ 2 lobby.subscribe {"game": "connect4"}"#);
        let update = r#"EVT lobby.update {"players":["ann","bob"],"ready":[],"min":3,"max":9}"#;
        assert_eq!(lines(&fx, a), [update]);
        assert_eq!(lines(&fx, b), ["RES 2 OK", update], "the answer first");
        assert_eq!(
            refused(&mut s, b, r#"REQ 3 lobby.subscribe {"game": "chess"}"#),
            ErrorCode::UnknownGame
        );
        // Subscribing again is harmless: an OK and a fresh update.
        let (_, fx) = send(&mut s, b, r#"REQ 4 lobby.subscribe {"game": "connect4"}"#);
        assert_eq!(lines(&fx, b), ["RES 4 OK", update]);
    }

    #[test]
    fn moving_to_another_lobby_leaves_the_first() {
        let mut s = state();
        let (a, _) = login(&mut s, "ann");
        let (b, _) = login(&mut s, "bob");
        send(&mut s, a, r#"REQ 1 lobby.subscribe {"game": "connect4"}"#);
        send(&mut s, b, r#"REQ 2 lobby.subscribe {"game": "connect4"}"#);
        let (_, fx) = send(&mut s, b, r#"REQ 3 lobby.subscribe {"game": "connect4-classic"}"#);
        assert_eq!(
            lines(&fx, a),
            [r#"EVT lobby.update {"players":["ann"],"ready":[],"min":3,"max":9}"#]
        );
        assert_eq!(
            lines(&fx, b),
            [
                "RES 3 OK",
                r#"EVT lobby.update {"players":["bob"],"ready":[],"min":2,"max":2}"#
            ]
        );
    }

    #[test]
    fn a_full_lobby_refuses_with_lobby_full() {
        let mut s = state();
        let (conns, _) = lobby(&mut s, "connect4-classic", &["ann", "bob"]);
        assert_eq!(conns.len(), 2);
        let (c, _) = login(&mut s, "cat");
        let (bad, fx) = send(&mut s, c, r#"REQ 1 lobby.subscribe {"game": "connect4-classic"}"#);
        assert_eq!((bad, code(&fx, "1")), (false, Some(ErrorCode::LobbyFull)));
        assert_eq!(lines(&fx, conns[0]), Vec::<String>::new(), "nobody else hears of it");
    }

    #[test]
    fn ready_and_leave_need_a_lobby() {
        let mut s = state();
        let (c, _) = login(&mut s, "ann");
        assert_eq!(refused(&mut s, c, "REQ 1 lobby.ready"), ErrorCode::NotInLobby);
        send(&mut s, c, r#"REQ 2 lobby.subscribe {"game": "connect4"}"#);
        assert!(is_ok(&send(&mut s, c, "REQ 3 lobby.leave").1, "3"));
        assert_eq!(refused(&mut s, c, "REQ 4 lobby.leave"), ErrorCode::NotInLobby);
    }

    #[test]
    fn all_ready_starts_the_countdown_and_its_end_the_match() {
        let mut s = state();
        let (conns, fx) = lobby(&mut s, "connect4", &["ann", "bob", "cat"]);
        for &c in &conns {
            assert!(lines(&fx, c).contains(&r#"EVT lobby.countdown {"seconds":10}"#.to_string()));
        }
        let timer = countdown_timer(&fx).expect("a countdown timer");
        let fx = s.timer(timer);
        let started =
            r#"EVT m1 game.match_started {"participants":["ann","bob","cat"],"to_move":"ann","width":7,"height":6}"#;
        for &c in &conns {
            assert_eq!(lines(&fx, c), [started]);
        }
        let start = fx.iter().find_map(|e| match e {
            Effect::StartMatch(st) => Some(st.clone()),
            _ => None,
        });
        assert_eq!(
            start,
            Some(MatchStart {
                match_id: "m1".into(),
                number: 1,
                cfg: GameKind::Connect4.board(3),
                names: vec!["ann".into(), "bob".into(), "cat".into()],
            })
        );
        let printed: Vec<&String> = fx
            .iter()
            .filter_map(|e| match e {
                Effect::Print(l) => Some(l),
                _ => None,
            })
            .collect();
        assert_eq!(printed.len(), 1);
        assert!(printed[0].contains(r#""event":"match_started""#), "{}", printed[0]);
        // The lobby is empty again.
        let (d, _) = login(&mut s, "dan");
        let (_, fx) = send(&mut s, d, r#"REQ 1 lobby.subscribe {"game": "connect4"}"#);
        assert!(lines(&fx, d)[1].contains(r#""players":["dan"]"#));
    }

    #[test]
    fn a_join_stops_the_countdown_and_its_old_timer_is_stale() {
        let mut s = state();
        let (conns, fx) = lobby(&mut s, "connect4", &["ann", "bob", "cat"]);
        let old = countdown_timer(&fx).unwrap();
        let (d, _) = login(&mut s, "dan");
        let (_, fx) = send(&mut s, d, r#"REQ 1 lobby.subscribe {"game": "connect4"}"#);
        assert!(fx.contains(&Effect::StopCountdown(GameKind::Connect4)));
        assert!(lines(&fx, conns[0]).contains(&r#"EVT lobby.countdown {"seconds":null}"#.to_string()));
        assert_eq!(
            s.timer(old.clone()),
            Vec::new(),
            "the stopped countdown cannot start a match"
        );
        let fx = send(&mut s, d, "REQ 2 lobby.ready").1;
        let new = countdown_timer(&fx).unwrap();
        assert_ne!(new, old);
        assert_eq!(s.timer(old), Vec::new());
        let fx = s.timer(new);
        assert_eq!(lines(&fx, d).len(), 1, "dan plays too");
    }

    #[test]
    fn a_match_relays_moves_between_the_players_and_the_referee() {
        let mut s = state();
        let (c, m, _) = started(&mut s, "connect4", &["ann", "bob", "cat"]);
        assert_eq!(
            refused(&mut s, c[0], r#"REQ 1 m1 game.action {"type": "move", "move": 3}"#),
            ErrorCode::NotYourTurn,
            "not asked yet"
        );
        let fx = s.seat_asked(&m, 0).unwrap();
        assert_eq!(lines(&fx, c[0]), ["EVT m1 game.your_turn"]);
        assert!(lines(&fx, c[1]).is_empty());
        assert_eq!(
            refused(&mut s, c[1], r#"REQ 2 m1 game.action {"type": "move", "move": 3}"#),
            ErrorCode::NotYourTurn
        );
        let (_, fx) = send(&mut s, c[0], r#"REQ 3 m1 game.action {"type": "move", "move": 3}"#);
        assert_eq!(answers(&fx), [(0, SeatAnswer::Column(3))]);
        assert!(lines(&fx, c[0]).is_empty(), "answered once the referee judged it");
        assert_eq!(
            refused(&mut s, c[0], r#"REQ 4 m1 game.action {"type": "move", "move": 4}"#),
            ErrorCode::NotYourTurn,
            "one action at a time"
        );
        let fx = s.moved(&m, 0, 3, 0, Some(1));
        let event = r#"EVT m1 game.action {"type":"move","player":"ann","move":3,"row":0}"#;
        assert_eq!(lines(&fx, c[0]), ["RES 3 OK", event]);
        assert_eq!(lines(&fx, c[1]), [event]);
        assert_eq!(lines(&fx, c[2]), [event]);
    }

    #[test]
    fn actions_that_are_no_move_are_refused_before_the_referee() {
        let mut s = state();
        let (c, m, _) = started(&mut s, "connect4-classic", &["ann", "bob"]);
        s.seat_asked(&m, 0).unwrap();
        let (bad, fx) = send(&mut s, c[0], r#"REQ 1 m1 game.action {"type": "drop", "move": 3}"#);
        assert_eq!((bad, code(&fx, "1")), (false, Some(ErrorCode::UnknownAction)));
        assert_eq!(
            refused(&mut s, c[0], r#"REQ 2 m1 game.action {"move": 3}"#),
            ErrorCode::UnknownAction
        );
        let (bad, fx) = send(&mut s, c[0], r#"REQ 3 m1 game.action {"type": "move", "move": "3"}"#);
        assert_eq!((bad, code(&fx, "3")), (true, Some(ErrorCode::BadRequest)));
        assert!(answers(&fx).is_empty());
        // Out of range is the referee's to judge.
        let (_, fx) = send(&mut s, c[0], r#"REQ 4 m1 game.action {"type": "move", "move": 99}"#);
        assert_eq!(answers(&fx), [(0, SeatAnswer::Column(99))]);
    }

    #[test]
    fn illegal_moves_are_answered_with_the_tries_left_then_the_player_is_out() {
        let mut s = state();
        let (c, m, _) = started(&mut s, "connect4", &["ann", "bob", "cat"]);
        s.seat_asked(&m, 0).unwrap();
        send(&mut s, c[0], r#"REQ 1 m1 game.action {"type": "move", "move": 9}"#);
        let refusal = Refusal::OutOfRange { column: 9, cols: 7 };
        let fx = s.illegal(&m, 0, &refusal, 1);
        assert_eq!(code(&fx, "1"), Some(ErrorCode::InvalidMove));
        assert!(
            lines(&fx, c[0])[0].contains("1 try left this turn"),
            "{:?}",
            lines(&fx, c[0])
        );
        s.seat_asked(&m, 0).unwrap();
        send(&mut s, c[0], r#"REQ 2 m1 game.action {"type": "move", "move": 9}"#);
        let fx = s.illegal(&m, 0, &refusal, 0);
        assert_eq!(
            lines(&fx, c[0])[1],
            r#"EVT m1 game.result {"result":"LOSS","reason":"invalid_moves"}"#
        );
        let out = r#"EVT m1 game.player_out {"player":"ann","reason":"invalid_moves"}"#;
        assert_eq!(lines(&fx, c[1]), [out]);
        assert_eq!(lines(&fx, c[2]), [out]);
        // Out of the match as far as the protocol goes.
        assert_eq!(refused(&mut s, c[0], "REQ 3 m1 game.leave"), ErrorCode::NotInMatch);
    }

    #[test]
    fn the_last_two_see_no_player_out_only_the_result() {
        let mut s = state();
        let (c, m, _) = started(&mut s, "connect4-classic", &["ann", "bob"]);
        let fx = s.out(&m, 1, EndReason::Timeout);
        assert_eq!(
            lines(&fx, c[1]),
            [r#"EVT m1 game.result {"result":"LOSS","reason":"timeout"}"#]
        );
        assert!(lines(&fx, c[0]).is_empty());
    }

    #[test]
    fn resigning_answers_the_referee_gone_and_ends_the_seat() {
        let mut s = state();
        let (c, m, _) = started(&mut s, "connect4", &["ann", "bob", "cat"]);
        s.seat_asked(&m, 0).unwrap();
        let (_, fx) = send(&mut s, c[0], "REQ 1 m1 game.leave");
        assert_eq!(
            lines(&fx, c[0]),
            [
                "RES 1 OK",
                r#"EVT m1 game.result {"result":"LOSS","reason":"resigned"}"#
            ]
        );
        assert_eq!(answers(&fx), [(0, SeatAnswer::Gone("resigned"))]);
        assert_eq!(s.seat_asked(&m, 0), Err("resigned"), "asked again, the seat is gone");
        // The referee's Out event then tells the others why.
        let fx = s.out(&m, 0, EndReason::Forfeit);
        assert!(lines(&fx, c[0]).is_empty(), "the result went out once");
        assert_eq!(
            lines(&fx, c[1]),
            [r#"EVT m1 game.player_out {"player":"ann","reason":"resigned"}"#]
        );
        // Free to play again.
        assert!(is_ok(
            &send(&mut s, c[0], r#"REQ 2 lobby.subscribe {"game": "connect4"}"#).1,
            "2"
        ));
    }

    #[test]
    fn a_player_in_a_match_cannot_subscribe() {
        let mut s = state();
        let (c, _, _) = started(&mut s, "connect4-classic", &["ann", "bob"]);
        assert_eq!(
            refused(&mut s, c[0], r#"REQ 1 lobby.subscribe {"game": "connect4"}"#),
            ErrorCode::BadRequest
        );
    }

    #[test]
    fn a_late_action_is_answered_too_late_when_the_referee_gives_up() {
        let mut s = state();
        let (c, m, _) = started(&mut s, "connect4-classic", &["ann", "bob"]);
        s.seat_asked(&m, 0).unwrap();
        send(&mut s, c[0], r#"REQ 1 m1 game.action {"type": "move", "move": 0}"#);
        let fx = s.seat_abandoned(&m, 0);
        assert_eq!(code(&fx, "1"), Some(ErrorCode::NotYourTurn));
        assert_eq!(
            refused(&mut s, c[0], r#"REQ 2 m1 game.action {"type": "move", "move": 0}"#),
            ErrorCode::NotYourTurn,
            "no open question"
        );
    }

    #[test]
    fn match_over_frees_everyone_and_logs_the_results() {
        let mut s = state();
        let (c, m, _) = started(&mut s, "connect4-classic", &["ann", "bob"]);
        let fx = s.seat_ended(&m, 0, PlayerResult::Win, EndReason::Win);
        assert_eq!(
            lines(&fx, c[0]),
            [r#"EVT m1 game.result {"result":"WIN","reason":"normal"}"#]
        );
        let again = s.seat_ended(&m, 0, PlayerResult::Win, EndReason::Win);
        assert!(lines(&again, c[0]).is_empty(), "one result a player");
        assert!(s.has_match(&m));
        let fx = s.match_over(&m, &record(&m, &["ann", "bob"], Some(0)));
        assert!(!s.has_match(&m));
        let [Effect::Print(line)] = fx.as_slice() else {
            panic!("{fx:?}")
        };
        let v: Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["event"], "match_over");
        assert_eq!(
            v["results"],
            json!([{"player": "ann", "result": "WIN", "reason": "normal"},
                   {"player": "bob", "result": "LOSS", "reason": "normal"}])
        );
        for (i, &conn) in c.iter().enumerate() {
            let (_, fx) = send(&mut s, conn, r#"REQ 1 lobby.subscribe {"game": "connect4"}"#);
            assert!(is_ok(&fx, "1"), "player {i} is free again");
        }
        assert_eq!(s.match_over(&m, &record(&m, &["ann", "bob"], Some(0))), Vec::new());
    }

    #[test]
    fn a_disconnect_in_a_lobby_leaves_it_and_starts_the_grace() {
        let mut s = state();
        let (c, fx) = lobby(&mut s, "connect4", &["ann", "bob", "cat"]);
        assert!(countdown_timer(&fx).is_some());
        let fx = s.closed(c[2]);
        assert_eq!(fx[0], Effect::Close(c[2]));
        assert!(fx.contains(&Effect::StopCountdown(GameKind::Connect4)));
        assert!(lines(&fx, c[0]).contains(
            &r#"EVT lobby.update {"players":["ann","bob"],"ready":["ann","bob"],"min":3,"max":9}"#.to_string()
        ));
        assert!(lines(&fx, c[2]).is_empty(), "nothing to a closed connection");
        assert!(fx.contains(&Effect::After(
            GRACE,
            Timer::Grace {
                name: "cat".into(),
                epoch: 1
            }
        )));
        assert!(!s.has_conn(c[2]));
        assert_eq!(s.closed(c[2]), Vec::new(), "closing twice is harmless");
    }

    #[test]
    fn resuming_within_the_grace_restores_the_match() {
        let mut s = state();
        let (c, m, _) = started(&mut s, "connect4-classic", &["ann", "bob"]);
        s.seat_asked(&m, 0).unwrap();
        send(&mut s, c[0], r#"REQ 1 m1 game.action {"type": "move", "move": 2}"#);
        s.moved(&m, 0, 2, 0, Some(1));
        s.seat_asked(&m, 1).unwrap();
        let bob_token = s.players["bob"].token.clone();
        let fx = s.closed(c[1]);
        let grace = Timer::Grace {
            name: "bob".into(),
            epoch: 1,
        };
        assert!(fx.contains(&Effect::After(GRACE, grace.clone())));
        let n = open(&mut s);
        send(&mut s, n, r#"REQ h session.hello {"version": 1}"#);
        assert_eq!(
            refused(&mut s, n, r#"REQ 1 session.resume {"session_token": "nope"}"#),
            ErrorCode::BadToken
        );
        let fx = send(
            &mut s,
            n,
            &format!(r#"REQ 2 session.resume {{"session_token": "{bob_token}"}}"#),
        )
        .1;
        assert_eq!(
            lines(&fx, n),
            [
                r#"RES 2 OK {"player":"bob","match":"m1","moves":[["ann",2,0]],"to_move":"bob"}"#,
                "EVT m1 game.your_turn"
            ]
        );
        assert_eq!(s.timer(grace), Vec::new(), "the old grace timer is stale");
        let (_, fx) = send(&mut s, n, r#"REQ 3 m1 game.action {"type": "move", "move": 2}"#);
        assert_eq!(answers(&fx), [(1, SeatAnswer::Column(2))]);
    }

    #[test]
    fn resuming_takes_over_an_open_connection_without_a_disconnect() {
        let mut s = state();
        let (old, token) = login(&mut s, "ann");
        let n = open(&mut s);
        send(&mut s, n, r#"REQ h session.hello {"version": 1}"#);
        let fx = send(
            &mut s,
            n,
            &format!(r#"REQ 1 session.resume {{"session_token": "{token}"}}"#),
        )
        .1;
        assert_eq!(fx[0], Effect::Close(old));
        assert!(
            !fx.iter().any(|e| matches!(e, Effect::After(..))),
            "no grace: ann is here"
        );
        assert_eq!(
            lines(&fx, n),
            [r#"RES 1 OK {"player":"ann","match":null,"moves":[],"to_move":null}"#]
        );
        assert!(!s.has_conn(old));
    }

    #[test]
    fn past_the_grace_the_token_dies_the_name_frees_and_the_seat_is_gone() {
        let mut s = state();
        let (c, m, _) = started(&mut s, "connect4", &["ann", "bob", "cat"]);
        let token = s.players["cat"].token.clone();
        s.seat_asked(&m, 2).unwrap();
        let fx = s.closed(c[2]);
        assert!(answers(&fx).is_empty(), "the referee waits through the grace");
        let grace = Timer::Grace {
            name: "cat".into(),
            epoch: 1,
        };
        let fx = s.timer(grace);
        assert_eq!(answers(&fx), [(2, SeatAnswer::Gone("disconnected"))]);
        assert_eq!(s.seat_asked(&m, 2), Err("disconnected"));
        let n = open(&mut s);
        send(&mut s, n, r#"REQ h session.hello {"version": 1}"#);
        let (_, fx) = send(
            &mut s,
            n,
            &format!(r#"REQ 1 session.resume {{"session_token": "{token}"}}"#),
        );
        assert_eq!(code(&fx, "1"), Some(ErrorCode::BadToken));
        let (_, fx) = send(&mut s, n, r#"REQ 2 session.login {"player": "cat"}"#);
        assert!(is_ok(&fx, "2"), "the name is free");
        assert_eq!(
            refused(&mut s, n, r#"REQ 3 m1 game.leave"#),
            ErrorCode::NotInMatch,
            "the new cat has no seat"
        );
    }

    #[test]
    fn connection_limits_refuse_and_closing_frees_a_slot() {
        let mut s = state();
        let same: Vec<ConnId> = (0..5).map(|_| s.open(ip(1)).unwrap().0).collect();
        assert!(s.open(ip(1)).is_none(), "five an address");
        assert!(s.open(ip(2)).is_some());
        assert!(s.open(ip(3)).is_none(), "six in all");
        s.closed(same[0]);
        assert!(s.open(ip(1)).is_some());
    }

    #[test]
    fn the_hello_timeout_closes_only_connections_not_logged_in() {
        let mut s = state();
        let (a, fx) = s.open(ip(1)).unwrap();
        assert_eq!(fx, [Effect::After(HELLO, Timer::Hello(a))]);
        let (b, _) = login(&mut s, "bob");
        assert_eq!(s.timer(Timer::Hello(a)), [Effect::Close(a)]);
        assert_eq!(s.timer(Timer::Hello(b)), Vec::new());
        assert!(s.has_conn(b) && !s.has_conn(a));
    }

    #[test]
    fn a_connection_that_stopped_reading_is_dropped_as_a_disconnect() {
        let mut s = state();
        let (c, _) = lobby(&mut s, "connect4", &["ann", "bob"]);
        let fx = s.kicked(c[0]);
        assert_eq!(fx[0], Effect::Close(c[0]));
        assert!(lines(&fx, c[1])[0].contains(r#""players":["bob"]"#));
        assert_eq!(s.kicked(c[0]), Vec::new());
        let late = s.request(c[0], parse_request(b"REQ 1 lobby.ready").unwrap());
        assert!(late.is_none(), "a dropped connection's requests are not handled");
    }
}
