//! Where game events go: the terminal renderer and the `--json` writer.

use super::messages::GameEvent;
use crate::events::{emit, Event, TallyLine};
use crate::record::{GameRecord, Tally};
use crate::render::Painter;
use crate::scenario::RenderStyle;
use actix::prelude::*;
use std::io::Write;

/// Prints boards and messages in one look.
pub struct Renderer {
    pub style: RenderStyle,
    /// Seats of the current game (two-player games draw X/O in ascii).
    pub seats: usize,
}

impl Actor for Renderer {
    type Context = Context<Self>;
}

impl Renderer {
    /// The text for one event (pure, for tests).
    pub fn text(&mut self, ev: &GameEvent) -> String {
        if let GameEvent::Started { names, .. } = ev {
            self.seats = names.len();
        }
        // `render: none` still reports each result and the summary.
        let quiet = self.style == RenderStyle::None;
        let look = Painter::new(if quiet { RenderStyle::Ascii } else { self.style }, self.seats);
        match ev {
            GameEvent::Started { .. } | GameEvent::Moved { .. } | GameEvent::Illegal { .. } | GameEvent::Out { .. }
                if quiet =>
            {
                String::new()
            }
            GameEvent::Started {
                game,
                games,
                names,
                opening,
                board,
                ..
            } => {
                format!(
                    "\n{}{}",
                    look.game_intro(*game, *games, names, opening),
                    look.board(board)
                )
            }
            GameEvent::Moved {
                seat,
                name,
                col,
                number,
                board,
                next,
                note,
                ..
            } => {
                let mut s = format!(
                    "\n{}{}\n",
                    look.board(board),
                    look.move_line(*number, *seat, name, *col)
                );
                if let Some(n) = note {
                    s.push_str(&format!("  {} {name} {n}\n", look.thought_mark()));
                }
                if let Some((t, n)) = next {
                    s.push_str(&look.next_line(*t, n));
                    s.push('\n');
                }
                s
            }
            GameEvent::Illegal {
                seat,
                name,
                refusal,
                tries_left,
                ..
            } => {
                format!("{}\n", look.illegal_line(*seat, name, refusal, *tries_left))
            }
            GameEvent::Out {
                seat,
                name,
                reason,
                resigned,
                ..
            } => {
                format!("{}\n", look.out_line(*seat, name, *reason, *resigned))
            }
            GameEvent::Over { record, .. } => over_text(&look, record, quiet),
            GameEvent::Summary { tallies } => summary_text(tallies),
        }
    }
}

/// The line that closes a game; under `render: none` it carries the game's
/// number, since no board or intro came before it to say which game it was.
fn over_text(look: &Painter, record: &GameRecord, quiet: bool) -> String {
    let over = look.game_over(&record.outcome, &record.players, record.moves.len());
    if quiet {
        format!("Game {}: {over}\n", record.game)
    } else {
        format!("{over}\n")
    }
}

/// The end-of-run table, one line a player with its wins, draws, losses
/// and score; shown in every style, `none` included.
fn summary_text(tallies: &[Tally]) -> String {
    let games = tallies.iter().map(|t| t.games()).max().unwrap_or(0);
    let mut s = format!("\nSummary after {games} game{}:\n", if games == 1 { "" } else { "s" });
    let width = tallies.iter().map(|t| t.name.chars().count()).max().unwrap_or(0);
    for t in tallies {
        s.push_str(&format!(
            "  {:<width$}  {} win{}, {} draw{}, {} loss{}  (score {:.1}%)\n",
            t.name,
            t.wins,
            if t.wins == 1 { "" } else { "s" },
            t.draws,
            if t.draws == 1 { "" } else { "s" },
            t.losses,
            if t.losses == 1 { "" } else { "es" },
            100.0 * t.score()
        ));
    }
    s
}

impl Handler<GameEvent> for Renderer {
    type Result = ();
    fn handle(&mut self, ev: GameEvent, _: &mut Context<Self>) {
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(self.text(&ev).as_bytes());
        let _ = out.flush();
    }
}

/// Writes the `--json` event stream of docs/scenarios.md, one object a line.
pub struct JsonWriter;

impl Actor for JsonWriter {
    type Context = Context<Self>;
}

impl JsonWriter {
    /// The `--json` event for one game event (pure, for tests).
    pub fn event(ev: &GameEvent) -> Event {
        match ev {
            GameEvent::Started {
                game,
                names,
                cfg,
                opening,
                seed,
                ..
            } => Event::GameStart {
                game: *game,
                players: names.clone(),
                rows: cfg.rows,
                cols: cfg.cols,
                win_length: cfg.win_length,
                opening: opening.clone(),
                seed: *seed,
            },
            GameEvent::Moved {
                game,
                name,
                col,
                row,
                note,
                ..
            } => Event::Move {
                game: *game,
                player: name.clone(),
                column: *col,
                row: *row,
                note: note.clone(),
            },
            GameEvent::Illegal {
                game,
                name,
                refusal,
                tries_left,
                ..
            } => Event::IllegalMove {
                game: *game,
                player: name.clone(),
                reason: refusal.describe(0),
                tries_left: *tries_left,
            },
            GameEvent::Out {
                game,
                name,
                reason,
                resigned,
                ..
            } => Event::PlayerOut {
                game: *game,
                player: name.clone(),
                reason: *reason,
                resigned: *resigned,
            },
            GameEvent::Over { record, .. } => game_over(record),
            GameEvent::Summary { tallies } => Event::MatchSummary {
                players: tallies.iter().map(TallyLine::from).collect(),
            },
        }
    }
}

impl Handler<GameEvent> for JsonWriter {
    type Result = ();
    fn handle(&mut self, ev: GameEvent, _: &mut Context<Self>) {
        emit(&JsonWriter::event(&ev));
    }
}

/// The `game_over` event of a finished game's record.
fn game_over(record: &GameRecord) -> Event {
    Event::GameOver {
        game: record.game,
        result: record.result_word().to_string(),
        winner: record.winner_name().map(str::to_string),
        reason: record.outcome.reason,
        moves: record.moves.clone(),
        players: record.players.clone(),
        opening: record.opening.clone(),
        duration_ms: record.duration_ms,
        think_ms: record.think_ms.clone(),
        turns: record.turns.clone(),
        // Who resigned, by name, only where someone did: FORFEIT alone reads as a crash.
        resigned: (!record.outcome.resigned.is_empty()).then(|| {
            record
                .outcome
                .resigned
                .iter()
                .map(|&s| record.players[s].clone())
                .collect()
        }),
    }
}
