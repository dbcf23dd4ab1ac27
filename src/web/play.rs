//! The play hub: games between people on the page and the server's player.
//! Each game is played by the one referee ([`referee_game`]); the hub is
//! the person's seat at it (it answers [`YourTurn`] when the page sends a
//! move) and a sink of its events, which it mirrors into a [`Table`] and
//! sends to every page following the game. Nothing a page sends reaches a
//! game other than one that page joined.

use super::proto::{encode, ClientMsg, ErrorCode, First, ProtoError};
use super::view::Table;
use crate::actors::messages::{
    Abandon, GameEnded, GameEvent, NewGame, PlayGame, PlayerHandle, Reply, Seat, Shutdown, YourTurn,
};
use crate::actors::player::PlayerActor;
use crate::actors::referee::referee_game;
use crate::actors::runner::{start_player, Output};
use crate::game::board::BoardError;
use crate::game::{Answer, BoardConfig};
use crate::players::PlayerSpec;
use crate::scenario::{RenderStyle, DEFAULT_MOVE_TIME};
use crate::util::seed;
use actix::prelude::*;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};

/// Games in progress at once; more are refused `busy`.
pub const MAX_PLAYING: usize = 16;

/// Analyses at once unless told (`c4sim web --analysts`): half the cores,
/// at least one, so the other half keeps the server's games at their pace.
pub fn default_analysts() -> usize {
    (crate::util::cores() / 2).max(1)
}
/// Finished games kept for pages that come back to them.
const MAX_KEPT: usize = 64;
/// How long a game waits for its page to come back (a reload) before the
/// person is taken to have left and resigns.
const GRACE: Duration = Duration::from_secs(30);
/// Illegal answers before the person loses: high, since a person clicking a
/// full column should be told, not punished (the page greys those out).
const MAX_INVALID: u32 = 1000;

/// What a page names a side a person plays.
pub const PERSON: &str = "person";
/// A person's name at a hot seat, by seat.
const COLOUR_NAMES: [&str; 2] = ["Red", "Yellow"];

/// A new game's seats, and the player actors started for them.
type Seated = (Vec<Seat>, Vec<Addr<PlayerActor>>);

/// Who plays one side of a game on the page.
enum Side {
    Person,
    Player(PlayerSpec),
}

/// The server's player and the board it plays on.
#[derive(Clone)]
pub struct Opponent {
    pub spec: PlayerSpec,
    pub cfg: BoardConfig,
    pub seed: u64,
    /// Its time per move (the scenario's `limits.move_time` unless its own).
    pub move_time: Duration,
}

/// A connection's outbox: the server's messages to one page.
pub type Outbox = mpsc::Sender<String>;

/// Sends `text` without waiting: a page that does not read its messages
/// misses some, and resyncs with `join` (every `game` message is whole).
pub fn post(out: &Outbox, text: String) {
    let _ = out.try_send(text);
}

struct Live {
    table: Table,
    /// The referee's question to the person, while it waits.
    pending: Option<oneshot::Sender<Reply>>,
    resigned: bool,
    /// Connections following this game.
    pages: HashSet<u64>,
}

pub struct PlayHub {
    opponent: Option<Opponent>,
    games: HashMap<String, Live>,
    numbers: HashMap<u64, String>,
    conns: HashMap<u64, Outbox>,
    /// More players a side can be given (`c4sim web` offers the shipped
    /// profiles beside its own).
    others: Vec<PlayerSpec>,
    next: u64,
    /// Connections with an analysis running (one at a time each): its
    /// number and the flag that cancels it.
    analyzing: HashMap<u64, (u64, Arc<AtomicBool>)>,
    /// The request a page made while its last one was still running (that
    /// one is cancelled): started when it ends.
    queued: HashMap<u64, (String, Option<PlayerSpec>)>,
    /// Searches started, numbering them.
    searches: u64,
    /// Analyses running on the blocking pool, whoever asked (a page that
    /// left still has its search running until it ends).
    running: usize,
    /// The most analyses at once: each holds a core and a solver's table,
    /// so games on this server keep their pace whatever pages ask.
    max_running: usize,
    /// The solvers analysis uses, kept between requests.
    analysts: std::sync::Arc<super::analysis::Analysts>,
}

impl PlayHub {
    /// Who people play here, if anyone.
    pub fn opponent(&self) -> Option<&Opponent> {
        self.opponent.as_ref()
    }

