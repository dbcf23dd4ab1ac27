//! The watch hub: what a page shows of games it does not play in: a
//! tournament's standings and its games in progress, or the lobby server's
//! matches. It is one more sink of the referees' events (and of the
//! tournament's standings, sent as [`GameEvent::Summary`]); pages get the
//! whole picture at most every [`TICK`], since bots can finish hundreds of
//! games a second and a page needs only what a person can see.

use super::play::{post, Outbox};
use super::proto::encode;
use super::view::Table;
use crate::actors::messages::GameEvent;
use crate::record::Tally;
use actix::prelude::*;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::time::Duration;

/// How often pages that watch get news.
pub const TICK: Duration = Duration::from_millis(250);
/// Games in progress shown at once, and finished games kept on show.
const SHOWN: usize = 8;

/// The picture the page draws: pure, so its JSON is tested without actors.
#[derive(Default)]
pub struct WatchState {
    /// What is being watched ("Round-robin of the built-in bots"), or `None`
    /// when this server shows nothing.
    pub title: Option<String>,
    /// `tournament` or `lobby`.
    pub kind: &'static str,
    pub standings: Vec<Tally>,
    pub total: u64,
    pub live: BTreeMap<u64, Table>,
    pub recent: VecDeque<Table>,
    pub finished: u64,
    pub v: u64,
}

impl WatchState {
    pub fn apply(&mut self, ev: &GameEvent) {
        match ev {
            GameEvent::Started {
                game,
                games,
                names,
                cfg,
                ..
            } => {
                self.total = self.total.max(*games);
                let mut t = Table::new(game.to_string(), names.clone(), Vec::new(), *cfg);
                t.apply(ev);
                self.live.insert(*game, t);
            }
            GameEvent::Moved { game, .. } | GameEvent::Illegal { game, .. } => {
                if let Some(t) = self.live.get_mut(game) {
                    t.apply(ev);
                }
            }
            GameEvent::Over { record, .. } => {
                self.finished += 1;
                // A tournament sends its own standings (resumed games
                // included); the lobby's are its matches seen here.
                if self.kind == "lobby" {
                    for name in &record.players {
                        if !self.standings.iter().any(|t| &t.name == name) {
                            self.standings.push(Tally {
                                name: name.clone(),
                                ..Default::default()
                            });
                        }
                    }
                    crate::record::tally(&mut self.standings, record);
                }
                if let Some(mut t) = self.live.remove(&record.game) {
                    t.apply(ev);
                    self.recent.push_front(t);
                    self.recent.truncate(SHOWN);
                }
            }
            GameEvent::Summary { tallies } => self.standings = tallies.clone(),
            GameEvent::Out { .. } => {}
        }
        self.v += 1;
    }

    /// `d` of a `watch` message (docs/web.md).
    pub fn view(&self) -> Value {
        let mut standings: Vec<&Tally> = self.standings.iter().collect();
        standings.sort_by(|a, b| b.score().total_cmp(&a.score()).then(b.games().cmp(&a.games())));
        let done = self.standings.iter().map(|t| t.games() as u64).sum::<u64>() / 2;
        json!({
            "title": self.title,
            "kind": self.kind,
            "done": if self.kind == "tournament" { done } else { self.finished },
            "total": self.total,
            "standings": standings.iter().map(|t| json!({
                "name": t.name, "games": t.games(), "wins": t.wins, "draws": t.draws,
                "losses": t.losses, "score": (t.score() * 1000.0).round() / 1000.0,
            })).collect::<Vec<_>>(),
            "live": self.live.values().take(SHOWN).map(Table::view).collect::<Vec<_>>(),
            "recent": self.recent.iter().map(Table::view).collect::<Vec<_>>(),
        })
    }
}

pub struct WatchHub {
    state: WatchState,
    pages: HashMap<u64, Outbox>,
    sent: u64,
}

impl WatchHub {
    pub fn new(title: Option<String>, kind: &'static str) -> Self {
        WatchHub {
            state: WatchState {
                title,
                kind,
                ..Default::default()
            },
            pages: HashMap::new(),
            sent: 0,
        }
    }

    fn message(&self) -> String {
        encode("watch", Some(self.state.v), &self.state.view())
    }
}

impl Actor for WatchHub {
    type Context = Context<Self>;
    fn started(&mut self, ctx: &mut Context<Self>) {
        ctx.run_interval(TICK, |hub, _| {
            if hub.sent != hub.state.v && !hub.pages.is_empty() {
                hub.sent = hub.state.v;
                let text = hub.message();
                for out in hub.pages.values() {
                    post(out, text.clone());
                }
            }
        });
    }
}

impl Handler<GameEvent> for WatchHub {
    type Result = ();
    fn handle(&mut self, ev: GameEvent, _: &mut Context<Self>) {
        self.state.apply(&ev);
    }
}

/// A page starts watching; it gets the picture at once.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Subscribe {
    pub conn: u64,
    pub out: Outbox,
}

#[derive(Message)]
#[rtype(result = "()")]
pub struct Unsubscribe {
    pub conn: u64,
}

impl Handler<Subscribe> for WatchHub {
    type Result = ();
    fn handle(&mut self, m: Subscribe, _: &mut Context<Self>) {
        post(&m.out, self.message());
        self.pages.insert(m.conn, m.out);
    }
}

impl Handler<Unsubscribe> for WatchHub {
    type Result = ();
    fn handle(&mut self, m: Unsubscribe, _: &mut Context<Self>) {
        self.pages.remove(&m.conn);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{Board, BoardConfig, EndReason, Outcome};
    use crate::record::GameRecord;

    #[test]
    fn standings_and_live_games() {
        let mut w = WatchState {
            title: Some("RR".into()),
            kind: "tournament",
            ..Default::default()
        };
        let cfg = BoardConfig::default();
        let names = vec!["A".to_string(), "B".to_string()];
        w.apply(&GameEvent::Started {
            game: 4,
            games: 10,
            names: names.clone(),
            cfg,
            opening: vec![],
            board: Board::new(cfg),
            seed: 0,
        });
        assert_eq!(w.view()["live"][0]["id"], "4");
        assert_eq!(w.view()["total"], 10);
        let record = GameRecord {
            game: 4,
            players: names,
            moves: vec![],
            opening: vec![],
            outcome: Outcome {
                winner: Some(1),
                reason: EndReason::Forfeit,
                eliminated: vec![(0, EndReason::Forfeit)],
                resigned: vec![],
            },
            seed: 0,
            duration_ms: 1,
            think_ms: Vec::new(),
            turns: Vec::new(),
            forfeits: vec![],
        };
        w.apply(&GameEvent::Over {
            record,
            board: Board::new(cfg),
        });
        w.apply(&GameEvent::Summary {
            tallies: vec![
                Tally {
                    name: "A".into(),
                    losses: 1,
                    ..Default::default()
                },
                Tally {
                    name: "B".into(),
                    wins: 1,
                    ..Default::default()
                },
            ],
        });
        let v = w.view();
        assert_eq!(v["live"], json!([]));
        assert_eq!(v["recent"][0]["result"]["text"], "B wins");
        assert_eq!(v["standings"][0]["name"], "B");
        assert_eq!(v["done"], 1);
        assert_eq!(w.v, 3);
    }
}
