//! The turn state machine of docs/rules.md as pure code: the referee actor, the
//! tournament director, self-play evaluation and the network server all drive
//! a [`Game`], so legality, turn order and end reasons live only here.

use super::board::{Board, BoardConfig, IllegalMove};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Default per-turn limit of illegal answers (`MAX_INVALID_MOVES`).
pub const DEFAULT_MAX_INVALID: u32 = 5;

/// Why a game (or one player's part in it) ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum EndReason {
    Win,
    Tie,
    TooManyInvalid,
    Timeout,
    Forfeit,
}

impl EndReason {
    pub const ALL: [EndReason; 5] = [
        EndReason::Win,
        EndReason::Tie,
        EndReason::TooManyInvalid,
        EndReason::Timeout,
        EndReason::Forfeit,
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            EndReason::Win => "WIN",
            EndReason::Tie => "TIE",
            EndReason::TooManyInvalid => "TOO_MANY_INVALID",
            EndReason::Timeout => "TIMEOUT",
            EndReason::Forfeit => "FORFEIT",
        }
    }
}

impl fmt::Display for EndReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What a player answered when asked for a move, in machine numbering.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    Column(i64),
    /// Not a column at all (junk text, a doctored board, ...); says why.
    Malformed(String),
}

/// Why an answer was refused. Kept structured so each audience gets its
/// own column numbering: machines count from 0, people from 1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    OutOfRange { column: i64, cols: usize },
    ColumnFull { column: usize },
    Malformed(String),
}

impl Refusal {
    /// The reason with columns numbered from `base` (0 for machines, 1 for people).
    /// Counted in `i128`, so any column a message can carry (`i64::MAX`
    /// included) is shown as the number it is, never wrapped.
    pub fn describe(&self, base: i64) -> String {
        let shown = |column: i128| column + base as i128;
        match self {
            Refusal::OutOfRange { column, cols } => {
                format!(
                    "column {} is out of range ({} to {})",
                    shown(*column as i128),
                    base,
                    shown(*cols as i128 - 1)
                )
            }
            Refusal::ColumnFull { column } => format!("column {} is full", shown(*column as i128)),
            Refusal::Malformed(why) => why.clone(),
        }
    }
}

impl From<IllegalMove> for Refusal {
    fn from(e: IllegalMove) -> Self {
        match e {
            IllegalMove::OutOfRange { column, cols } => Refusal::OutOfRange { column, cols },
            IllegalMove::ColumnFull { column } => Refusal::ColumnFull { column },
        }
    }
}

/// How a game ended.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    /// The winning seat, `None` for a draw.
    pub winner: Option<usize>,
    /// The reason that decided the game (for a win by elimination, the
    /// reason the last opponent went out).
    pub reason: EndReason,
    /// Seats knocked out before the end, with their reasons, in order.
    pub eliminated: Vec<(usize, EndReason)>,
    /// Seats that resigned (a person's `quit`, the page's Resign, a lobby
    /// client's `resign`). Their end reason stays FORFEIT, as docs/rules.md says;
    /// this is what lets people read "resigned" instead of "could not move".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resigned: Vec<usize>,
}

/// What one step of the state machine did.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    Moved {
        seat: usize,
        col: usize,
        row: usize,
    },
    /// The answer was refused; the same seat is asked again unless the game ended.
    Illegal {
        seat: usize,
        reason: Refusal,
        tries_left: u32,
    },
    /// The seat is out (TOO_MANY_INVALID, TIMEOUT or FORFEIT).
    Eliminated {
        seat: usize,
        reason: EndReason,
    },
}

/// One game in progress: board, whose turn, move list, illegal-answer count.
#[derive(Clone, Debug)]
pub struct Game {
    board: Board,
    seats: usize,
    to_move: usize,
    active: Vec<bool>,
    moves: Vec<usize>,
    invalid_this_turn: u32,
    max_invalid: u32,
    eliminated: Vec<(usize, EndReason)>,
    resigned: Vec<usize>,
    outcome: Option<Outcome>,
}

impl Game {
    pub fn new(cfg: BoardConfig, seats: usize, max_invalid: u32) -> Self {
        assert!(seats >= 1, "a game needs seats");
        Game {
            board: Board::new(cfg),
            seats,
            to_move: 0,
            active: vec![true; seats],
            moves: Vec::new(),
            invalid_this_turn: 0,
            max_invalid: max_invalid.max(1),
            eliminated: Vec::new(),
            resigned: Vec::new(),
            outcome: None,
        }
    }