    /// Also offers `others` as players a side can be given.
    pub fn with_others(mut self, others: Vec<PlayerSpec>) -> Self {
        self.others = others;
        self
    }

    pub fn new(opponent: Option<Opponent>) -> Self {
        PlayHub {
            opponent,
            games: HashMap::new(),
            numbers: HashMap::new(),
            conns: HashMap::new(),
            others: Vec::new(),
            next: 1,
            analyzing: HashMap::new(),
            queued: HashMap::new(),
            searches: 0,
            running: 0,
            max_running: default_analysts(),
            analysts: Default::default(),
        }
    }

    /// At most `n` (at least 1) analyses at once, for the whole server.
    pub fn with_analysts(mut self, n: usize) -> Self {
        self.max_running = n.max(1);
        self
    }

    fn send(&self, conn: u64, text: String) {
        if let Some(out) = self.conns.get(&conn) {
            post(out, text);
        }
    }

    fn error(&self, conn: u64, code: ErrorCode, message: impl Into<String>) {
        self.send(conn, ProtoError::new(code, message).encode());
    }

    fn broadcast(&self, id: &str) {
        if let Some(g) = self.games.get(id) {
            let text = encode("game", Some(g.table.v), &g.table.view());
            for c in &g.pages {
                self.send(*c, text.clone());
            }
        }
    }

    /// Resigns for the person: at once if the referee is waiting for them,
    /// else at their next turn.
    fn resign(&mut self, id: &str) {
        if let Some(g) = self.games.get_mut(id) {
            g.resigned = true;
            if let Some(tx) = g.pending.take() {
                g.table.set_your_turn(false);
                let _ = tx.send(Reply::Resign);
            }
        }
    }

    /// Stops following every game of `conn`; a game in progress that no
    /// page follows any more is resigned after [`GRACE`] unless one comes back.
    fn leave_all(&mut self, conn: u64, ctx: &mut Context<Self>, grace: Duration) {
        let mut orphans = Vec::new();
        for (id, g) in self.games.iter_mut() {
            if g.pages.remove(&conn) && g.pages.is_empty() && g.table.outcome.is_none() {
                orphans.push(id.clone());
            }
        }
        for id in orphans {
            if grace.is_zero() {
                self.resign(&id);
            } else {
                ctx.run_later(grace, move |hub, _| {
                    if hub.games.get(&id).is_some_and(|g| g.pages.is_empty()) {
                        hub.resign(&id);
                    }
                });
            }
        }
    }

    /// Drops the oldest finished games beyond [`MAX_KEPT`].
    fn evict(&mut self) {
        let mut done: Vec<(u64, String)> = self
            .numbers
            .iter()
            .filter(|(_, id)| self.games.get(*id).is_some_and(|g| g.table.outcome.is_some()))
            .map(|(n, id)| (*n, id.clone()))
            .collect();
        if self.games.len() < MAX_KEPT || done.is_empty() {
            return;
        }
        done.sort();
        for (n, id) in done.into_iter().take(self.games.len() + 1 - MAX_KEPT) {
            self.games.remove(&id);
            self.numbers.remove(&n);
        }
    }

    /// The board people play (and analyse) on here.
    fn board(&self) -> BoardConfig {
        self.opponent.as_ref().map_or_else(BoardConfig::default, |o| o.cfg)
    }

    /// Every column's outcome and score of `pos`, searched on the blocking
    /// pool; each message found on the way comes back as [`Analyzing`],
    /// the last as [`Analyzed`]. One request at a time per page: a new one
    /// cancels the page's running search and starts when it has stopped.
    /// At most `max_running` for the whole server (else `busy`). With
    /// `player`, that player's own view comes with it (one request, so one
    /// slot).
    fn analyze(&mut self, conn: u64, pos: String, player: Option<String>, ctx: &mut Context<Self>) {
        let viewer = match player {
            None => None,
            Some(name) => match self.players().into_iter().find(|p| p.name == name) {
                Some(p) if super::analysis::has_view(p) => Some(p.clone()),
                found => {
                    let why = match found {
                        Some(_) => format!("`{name}` has no view to show (AlphaZero, MCTS and minimax players do)"),
                        None => format!("no player `{name}` here"),
                    };
                    return self.error(conn, ErrorCode::NoPlayer, why);
                }
            },
        };
        if let Some((_, cancel)) = self.analyzing.get(&conn) {
            cancel.store(true, Ordering::Relaxed);
            self.queued.insert(conn, (pos, viewer));
            return;
        }
        if self.running >= self.max_running {
            return self.error(
                conn,
                ErrorCode::Busy,
                format!(
                    "the server's solvers are all busy ({} at a time); ask again in a moment",
                    self.max_running
                ),
            );
        }
        self.start_analysis(conn, pos, viewer, ctx);
    }

