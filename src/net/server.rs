//! The lobby server's hub: one actor that owns every session, lobby and
//! match, so the protocol's state lives in one place and needs no locks.
//! Connections hand it parsed requests ([`Inbound`]); the referee reaches
//! it through [`NetSeat`] actors ([`SeatAsk`], [`SeatAbandon`],
//! [`SeatEnded`]) and as the match's event sink ([`GameEvent`]). The hub
//! never decides a game: the referee (`referee_game`, the same one every
//! mode uses) asks for moves and decides legality, turn order and results;
//! the hub only turns its messages into lines and lines into its answers.
//!
//! Illegal moves go through to the referee as answers: the referee refuses
//! them (the hub answers `ERR INVALID_MOVE` and the player is asked again
//! with a new `game.your_turn`), and counts them against
//! `limits.max_invalid_moves` per turn, after which the player is out with
//! the reason `invalid_moves`. Only what is not a move at all (no `type`,
//! a `move` that is not a whole number) is refused here, before the referee.

use super::codec::{err_line, evt_line, ok_line, ErrorCode, Request};
use super::conn::{self, Limits, Outbox};
use super::lobby::{Countdown, Lobby};
use super::seat::NetSeat;
use crate::actors::messages::{GameEvent, PlayGame, PlayerHandle, Reply, Seat};
use crate::actors::mode::{run_mode, ModeError};
use crate::actors::referee::referee_game;
use crate::game::{Answer, BoardConfig, EndReason, DEFAULT_LETTERS};
use crate::players::TurnView;
use crate::record::{GameRecord, PlayerResult};
use crate::scenario::net::{GameKind, ServerSettings};
use crate::util::seed;
use actix::prelude::*;
use rand::RngCore;
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::future::ready;
use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{oneshot, watch};

/// Everything a server run needs.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    pub settings: ServerSettings,
    /// Illegal answers per turn before a player is out (`limits.max_invalid_moves`).
    pub max_invalid: u32,
    pub seed: u64,
    /// One JSON object a line on standard output instead of text.
    pub json: bool,
}

pub type ConnId = u64;

/// Player names: what `session.login` accepts.
pub const MAX_NAME: usize = 32;

/// Every method of the protocol. Others are `UNKNOWN_METHOD`.
const METHODS: [&str; 8] = [
    "session.hello",
    "session.login",
    "session.resume",
    "lobby.subscribe",
    "lobby.ready",
    "lobby.leave",
    "game.action",
    "game.leave",
];

/// A new token: 256 bits from the operating system's generator, as hex.
/// Tokens are the only proof of identity on resume, so they must not be
/// guessable from earlier ones (a seeded generator would be).
pub fn new_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

// ---- messages -------------------------------------------------------------

/// A connection opened; `None` when a connection limit refuses it.
#[derive(Message)]
#[rtype(result = "Option<ConnId>")]
pub struct Open {
    pub ip: IpAddr,
    pub outbox: Outbox,
    /// Dropped by the hub to end the connection's tasks.
    pub kill: watch::Sender<()>,
}

/// A well-formed request. Answers whether it was refused `BAD_REQUEST`
/// (the connection counts those), `None` if the connection is gone.
#[derive(Message)]
#[rtype(result = "Option<bool>")]
pub struct Inbound {
    pub conn: ConnId,
    pub req: Request,
}

#[derive(Message)]
#[rtype(result = "()")]
pub struct Closed {
    pub conn: ConnId,
}

/// The referee asks a seat for a move (through its [`NetSeat`]).
#[derive(Message)]
#[rtype(result = "Reply")]
pub struct SeatAsk {
    pub match_id: String,
    pub seat: usize,
    pub view: TurnView,
}

/// The referee stopped waiting for a seat (its move time ran out).
#[derive(Message)]
#[rtype(result = "()")]
pub struct SeatAbandon {
    pub match_id: String,
    pub seat: usize,
}

/// The referee's verdict for one seat at the end of the game.
#[derive(Message)]
#[rtype(result = "()")]
pub struct SeatEnded {
    pub match_id: String,
    pub seat: usize,
    pub result: PlayerResult,
    pub reason: EndReason,
}

/// The referee finished a match.
#[derive(Message)]
#[rtype(result = "()")]
struct MatchOver {
    match_id: String,
    record: GameRecord,
}

// ---- state ------------------------------------------------------------------