    /// A game that starts after `opening` (columns from 0). Refused when an
    /// opening move is illegal or already ends the game.
    pub fn with_opening(
        cfg: BoardConfig,
        seats: usize,
        max_invalid: u32,
        opening: &[usize],
    ) -> Result<Self, super::board::BoardError> {
        let mut g = Game::new(cfg, seats, max_invalid);
        for (i, &c) in opening.iter().enumerate() {
            match g.submit(Answer::Column(c as i64)) {
                Step::Moved { .. } if g.outcome.is_none() => {}
                Step::Moved { .. } => return Err(super::board::BoardError::OpeningEnds(i + 1, c)),
                _ => return Err(super::board::BoardError::OpeningIllegal(i + 1, c)),
            }
        }
        Ok(g)
    }

    pub fn board(&self) -> &Board {
        &self.board
    }
    pub fn seats(&self) -> usize {
        self.seats
    }
    pub fn moves(&self) -> &[usize] {
        &self.moves
    }
    pub fn outcome(&self) -> Option<&Outcome> {
        self.outcome.as_ref()
    }
    pub fn is_over(&self) -> bool {
        self.outcome.is_some()
    }
    /// Seat to move, `None` once the game is over.
    pub fn to_move(&self) -> Option<usize> {
        self.outcome.is_none().then_some(self.to_move)
    }
    pub fn is_active(&self, seat: usize) -> bool {
        self.active[seat]
    }
    pub fn invalid_this_turn(&self) -> u32 {
        self.invalid_this_turn
    }
    pub fn max_invalid(&self) -> u32 {
        self.max_invalid
    }

    /// Handles the current seat's answer: a legal column is played, anything
    /// else counts against the per-turn limit.
    pub fn submit(&mut self, answer: Answer) -> Step {
        assert!(self.outcome.is_none(), "submit after the game is over");
        let seat = self.to_move;
        let checked = match answer {
            Answer::Column(c) => self.board.check(c).map_err(Refusal::from),
            Answer::Malformed(why) => Err(Refusal::Malformed(why)),
        };
        match checked {
            Ok(col) => {
                let row = self.board.drop_piece(col, seat).expect("checked above");
                self.moves.push(col);
                self.invalid_this_turn = 0;
                if self.board.wins_at(row, col) {
                    self.finish(Some(seat), EndReason::Win);
                } else if self.board.is_full() {
                    self.finish(None, EndReason::Tie);
                } else {
                    self.advance();
                }
                Step::Moved { seat, col, row }
            }
            Err(reason) => {
                self.invalid_this_turn += 1;
                if self.invalid_this_turn >= self.max_invalid {
                    self.eliminate(seat, EndReason::TooManyInvalid);
                }
                Step::Illegal {
                    seat,
                    reason,
                    tries_left: self.max_invalid.saturating_sub(self.invalid_this_turn),
                }
            }
        }
    }

    /// Takes `seat` out of the game (timeout, forfeit, too many invalid).
    /// With two seats the other one wins; with more, the rest play on until
    /// one is left.
    pub fn eliminate(&mut self, seat: usize, reason: EndReason) -> Step {
        if self.outcome.is_some() || !self.active[seat] {
            return Step::Eliminated { seat, reason };
        }
        self.active[seat] = false;
        self.eliminated.push((seat, reason));
        let left: Vec<usize> = (0..self.seats).filter(|&s| self.active[s]).collect();
        if left.len() <= 1 {
            self.finish(left.first().copied(), reason);
        } else if seat == self.to_move {
            self.invalid_this_turn = 0;
            self.advance();
        }
        Step::Eliminated { seat, reason }
    }

    /// The seat resigns: out with FORFEIT, remembered as a resignation.
    pub fn resign(&mut self, seat: usize) -> Step {
        if self.outcome.is_none() && self.active[seat] {
            self.resigned.push(seat);
        }
        self.eliminate(seat, EndReason::Forfeit)
    }

    /// Whether `seat` resigned (rather than crashed, left or timed out).
    pub fn has_resigned(&self, seat: usize) -> bool {
        self.resigned.contains(&seat)
    }

    fn finish(&mut self, winner: Option<usize>, reason: EndReason) {
        self.outcome = Some(Outcome {
            winner,
            reason,
            eliminated: self.eliminated.clone(),
            resigned: self.resigned.clone(),
        });
    }

