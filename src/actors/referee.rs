//! The referee actor: drives one game through the state machine of
//! docs/rules.md ([`crate::game::Game`]), asks each seat's player actor in turn,
//! enforces move time (and records how long each seat took), and turns
//! silence or disappearance into TIMEOUT or FORFEIT. It is the only place
//! that decides what happens next, for every mode.

use super::messages::*;
use crate::game::{EndReason, Game, Refusal, Step};
use crate::players::TurnView;
use crate::record::{Forfeit, GameRecord};
use crate::util::seed;
use actix::prelude::*;
use std::time::{Duration, Instant};

#[derive(Default)]
pub struct Referee;

impl Actor for Referee {
    type Context = Context<Self>;
}

impl Handler<PlayGame> for Referee {
    type Result = ResponseFuture<GameRecord>;
    fn handle(&mut self, msg: PlayGame, _: &mut Context<Self>) -> Self::Result {
        Box::pin(referee_game(msg))
    }
}

async fn emit(sinks: &[Recipient<GameEvent>], ev: GameEvent) {
    for s in sinks {
        // A sink that went away must not stop the game.
        let _ = s.send(ev.clone()).await;
    }
}

/// Plays one game to the end. Openings are checked by whoever builds the
/// schedule; an invalid one here is a programming error and is played as
/// far as it is legal.
pub async fn referee_game(msg: PlayGame) -> GameRecord {
    let started = Instant::now();
    let n = msg.seats.len();
    let mut game = Game::with_opening(msg.cfg, n, msg.max_invalid, &msg.opening).unwrap_or_else(|e| {
        tracing::error!("opening refused: {e}; starting from the empty board");
        Game::new(msg.cfg, n, msg.max_invalid)
    });
    let names: Vec<String> = msg.seats.iter().map(|s| s.name.clone()).collect();
    start_players(&msg).await;
    let has_sinks = !msg.sinks.is_empty();
    if has_sinks {
        emit(
            &msg.sinks,
            GameEvent::Started {
                game: msg.game,
                games: msg.games,
                names: names.clone(),
                cfg: msg.cfg,
                opening: msg.opening.clone(),
                board: game.board().clone(),
                seed: msg.seed,
            },
        )
        .await;
    }
    let mut refusal: Option<Refusal> = None;
    // Per seat: time from each request to its reply (or timeout), and the
    // requests made, so the record shows whether the seats got equal time.
    let mut thought = vec![Duration::ZERO; n];
    let mut turns = vec![0u32; n];
    let mut forfeits = Vec::new();
    while let Some(seat) = game.to_move() {
        let view = TurnView::of(&game, msg.game, seat, &msg.letters, refusal.take());
        let s = &msg.seats[seat];
        let asked = Instant::now();
        let reply = ask(s, view).await;
        thought[seat] += asked.elapsed();
        turns[seat] += 1;
        let (step, note) = apply_reply(&mut game, seat, s, reply, &mut forfeits);
        refusal = report_step(&msg, &names, &game, step, note).await;
    }
    let outcome = game.outcome().cloned().expect("loop ends when the game is over");
    let record = GameRecord {
        game: msg.game,
        players: names,
        moves: game.moves().to_vec(),
        opening: msg.opening.clone(),
        outcome,
        seed: msg.seed,
        duration_ms: started.elapsed().as_millis() as u64,
        // Summed exactly, rounded once to the nearest ms: short turns are
        // neither lost nor biased down.
        think_ms: thought.iter().map(|d| (d.as_micros() as u64 + 500) / 1000).collect(),
        turns,
        forfeits,
    };
    tell_results(&msg, &record).await;
    if has_sinks {
        emit(
            &msg.sinks,
            GameEvent::Over {
                record: record.clone(),
                board: game.board().clone(),
            },
        )
        .await;
    }
    record
}

/// Tells every seat's player that a game begins, in which seat and with
/// which seed (derived from the game's, so every game replays exactly).
async fn start_players(msg: &PlayGame) {
    for (seat, s) in msg.seats.iter().enumerate() {
        let _ = s
            .player
            .new_game
            .send(NewGame {
                game: msg.game,
                seat,
                seed: seed::derive(msg.seed, msg.game, seat as u64),
            })
            .await;
    }
}

