//! A game as the page shows it, built only from the referee's
//! [`GameEvent`]s: the page never decides anything, it mirrors. Pure, so
//! the JSON the page reads is tested here without a server.

use crate::actors::messages::GameEvent;
use crate::game::{Board, BoardConfig, EndReason, Outcome, DEFAULT_LETTERS};
use serde_json::{json, Value};

/// One game on the page: what the referee said so far, and its version
/// (bumped on every change, so a page knows whether it is up to date).
#[derive(Clone, Debug)]
pub struct Table {
    pub id: String,
    pub names: Vec<String>,
    /// The seats people play on this page (one against the server's player,
    /// two at a hot seat, none for a game between players or one only watched).
    pub people: Vec<usize>,
    pub board: Board,
    pub moves: Vec<usize>,
    /// What the player said of each move, by move.
    pub notes: Vec<Option<String>>,
    /// (row from the bottom, column) of the last piece.
    pub last: Option<(usize, usize)>,
    pub to_move: Option<usize>,
    /// Set while the referee waits for the person.
    pub your_turn: bool,
    /// Why the person's last answer was refused, until the next move.
    pub refusal: Option<String>,
    pub outcome: Option<Outcome>,
    pub v: u64,
}

impl Table {
    pub fn new(id: String, names: Vec<String>, people: Vec<usize>, cfg: BoardConfig) -> Self {
        Table {
            id,
            names,
            people,
            board: Board::new(cfg),
            moves: Vec::new(),
            notes: Vec::new(),
            last: None,
            to_move: Some(0),
            your_turn: false,
            refusal: None,
            outcome: None,
            v: 1,
        }
    }

    /// Applies one referee event; bumps the version.
    pub fn apply(&mut self, ev: &GameEvent) {
        match ev {
            GameEvent::Started { board, opening, .. } => {
                self.board = board.clone();
                self.moves = opening.clone();
                self.notes = vec![None; opening.len()];
                self.to_move = Some(opening.len() % self.names.len().max(1));
            }
            GameEvent::Moved {
                col,
                row,
                board,
                next,
                note,
                ..
            } => {
                self.board = board.clone();
                self.moves.push(*col);
                self.notes.push(note.clone());
                self.last = Some((*row, *col));
                self.to_move = next.as_ref().map(|(s, _)| *s);
                self.refusal = None;
            }
            GameEvent::Illegal { refusal, seat, .. } => {
                if self.people.contains(seat) {
                    self.refusal = Some(refusal.describe(1));
                }
            }
            GameEvent::Over { record, board } => {
                self.board = board.clone();
                self.outcome = Some(record.outcome.clone());
                self.to_move = None;
                self.your_turn = false;
            }
            GameEvent::Out { .. } | GameEvent::Summary { .. } => {}
        }
        self.v += 1;
    }

    /// The person is asked for a move (or no longer is).
    pub fn set_your_turn(&mut self, yes: bool) {
        self.your_turn = yes;
        self.v += 1;
    }

    /// What a person reads as the result.
    pub fn result_text(&self) -> Option<String> {
        let o = self.outcome.as_ref()?;
        let name = |s: usize| self.names.get(s).cloned().unwrap_or_default();
        // "You" only where one person plays one seat.
        let you = match self.people[..] {
            [one] => Some(one),
            _ => None,
        };
        Some(match (o.winner, you) {
            (None, _) => "Draw".to_string(),
            (Some(w), Some(you)) if w == you => match o.reason {
                EndReason::Win => "You win".to_string(),
                r => format!("You win ({} {})", name(1 - you.min(1)), r.as_str()),
            },
            (Some(w), Some(you)) => {
                if o.resigned.contains(&you) {
                    format!("You resigned: {} wins", name(w))
                } else if o.eliminated.iter().any(|(s, r)| *s == you && *r == EndReason::Forfeit) {
                    format!("You left the game: {} wins", name(w))
                } else {
                    format!("{} wins", name(w))
                }
            }
            (Some(w), None) => format!("{} wins", name(w)),
        })
    }

    /// The JSON the page draws (`d` of a `game` message; docs/web.md).
    pub fn view(&self) -> Value {
        let cfg = self.board.config();
        let top = |row: usize| cfg.rows - 1 - row;
        let cells: Vec<String> = (0..cfg.rows)
            .rev()
            .map(|r| {
                (0..cfg.cols)
                    .map(|c| self.board.cell(r, c).map_or('.', |s| DEFAULT_LETTERS[s]))
                    .collect()
            })
            .collect();
        let line: Vec<[usize; 2]> = match (&self.outcome, self.last) {
            (Some(o), Some((r, c))) if o.reason == EndReason::Win && o.winner.is_some() => {
                winning_line(&self.board, r, c)
                    .into_iter()
                    .map(|(r, c)| [top(r), c])
                    .collect()
            }
            _ => Vec::new(),
        };
        json!({
            "id": self.id,
            "rows": cfg.rows,
            "cols": cfg.cols,
            "win": cfg.win_length,
            "names": self.names,
            "you": self.people.first(),
            "people": self.people,
            "cells": cells,
            "moves": self.moves,
            "notes": self.notes,
            "last": self.last.map(|(r, c)| [top(r), c]),
            "to_move": self.to_move,
            "your_turn": self.your_turn,
            "legal": if self.your_turn { self.board.legal_moves() } else { Vec::new() },
            "refusal": self.refusal,
            "over": self.outcome.is_some(),
            "result": self.outcome.as_ref().map(|o| json!({
                "winner": o.winner,
                "reason": o.reason.as_str(),
                "text": self.result_text(),
            })),
            "line": line,
        })
    }
}