struct Conn {
    ip: IpAddr,
    outbox: Outbox,
    _kill: watch::Sender<()>,
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
    /// The referee's open question to this seat.
    pending: Option<oneshot::Sender<Reply>>,
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

pub struct Hub {
    cfg: Arc<ServeConfig>,
    conns: HashMap<ConnId, Conn>,
    per_ip: HashMap<IpAddr, usize>,
    players: HashMap<String, Player>,
    tokens: HashMap<String, String>,
    lobbies: HashMap<GameKind, Lobby>,
    countdowns: HashMap<GameKind, SpawnHandle>,
    matches: HashMap<String, MatchState>,
    next_conn: ConnId,
    next_match: u64,
    /// Connections whose outbox overflowed while sending; dropped at the end
    /// of the current message, never in the middle of a broadcast.
    kicks: Vec<ConnId>,
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

impl Hub {
    pub fn new(cfg: ServeConfig) -> Self {
        let lobbies = cfg.settings.games.iter().map(|&g| (g, Lobby::new(g))).collect();
        Hub {
            cfg: Arc::new(cfg),
            conns: HashMap::new(),
            per_ip: HashMap::new(),
            players: HashMap::new(),
            tokens: HashMap::new(),
            lobbies,
            countdowns: HashMap::new(),
            matches: HashMap::new(),
            next_conn: 0,
            next_match: 0,
            kicks: Vec::new(),
        }
    }

    // ---- sending ----

    fn send_conn(&mut self, conn: ConnId, line: &Arc<str>) {
        if let Some(c) = self.conns.get(&conn) {
            if c.outbox.try_send(line.clone()).is_err() {
                self.kicks.push(conn);
            }
        }
    }

    fn send_player(&mut self, name: &str, line: &Arc<str>) {
        if let Some(conn) = self.players.get(name).and_then(|p| p.conn) {
            self.send_conn(conn, line);
        }
    }

    fn send_lobby(&mut self, game: GameKind, line: &Arc<str>) {
        let names: Vec<String> = self.lobbies.get(&game).map_or(Vec::new(), |l| l.players().to_vec());
        for n in names {
            self.send_player(&n, line);
        }
    }

    /// Sends a match event to everyone still in the match.
    fn send_match(&mut self, match_id: &str, line: &Arc<str>, except: Option<usize>) {
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
            self.send_player(&n, line);
        }
    }

    fn lobby_update(&mut self, game: GameKind) {
        let Some(l) = self.lobbies.get(&game) else { return };
        let line: Arc<str> = evt_line(None, "lobby.update", Some(&l.update_body())).into();
        self.send_lobby(game, &line);
    }

    /// Drops connections that stopped reading, as disconnects.
    fn settle_kicks(&mut self, ctx: &mut Context<Self>) {
        while let Some(conn) = self.kicks.pop() {
            if self.conns.contains_key(&conn) {
                tracing::info!("connection {conn}: not reading its lines, dropped");
                self.drop_conn(conn, ctx);
            }
        }
    }

    // ---- connections and sessions ----

    fn drop_conn(&mut self, conn: ConnId, ctx: &mut Context<Self>) {
        let Some(c) = self.conns.remove(&conn) else { return };
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
            self.leave_lobby(g, &name, ctx);
        }
        tracing::info!(
            "{name} disconnected; token valid for {:?}",
            self.cfg.settings.reconnect_grace
        );
        ctx.run_later(self.cfg.settings.reconnect_grace, move |hub, ctx| {
            hub.grace_over(&name, epoch);
            hub.settle_kicks(ctx);
        });
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
        if let Place::Match(m) = p.place {
            if let Some(st) = self.matches.get_mut(&m) {
                if let Some(i) = st.seat_of(name) {
                    let s = &mut st.seats[i];
                    s.gone = Some("disconnected");
                    // Nobody can act for this seat any more, not even a new
                    // player who takes the freed name.
                    s.result = Some(("LOSS", "disconnected"));
                    if s.action.is_none() {
                        if let Some(tx) = s.pending.take() {
                            let _ = tx.send(Reply::Gone("disconnected".into()));
                        }
                    }
                }
            }
        }
    }

    fn leave_lobby(&mut self, game: GameKind, name: &str, ctx: &mut Context<Self>) {
        let Some(l) = self.lobbies.get_mut(&game) else { return };
        if let Ok(effect) = l.leave(name) {
            self.lobby_update(game);
            self.countdown(game, effect, ctx);
        }
    }