    /// Starts `conn`'s search of `pos` (see [`PlayHub::analyze`]).
    fn start_analysis(&mut self, conn: u64, pos: String, viewer: Option<PlayerSpec>, ctx: &mut Context<Self>) {
        self.searches += 1;
        let (search, cancel) = (self.searches, Arc::new(AtomicBool::new(false)));
        self.analyzing.insert(conn, (search, Arc::clone(&cancel)));
        self.running += 1;
        let (analysts, cfg, hub) = (self.analysts.clone(), self.board(), ctx.address());
        actix::spawn(async move {
            let progress = hub.clone();
            let result = tokio::task::spawn_blocking(move || {
                let send = |data| progress.do_send(Analyzing { conn, search, data });
                analysts.analyze(cfg, &pos, viewer.as_ref(), &cancel, &send)
            })
            .await
            .unwrap_or_else(|e| Err(super::analysis::Refused::Board(e.to_string())));
            hub.do_send(Analyzed { conn, search, result });
        });
    }

    /// Whether `search` is `conn`'s running search and not cancelled.
    fn current(&self, conn: u64, search: u64) -> bool {
        self.analyzing
            .get(&conn)
            .is_some_and(|(s, cancel)| *s == search && !cancel.load(Ordering::Relaxed))
    }

    /// Every player a side can be given (the server's own first), by name.
    pub fn players(&self) -> Vec<&PlayerSpec> {
        let mut v: Vec<&PlayerSpec> = self.opponent.iter().map(|o| &o.spec).collect();
        for p in &self.others {
            if !v.iter().any(|q| q.name == p.name) {
                v.push(p);
            }
        }
        v
    }

    /// The two sides of a new game: `sides` as the page named them
    /// (`person` or an offered player's name), else a person on the seat
    /// `first` says and the server's own player on the other.
    fn sides_of(&self, first: First, sides: Option<Vec<String>>) -> Result<Vec<Side>, (ErrorCode, String)> {
        let Some(names) = sides else {
            let op = self
                .opponent
                .as_ref()
                .ok_or((ErrorCode::Busy, "this server has no player to play against".to_string()))?;
            let bot = Side::Player(op.spec.clone());
            return Ok(match first {
                First::You => vec![Side::Person, bot],
                First::Ai => vec![bot, Side::Person],
            });
        };
        if names.len() != 2 {
            return Err((
                ErrorCode::Malformed,
                format!("a game has two sides, got {}", names.len()),
            ));
        }
        let players = self.players();
        names
            .iter()
            .map(|n| match n.as_str() {
                PERSON => Ok(Side::Person),
                _ => players
                    .iter()
                    .find(|p| p.name == *n)
                    .map(|p| Side::Player((*p).clone()))
                    .ok_or_else(|| {
                        let offered: Vec<&str> = players.iter().map(|p| p.name.as_str()).collect();
                        let why = format!(
                            "no player `{n}` here; a side is `{PERSON}` or one of: {}",
                            offered.join(", ")
                        );
                        (ErrorCode::NoPlayer, why)
                    }),
            })
            .collect()
    }

    fn new_game(
        &mut self,
        conn: u64,
        first: First,
        pos: Option<String>,
        sides: Option<Vec<String>>,
        ctx: &mut Context<Self>,
    ) {
        self.leave_all(conn, ctx, Duration::ZERO);
        let sides = match self.sides_of(first, sides) {
            Ok(s) => s,
            Err((code, why)) => return self.error(conn, code, why),
        };
        let opening = match pos.as_deref().map(|p| opening_of(p, self.board())).transpose() {
            Ok(o) => o.unwrap_or_default(),
            Err(why) => return self.error(conn, ErrorCode::BadPosition, why.to_string()),
        };
        if let Err((code, why)) = self.start_game(HashSet::from([conn]), sides, opening, ctx) {
            self.error(conn, code, why);
        }
    }

