//! Every message the actors exchange, in one place.

use crate::game::{Board, BoardConfig, EndReason, Refusal};
use crate::players::TurnView;
use crate::record::{GameRecord, PlayerResult, Tally};
use actix::prelude::*;
use std::time::Duration;

/// A player's answer to [`YourTurn`].
#[derive(Debug)]
pub enum Reply {
    Answer(crate::game::Answer),
    /// An answer with a word on what the player thinks of it (a search's
    /// score, a network's value), shown to people after the move.
    Thinking(crate::game::Answer, String),
    /// The player cannot move any more (crashed, exited, end of input).
    Gone(String),
    /// The player resigned (a person's `quit`, the page's Resign button, a
    /// lobby client's `resign`): FORFEIT, worded as a resignation.
    Resign,
}

/// Referee → player: choose a move on this copy of the board.
#[derive(Message)]
#[rtype(result = "Reply")]
pub struct YourTurn(pub TurnView);

/// Referee → player: stop working on the last request (its time is up).
#[derive(Message)]
#[rtype(result = "()")]
pub struct Abandon;

/// Referee → player: a game starts; reseed from `seed`.
#[derive(Message)]
#[rtype(result = "()")]
pub struct NewGame {
    pub game: u64,
    pub seat: usize,
    pub seed: u64,
}

/// Referee → player: how the game ended for it.
#[derive(Message)]
#[rtype(result = "()")]
pub struct GameEnded {
    pub result: PlayerResult,
    pub reason: EndReason,
}

/// Runner → player: the run is over; release processes and files.
#[derive(Message)]
#[rtype(result = "()")]
pub struct Shutdown;

/// Runner → referee: play one game to the end and return its record.
#[derive(Message)]
#[rtype(result = "GameRecord")]
pub struct PlayGame {
    pub game: u64,
    pub games: u64,
    pub cfg: BoardConfig,
    /// Player actors in seat order, with their names and move-time limits.
    pub seats: Vec<Seat>,
    pub letters: Vec<char>,
    pub opening: Vec<usize>,
    pub max_invalid: u32,
    pub seed: u64,
    /// Where game events go (renderer, JSON writer, recorders).
    pub sinks: Vec<Recipient<GameEvent>>,
}

impl PlayGame {
    /// A game that stands alone (a page's game, a lobby match): game `number`
    /// of `number`, with the default piece letters.
    pub fn alone(
        number: u64,
        cfg: BoardConfig,
        seats: Vec<Seat>,
        opening: Vec<usize>,
        max_invalid: u32,
        seed: u64,
        sinks: Vec<Recipient<GameEvent>>,
    ) -> PlayGame {
        PlayGame {
            game: number,
            games: number,
            cfg,
            seats,
            letters: crate::game::DEFAULT_LETTERS.to_vec(),
            opening,
            max_invalid,
            seed,
            sinks,
        }
    }
}

/// One seat of a game.
#[derive(Clone)]
pub struct Seat {
    pub name: String,
    pub player: PlayerHandle,
    pub move_time: Option<Duration>,
}

/// The messages a referee sends to a player, as recipients, so any actor
/// that handles them can sit at a table: the local player actor, a network
/// seat of the lobby server, a test double.
#[derive(Clone)]
pub struct PlayerHandle {
    pub turn: Recipient<YourTurn>,
    pub abandon: Recipient<Abandon>,
    pub new_game: Recipient<NewGame>,
    pub ended: Recipient<GameEnded>,
    pub shutdown: Recipient<Shutdown>,
}

impl PlayerHandle {
    pub fn of<A>(addr: &Addr<A>) -> Self
    where
        A: Actor<Context = Context<A>>
            + Handler<YourTurn>
            + Handler<Abandon>
            + Handler<NewGame>
            + Handler<GameEnded>
            + Handler<Shutdown>,
    {
        PlayerHandle {
            turn: addr.clone().recipient(),
            abandon: addr.clone().recipient(),
            new_game: addr.clone().recipient(),
            ended: addr.clone().recipient(),
            shutdown: addr.clone().recipient(),
        }
    }
}

/// What happens in a game, for whoever shows or records it.
#[derive(Message, Clone, Debug)]
#[rtype(result = "()")]
pub enum GameEvent {
    Started {
        game: u64,
        games: u64,
        names: Vec<String>,
        cfg: BoardConfig,
        opening: Vec<usize>,
        board: Board,
        seed: u64,
    },
    Moved {
        game: u64,
        seat: usize,
        name: String,
        col: usize,
        row: usize,
        number: usize,
        board: Board,
        next: Option<(usize, String)>,
        /// What the player said it thinks of its move, if anything.
        note: Option<String>,
    },
    Illegal {
        game: u64,
        seat: usize,
        name: String,
        refusal: Refusal,
        tries_left: u32,
    },
    Out {
        game: u64,
        seat: usize,
        name: String,
        reason: EndReason,
        /// The seat resigned (its reason is FORFEIT).
        resigned: bool,
    },
    Over {
        record: GameRecord,
        board: Board,
    },
    Summary {
        tallies: Vec<Tally>,
    },
}