    fn countdown(&mut self, game: GameKind, effect: Countdown, ctx: &mut Context<Self>) {
        match effect {
            Countdown::Keep => {}
            Countdown::Stop => {
                if let Some(h) = self.countdowns.remove(&game) {
                    ctx.cancel_future(h);
                }
                let line: Arc<str> = evt_line(None, "lobby.countdown", Some(&json!({ "seconds": null }))).into();
                self.send_lobby(game, &line);
            }
            Countdown::Start => {
                let d = self.cfg.settings.countdown;
                let seconds = if d.subsec_nanos() == 0 {
                    json!(d.as_secs())
                } else {
                    json!(d.as_secs_f64())
                };
                let line: Arc<str> = evt_line(None, "lobby.countdown", Some(&json!({ "seconds": seconds }))).into();
                self.send_lobby(game, &line);
                let epoch = self.lobbies[&game].epoch();
                let h = ctx.run_later(d, move |hub, ctx| {
                    hub.countdowns.remove(&game);
                    let names = hub.lobbies.get_mut(&game).and_then(|l| l.take_all(epoch));
                    if let Some(names) = names {
                        hub.start_match(game, names, ctx);
                    }
                    hub.settle_kicks(ctx);
                });
                if let Some(old) = self.countdowns.insert(game, h) {
                    ctx.cancel_future(old);
                }
            }
        }
    }

    // ---- matches ----