    /// Takes back the last move of a game without a player side (a hot
    /// seat): the game ends and a new one, on the same pages, starts from
    /// the position before that move. The one referee never undoes a move.
    fn take_back(&mut self, conn: u64, id: &str, ctx: &mut Context<Self>) {
        let Some(g) = self.games.get_mut(id).filter(|g| g.pages.contains(&conn)) else {
            return self.error(conn, ErrorCode::NoGame, "not a game this page follows");
        };
        if g.table.people.len() != 2 {
            return self.error(
                conn,
                ErrorCode::NotYourTurn,
                "moves are taken back only when people play both sides",
            );
        }
        if g.table.moves.is_empty() {
            return self.error(conn, ErrorCode::NotYourTurn, "no move to take back");
        }
        let mut moves = g.table.moves.clone();
        moves.pop();
        let pages = std::mem::take(&mut g.pages);
        let ended = g.table.outcome.is_some();
        if !ended {
            self.resign(id);
        }
        if let Err((code, why)) = self.start_game(pages.clone(), vec![Side::Person, Side::Person], moves, ctx) {
            for c in pages {
                self.error(c, code, why.clone());
            }
        }
    }

    /// The seats of `sides`: the people's are this hub (named "You", or by
    /// colour at a hot seat), each player's its own actor, started now.
    /// `seed` is the first player's; a second one's is derived from it.
    fn seats(
        &self,
        sides: Vec<Side>,
        people: usize,
        seed: u64,
        default_time: Duration,
        ctx: &mut Context<Self>,
    ) -> Result<Seated, (ErrorCode, String)> {
        let out = Output {
            json: true,
            style: RenderStyle::None,
        };
        let mut bots = Vec::new();
        let mut seats = Vec::new();
        for (i, side) in sides.into_iter().enumerate() {
            seats.push(match side {
                Side::Person => Seat {
                    name: if people == 1 {
                        "You".to_string()
                    } else {
                        COLOUR_NAMES[i].to_string()
                    },
                    player: PlayerHandle::of(&ctx.address()),
                    move_time: None,
                },
                Side::Player(spec) => {
                    let s = if bots.is_empty() {
                        seed
                    } else {
                        seed::derive(seed, 1, seed::WEB_AI_2)
                    };
                    let ai = start_player(&spec, s, out, 2)
                        .map_err(|e| (ErrorCode::Busy, format!("cannot start {}: {e}", spec.name)))?;
                    let seat = Seat {
                        name: spec.name.clone(),
                        player: PlayerHandle::of(&ai),
                        move_time: Some(spec.move_time.unwrap_or(default_time)),
                    };
                    bots.push(ai);
                    seat
                }
            });
        }
        Ok((seats, bots))
    }

    /// Starts a game of `sides` from `opening` for `pages`.
    fn start_game(
        &mut self,
        pages: HashSet<u64>,
        sides: Vec<Side>,
        opening: Vec<usize>,
        ctx: &mut Context<Self>,
    ) -> Result<(), (ErrorCode, String)> {
        let playing = self.games.values().filter(|g| g.table.outcome.is_none()).count();
        if playing >= MAX_PLAYING {
            return Err((
                ErrorCode::Busy,
                format!("{playing} games are in progress; try again later"),
            ));
        }
        let (cfg, base, default_time) = self
            .opponent
            .as_ref()
            .map_or((BoardConfig::default(), 0, DEFAULT_MOVE_TIME), |o| {
                (o.cfg, o.seed, o.move_time)
            });
        self.evict();
        let number = self.next;
        self.next += 1;
        let people: Vec<usize> = (0..2).filter(|&i| matches!(sides[i], Side::Person)).collect();
        let (seats, bots) = self.seats(
            sides,
            people.len(),
            seed::derive(base, number, seed::WEB_AI),
            default_time,
            ctx,
        )?;
        let names: Vec<String> = seats.iter().map(|s| s.name.clone()).collect();
        let id = format!("{:016x}", rand::random::<u64>());
        let from_start = opening.is_empty();
        let seed = seed::derive(base, number, seed::WEB_GAME);
        let msg = PlayGame::alone(
            number,
            cfg,
            seats,
            opening,
            MAX_INVALID,
            seed,
            vec![ctx.address().recipient()],
        );
        let table = Table::new(id.clone(), names, people, cfg);
        self.games.insert(
            id.clone(),
            Live {
                table,
                pending: None,
                resigned: false,
                pages,
            },
        );
        self.numbers.insert(number, id.clone());
        // From a position, the first view comes with the referee's start
        // (the opening played), so a page never sees the empty board first.
        if from_start {
            self.broadcast(&id);
        }
        actix::spawn(async move {
            referee_game(msg).await;
            for ai in bots {
                let _ = ai.send(Shutdown).await;
            }
        });
        Ok(())
    }