/// The cells (row from the bottom, column) of every line of `win_length`
/// or more through the piece at (row, col), for highlighting.
pub fn winning_line(board: &Board, row: usize, col: usize) -> Vec<(usize, usize)> {
    let Some(seat) = board.cell(row, col) else {
        return Vec::new();
    };
    let cfg = board.config();
    let mine = |r: isize, c: isize| {
        r >= 0
            && c >= 0
            && (r as usize) < cfg.rows
            && (c as usize) < cfg.cols
            && board.cell(r as usize, c as usize) == Some(seat)
    };
    let mut out = Vec::new();
    for (dr, dc) in [(0isize, 1isize), (1, 0), (1, 1), (1, -1)] {
        let mut run = vec![(row, col)];
        for sign in [1isize, -1] {
            let (mut r, mut c) = (row as isize + sign * dr, col as isize + sign * dc);
            while mine(r, c) {
                run.push((r as usize, c as usize));
                r += sign * dr;
                c += sign * dc;
            }
        }
        if run.len() >= cfg.win_length {
            out.extend(run);
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::GameRecord;

    fn moved(t: &Table, col: usize, seat: usize, note: Option<&str>) -> GameEvent {
        let mut board = t.board.clone();
        let row = board.drop_piece(col, seat).unwrap();
        GameEvent::Moved {
            game: 1,
            seat,
            name: t.names[seat].clone(),
            col,
            row,
            number: t.moves.len() + 1,
            board,
            next: Some((1 - seat, t.names[1 - seat].clone())),
            note: note.map(String::from),
        }
    }

    #[test]
    fn a_resignation_reads_as_one_and_leaving_does_not() {
        let mut t = Table::new(
            "g1".into(),
            vec!["You".into(), "Leftmost".into()],
            vec![0],
            BoardConfig::default(),
        );
        let out = |resigned: Vec<usize>| Outcome {
            winner: Some(1),
            reason: EndReason::Forfeit,
            eliminated: vec![(0, EndReason::Forfeit)],
            resigned,
        };
        t.outcome = Some(out(vec![0]));
        assert_eq!(t.result_text().unwrap(), "You resigned: Leftmost wins");
        t.outcome = Some(out(vec![]));
        assert_eq!(t.result_text().unwrap(), "You left the game: Leftmost wins");
    }

    #[test]
    fn a_game_becomes_the_json_the_page_draws() {
        let cfg = BoardConfig::default();
        let mut t = Table::new("g1".into(), vec!["You".into(), "Leftmost".into()], vec![0], cfg);
        for (i, col) in [3, 0, 3, 0, 3, 0, 3].into_iter().enumerate() {
            let ev = moved(&t, col, i % 2, (i % 2 == 1).then_some("score +0.10"));
            t.apply(&ev);
        }
        let rec = GameRecord {
            game: 1,
            players: t.names.clone(),
            moves: t.moves.clone(),
            opening: vec![],
            outcome: Outcome {
                winner: Some(0),
                reason: EndReason::Win,
                eliminated: vec![],
                resigned: vec![],
            },
            seed: 0,
            duration_ms: 0,
            think_ms: Vec::new(),
            turns: Vec::new(),
            forfeits: vec![],
        };
        t.apply(&GameEvent::Over {
            record: rec,
            board: t.board.clone(),
        });
        let v = t.view();
        assert_eq!(v["cells"][5], "Y..R...");
        assert_eq!(v["cells"][2], "...R...");
        assert_eq!(v["moves"], json!([3, 0, 3, 0, 3, 0, 3]));
        assert_eq!(v["notes"][1], "score +0.10");
        assert_eq!(v["last"], json!([2, 3]));
        assert_eq!(v["line"], json!([[5, 3], [4, 3], [3, 3], [2, 3]]));
        assert_eq!(v["result"]["text"], "You win");
        assert_eq!(v["over"], true);
        assert_eq!(t.v, 9);
    }

    #[test]
    fn legal_columns_only_while_it_is_your_turn() {
        let mut t = Table::new(
            "g".into(),
            vec!["You".into(), "AI".into()],
            vec![1],
            BoardConfig::default(),
        );
        assert_eq!(t.view()["legal"], json!([]));
        t.set_your_turn(true);
        assert_eq!(t.view()["legal"], json!([0, 1, 2, 3, 4, 5, 6]));
    }

    #[test]
    fn the_line_through_a_diagonal_win() {
        let cfg = BoardConfig::default();
        let mut b = Board::new(cfg);
        for (col, seat) in [
            (0, 0),
            (1, 1),
            (1, 0),
            (2, 1),
            (2, 1),
            (2, 0),
            (3, 1),
            (3, 1),
            (3, 1),
            (3, 0),
        ] {
            b.drop_piece(col, seat).unwrap();
        }
        assert_eq!(winning_line(&b, 3, 3), vec![(0, 0), (1, 1), (2, 2), (3, 3)]);
        assert!(winning_line(&b, 0, 1).is_empty());
    }
}
