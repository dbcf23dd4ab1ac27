//! `mode: tournament`: a schedule of games between many players, played
//! `concurrency` at a time — each lane its own arbiter (thread) with its own
//! referee and player actors — recorded game by game so a stopped run
//! resumes, and summed up in a report with ratings and error bars.

pub mod lanes;
pub mod ratings;
pub mod report;
pub mod schedule;
pub mod shard;
pub mod sprt;
pub mod store;

use crate::actors::messages::GameEvent;
use crate::actors::mode::{run_mode, ModeError};
use crate::actors::runner::{build_inner, move_time_of, Output};
use crate::events::{emit, Event, RatedLine};
use crate::players::KindSpec;
use crate::record::{GameRecord, Tally};
use crate::scenario::tournament::{ReportFormat, ReportSettings, TournamentSettings};
use crate::scenario::{resolved, InScenario, RenderStyle, Scenario};
use crate::util::seed;
use crate::util::write_atomic;
use actix::Recipient;
pub use lanes::{LaneError, Rules};
use schedule::Planned;
use std::cell::RefCell;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use store::{GameLine, Store};

/// Why a tournament cannot start or cannot keep its results.
#[derive(Debug, thiserror::Error)]
pub enum TournamentError {
    /// Its openings cannot be had.
    #[error(transparent)]
    Openings(#[from] schedule::OpeningSuiteError),
    /// A player cannot play on the board.
    #[error(transparent)]
    Player(#[from] crate::players::BuildError),
    #[error("--shard cannot split an SPRT run: its stop depends on every game before it; run it on one machine")]
    ShardedSprt,
    /// The results directory belongs to another tournament, or cannot be read.
    #[error("error: {0}")]
    Store(#[from] store::StoreError),
    /// The shards' records cannot be merged (`c4sim report`).
    #[error("error: {0}")]
    Records(#[from] shard::ShardError),
    /// The resolved scenario cannot be saved beside the results.
    #[error("cannot write in {}: {source}", dir.display())]
    WriteIn { dir: PathBuf, source: std::io::Error },
    /// Game `game` was played but cannot be recorded.
    #[error("cannot record game {game}: {source}")]
    Record { game: u64, source: std::io::Error },
    #[error("cannot write the report in {}: {source}", dir.display())]
    WriteReport { dir: PathBuf, source: std::io::Error },
}

/// The seed of one tournament game (a function of the scenario seed and the
/// game number only, so any lane, in any order, plays the same game).
pub fn game_seed(seed: u64, index: u64) -> u64 {
    seed::derive(seed, index, seed::TOURNAMENT_GAME)
}

/// The search threads of each lane's players when their spec leaves
/// `threads` unset: the cores divided between the lanes (at least one), so
/// lanes × threads does not oversubscribe the machine.
pub fn lane_threads(cores: usize, lanes: usize) -> u32 {
    (cores / lanes.max(1)).max(1) as u32
}

/// Plays `games` of the scenario's players with `concurrency` lanes and
/// hands each record to `on_done` as it finishes (completion order).
/// Results do not depend on the lanes: every game is seeded by its number
/// and players are reseeded before each game.
pub async fn play_all(
    sc: &Scenario,
    games: Vec<Planned>,
    total: u64,
    concurrency: usize,
    mut on_done: impl FnMut(GameRecord),
) -> Result<(), LaneError> {
    play_all_until(sc, games, total, concurrency, |r| {
        on_done(r);
        true
    })
    .await
}

/// [`play_all`], where `on_done` returning false stops the schedule: no
/// lane starts another game; games in progress finish and are handed to
/// `on_done` as usual.
pub async fn play_all_until(
    sc: &Scenario,
    games: Vec<Planned>,
    total: u64,
    concurrency: usize,
    on_done: impl FnMut(GameRecord) -> bool,
) -> Result<(), LaneError> {
    play_all_watched(sc, games, total, concurrency, on_done, Vec::new()).await
}

/// [`play_all_until`], with every game's events also sent to `sinks`.
pub async fn play_all_watched(
    sc: &Scenario,
    games: Vec<Planned>,
    total: u64,
    concurrency: usize,
    on_done: impl FnMut(GameRecord) -> bool,
    sinks: Vec<Recipient<GameEvent>>,
) -> Result<(), LaneError> {
    let out = Output {
        json: true,
        style: RenderStyle::None,
    };
    let seed = sc.seed;
    let rules = Rules {
        cfg: sc.board,
        max_invalid: sc.limits.max_invalid_moves,
        names: sc.players.iter().map(|p| p.name.clone()).collect(),
        move_times: sc.players.iter().map(|p| move_time_of(p, sc)).collect(),
        total,
        seed_of: std::sync::Arc::new(move |index| game_seed(seed, index)),
    };
    let players = |lane: usize, lanes: usize| {
        let threads = lane_threads(crate::util::cores(), lanes);
        sc.players
            .iter()
            .enumerate()
            .map(|(i, spec)| {
                let mut spec = spec.clone();
                if let KindSpec::Alphazero(az) = &mut spec.kind {
                    az.threads = az.threads.or(Some(threads)); // an explicit `threads` wins
                }
                build_inner(&spec, seed::derive(sc.seed, lane as u64, i as u64), out, 2)
            })
            .collect::<Result<Vec<_>, _>>()
    };
    lanes::play_on_lanes_watched(rules, games, concurrency, players, on_done, sinks).await
}

/// A stable digest of everything that decides the games (not concurrency),
/// so a report directory is resumed only by the same tournament.
pub(crate) fn fingerprint(sc: &Scenario, t: &TournamentSettings, openings: &[Vec<usize>]) -> String {
    let text = format!(
        "{:?}|{:?}|{:?}|{:?}|{:?}|{}|{:?}|{}",
        sc.board,
        sc.limits,
        sc.players,
        t.schedule,
        t.games_per_pair,
        sc.seed,
        openings,
        env!("CARGO_PKG_VERSION")
    );
    let h = text.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x1000_0000_01b3)
    });
    format!("{h:016x}")
}

/// Writes the report files of `formats` into `dir`.
pub fn write_reports(
    dir: &Path,
    r: &report::Report,
    games: &[GameLine],
    settings: &ReportSettings,
) -> std::io::Result<()> {
    for f in &settings.formats {
        match f {
            ReportFormat::Markdown => write_atomic(&dir.join("report.md"), report::markdown(r).as_bytes())?,
            ReportFormat::Json => {
                let j = serde_json::to_vec_pretty(&report::json_value(r)).map_err(std::io::Error::other)?;
                write_atomic(&dir.join("report.json"), &j)?
            }
            ReportFormat::Csv => write_atomic(&dir.join("standings.csv"), report::csv(r).as_bytes())?,
            ReportFormat::Html => write_atomic(&dir.join("report.html"), report::html(r, games).as_bytes())?,
        }
    }
    Ok(())
}

/// `mode: tournament`: the report as `report.json` holds it.
pub fn run_tournament(sc: &Scenario, json: bool, fresh: bool) -> Result<Option<serde_json::Value>, ModeError> {
    run_tournament_with(sc, json, fresh, None)
}

/// `mode: tournament`, all of it or one shard (`--shard K/N`, see `shard.rs`).
pub fn run_tournament_with(
    sc: &Scenario,
    json: bool,
    fresh: bool,
    shard: Option<shard::Shard>,
) -> Result<Option<serde_json::Value>, ModeError> {
    run_tournament_watched(sc, json, fresh, shard, Vec::new())
}

/// [`run_tournament_with`], showing itself to `watch` as it goes: every
/// game's events, and the standings ([`GameEvent::Summary`]) at the start
/// and after each game (`c4sim run FILE --web ADDR`). Returns the report
/// as `report.json` holds it (`None` for a shard: `c4sim report` merges).
pub fn run_tournament_watched(
    sc: &Scenario,
    json: bool,
    fresh: bool,
    shard: Option<shard::Shard>,
    watch: Vec<Recipient<GameEvent>>,
) -> Result<Option<serde_json::Value>, ModeError> {
    let t = sc.tournament.clone().unwrap_or_default();
    let rs = sc.report.clone().unwrap_or_default();
    let dir = rs.dir_for(&sc.path);
    let (openings, plan) = plan_games(sc, &t, shard)?;
    let total = plan.len() as u64;
    let (mut store, done) = open_store(sc, &fingerprint(sc, &t, &openings), &dir, shard, total, fresh)?;
    let names: Vec<String> = sc.players.iter().map(|p| p.name.clone()).collect();
    // SPRT: the test state is recomputed from the records (resume included).
    let mut sprt = t.sprt.as_ref().map(|s| sprt::Sequential::new(s, &names));
    let todo = still_to_play(plan, &done, sprt.as_mut());
    let standings = |all: &[GameLine]| GameEvent::Summary {
        tallies: tallies(&names, all),
    };
    for w in &watch {
        w.do_send(standings(&done));
    }
    let lines = Rc::new(RefCell::new(done));
    let bar = progress_bar(json, sprt.as_ref(), total, total - todo.len() as u64);
    let mut write_error: Option<TournamentError> = None;
    let outcome = run_mode(
        async {
            let lines2 = lines.clone();
            let on_done = |rec: GameRecord| {
                let line = GameLine::from(&rec);
                if let Err(source) = store.append(&line) {
                    write_error.get_or_insert(TournamentError::Record {
                        game: line.game,
                        source,
                    });
                }
                let mut all = lines2.borrow_mut();
                all.push(line.clone());
                let decided = sprt.as_mut().is_some_and(|q| q.add(&line));
                for w in &watch {
                    w.do_send(standings(&all));
                }
                let leader = leader(&names, &all);
                bar.inc(1);
                bar.set_message(
                    sprt.as_ref()
                        .map_or_else(|| format!("leader: {leader}"), |q| q.summary().progress_line()),
                );
                if json {
                    print_game_json(&line, all.len(), total, &leader, sprt.as_ref());
                }
                !decided
            };
            play_all_watched(sc, todo, total, t.concurrency as usize, on_done, watch.clone())
                .await
                .map_err(ModeError::failed)
        },
        || {
            format!(
                "Interrupted: {} of {total} games are saved in {}; run the same scenario again to continue.",
                lines.borrow().len(),
                dir.display()
            )
        },
    );
    bar.finish_and_clear();
    outcome?;
    if let Some(e) = write_error {
        return Err(ModeError::failed(e));
    }
    let saved = lines.borrow().len();
    if let Some(s) = shard {
        say_shard_done(s, &dir, saved, total, &sc.path, json);
        return Ok(None);
    }
    let all = lines.borrow().clone();
    finish(sc, &dir, &names, all, sprt.as_ref(), total, json).map(Some)
}

/// The run's progress bar, `done` of `total` games already played: on a
/// terminal, hidden with `--json`; an SPRT run shows its test instead of an
/// ETA.
fn progress_bar(json: bool, sprt: Option<&sprt::Sequential>, total: u64, done: u64) -> indicatif::ProgressBar {
    let bar = crate::events::bar("games")
        .hidden(json)
        .eta(sprt.is_none())
        .start(total);
    bar.set_position(done);
    if let Some(q) = sprt {
        bar.set_message(q.summary().progress_line());
    }
    bar
}

/// The openings and the games of this run (of its shard, with `--shard`),
/// after checking every player fits the board.
fn plan_games(
    sc: &Scenario,
    t: &TournamentSettings,
    shard: Option<shard::Shard>,
) -> Result<(Vec<Vec<usize>>, Vec<Planned>), ModeError> {
    let usage = |e: TournamentError| {
        ModeError::usage(InScenario {
            file: sc.path.clone(),
            source: e,
        })
    };
    let openings = schedule::load_openings(&t.openings, sc.board, sc.seed, &sc.path).map_err(|e| usage(e.into()))?;
    for spec in &sc.players {
        crate::players::check_fits(spec, sc.board).map_err(|e| usage(e.into()))?;
    }
    let (pairs, per) = schedule::pairings(t.schedule, sc.players.len(), t.games_per_pair);
    let mut plan = schedule::plan(&pairs, per, &openings);
    if let Some(s) = shard {
        if t.sprt.is_some() {
            return Err(usage(TournamentError::ShardedSprt));
        }
        plan.retain(|p| s.plays(p.index));
    }
    Ok((openings, plan))
}

/// The run's game store (the shard's own files with `--shard`) and the games
/// it already holds (said on stderr), with the resolved scenario saved beside it.
fn open_store(
    sc: &Scenario,
    fingerprint: &str,
    dir: &Path,
    shard: Option<shard::Shard>,
    total: u64,
    fresh: bool,
) -> Result<(Store, Vec<GameLine>), ModeError> {
    let files = shard.map(|s| (s.games_file(), s.state_file()));
    let files = files
        .as_ref()
        .map_or(("games.jsonl", "state.json"), |(g, s)| (g.as_str(), s.as_str()));
    let opened = Store::open_as(dir, files, fingerprint, total, &sc.path, fresh)
        .map_err(|e| ModeError::usage(TournamentError::Store(e)))?;
    resolved::save(sc, dir).map_err(|source| {
        ModeError::failed(TournamentError::WriteIn {
            dir: dir.to_path_buf(),
            source,
        })
    })?;
    if !opened.1.is_empty() {
        eprintln!(
            "Resuming {}: {} of {total} games already played.",
            dir.display(),
            opened.1.len()
        );
    }
    Ok(opened)
}

/// The planned games not yet recorded, or none when the SPRT, fed the
/// recorded games, has already decided.
fn still_to_play(plan: Vec<Planned>, done: &[GameLine], sprt: Option<&mut sprt::Sequential>) -> Vec<Planned> {
    if let Some(q) = sprt {
        if done.iter().fold(false, |_, g| q.add(g)) {
            return Vec::new();
        }
    }
    let finished: std::collections::HashSet<u64> = done.iter().map(|g| g.game).collect();
    plan.into_iter().filter(|p| !finished.contains(&p.index)).collect()
}

/// `--json`: one finished game, then the progress after it.
fn print_game_json(line: &GameLine, done: usize, total: u64, leader: &str, sprt: Option<&sprt::Sequential>) {
    let line = match serde_json::to_value(line) {
        Ok(serde_json::Value::Object(line)) => line,
        _ => serde_json::Map::new(),
    };
    emit(&Event::TournamentGame { line });
    emit(&Event::Progress {
        done,
        total,
        leader: leader.to_string(),
        sprt: sprt.map(|q| q.summary().json()),
    });
}

/// A shard's last line: where its games are, and how the report is made.
fn say_shard_done(
    s: shard::Shard,
    dir: &std::path::Path,
    saved: usize,
    total: u64,
    scenario: &std::path::Path,
    json: bool,
) {
    let file = dir.join(s.games_file());
    if json {
        emit(&Event::ShardSummary {
            shard: s.to_string(),
            games: saved,
            total,
            records: file,
        });
    } else {
        println!(
            "Shard {s}: {saved} of its {total} games recorded in {}; when every shard is done, `c4sim report {}` writes the report.",
            file.display(),
            scenario.display()
        );
    }
}

/// The report of a finished tournament (the games in game order; under
/// SPRT only those its decision counts), written to `dir` and summed up on
/// stdout.
fn finish(
    sc: &Scenario,
    dir: &std::path::Path,
    names: &[String],
    mut all: Vec<GameLine>,
    sprt: Option<&sprt::Sequential>,
    total: u64,
    json: bool,
) -> Result<serde_json::Value, ModeError> {
    let t = sc.tournament.clone().unwrap_or_default();
    let rs = sc.report.clone().unwrap_or_default();
    let anchor = t
        .anchor
        .as_ref()
        .and_then(|(n, e)| names.iter().position(|p| p == n).map(|i| (i, *e)));
    all.sort_by_key(|g| g.game);
    if let Some(q) = sprt {
        // Only the pairs up to the decision count (see sprt.rs).
        all.retain(|g| q.counts_game(g.game));
    }
    let mut rep = report::build(&sc.name, t.schedule.as_str(), names, &all, total, anchor);
    rep.sprt = sprt.map(|q| q.summary().clone());
    write_reports(dir, &rep, &all, &rs).map_err(|source| {
        ModeError::failed(TournamentError::WriteReport {
            dir: dir.to_path_buf(),
            source,
        })
    })?;
    if json {
        let players = rep
            .standings
            .iter()
            .map(|p| RatedLine {
                name: p.name.clone(),
                wins: p.wins,
                draws: p.draws,
                losses: p.losses,
                elo: p.elo,
                elo_error: p.elo_error,
                ms_per_move: p.ms_per_move,
            })
            .collect();
        emit(&Event::TournamentSummary {
            players,
            report: dir.to_path_buf(),
            sprt: rep.sprt.as_ref().map(|s| s.json()),
        });
    } else {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{}\nReport written to {}", report::markdown(&rep), dir.display());
    }
    Ok(report::json_value(&rep))
}

/// Each player's wins, draws and losses in `games`, in player order.
fn tallies(names: &[String], games: &[GameLine]) -> Vec<Tally> {
    let mut t: Vec<Tally> = names
        .iter()
        .map(|n| Tally {
            name: n.clone(),
            ..Default::default()
        })
        .collect();
    for g in games {
        for p in &g.players {
            if let Some(x) = t.iter_mut().find(|x| &x.name == p) {
                match &g.winner {
                    None => x.draws += 1,
                    Some(w) if w == p => x.wins += 1,
                    Some(_) => x.losses += 1,
                }
            }
        }
    }
    t
}

/// The player with the best score so far, for the progress line.
fn leader(names: &[String], games: &[GameLine]) -> String {
    let mut pts = vec![(0.0f64, 0u32); names.len()];
    for g in games {
        let s0 = g.first_seat_score();
        for (seat, s) in [(0, s0), (1, 1.0 - s0)] {
            if let Some(i) = names.iter().position(|n| *n == g.players[seat]) {
                pts[i].0 += s;
                pts[i].1 += 1;
            }
        }
    }
    let best = (0..names.len()).max_by(|&a, &b| {
        let r = |i: usize| if pts[i].1 > 0 { pts[i].0 / pts[i].1 as f64 } else { 0.0 };
        r(a).total_cmp(&r(b))
    });
    best.map_or(String::new(), |i| {
        format!(
            "{} {:.0}%",
            names[i],
            if pts[i].1 > 0 {
                100.0 * pts[i].0 / pts[i].1 as f64
            } else {
                0.0
            }
        )
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn standings_for_a_watching_page() {
        use super::{store::GameLine, tallies};
        use crate::game::EndReason;
        let line = |winner: Option<&str>| GameLine {
            game: 1,
            result: if winner.is_some() { "win" } else { "draw" }.into(),
            winner: winner.map(String::from),
            reason: if winner.is_some() {
                EndReason::Win
            } else {
                EndReason::Tie
            },
            moves: vec![],
            players: vec!["A".into(), "B".into()],
            opening: vec![],
            duration_ms: 0,
            seed: 0,
            think_ms: vec![],
            turns: vec![],
            forfeits: vec![],
        };
        let names = ["A".to_string(), "B".to_string(), "C".to_string()];
        let t = tallies(&names, &[line(Some("A")), line(None), line(Some("A"))]);
        assert_eq!((t[0].wins, t[0].draws, t[0].losses), (2, 1, 0));
        assert_eq!((t[1].wins, t[1].draws, t[1].losses), (0, 1, 2));
        assert_eq!(t[2].games(), 0);
    }

    #[test]
    fn lanes_share_the_cores() {
        use super::lane_threads;
        assert_eq!(lane_threads(2, 2), 1);
        assert_eq!(lane_threads(16, 4), 4);
        assert_eq!(lane_threads(2, 8), 1);
        assert_eq!(lane_threads(8, 0), 8);
    }
}
