//! The lobby server's hub: one actor that owns the server's [`HubState`]
//! (every session, lobby and match), so the protocol's state lives in one
//! place and needs no locks. The actor only moves messages: connections
//! hand it parsed requests ([`Inbound`]); the referee reaches it through
//! [`NetSeat`] actors ([`SeatAsk`], [`SeatAbandon`], [`SeatEnded`]) and as
//! the match's event sink ([`GameEvent`]). Each goes to the state, and the
//! state's [`Effect`]s come back out as lines on connections, timers,
//! answers to the referee and new matches. The rules themselves, and their
//! unit tests, are in `hub/`.

use super::conn::{self, Limits};
use super::hub::{match_id, ConnId, Effect, HubState, MatchStart, SeatAnswer, Timer};
use super::hub_messages::{Closed, ConnHub, Inbound, Open, Outbox, SeatAbandon, SeatAsk, SeatEnded, SeatHub};
use super::seat::NetSeat;
use crate::actors::messages::{GameEvent, PlayGame, PlayerHandle, Reply, Seat};
use crate::actors::mode::{run_mode, ModeError};
use crate::actors::referee::referee_game;
use crate::game::Answer;
use crate::record::GameRecord;
use crate::scenario::net::{GameKind, ServerSettings};
use crate::util::seed;
use actix::prelude::*;
use std::collections::HashMap;
use std::future::ready;
use std::io::Write;
use std::net::SocketAddr;
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

/// The referee finished a match.
#[derive(Message)]
#[rtype(result = "()")]
struct MatchOver {
    match_id: String,
    record: GameRecord,
}

/// The hub's end of one connection: dropping it ends the connection's tasks.
struct Link {
    outbox: Outbox,
    _kill: watch::Sender<()>,
}

pub struct Hub {
    cfg: ServeConfig,
    state: HubState,
    links: HashMap<ConnId, Link>,
    /// The referee's open questions to seats, by (match, seat).
    asks: HashMap<(String, usize), oneshot::Sender<Reply>>,
    countdowns: HashMap<GameKind, SpawnHandle>,
    /// Connections whose outbox overflowed while sending; dropped at the end
    /// of the current message, never in the middle of a broadcast.
    kicks: Vec<ConnId>,
    /// Spectators of every match (`c4sim serve --web ADDR`): more sinks of
    /// the referee's events.
    watch: Vec<Recipient<GameEvent>>,
}

impl Hub {
    pub fn new(cfg: ServeConfig) -> Self {
        Hub {
            state: HubState::new(cfg.settings.clone(), cfg.json),
            cfg,
            links: HashMap::new(),
            asks: HashMap::new(),
            countdowns: HashMap::new(),
            kicks: Vec::new(),
            watch: Vec::new(),
        }
    }

    /// Carries out the state's effects, in order.
    fn apply(&mut self, effects: Vec<Effect>, ctx: &mut Context<Self>) {
        for effect in effects {
            match effect {
                Effect::Send(conn, msg) => {
                    if let Some(link) = self.links.get(&conn) {
                        if link.outbox.try_send(msg.line().into()).is_err() {
                            self.kicks.push(conn);
                        }
                    }
                }
                Effect::Close(conn) => {
                    self.links.remove(&conn);
                }
                Effect::After(delay, timer) => self.after(delay, timer, ctx),
                Effect::StopCountdown(game) => {
                    if let Some(h) = self.countdowns.remove(&game) {
                        ctx.cancel_future(h);
                    }
                }
                Effect::StartMatch(start) => self.start_match(start, ctx),
                Effect::Answer { match_id, seat, answer } => {
                    if let Some(tx) = self.asks.remove(&(match_id, seat)) {
                        let _ = tx.send(match answer {
                            SeatAnswer::Column(c) => Reply::Answer(Answer::Column(c)),
                            SeatAnswer::Gone("resigned") => Reply::Resign,
                            SeatAnswer::Gone(why) => Reply::Gone(why.into()),
                        });
                    }
                }
                Effect::Print(line) => {
                    let mut out = std::io::stdout().lock();
                    let _ = writeln!(out, "{line}");
                    let _ = out.flush();
                }
            }
        }
    }

