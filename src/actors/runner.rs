//! `mode: match`: starts one player actor per entry, plays `games` games
//! through a referee (swapping seats between games when asked), feeds the
//! sinks, and ends with a summary per player.

use super::messages::*;
use super::player::{write_prompt, HumanSeat, Occupant, PlayerActor};
use super::referee::Referee;
use super::sinks::{JsonWriter, Renderer};
use crate::game::DEFAULT_LETTERS;
use crate::players::external::ExternalProcess;
use crate::players::kinds::RunsAs;
use crate::players::{build_strategy, check_fits, human, BuildError, KindSpec};
use crate::record::{tally, GameRecord, Tally};
use crate::render::{resolve, Painter};
use crate::scenario::{FirstMover, PlayerSpec, RenderStyle, Scenario};
use crate::util::seed;
use actix::prelude::*;
use std::io::IsTerminal;

/// How the run shows itself.
#[derive(Clone, Copy, Debug)]
pub struct Output {
    pub json: bool,
    pub style: RenderStyle,
}

impl Output {
    pub fn for_scenario(sc: &Scenario, json: bool) -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        let style = resolve(sc.render, sc.color, std::io::stdout().is_terminal(), no_color);
        Output { json, style }
    }

    /// The event sinks for this output.
    pub fn sinks(&self) -> Vec<Recipient<GameEvent>> {
        if self.json {
            vec![JsonWriter.start().recipient()]
        } else {
            vec![Renderer {
                style: self.style,
                seats: 2,
            }
            .start()
            .recipient()]
        }
    }
}

