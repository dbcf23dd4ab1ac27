//! Player kinds. In-process bots implement [`Strategy`] (synchronous, pure
//! given their seed); people and external programs do I/O and live in
//! [`human`] and [`external`]. The player actor wraps any of them;
//! [`kinds`] is the registry of every kind; [`model`] reads the trained
//! networks the `alphazero` kind plays with.

pub mod agent;
pub mod alphazero;
pub mod bots;
pub mod external;
pub mod human;
pub mod judge;
pub mod keys;
pub mod kinds;
pub mod model;
pub mod solver;

pub use agent::AgentError;
pub use keys::{FitError, KeyError};
pub use kinds::{build_strategy, check_fits, BuildError, KindError, KindSpec, PlayerKind, PlayerSpec};

use crate::game::{Answer, Board, Game, Refusal};

/// What a player is shown when asked for a move: a copy of the board, so a
/// player can never change the real one.
#[derive(Clone, Debug)]
pub struct TurnView {
    /// Game number within the run, from 1.
    pub game: u64,
    pub board: Board,
    /// The seat being asked.
    pub seat: usize,
    pub seats: usize,
    /// Board-string letters of the seats.
    pub letters: Vec<char>,
    /// Every column played so far (from 0), opening included.
    pub moves: Vec<usize>,
    /// Why the previous answer this turn was refused, when this is a re-ask.
    pub error: Option<Refusal>,
    /// Illegal answers this seat may still give this turn before it loses.
    pub tries_left: u32,
}

impl TurnView {
    /// What `seat` is shown in `game` (game number `number`); `error` is the
    /// reason its previous answer this turn was refused.
    pub fn of(game: &Game, number: u64, seat: usize, letters: &[char], error: Option<Refusal>) -> Self {
        TurnView {
            game: number,
            board: game.board().clone(),
            seat,
            seats: game.seats(),
            letters: letters.to_vec(),
            moves: game.moves().to_vec(),
            error,
            tries_left: game.max_invalid() - game.invalid_this_turn(),
        }
    }

    /// The seat and column of the last move, if any.
    pub fn last_move(&self) -> Option<(usize, usize)> {
        let n = self.moves.len();
        (n > 0).then(|| ((n - 1) % self.seats, self.moves[n - 1]))
    }
}

/// An in-process player: given the view, answer a column. Bots must be
/// deterministic given the seed of [`Strategy::new_game`].
pub trait Strategy: Send {
    fn choose(&mut self, view: &TurnView) -> Answer;
    /// [`Strategy::choose`], or why the player cannot move any more (an
    /// embedding program's agent that failed): that costs it the game.
    fn choose_or_quit(&mut self, view: &TurnView) -> Result<Answer, AgentError> {
        Ok(self.choose(view))
    }
    /// What the player knows of each column, for `c4sim analyze`
    /// (`None` where it knows nothing), and its choice.
    fn analyze(&mut self, view: &TurnView) -> (Answer, Option<serde_json::Value>) {
        (self.choose(view), None)
    }
    /// A few words on what the player thinks of the move it just chose
    /// (shown to people after the move), if it has any.
    fn explain(&self) -> Option<String> {
        None
    }
    /// Called before each game with a seed derived from the scenario seed.
    fn new_game(&mut self, _seed: u64) {}
    /// Whether this player can play on boards of `cfg` (a network is trained
    /// for one board size).
    fn fits(&self, _cfg: crate::game::BoardConfig) -> Result<(), FitError> {
        Ok(())
    }
    /// Whether choosing takes long enough that it must run off the actor
    /// event loop (searches), so timers and rendering stay responsive.
    fn is_heavy(&self) -> bool {
        false
    }
}