    fn on_page(&mut self, conn: u64, msg: ClientMsg, ctx: &mut Context<Self>) {
        match msg {
            ClientMsg::New { first, pos, sides } => self.new_game(conn, first, pos, sides, ctx),
            ClientMsg::Undo { id } => self.take_back(conn, &id, ctx),
            ClientMsg::Analyze { pos, player } => self.analyze(conn, pos, player, ctx),
            ClientMsg::Join { id } => {
                if !self.games.contains_key(&id) {
                    return self.error(conn, ErrorCode::NoGame, "no such game (it may have ended long ago)");
                }
                self.leave_all(conn, ctx, GRACE);
                if let Some(g) = self.games.get_mut(&id) {
                    g.pages.insert(conn);
                    let text = encode("game", Some(g.table.v), &g.table.view());
                    self.send(conn, text);
                }
            }
            ClientMsg::Move { id, col, v } => {
                let Some(g) = self.games.get_mut(&id).filter(|g| g.pages.contains(&conn)) else {
                    return self.error(conn, ErrorCode::NoGame, "not a game this page follows");
                };
                if g.table.outcome.is_some() {
                    return self.error(conn, ErrorCode::GameOver, "the game is over");
                }
                if v.is_some_and(|v| v != g.table.v) {
                    let text = encode("game", Some(g.table.v), &g.table.view());
                    self.error(conn, ErrorCode::Stale, "the position changed; here it is");
                    return self.send(conn, text);
                }
                let Some(tx) = g.pending.take() else {
                    return self.error(conn, ErrorCode::NotYourTurn, "wait for your turn");
                };
                g.table.set_your_turn(false);
                let _ = tx.send(Reply::Answer(Answer::Column(col)));
                self.broadcast(&id);
            }
            ClientMsg::Resign { id } => {
                match self.games.get(&id) {
                    Some(g) if g.pages.contains(&conn) => {}
                    _ => return self.error(conn, ErrorCode::NoGame, "not a game this page follows"),
                }
                self.resign(&id);
                self.broadcast(&id);
            }
            ClientMsg::Watch => {}
        }
    }
}

impl Actor for PlayHub {
    type Context = Context<Self>;
}

/// A page connected; `out` carries the server's messages to it.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Connect {
    pub conn: u64,
    pub out: Outbox,
}

#[derive(Message)]
#[rtype(result = "()")]
pub struct Disconnect {
    pub conn: u64,
}

/// A message a page sent, already decoded and rate-checked.
#[derive(Message)]
#[rtype(result = "()")]
pub struct FromPage {
    pub conn: u64,
    pub msg: ClientMsg,
}

/// An analysis found something (see [`PlayHub::analyze`]); more follows.
#[derive(Message)]
#[rtype(result = "()")]
struct Analyzing {
    conn: u64,
    search: u64,
    data: serde_json::Value,
}

impl Handler<Analyzing> for PlayHub {
    type Result = ();
    fn handle(&mut self, m: Analyzing, _: &mut Context<Self>) {
        if self.current(m.conn, m.search) {
            self.send(m.conn, encode("analysis", None, &m.data));
        }
    }
}

/// An analysis ended (see [`PlayHub::analyze`]): its last message, or
/// `None` when it was cancelled.
#[derive(Message)]
#[rtype(result = "()")]
struct Analyzed {
    conn: u64,
    search: u64,
    result: Result<Option<serde_json::Value>, super::analysis::Refused>,
}

