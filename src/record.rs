//! The record every game ends with, and the per-player tallies built from
//! records. Plain data: written by the referee, read by reports.

use crate::game::{EndReason, Outcome};
use serde::{Deserialize, Serialize};

/// One finished game: players in seat order, every move (opening included),
/// the result and its reason, and how long each seat thought.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameRecord {
    pub game: u64,
    pub players: Vec<String>,
    /// Columns from 0, opening included.
    pub moves: Vec<usize>,
    pub opening: Vec<usize>,
    pub outcome: Outcome,
    pub seed: u64,
    pub duration_ms: u64,
    /// Per seat, in seat order: the wall time in ms from the referee's
    /// request to the seat's reply (or its timeout), summed over the game, so
    /// a reader can check that the players really got equal time per move.
    /// It includes the player's own overhead (process pipes, network). Empty
    /// where nobody timed the turns (records written before this field, tests).
    #[serde(default)]
    pub think_ms: Vec<u64>,
    /// Per seat, in seat order: the turns the referee asked of the seat.
    /// Every request counts, refused (illegal) answers, timeouts and
    /// forfeits included, so `think_ms / turns` is the mean cost of one
    /// request; opening moves are played by the referee, never asked, and
    /// do not count. Empty where `think_ms` is.
    #[serde(default)]
    pub turns: Vec<u32>,
    /// Why each seat that went out of the game without a move (a crash, an
    /// agent's exception) went, in the order it happened; absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forfeits: Vec<Forfeit>,
}

/// A seat that could not move any more, and what it said.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Forfeit {
    pub seat: usize,
    pub why: String,
}

/// A player's result in one game.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlayerResult {
    Win,
    Draw,
    Loss,
}

impl PlayerResult {
    /// The word docs/external-player.md's GAME_OVER line uses.
    pub fn word(self) -> &'static str {
        match self {
            PlayerResult::Win => "WIN",
            PlayerResult::Draw => "DRAW",
            PlayerResult::Loss => "LOSS",
        }
    }
}

impl GameRecord {
    /// A seat that went out of the game (illegal moves, time, forfeit) lost
    /// it, even when the others then filled the board without a line.
    pub fn result_of(&self, seat: usize) -> PlayerResult {
        if self.outcome.eliminated.iter().any(|&(s, _)| s == seat) {
            return PlayerResult::Loss;
        }
        match self.outcome.winner {
            None => PlayerResult::Draw,
            Some(w) if w == seat => PlayerResult::Win,
            Some(_) => PlayerResult::Loss,
        }
    }
    pub fn winner_name(&self) -> Option<&str> {
        self.outcome.winner.map(|w| self.players[w].as_str())
    }
    /// `win` or `draw`, as `--json` writes it.
    pub fn result_word(&self) -> &'static str {
        if self.outcome.winner.is_some() {
            "win"
        } else {
            "draw"
        }
    }
    /// The reason that ended this player's part: its own elimination, or
    /// the game's reason.
    pub fn reason_for(&self, seat: usize) -> EndReason {
        self.outcome
            .eliminated
            .iter()
            .find(|(s, _)| *s == seat)
            .map_or(self.outcome.reason, |(_, r)| *r)
    }
}

/// Wins, draws and losses of one player over a run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Tally {
    pub name: String,
    pub wins: u32,
    pub draws: u32,
    pub losses: u32,
}

impl Tally {
    pub fn games(&self) -> u32 {
        self.wins + self.draws + self.losses
    }
    /// Score with draws counted half, from 0 to 1.
    pub fn score(&self) -> f64 {
        if self.games() == 0 {
            0.0
        } else {
            (self.wins as f64 + 0.5 * self.draws as f64) / self.games() as f64
        }
    }
}

/// Adds a record to the tallies (matched by name).
pub fn tally(tallies: &mut [Tally], record: &GameRecord) {
    for (seat, name) in record.players.iter().enumerate() {
        if let Some(t) = tallies.iter_mut().find(|t| &t.name == name) {
            match record.result_of(seat) {
                PlayerResult::Win => t.wins += 1,
                PlayerResult::Draw => t.draws += 1,
                PlayerResult::Loss => t.losses += 1,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{EndReason, Outcome};

    fn record(winner: Option<usize>, eliminated: Vec<(usize, EndReason)>) -> GameRecord {
        GameRecord {
            game: 1,
            players: vec!["a".into(), "b".into(), "c".into()],
            moves: vec![],
            opening: vec![],
            outcome: Outcome {
                winner,
                reason: EndReason::Tie,
                eliminated,
                resigned: vec![],
            },
            seed: 0,
            duration_ms: 0,
            think_ms: vec![],
            turns: vec![],
            forfeits: vec![],
        }
    }

    #[test]
    fn a_seat_that_went_out_lost_even_when_the_rest_drew() {
        let r = record(None, vec![(1, EndReason::Timeout)]);
        let results: Vec<_> = (0..3).map(|s| r.result_of(s)).collect();
        assert_eq!(results, [PlayerResult::Draw, PlayerResult::Loss, PlayerResult::Draw]);
        let mut t: Vec<Tally> = ["a", "b", "c"]
            .iter()
            .map(|n| Tally {
                name: n.to_string(),
                ..Default::default()
            })
            .collect();
        tally(&mut t, &r);
        assert_eq!((t[1].losses, t[0].draws, t[2].draws), (1, 1, 1));
        let won = record(Some(2), vec![(1, EndReason::Forfeit)]);
        assert_eq!(won.result_of(0), PlayerResult::Loss);
        assert_eq!(won.result_of(2), PlayerResult::Win);
    }
}
