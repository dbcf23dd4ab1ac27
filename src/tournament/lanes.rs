//! Lanes: games played `concurrency` at a time, each lane an arbiter
//! (thread) with its own referee and one actor per player. Tournaments and
//! AlphaZero's evaluation games both play here.
//!
//! Lane `l` of `L` plays the games at positions `l, l + L, l + 2L, …` of
//! the list, in order, whatever the timing. Every game is seeded by its
//! number, so for most players the lane does not matter; but a player that
//! keeps something between games (AlphaZero's cache of network outputs
//! changes how its batched search fills a batch) plays the same games only
//! if it meets the same games in the same order, which this fixed deal
//! guarantees at a given concurrency.

use crate::actors::messages::{GameEvent, PlayGame, PlayerHandle, Seat, Shutdown};
use crate::actors::player::{Occupant, PlayerActor};
use crate::actors::referee::Referee;
use crate::game::{BoardConfig, DEFAULT_LETTERS};
use crate::record::GameRecord;
use crate::tournament::schedule::Planned;
use actix::prelude::*;
use std::collections::VecDeque;
use std::error::Error;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// What every game on the lanes shares: the board and rules, the players'
/// names and move-time limits (by player index), and how a game is seeded
/// from its number.
#[derive(Clone)]
pub struct Rules {
    pub cfg: BoardConfig,
    pub max_invalid: u32,
    pub names: Vec<String>,
    pub move_times: Vec<Option<Duration>>,
    /// Games in the whole run (shown as "game N of M").
    pub total: u64,
    pub seed_of: Arc<dyn Fn(u64) -> u64 + Send + Sync>,
}

/// Why the lanes stopped before their games were played.
#[derive(Debug, thiserror::Error)]
pub enum LaneError {
    /// A lane's players could not be built (the builder's own error).
    #[error("{0}")]
    Players(#[source] Box<dyn Error + Send + Sync>),
    /// A referee actor is gone (its thread died).
    #[error("a referee stopped: {0}")]
    Referee(#[source] MailboxError),
}

/// One lane: an arbiter with a referee and one actor per player.
struct Lane {
    arbiter: Arbiter,
    referee: Addr<Referee>,
    players: Vec<PlayerHandle>,
    shutdown: Vec<Recipient<Shutdown>>,
}

fn start_lane(rules: &Rules, inners: Vec<Occupant>) -> Lane {
    let arbiter = Arbiter::new();
    let referee = Referee::start_in_arbiter(&arbiter.handle(), |_| Referee);
    let mut players = Vec::new();
    let mut shutdown = Vec::new();
    for (name, inner) in rules.names.iter().cloned().zip(inners) {
        let addr = PlayerActor::start_in_arbiter(&arbiter.handle(), move |_| PlayerActor::new(name, inner));
        players.push(PlayerHandle::of(&addr));
        shutdown.push(addr.recipient());
    }
    Lane {
        arbiter,
        referee,
        players,
        shutdown,
    }
}

/// Plays `games` with `concurrency` lanes (fewer when there are fewer
/// games); `players(lane, lanes)` builds one lane's players in player-index
/// order. Each record goes to `on_done` as it
/// finishes (completion order); `on_done` returning false stops the
/// schedule (no lane starts another game; games in progress still finish
/// and are handed over).
pub async fn play_on_lanes<E: Into<Box<dyn Error + Send + Sync>>>(
    rules: Rules,
    games: Vec<Planned>,
    concurrency: usize,
    players: impl FnMut(usize, usize) -> Result<Vec<Occupant>, E>,
    on_done: impl FnMut(GameRecord) -> bool,
) -> Result<(), LaneError> {
    play_on_lanes_watched(rules, games, concurrency, players, on_done, Vec::new()).await
}

/// [`play_on_lanes`], with every game's events also sent to `sinks` (a
/// page watching the tournament: `c4sim run FILE --web ADDR`).
pub async fn play_on_lanes_watched<E: Into<Box<dyn Error + Send + Sync>>>(
    rules: Rules,
    games: Vec<Planned>,
    concurrency: usize,
    mut players: impl FnMut(usize, usize) -> Result<Vec<Occupant>, E>,
    mut on_done: impl FnMut(GameRecord) -> bool,
    sinks: Vec<Recipient<GameEvent>>,
) -> Result<(), LaneError> {
    let lanes = concurrency.clamp(1, games.len().max(1));
    // Each lane pulls its next game itself, on its own thread: no thread
    // hand-off per game, only the finished record crosses to this thread.
    let mut dealt: Vec<VecDeque<Planned>> = vec![VecDeque::new(); lanes];
    for (i, g) in games.into_iter().enumerate() {
        dealt[i % lanes].push_back(g);
    }
    let queues: Vec<Arc<Mutex<VecDeque<Planned>>>> = dealt.into_iter().map(|q| Arc::new(Mutex::new(q))).collect();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Result<GameRecord, LaneError>>();
    let mut started = Vec::new();
    for (l, queue) in queues.iter().enumerate() {
        let lane = start_lane(&rules, players(l, lanes).map_err(|e| LaneError::Players(e.into()))?);
        let (queue, tx, rules, sinks) = (queue.clone(), tx.clone(), rules.clone(), sinks.clone());
        let referee = lane.referee.clone();
        let players = lane.players.clone();
        let arbiter = lane.arbiter.handle();
        started.push(lane);
        arbiter.spawn(async move {
            loop {
                let next = queue.lock().unwrap_or_else(|e| e.into_inner()).pop_front();
                let Some(p) = next else { break };
                let seat = |i: usize| Seat {
                    name: rules.names[i].clone(),
                    player: players[i].clone(),
                    move_time: rules.move_times[i],
                };
                let msg = PlayGame {
                    game: p.index,
                    games: rules.total,
                    cfg: rules.cfg,
                    seats: vec![seat(p.seats[0]), seat(p.seats[1])],
                    letters: DEFAULT_LETTERS.to_vec(),
                    opening: p.opening,
                    max_invalid: rules.max_invalid,
                    seed: (rules.seed_of)(p.index),
                    sinks: sinks.clone(),
                };
                let r = referee.send(msg).await.map_err(LaneError::Referee);
                let failed = r.is_err();
                if tx.send(r).is_err() || failed {
                    break;
                }
            }
        });
    }
    drop(tx);
    let mut result = Ok(());
    while let Some(r) = rx.recv().await {
        match r {
            Ok(rec) => {
                if !on_done(rec) {
                    for q in &queues {
                        q.lock().unwrap_or_else(|e| e.into_inner()).clear();
                    }
                }
            }
            Err(e) => {
                result = Err(e);
                break;
            }
        }
    }
    for lane in started {
        for s in &lane.shutdown {
            let _ = s.send(Shutdown).await;
        }
        lane.arbiter.stop();
    }
    result
}