/// Why a match stopped before its games were played.
#[derive(Debug, thiserror::Error)]
pub enum MatchError {
    /// A player cannot be built or cannot play on the board.
    #[error(transparent)]
    Player(#[from] BuildError),
    /// The referee actor is gone (its thread died).
    #[error("the referee stopped: {0}")]
    Referee(#[source] MailboxError),
}

/// Builds what a player actor wraps for one player entry.
pub fn build_inner(spec: &PlayerSpec, seed: u64, out: Output, seats: usize) -> Result<Occupant, BuildError> {
    Ok(match &spec.kind {
        KindSpec::Human => {
            let look_style = if out.style == RenderStyle::None {
                RenderStyle::Ascii
            } else {
                out.style
            };
            Occupant::Human(HumanSeat {
                lines: human::stdin_lines(),
                look: Painter::new(look_style, seats),
                prompt_to_stderr: out.json,
            })
        }
        KindSpec::External(ext) => Occupant::External(Box::new(ExternalProcess::new(spec.name.clone(), ext.launch()))),
        // Every other kind is an in-process bot: `build_strategy` matches each.
        _ => Occupant::Bot(build_strategy(spec, seed)?),
    })
}

/// Starts the actor for one player entry on the current arbiter.
pub fn start_player(spec: &PlayerSpec, seed: u64, out: Output, seats: usize) -> Result<Addr<PlayerActor>, BuildError> {
    Ok(PlayerActor::new(spec.name.clone(), build_inner(spec, seed, out, seats)?).start())
}

/// The move-time limit of a player: its own `move_time`, else the
/// scenario's for programs; people have none unless they set one.
pub fn move_time_of(spec: &PlayerSpec, sc: &Scenario) -> Option<std::time::Duration> {
    spec.move_time.or(match spec.kind.runs_as() {
        RunsAs::Human => None,
        RunsAs::Bot | RunsAs::External => Some(sc.limits.move_time),
    })
}

/// Plays the scenario's match and returns every record.
pub async fn run_match(sc: &Scenario, out: Output) -> Result<Vec<GameRecord>, MatchError> {
    let n = sc.players.len();
    for spec in &sc.players {
        check_fits(spec, sc.board)?;
    }
    let mut actors = Vec::with_capacity(n);
    for (i, spec) in sc.players.iter().enumerate() {
        actors.push(start_player(spec, seed::derive(sc.seed, 0, i as u64), out, n)?);
    }
    let sinks = out.sinks();
    let referee = Referee.start();
    let mut tallies: Vec<Tally> = sc
        .players
        .iter()
        .map(|p| Tally {
            name: p.name.clone(),
            ..Default::default()
        })
        .collect();
    let mut records = Vec::new();
    let games = sc.match_settings.games as u64;
    let first = match sc.match_settings.first {
        FirstMover::Seat => 0,
        FirstMover::Random => (seed::derive(sc.seed, 0, seed::FIRST_MOVER) % n as u64) as usize,
        FirstMover::Ask => ask_first(sc, out.json).await,
    };
    for g in 0..games {
        // With swap_colors, the seating rotates each game, so each player
        // takes RED (and the first move) in turn.
        let shift = if sc.match_settings.swap_colors {
            (first + g as usize) % n
        } else {
            first
        };
        let seats: Vec<Seat> = (0..n)
            .map(|s| {
                let i = (s + shift) % n;
                Seat {
                    name: sc.players[i].name.clone(),
                    player: PlayerHandle::of(&actors[i]),
                    move_time: move_time_of(&sc.players[i], sc),
                }
            })
            .collect();
        let msg = PlayGame {
            game: g + 1,
            games,
            cfg: sc.board,
            seats,
            letters: DEFAULT_LETTERS.to_vec(),
            opening: Vec::new(),
            max_invalid: sc.limits.max_invalid_moves,
            seed: seed::derive(sc.seed, g + 1, seed::MATCH_GAME),
            sinks: sinks.clone(),
        };
        let record = referee.send(msg).await.map_err(MatchError::Referee)?;
        tally(&mut tallies, &record);
        records.push(record);
    }
    for s in &sinks {
        let _ = s
            .send(GameEvent::Summary {
                tallies: tallies.clone(),
            })
            .await;
    }
    for a in &actors {
        let _ = a.send(Shutdown).await;
    }
    Ok(records)
}

/// `match.first: ask`: the person at the terminal picks who moves first in
/// game 1, by number or name; Enter keeps the seating order. Read from the
/// same standard-input lines as their moves, so a piped script answers it
/// too; anything else is refused and asked again.
async fn ask_first(sc: &Scenario, json: bool) -> usize {
    let names: Vec<&str> = sc.players.iter().map(|p| p.name.as_str()).collect();
    let echo = !std::io::stdin().is_terminal();
    let choices: Vec<String> = names
        .iter()
        .enumerate()
        .map(|(i, n)| format!("{} = {n}", i + 1))
        .collect();
    let lines = human::stdin_lines();
    loop {
        write_prompt(json, &format!("Who moves first? {} [Enter: 1]: ", choices.join(", ")));
        let Some(line) = lines.lock().await.recv().await else {
            write_prompt(json, "(end of input)\n");
            return 0;
        };
        if echo {
            write_prompt(json, &format!("{}\n", line.trim()));
        }
        match pick_first(&line, &names) {
            Some(i) => return i,
            None => write_prompt(json, &format!("Type a number from 1 to {} or a name.\n", names.len())),
        }
    }
}

/// Reads the answer to "who moves first?": empty = the first seat, a
/// number from 1, or a player's name (any case).
fn pick_first(line: &str, names: &[&str]) -> Option<usize> {
    let t = line.trim();
    if t.is_empty() {
        return Some(0);
    }
    if let Ok(k) = t.parse::<usize>() {
        return (1..=names.len()).contains(&k).then(|| k - 1);
    }
    names.iter().position(|n| n.eq_ignore_ascii_case(t))
}

#[cfg(test)]
mod tests {
    use super::pick_first;

    #[test]
    fn first_mover_by_enter_number_or_name() {
        let names = ["You", "AlphaZero"];
        assert_eq!(pick_first("", &names), Some(0));
        assert_eq!(pick_first(" 2 ", &names), Some(1));
        assert_eq!(pick_first("alphazero", &names), Some(1));
        assert_eq!(pick_first("3", &names), None);
        assert_eq!(pick_first("0", &names), None);
        assert_eq!(pick_first("me", &names), None);
    }
}