/// Asks one seat for its move and waits at most its move time; `None`
/// when the time ran out (the player is told to drop the question), an
/// error when the player's actor is gone.
async fn ask(s: &Seat, view: TurnView) -> Option<Result<Reply, MailboxError>> {
    let request = s.player.turn.send(YourTurn(view));
    match s.move_time {
        None => Some(request.await),
        Some(limit) => match tokio::time::timeout(limit, request).await {
            Ok(r) => Some(r),
            Err(_) => {
                s.player.abandon.do_send(Abandon);
                None
            }
        },
    }
}

/// Plays a seat's reply (or its silence) on the game: a move, a refusal,
/// a resignation, or TIMEOUT/FORFEIT (with what a gone player said, in
/// `forfeits`); with the player's note on its move.
fn apply_reply(
    game: &mut Game,
    seat: usize,
    s: &Seat,
    reply: Option<Result<Reply, MailboxError>>,
    forfeits: &mut Vec<Forfeit>,
) -> (Step, Option<String>) {
    let mut note = None;
    let step = match reply {
        None => game.eliminate(seat, EndReason::Timeout),
        Some(Err(_)) => game.eliminate(seat, EndReason::Forfeit),
        Some(Ok(Reply::Gone(why))) => {
            tracing::info!("{} forfeits: {why}", s.name);
            forfeits.push(Forfeit { seat, why });
            game.eliminate(seat, EndReason::Forfeit)
        }
        Some(Ok(Reply::Resign)) => {
            tracing::info!("{} resigns", s.name);
            game.resign(seat)
        }
        Some(Ok(Reply::Answer(a))) => game.submit(a),
        Some(Ok(Reply::Thinking(a, n))) => {
            note = Some(n);
            game.submit(a)
        }
    };
    (step, note)
}

/// Sends the event for one step to the sinks (none when there are no
/// sinks, or when an elimination ended the game: `Over` says it); returns
/// the refusal to show the same seat with its next question.
async fn report_step(
    msg: &PlayGame,
    names: &[String],
    game: &Game,
    step: Step,
    note: Option<String>,
) -> Option<Refusal> {
    if msg.sinks.is_empty() {
        if let Step::Illegal { reason, .. } = step {
            return Some(reason);
        }
        return None;
    }
    match step {
        Step::Moved { seat, col, row } => {
            let next = game.to_move().map(|t| (t, names[t].clone()));
            let ev = GameEvent::Moved {
                game: msg.game,
                seat,
                name: names[seat].clone(),
                col,
                row,
                number: game.moves().len(),
                board: game.board().clone(),
                next,
                note,
            };
            emit(&msg.sinks, ev).await;
        }
        Step::Illegal {
            seat,
            reason,
            tries_left,
        } => {
            let ev = GameEvent::Illegal {
                game: msg.game,
                seat,
                name: names[seat].clone(),
                refusal: reason.clone(),
                tries_left,
            };
            emit(&msg.sinks, ev).await;
            return Some(reason);
        }
        Step::Eliminated { seat, reason } => {
            if !game.is_over() {
                emit(
                    &msg.sinks,
                    GameEvent::Out {
                        game: msg.game,
                        seat,
                        name: names[seat].clone(),
                        reason,
                        resigned: game.has_resigned(seat),
                    },
                )
                .await;
            }
        }
    }
    None
}

/// Tells every seat's player its own result and why, in seat order (an
/// external program passes it on as its `GAME_OVER` line).
async fn tell_results(msg: &PlayGame, record: &GameRecord) {
    for (seat, s) in msg.seats.iter().enumerate() {
        let ended = GameEnded {
            result: record.result_of(seat),
            reason: record.reason_for(seat),
        };
        // Bounded: a search still running after a timeout must not hold up the run.
        let _ = tokio::time::timeout(Duration::from_secs(2), s.player.ended.send(ended)).await;
    }
}