impl Handler<Analyzed> for PlayHub {
    type Result = ();
    fn handle(&mut self, m: Analyzed, ctx: &mut Context<Self>) {
        use super::analysis::Refused;
        self.running = self.running.saturating_sub(1);
        if self.current(m.conn, m.search) {
            match m.result {
                Ok(Some(a)) => self.send(m.conn, encode("analysis", None, &a)),
                Ok(None) => {}
                Err(Refused::Position(why)) => self.error(m.conn, ErrorCode::BadPosition, why.to_string()),
                Err(Refused::Board(why)) => self.error(m.conn, ErrorCode::Busy, format!("no analysis here: {why}")),
            }
        }
        if self.analyzing.get(&m.conn).is_some_and(|(s, _)| *s == m.search) {
            self.analyzing.remove(&m.conn);
        }
        if let Some((pos, viewer)) = self.queued.remove(&m.conn) {
            if self.conns.contains_key(&m.conn) && !self.analyzing.contains_key(&m.conn) {
                self.start_analysis(m.conn, pos, viewer, ctx);
            }
        }
    }
}

/// The opening moves of `pos` (a move string, columns from 1) on `cfg`, or
/// why it is not a position a game can start from.
fn opening_of(pos: &str, cfg: BoardConfig) -> Result<Vec<usize>, BoardError> {
    crate::game::openings::game_after(pos, cfg).map(|(moves, _)| moves)
}

impl Handler<Connect> for PlayHub {
    type Result = ();
    fn handle(&mut self, m: Connect, _: &mut Context<Self>) {
        self.conns.insert(m.conn, m.out);
    }
}

impl Handler<Disconnect> for PlayHub {
    type Result = ();
    fn handle(&mut self, m: Disconnect, ctx: &mut Context<Self>) {
        self.leave_all(m.conn, ctx, GRACE);
        self.conns.remove(&m.conn);
        // Its search stops soon; its slot is free when it has.
        if let Some((_, cancel)) = self.analyzing.get(&m.conn) {
            cancel.store(true, Ordering::Relaxed);
        }
        self.queued.remove(&m.conn);
    }
}

impl Handler<FromPage> for PlayHub {
    type Result = ();
    fn handle(&mut self, m: FromPage, ctx: &mut Context<Self>) {
        self.on_page(m.conn, m.msg, ctx);
    }
}

impl Handler<GameEvent> for PlayHub {
    type Result = ();
    fn handle(&mut self, ev: GameEvent, _: &mut Context<Self>) {
        let number = match &ev {
            GameEvent::Started { game, .. }
            | GameEvent::Moved { game, .. }
            | GameEvent::Illegal { game, .. }
            | GameEvent::Out { game, .. } => *game,
            GameEvent::Over { record, .. } => record.game,
            GameEvent::Summary { .. } => return,
        };
        let Some(id) = self.numbers.get(&number).cloned() else {
            return;
        };
        if let Some(g) = self.games.get_mut(&id) {
            g.table.apply(&ev);
            if matches!(ev, GameEvent::Over { .. }) {
                g.pending = None;
            }
        }
        self.broadcast(&id);
    }
}

/// The person's turn: remember the question and tell their pages; the
/// answer comes with their `move` (or `resign`). A game dropped before that
/// drops the question, which the referee reads as the person leaving.
impl Handler<YourTurn> for PlayHub {
    type Result = ResponseFuture<Reply>;
    fn handle(&mut self, msg: YourTurn, _: &mut Context<Self>) -> Self::Result {
        let view = msg.0;
        let id = self.numbers.get(&view.game).cloned().unwrap_or_default();
        let Some(g) = self.games.get_mut(&id) else {
            return Box::pin(std::future::ready(Reply::Gone("the game was dropped".into())));
        };
        if g.resigned {
            return Box::pin(std::future::ready(Reply::Resign));
        }
        let (tx, rx) = oneshot::channel();
        g.pending = Some(tx);
        g.table.set_your_turn(true);
        self.broadcast(&id);
        Box::pin(async move { rx.await.unwrap_or_else(|_| Reply::Gone("the page left".into())) })
    }
}

// The person has no move-time limit (so no `Abandon`), and the game's start
// and end reach the hub as events; the other seat messages need nothing.
impl Handler<Abandon> for PlayHub {
    type Result = ();
    fn handle(&mut self, _: Abandon, _: &mut Context<Self>) {}
}
impl Handler<NewGame> for PlayHub {
    type Result = ();
    fn handle(&mut self, _: NewGame, _: &mut Context<Self>) {}
}
impl Handler<GameEnded> for PlayHub {
    type Result = ();
    fn handle(&mut self, _: GameEnded, _: &mut Context<Self>) {}
}
impl Handler<Shutdown> for PlayHub {
    type Result = ();
    fn handle(&mut self, _: Shutdown, _: &mut Context<Self>) {}
}
