//! The player actor: one per seat, wrapping any kind. It answers
//! [`YourTurn`] with a move or with "gone"; searches run on the blocking
//! pool so the actor loop stays free for timers and rendering.

use super::messages::*;
use crate::players::external::{ExternalProcess, ExternalReply};
use crate::players::human::{parse_line, StdinLines, Typed};
use crate::players::{Strategy, TurnView};
use crate::render::Painter;
use actix::prelude::*;
use std::future::ready;
use std::io::{IsTerminal, Write};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use tokio::sync::{Mutex, Notify};

/// A person at the terminal.
pub struct HumanSeat {
    pub lines: StdinLines,
    pub look: Painter,
    /// Prompts go to stderr when stdout carries `--json`.
    pub prompt_to_stderr: bool,
}

/// What the actor wraps.
pub enum Occupant {
    Bot(Box<dyn Strategy>),
    Human(HumanSeat),
    External(Box<ExternalProcess>),
}

pub struct PlayerActor {
    name: String,
    /// In-process bots need no async work for game start and end.
    is_bot: bool,
    inner: Arc<Mutex<Occupant>>,
    /// Wakes the pending request when the referee stops waiting.
    abandon: Arc<Notify>,
}

impl PlayerActor {
    pub fn new(name: String, inner: Occupant) -> Self {
        PlayerActor {
            name,
            is_bot: matches!(inner, Occupant::Bot(_)),
            inner: Arc::new(Mutex::new(inner)),
            abandon: Arc::new(Notify::new()),
        }
    }
}

impl Actor for PlayerActor {
    type Context = Context<Self>;
}

/// A bot's answer, with what it thinks of it when it says.
fn choose_and_explain(s: &mut dyn Strategy, view: &TurnView) -> Reply {
    let a = match s.choose_or_quit(view) {
        Ok(a) => a,
        Err(why) => return Reply::Gone(why.to_string()),
    };
    match s.explain() {
        Some(note) => Reply::Thinking(a, note),
        None => Reply::Answer(a),
    }
}

fn panic_message(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

impl Handler<YourTurn> for PlayerActor {
    type Result = ResponseFuture<Reply>;

    fn handle(&mut self, msg: YourTurn, _: &mut Context<Self>) -> Self::Result {
        let view = msg.0;
        // Fast bots answer inline: no task, no thread hop.
        if let Ok(mut guard) = self.inner.try_lock() {
            if let Occupant::Bot(s) = &mut *guard {
                if !s.is_heavy() {
                    let reply = match catch_unwind(AssertUnwindSafe(|| choose_and_explain(s.as_mut(), &view))) {
                        Ok(r) => r,
                        Err(p) => Reply::Gone(format!("the bot panicked: {}", panic_message(p))),
                    };
                    return Box::pin(ready(reply));
                }
            }
        }
        self.abandon = Arc::new(Notify::new());
        let abandon = self.abandon.clone();
        let inner = self.inner.clone();
        let name = self.name.clone();
        Box::pin(async move {
            let mut guard = inner.lock_owned().await;
            match &mut *guard {
                Occupant::Bot(_) => {
                    let joined = tokio::task::spawn_blocking(move || match &mut *guard {
                        Occupant::Bot(s) => choose_and_explain(s.as_mut(), &view),
                        _ => unreachable!("checked above"),
                    })
                    .await;
                    match joined {
                        Ok(r) => r,
                        Err(e) if e.is_panic() => {
                            Reply::Gone(format!("the bot panicked: {}", panic_message(e.into_panic())))
                        }
                        Err(e) => Reply::Gone(format!("the bot stopped: {e}")),
                    }
                }
                Occupant::Human(h) => ask_human(h, &name, &view, &abandon).await,
                Occupant::External(p) => {
                    tokio::select! {
                        r = p.ask(&view) => match r {
                            ExternalReply::Answer(a) => Reply::Answer(a),
                            ExternalReply::Gone(why) => Reply::Gone(why),
                        },
                        _ = abandon.notified() => {
                            // Its state is unknown now: kill it; it restarts next game.
                            p.kill().await;
                            Reply::Gone("abandoned after its time ran out".into())
                        }
                    }
                }
            }
        })
    }
}

async fn ask_human(h: &mut HumanSeat, name: &str, view: &TurnView, abandon: &Notify) -> Reply {
    let cols = view.board.cols();
    let echo = !std::io::stdin().is_terminal();
    loop {
        let prompt = format!("{}, your move [1-{cols}]: ", h.look.seat_label(view.seat, name));
        write_prompt(h.prompt_to_stderr, &prompt);
        let line = tokio::select! {
            l = async { h.lines.lock().await.recv().await } => l,
            _ = abandon.notified() => return Reply::Gone("time is up".into()),
        };
        let Some(line) = line else {
            write_prompt(h.prompt_to_stderr, "(end of input)\n");
            return Reply::Gone("end of input".into());
        };
        if echo {
            write_prompt(h.prompt_to_stderr, &format!("{}\n", line.trim()));
        }
        match parse_line(&line, cols) {
            Typed::Nothing => continue,
            Typed::Resign => return Reply::Resign,
            Typed::Answer(a) => return Reply::Answer(a),
        }
    }
}

pub(crate) fn write_prompt(to_stderr: bool, s: &str) {
    if to_stderr {
        let mut e = std::io::stderr().lock();
        let _ = e.write_all(s.as_bytes());
        let _ = e.flush();
    } else {
        let mut o = std::io::stdout().lock();
        let _ = o.write_all(s.as_bytes());
        let _ = o.flush();
    }
}

impl Handler<Abandon> for PlayerActor {
    type Result = ();
    fn handle(&mut self, _: Abandon, _: &mut Context<Self>) {
        self.abandon.notify_one();
    }
}

impl Handler<NewGame> for PlayerActor {
    type Result = ResponseFuture<()>;
    fn handle(&mut self, msg: NewGame, _: &mut Context<Self>) -> Self::Result {
        if let Ok(mut g) = self.inner.try_lock() {
            if let Occupant::Bot(s) = &mut *g {
                s.new_game(msg.seed);
                return Box::pin(ready(()));
            }
        }
        let inner = self.inner.clone();
        Box::pin(async move {
            let mut g = inner.lock().await;
            match &mut *g {
                Occupant::Bot(s) => s.new_game(msg.seed),
                Occupant::External(p) => {
                    if let Err(e) = p.ensure_started() {
                        tracing::warn!("{e}");
                    }
                }
                Occupant::Human(_) => {}
            }
        })
    }
}

impl Handler<GameEnded> for PlayerActor {
    type Result = ResponseFuture<()>;
    fn handle(&mut self, msg: GameEnded, _: &mut Context<Self>) -> Self::Result {
        if self.is_bot {
            return Box::pin(ready(()));
        }
        let inner = self.inner.clone();
        Box::pin(async move {
            if let Occupant::External(p) = &mut *inner.lock().await {
                p.game_over(msg.result.word(), msg.reason.as_str()).await;
            }
        })
    }
}

impl Handler<Shutdown> for PlayerActor {
    type Result = ResponseFuture<()>;
    fn handle(&mut self, _: Shutdown, _: &mut Context<Self>) -> Self::Result {
        self.abandon.notify_one();
        let inner = self.inner.clone();
        Box::pin(async move {
            if let Occupant::External(p) = &mut *inner.lock().await {
                p.shutdown().await;
            }
        })
    }
}

/// Convenience for callers that build answers directly (tests, benches).
pub fn bot(name: &str, s: Box<dyn Strategy>) -> PlayerActor {
    PlayerActor::new(name.to_string(), Occupant::Bot(s))
}