    /// Applies the effects, then drops the connections that stopped reading.
    fn settle(&mut self, effects: Vec<Effect>, ctx: &mut Context<Self>) {
        self.apply(effects, ctx);
        while let Some(conn) = self.kicks.pop() {
            let effects = self.state.kicked(conn);
            self.apply(effects, ctx);
        }
    }

    fn after(&mut self, delay: Duration, timer: Timer, ctx: &mut Context<Self>) {
        let countdown = match &timer {
            Timer::Countdown { game, .. } => Some(*game),
            _ => None,
        };
        let h = ctx.run_later(delay, move |hub, ctx| {
            if let Some(game) = countdown {
                hub.countdowns.remove(&game);
            }
            let effects = hub.state.timer(timer);
            hub.settle(effects, ctx);
        });
        // A lobby has one countdown at a time; a restarted one replaces
        // the old timer (which its epoch would make harmless anyway).
        if let Some(game) = countdown {
            if let Some(old) = self.countdowns.insert(game, h) {
                ctx.cancel_future(old);
            }
        }
    }

    /// Seats the players at the referee, one [`NetSeat`] each.
    fn start_match(&mut self, start: MatchStart, ctx: &mut Context<Self>) {
        let MatchStart {
            match_id,
            number,
            cfg,
            names,
        } = start;
        let hub = ctx.address();
        let seat_hub = SeatHub {
            ask: hub.clone().recipient(),
            abandon: hub.clone().recipient(),
            ended: hub.clone().recipient(),
        };
        let seats: Vec<Seat> = names
            .iter()
            .enumerate()
            .map(|(i, name)| {
                let seat = NetSeat {
                    hub: seat_hub.clone(),
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
        let sinks = std::iter::once(hub.clone().recipient())
            .chain(self.watch.iter().cloned())
            .collect();
        let seed = seed::derive(self.cfg.seed, number, seed::LOBBY_MATCH);
        let msg = PlayGame::alone(number, cfg, seats, Vec::new(), self.cfg.max_invalid, seed, sinks);
        actix::spawn(async move {
            let record = referee_game(msg).await;
            hub.do_send(MatchOver { match_id, record });
        });
    }

    /// Appends a finished game to `records`, if the server keeps them.
    fn write_record(&self, record: &GameRecord) {
        let Some(path) = &self.cfg.settings.records else { return };
        let written = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut f| writeln!(f, "{}", serde_json::to_string(record).unwrap_or_default()));
        if let Err(e) = written {
            tracing::warn!("cannot append to {}: {e}", path.display());
        }
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
        let (id, effects) = self.state.open(msg.ip)?;
        self.links.insert(
            id,
            Link {
                outbox: msg.outbox,
                _kill: msg.kill,
            },
        );
        self.settle(effects, ctx);
        Some(id)
    }
}

impl Handler<Inbound> for Hub {
    type Result = Option<bool>;
    fn handle(&mut self, msg: Inbound, ctx: &mut Context<Self>) -> Option<bool> {
        let (bad, effects) = self.state.request(msg.conn, msg.req)?;
        self.settle(effects, ctx);
        Some(bad)
    }
}

impl Handler<Closed> for Hub {
    type Result = ();
    fn handle(&mut self, msg: Closed, ctx: &mut Context<Self>) {
        let effects = self.state.closed(msg.conn);
        self.settle(effects, ctx);
    }
}

impl Handler<SeatAsk> for Hub {
    type Result = ResponseFuture<Reply>;
    fn handle(&mut self, msg: SeatAsk, ctx: &mut Context<Self>) -> Self::Result {
        let effects = match self.state.seat_asked(&msg.match_id, msg.seat) {
            Ok(effects) => effects,
            Err("resigned") => return Box::pin(ready(Reply::Resign)),
            Err(why) => return Box::pin(ready(Reply::Gone(why.into()))),
        };
        let (tx, rx) = oneshot::channel();
        self.asks.insert((msg.match_id, msg.seat), tx);
        self.settle(effects, ctx);
        Box::pin(async move { rx.await.unwrap_or_else(|_| Reply::Gone("disconnected".into())) })
    }
}

impl Handler<SeatAbandon> for Hub {
    type Result = ();
    fn handle(&mut self, msg: SeatAbandon, ctx: &mut Context<Self>) {
        let effects = self.state.seat_abandoned(&msg.match_id, msg.seat);
        self.asks.remove(&(msg.match_id, msg.seat));
        self.settle(effects, ctx);
    }
}

impl Handler<SeatEnded> for Hub {
    type Result = ();
    fn handle(&mut self, msg: SeatEnded, ctx: &mut Context<Self>) {
        let effects = self.state.seat_ended(&msg.match_id, msg.seat, msg.result, msg.reason);
        self.settle(effects, ctx);
    }
}

impl Handler<MatchOver> for Hub {
    type Result = ();
    fn handle(&mut self, msg: MatchOver, ctx: &mut Context<Self>) {
        // The record first: whoever sees `match_over` may read the file.
        if self.state.has_match(&msg.match_id) {
            self.write_record(&msg.record);
        }
        self.asks.retain(|(m, _), _| *m != msg.match_id);
        let effects = self.state.match_over(&msg.match_id, &msg.record);
        self.settle(effects, ctx);
    }
}

impl Handler<GameEvent> for Hub {
    type Result = ();
    fn handle(&mut self, ev: GameEvent, ctx: &mut Context<Self>) {
        let effects = match ev {
            GameEvent::Moved {
                game,
                seat,
                col,
                row,
                next,
                ..
            } => self.state.moved(&match_id(game), seat, col, row, next.map(|(t, _)| t)),
            GameEvent::Illegal {
                game,
                seat,
                refusal,
                tries_left,
                ..
            } => self.state.illegal(&match_id(game), seat, &refusal, tries_left),
            GameEvent::Out { game, seat, reason, .. } => self.state.out(&match_id(game), seat, reason),
            GameEvent::Started { .. } | GameEvent::Over { .. } | GameEvent::Summary { .. } => Vec::new(),
        };
        self.settle(effects, ctx);
    }
}

/// Binds, announces the address, and serves until Ctrl-C.
pub fn serve(cfg: ServeConfig) -> Result<(), ModeError> {
    serve_watched(cfg, Vec::new())
}

/// The lobby's address cannot be listened on.
#[derive(Debug, thiserror::Error)]
#[error("cannot listen on {bind}: {source}")]
pub struct ListenError {
    pub bind: SocketAddr,
    pub source: std::io::Error,
}

/// [`serve`], with every match's events also sent to `watch` (spectators).
pub fn serve_watched(cfg: ServeConfig, watch: Vec<Recipient<GameEvent>>) -> Result<(), ModeError> {
    run_mode(
        async move {
            let s = cfg.settings.clone();
            let listener = TcpListener::bind(s.bind)
                .await
                .map_err(|source| ModeError::failed(ListenError { bind: s.bind, source }))?;
            let addr: SocketAddr = listener.local_addr().unwrap_or(s.bind);
            let games: Vec<&str> = s.games.iter().map(|g| g.as_str()).collect();
            let line = if cfg.json {
                crate::events::Event::Listening {
                    addr: addr.to_string(),
                    games: games.iter().map(|g| g.to_string()).collect(),
                }
                .line()
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
            let mut hub = Hub::new(cfg);
            hub.watch = watch;
            let hub = hub.start();
            actix::spawn(accept_loop(listener, hub, limits));
            // A server serves until it is interrupted.
            std::future::pending::<Result<(), ModeError>>().await
        },
        || "Server stopped.".into(),
    )
}

async fn accept_loop(listener: TcpListener, hub: Addr<Hub>, limits: Limits) {
    let hub = ConnHub {
        open: hub.clone().recipient(),
        inbound: hub.clone().recipient(),
        closed: hub.recipient(),
    };
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
