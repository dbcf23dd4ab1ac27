//! The simple in-process kinds and the search-backed ones, with the specs
//! (keys and defaults) of `minimax` and `mcts`.

use super::keys::{count_key, Key, KindKeys};
use super::{Strategy, TurnView};
use crate::game::Answer;
use crate::search::minimax::Minimax;
use crate::search::uct::Mcts;
use rand::seq::SliceRandom;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::json;

/// The left-most column with room.
pub struct Leftmost;
impl Strategy for Leftmost {
    fn choose(&mut self, v: &TurnView) -> Answer {
        Answer::Column(v.board.legal_moves().first().copied().unwrap_or(0) as i64)
    }
}

/// The right-most column with room.
pub struct Rightmost;
impl Strategy for Rightmost {
    fn choose(&mut self, v: &TurnView) -> Answer {
        Answer::Column(v.board.legal_moves().last().copied().unwrap_or(0) as i64)
    }
}

/// A uniformly random column with room, from a seeded generator.
pub struct RandomBot {
    rng: ChaCha8Rng,
}
impl RandomBot {
    pub fn new(seed: u64) -> Self {
        RandomBot {
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }
}
impl Strategy for RandomBot {
    fn choose(&mut self, v: &TurnView) -> Answer {
        let moves = v.board.legal_moves();
        Answer::Column(*moves.choose(&mut self.rng).unwrap_or(&0) as i64)
    }
    fn new_game(&mut self, seed: u64) {
        self.rng = ChaCha8Rng::seed_from_u64(seed);
    }
}

/// Always a column out of range: exercises the referee's illegal-move path.
pub struct InvalidBot;
impl Strategy for InvalidBot {
    fn choose(&mut self, v: &TurnView) -> Answer {
        Answer::Column(v.board.cols() as i64)
    }
}

/// minimax search depth when none is given.
pub const DEFAULT_DEPTH: u32 = 4;
/// mcts simulations per move when none are given.
pub const DEFAULT_MCTS_SIMULATIONS: u32 = 1000;

/// A `minimax` player's keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MinimaxSpec {
    /// Search depth in plies.
    pub depth: u32,
}

impl Default for MinimaxSpec {
    fn default() -> Self {
        MinimaxSpec { depth: DEFAULT_DEPTH }
    }
}

impl KindKeys for MinimaxSpec {
    const KEYS: &'static [Key<Self>] = &[count_key!("depth", depth, 1)];
}

impl MinimaxSpec {
    pub fn build(&self) -> MinimaxBot {
        MinimaxBot::new(self.depth)
    }
}

/// An `mcts` player's keys.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MctsSpec {
    /// Simulations per move.
    pub simulations: u32,
}

impl Default for MctsSpec {
    fn default() -> Self {
        MctsSpec {
            simulations: DEFAULT_MCTS_SIMULATIONS,
        }
    }
}

impl KindKeys for MctsSpec {
    const KEYS: &'static [Key<Self>] = &[count_key!("simulations", simulations, 1)];
}

impl MctsSpec {
    pub fn build(&self, seed: u64) -> MctsBot {
        MctsBot::new(self.simulations, seed)
    }
}

/// Alpha–beta minimax with the reference heuristic (docs/alphazero.md).
pub struct MinimaxBot {
    search: Minimax,
}
impl MinimaxBot {
    pub fn new(depth: u32) -> Self {
        MinimaxBot {
            search: Minimax::new(depth),
        }
    }
}
impl Strategy for MinimaxBot {
    fn choose(&mut self, v: &TurnView) -> Answer {
        Answer::Column(self.search.choose(&v.board, v.seat) as i64)
    }
    fn analyze(&mut self, v: &TurnView) -> (Answer, Option<serde_json::Value>) {
        let (col, scores) = self.search.scores(&v.board, v.seat);
        (Answer::Column(col as i64), Some(json!(scores)))
    }
    fn is_heavy(&self) -> bool {
        true
    }
    fn explain(&self) -> Option<String> {
        let depth = self.search.depth();
        self.search.last_score().map(|s| match s {
            s if s >= crate::search::minimax::WIN => format!("sees a forced win within {depth} plies"),
            s if s <= -crate::search::minimax::WIN => format!("sees a forced loss within {depth} plies"),
            s => format!("evaluation {s:+} at depth {depth}"),
        })
    }
}

/// Plain UCT with random playouts.
pub struct MctsBot {
    search: Mcts,
}
impl MctsBot {
    pub fn new(simulations: u32, seed: u64) -> Self {
        MctsBot {
            search: Mcts::new(simulations, seed),
        }
    }
}
impl Strategy for MctsBot {
    fn choose(&mut self, v: &TurnView) -> Answer {
        Answer::Column(self.search.choose(&v.board, v.seat) as i64)
    }
    fn analyze(&mut self, v: &TurnView) -> (Answer, Option<serde_json::Value>) {
        let (col, shares) = self.search.analyze(&v.board, v.seat);
        (Answer::Column(col as i64), Some(json!(shares)))
    }
    fn new_game(&mut self, seed: u64) {
        self.search.reseed(seed);
    }
    fn is_heavy(&self) -> bool {
        true
    }
}