    fn start_match(&mut self, game: GameKind, names: Vec<String>, ctx: &mut Context<Self>) {
        self.next_match += 1;
        let no = self.next_match;
        let match_id = format!("m{no}");
        let cfg = game.board(names.len());
        let hub = ctx.address();
        let seats: Vec<Seat> = names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let seat = NetSeat {
                    hub: hub.clone(),
                    match_id: match_id.clone(),
                    seat: i,
                }
                .start();
                Seat {
                    name: name.clone(),
                    player: PlayerHandle::of(&seat),
                    move_time: Some(self.cfg.settings.move_timeout),
                }
            })
            .collect();
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
                        pending: None,
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
        let line: Arc<str> = evt_line(Some(&match_id), "game.match_started", Some(&body)).into();
        for n in &names {
            if let Some(p) = self.players.get_mut(n) {
                p.place = Place::Match(match_id.clone());
            }
            self.send_player(n, &line);
        }
        tracing::info!(
            "{match_id} {} starts: {} on {}x{}",
            game.as_str(),
            names.join(", "),
            cfg.cols,
            cfg.rows
        );
        self.print(if self.cfg.json {
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
        });
        let msg = PlayGame {
            game: no,
            games: no,
            cfg,
            seats,
            letters: DEFAULT_LETTERS.to_vec(),
            opening: Vec::new(),
            max_invalid: self.cfg.max_invalid,
            seed: seed::derive(self.cfg.seed, no, seed::LOBBY_MATCH),
            sinks: vec![hub.clone().recipient()],
        };
        actix::spawn(async move {
            let record = referee_game(msg).await;
            hub.do_send(MatchOver { match_id, record });
        });
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
        let line: Arc<str> = evt_line(
            Some(match_id),
            "game.result",
            Some(&json!({ "result": result, "reason": reason })),
        )
        .into();
        self.send_player(&name, &line);
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
            let line: Arc<str> = evt_line(
                Some(match_id),
                "game.player_out",
                Some(&json!({ "player": name, "reason": reason })),
            )
            .into();
            self.send_match(match_id, &line, Some(seat));
        }
    }

    fn match_over(&mut self, match_id: &str, record: &GameRecord) {
        let Some(st) = self.matches.remove(match_id) else {
            return;
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
        // The record first: whoever sees `match_over` may read the file.
        if let Some(path) = &self.cfg.settings.records {
            let written = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .and_then(|mut f| writeln!(f, "{}", serde_json::to_string(record).unwrap_or_default()));
            if let Err(e) = written {
                tracing::warn!("cannot append to {}: {e}", path.display());
            }
        }
        self.print(if self.cfg.json {
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
        });
    }

    fn print(&self, line: String) {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{line}");
        let _ = out.flush();
    }

    // ---- requests ----

    fn ok(&mut self, conn: ConnId, id: &str, body: Option<Value>) {
        let line: Arc<str> = ok_line(id, body.as_ref()).into();
        self.send_conn(conn, &line);
    }

    fn request(&mut self, conn: ConnId, req: Request, ctx: &mut Context<Self>) -> Result<(), Failure> {
        let c = self.conns.get(&conn).expect("the caller checked");
        if !c.hello && req.method != "session.hello" {
            return fail(ErrorCode::HelloRequired, "say session.hello first");
        }
        if !METHODS.contains(&req.method.as_str()) {
            return fail(
                ErrorCode::UnknownMethod,
                format!("unknown method `{}`; methods: {}", req.method, METHODS.join(", ")),
            );
        }
        let in_game = req.method.starts_with("game.");
        let player = c.player.clone();
        if player.is_none() && (in_game || req.method.starts_with("lobby.")) {
            return fail(ErrorCode::LoginRequired, "log in first with session.login");
        }
        match (&req.match_id, in_game) {
            (Some(_), false) => return fail(ErrorCode::BadRequest, format!("`{}` takes no match id", req.method)),
            (None, true) => {
                return fail(
                    ErrorCode::BadRequest,
                    format!("game requests name their match: REQ <id> <m> {}", req.method),
                )
            }
            _ => {}
        }
        match req.method.as_str() {
            "session.hello" => {
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
            }
            "session.login" => self.login(conn, &req, player)?,
            "session.resume" => self.resume(conn, &req, player, ctx)?,
            "lobby.subscribe" => self.subscribe(conn, &req, &player.expect("checked"), ctx)?,
            "lobby.ready" | "lobby.leave" => {
                let name = player.expect("checked");
                let Some(Place::Lobby(game)) = self.players.get(&name).map(|p| p.place.clone()) else {
                    return fail(ErrorCode::NotInLobby, "you are not in a lobby");
                };
                let lobby = self.lobbies.get_mut(&game).expect("a hosted game");
                let effect = if req.method == "lobby.ready" {
                    lobby.ready(&name)
                } else {
                    lobby.leave(&name)
                }
                .map_err(|_| (ErrorCode::NotInLobby, "you are not in a lobby".to_string()))?;
                if req.method == "lobby.leave" {
                    self.players.get_mut(&name).expect("checked").place = Place::Idle;
                }
                self.ok(conn, &req.id, None);
                self.lobby_update(game);
                self.countdown(game, effect, ctx);
            }
            "game.action" => self.action(&req, &player.expect("checked"))?,
            "game.leave" => {
                let name = player.expect("checked");
                let m = req.match_id.clone().expect("checked");
                let seat = self.seat_for(&m, &name)?;
                self.ok(conn, &req.id, None);
                let st = self.matches.get_mut(&m).expect("checked");
                let s = &mut st.seats[seat];
                s.gone = Some("resigned");
                if s.action.is_none() {
                    if let Some(tx) = s.pending.take() {
                        let _ = tx.send(Reply::Gone("resigned".into()));
                    }
                }
                tracing::info!("{m}: {name} resigns");
                self.finish_seat(&m, seat, "LOSS", "resigned");
            }
            _ => unreachable!("every method of METHODS is handled"),
        }
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

    fn resume(
        &mut self,
        conn: ConnId,
        req: &Request,
        player: Option<String>,
        ctx: &mut Context<Self>,
    ) -> Result<(), Failure> {
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
            self.drop_conn(old, ctx);
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
                        .is_some_and(|i| st.seats[i].pending.is_some() && st.seats[i].action.is_none());
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
            let line: Arc<str> = evt_line(Some(m), "game.your_turn", None).into();
            self.send_conn(conn, &line);
        }
        Ok(())
    }

    fn subscribe(&mut self, conn: ConnId, req: &Request, name: &str, ctx: &mut Context<Self>) -> Result<(), Failure> {
        let game_name = string_field(&req.params, "game")?;
        let game = GameKind::parse(game_name)
            .filter(|g| self.lobbies.contains_key(g))
            .ok_or_else(|| {
                let hosted: Vec<&str> = self.cfg.settings.games.iter().map(|g| g.as_str()).collect();
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
            self.leave_lobby(old, name, ctx);
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
        self.countdown(game, effect, ctx);
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
        let st = self.matches.get_mut(m).expect("checked");
        let s = &mut st.seats[seat];
        if s.action.is_some() || s.pending.is_none() {
            return fail(ErrorCode::NotYourTurn, "it is not your turn");
        }
        let tx = s.pending.take().expect("checked");
        s.action = Some(req.id.clone());
        // The referee decides: its verdict comes back as a Moved or an
        // Illegal event, and the answer to this request goes out then.
        let _ = tx.send(Reply::Answer(Answer::Column(column)));
        Ok(())
    }
}

impl Actor for Hub {
    type Context = Context<Self>;
    fn started(&mut self, ctx: &mut Context<Self>) {
        // Many connections send at once; a roomy mailbox keeps them from
        // parking on a full one.
        ctx.set_mailbox_capacity(4096);
    }
}

impl Handler<Open> for Hub {
    type Result = Option<ConnId>;
    fn handle(&mut self, msg: Open, ctx: &mut Context<Self>) -> Option<ConnId> {
        let s = &self.cfg.settings;
        let from_ip = self.per_ip.get(&msg.ip).copied().unwrap_or(0);
        if self.conns.len() >= s.max_connections || from_ip >= s.max_connections_per_address {
            tracing::warn!("refused a connection from {}: connection limit", msg.ip);
            return None;
        }
        self.next_conn += 1;
        let id = self.next_conn;
        *self.per_ip.entry(msg.ip).or_insert(0) += 1;
        self.conns.insert(
            id,
            Conn {
                ip: msg.ip,
                outbox: msg.outbox,
                _kill: msg.kill,
                hello: false,
                player: None,
            },
        );
        // A connection that never logs in is closed: it must not hold a
        // slot of the connection limits for ever.
        ctx.run_later(s.hello_timeout, move |hub, ctx| {
            if hub.conns.get(&id).is_some_and(|c| c.player.is_none()) {
                tracing::info!("connection {id}: not logged in within the hello timeout, closed");
                hub.drop_conn(id, ctx);
                hub.settle_kicks(ctx);
            }
        });
        Some(id)
    }
}

impl Handler<Inbound> for Hub {
    type Result = Option<bool>;
    fn handle(&mut self, msg: Inbound, ctx: &mut Context<Self>) -> Option<bool> {
        if !self.conns.contains_key(&msg.conn) {
            return None;
        }
        let id = msg.req.id.clone();
        let bad = match self.request(msg.conn, msg.req, ctx) {
            Ok(()) => false,
            Err((code, message)) => {
                let line: Arc<str> = err_line(Some(&id), code, &message).into();
                self.send_conn(msg.conn, &line);
                code == ErrorCode::BadRequest
            }
        };
        self.settle_kicks(ctx);
        Some(bad)
    }
}

impl Handler<Closed> for Hub {
    type Result = ();
    fn handle(&mut self, msg: Closed, ctx: &mut Context<Self>) {
        self.drop_conn(msg.conn, ctx);
        self.settle_kicks(ctx);
    }
}

impl Handler<SeatAsk> for Hub {
    type Result = ResponseFuture<Reply>;
    fn handle(&mut self, msg: SeatAsk, ctx: &mut Context<Self>) -> Self::Result {
        let Some(st) = self.matches.get_mut(&msg.match_id) else {
            return Box::pin(ready(Reply::Gone("disconnected".into())));
        };
        let s = &mut st.seats[msg.seat];
        if let Some(why) = s.gone {
            return Box::pin(ready(Reply::Gone(why.into())));
        }
        let (tx, rx) = oneshot::channel();
        s.pending = Some(tx);
        s.action = None;
        let name = s.name.clone();
        st.to_move = Some(msg.seat);
        let line: Arc<str> = evt_line(Some(&msg.match_id), "game.your_turn", None).into();
        self.send_player(&name, &line);
        self.settle_kicks(ctx);
        Box::pin(async move { rx.await.unwrap_or_else(|_| Reply::Gone("disconnected".into())) })
    }
}

impl Handler<SeatAbandon> for Hub {
    type Result = ();
    fn handle(&mut self, msg: SeatAbandon, ctx: &mut Context<Self>) {
        let Some(st) = self.matches.get_mut(&msg.match_id) else {
            return;
        };
        let s = &mut st.seats[msg.seat];
        s.pending = None;
        if let Some(id) = s.action.take() {
            let name = s.name.clone();
            let line: Arc<str> = err_line(Some(&id), ErrorCode::NotYourTurn, "too late: your move time ran out").into();
            self.send_player(&name, &line);
        }
        self.settle_kicks(ctx);
    }
}

impl Handler<SeatEnded> for Hub {
    type Result = ();
    fn handle(&mut self, msg: SeatEnded, ctx: &mut Context<Self>) {
        let Some(st) = self.matches.get_mut(&msg.match_id) else {
            return;
        };
        let s = &mut st.seats[msg.seat];
        s.active = false;
        let reason = reason_word(msg.result, msg.reason, s.gone);
        self.finish_seat(&msg.match_id, msg.seat, msg.result.word(), reason);
        self.settle_kicks(ctx);
    }
}

impl Handler<MatchOver> for Hub {
    type Result = ();
    fn handle(&mut self, msg: MatchOver, ctx: &mut Context<Self>) {
        self.match_over(&msg.match_id, &msg.record);
        self.settle_kicks(ctx);
    }
}

impl Handler<GameEvent> for Hub {
    type Result = ();
    fn handle(&mut self, ev: GameEvent, ctx: &mut Context<Self>) {
        match ev {
            GameEvent::Moved {
                game,
                seat,
                col,
                row,
                next,
                ..
            } => {
                let m = format!("m{game}");
                let Some(st) = self.matches.get_mut(&m) else { return };
                st.moves.push((seat, col, row));
                st.to_move = next.map(|(t, _)| t);
                let s = &mut st.seats[seat];
                let name = s.name.clone();
                if let Some(id) = s.action.take() {
                    let line: Arc<str> = ok_line(&id, None).into();
                    self.send_player(&name, &line);
                }
                tracing::debug!("{m}: {name} plays column {col}, row {row}");
                let body = json!({ "type": "move", "player": name, "move": col, "row": row });
                let line: Arc<str> = evt_line(Some(&m), "game.action", Some(&body)).into();
                self.send_match(&m, &line, None);
            }
            GameEvent::Illegal {
                game,
                seat,
                refusal,
                tries_left,
                ..
            } => {
                let m = format!("m{game}");
                let Some(st) = self.matches.get_mut(&m) else { return };
                let s = &mut st.seats[seat];
                let name = s.name.clone();
                if let Some(id) = s.action.take() {
                    let line: Arc<str> = err_line(
                        Some(&id),
                        ErrorCode::InvalidMove,
                        &format!(
                            "{}; {tries_left} tr{} left this turn",
                            refusal.describe(0),
                            if tries_left == 1 { "y" } else { "ies" }
                        ),
                    )
                    .into();
                    self.send_player(&name, &line);
                }
                if tries_left == 0 {
                    // The referee knocked the seat out (TOO_MANY_INVALID); it
                    // sends no separate Out event for that.
                    self.seat_out(&m, seat, "invalid_moves");
                }
            }
            GameEvent::Out { game, seat, reason, .. } => {
                let m = format!("m{game}");
                let Some(st) = self.matches.get(&m) else { return };
                let why = reason_word(PlayerResult::Loss, reason, st.seats[seat].gone);
                self.seat_out(&m, seat, why);
            }
            GameEvent::Started { .. } | GameEvent::Over { .. } | GameEvent::Summary { .. } => {}
        }
        self.settle_kicks(ctx);
    }
}

/// Binds, announces the address, and serves until Ctrl-C.
pub fn serve(cfg: ServeConfig) -> Result<(), ModeError> {
    run_mode(
        async move {
            let s = cfg.settings.clone();
            let listener = TcpListener::bind(s.bind)
                .await
                .map_err(|e| ModeError::Failed(format!("cannot listen on {}: {e}", s.bind)))?;
            let addr: SocketAddr = listener.local_addr().unwrap_or(s.bind);
            let games: Vec<&str> = s.games.iter().map(|g| g.as_str()).collect();
            let line = if cfg.json {
                json!({"event": "listening", "addr": addr.to_string(), "games": games}).to_string()
            } else {
                format!("c4sim lobby server listening on {addr} (games: {})", games.join(", "))
            };
            {
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "{line}");
                let _ = out.flush();
            }
            let limits = Limits {
                max_line: s.max_line,
                lines_per_second: s.max_lines_per_second,
            };
            let hub = Hub::new(cfg).start();
            actix::spawn(accept_loop(listener, hub, limits));
            // A server serves until it is interrupted.
            std::future::pending::<Result<(), ModeError>>().await
        },
        || "Server stopped.".into(),
    )
}

async fn accept_loop(listener: TcpListener, hub: Addr<Hub>, limits: Limits) {
    loop {
        match listener.accept().await {
            Ok((stream, peer)) => {
                actix::spawn(conn::run(stream, peer, hub.clone(), limits));
            }
            Err(e) => {
                // Out of file descriptors and the like: wait a little
                // rather than spin.
                tracing::warn!("accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