    fn advance(&mut self) {
        for _ in 0..self.seats {
            self.to_move = (self.to_move + 1) % self.seats;
            if self.active[self.to_move] {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn play(g: &mut Game, cols: &[i64]) {
        for &c in cols {
            g.submit(Answer::Column(c));
        }
    }

    #[test]
    fn a_resignation_is_a_forfeit_that_says_so() {
        let mut g = Game::new(BoardConfig::default(), 3, DEFAULT_MAX_INVALID);
        assert_eq!(
            g.resign(1),
            Step::Eliminated {
                seat: 1,
                reason: EndReason::Forfeit
            }
        );
        assert!(g.has_resigned(1) && !g.has_resigned(0));
        g.eliminate(0, EndReason::Forfeit);
        let o = g.outcome().unwrap();
        assert_eq!((o.winner, o.reason), (Some(2), EndReason::Forfeit));
        assert_eq!(o.resigned, vec![1]);
        // Old records (without the field) still load; a game without one writes none.
        let old: Outcome = serde_json::from_str(r#"{"winner":0,"reason":"WIN","eliminated":[]}"#).unwrap();
        assert!(old.resigned.is_empty());
        assert!(!serde_json::to_string(&old).unwrap().contains("resigned"));
    }

    #[test]
    fn refusals_show_the_column_as_sent_however_large() {
        let out = |column| Refusal::OutOfRange { column, cols: 7 };
        assert_eq!(out(7).describe(1), "column 8 is out of range (1 to 7)");
        assert_eq!(out(-1).describe(0), "column -1 is out of range (0 to 6)");
        assert_eq!(
            out(i64::MAX).describe(1),
            "column 9223372036854775808 is out of range (1 to 7)"
        );
        assert_eq!(
            out(i64::MIN).describe(1),
            "column -9223372036854775807 is out of range (1 to 7)"
        );
        assert_eq!(
            out(i64::MIN).describe(0),
            "column -9223372036854775808 is out of range (0 to 6)"
        );
        assert_eq!(Refusal::ColumnFull { column: 2 }.describe(1), "column 3 is full");
    }

    #[test]
    fn leftmost_vs_rightmost_first_seat_wins() {
        let mut g = Game::new(BoardConfig::default(), 2, DEFAULT_MAX_INVALID);
        play(&mut g, &[0, 6, 0, 6, 0, 6, 0]);
        let o = g.outcome().unwrap();
        assert_eq!((o.winner, o.reason), (Some(0), EndReason::Win));
        assert_eq!(g.moves(), &[0, 6, 0, 6, 0, 6, 0]);
    }

    #[test]
    fn full_board_is_a_tie() {
        let mut g = Game::new(BoardConfig::new(3, 2, 3).unwrap(), 2, 5);
        play(&mut g, &[0, 0, 0, 1, 1, 1]);
        let o = g.outcome().unwrap();
        assert_eq!((o.winner, o.reason), (None, EndReason::Tie));
    }

    #[test]
    fn fifth_illegal_answer_loses() {
        let mut g = Game::new(BoardConfig::default(), 2, 5);
        for i in 0..4 {
            let s = g.submit(Answer::Column(99));
            assert!(matches!(s, Step::Illegal { tries_left, .. } if tries_left == 4 - i));
            assert!(!g.is_over());
        }
        g.submit(Answer::Malformed("junk".into()));
        let o = g.outcome().unwrap();
        assert_eq!((o.winner, o.reason), (Some(1), EndReason::TooManyInvalid));
    }

    #[test]
    fn illegal_count_resets_after_a_legal_move() {
        let mut g = Game::new(BoardConfig::default(), 2, 2);
        g.submit(Answer::Column(-1));
        g.submit(Answer::Column(0));
        g.submit(Answer::Column(9));
        assert!(!g.is_over());
        assert_eq!(g.to_move(), Some(1));
    }

    #[test]
    fn multi_player_elimination_skips_and_last_one_wins() {
        let mut g = Game::new(BoardConfig::new(7, 8, 4).unwrap(), 3, 5);
        g.submit(Answer::Column(0));
        g.eliminate(1, EndReason::Timeout);
        assert_eq!(g.to_move(), Some(2));
        g.submit(Answer::Column(1));
        assert_eq!(g.to_move(), Some(0));
        g.eliminate(0, EndReason::Forfeit);
        let o = g.outcome().unwrap();
        assert_eq!(o.winner, Some(2));
        assert_eq!(o.eliminated, vec![(1, EndReason::Timeout), (0, EndReason::Forfeit)]);
    }

    #[test]
    fn openings_that_end_the_game_are_refused() {
        let cfg = BoardConfig::new(3, 3, 1).unwrap();
        assert!(Game::with_opening(cfg, 2, 5, &[0]).is_err());
        assert!(Game::with_opening(BoardConfig::default(), 2, 5, &[3, 3]).is_ok());
        assert!(Game::with_opening(BoardConfig::default(), 2, 5, &[9]).is_err());
    }
}
