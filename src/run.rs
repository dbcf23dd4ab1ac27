//! The one library entry point for every mode: a loaded scenario and the
//! run's options in, how it went out. `c4sim run` (the CLI) and
//! `c4sim.run` (the Python package) both call [`run_scenario`], so a
//! program that embeds c4sim runs a scenario exactly as the command line does.

use crate::actors::mode::{run_mode, ModeError};
use crate::actors::runner::{run_match, Output};
use crate::players::BuildError;
use crate::record::GameRecord;
use crate::scenario::{InScenario, Mode, Scenario};
use crate::tournament::shard::Shard;
use std::net::SocketAddr;
use std::path::PathBuf;

/// Which part of a distributed training run this process plays (`--role`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Role {
    /// Trains on the workers' game files and publishes networks.
    Trainer,
    /// Plays games with the newest network and writes them.
    Selfplay,
}

/// How to run a scenario, beside the scenario itself: `c4sim run`'s flags.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// One JSON object per event on standard output instead of the board.
    pub json: bool,
    /// Tournaments and training: start over instead of resuming.
    pub fresh: bool,
    /// Tournaments and training: write here instead of `report.dir` / `train.out`.
    pub out: Option<PathBuf>,
    /// Training across processes sharing `out`.
    pub role: Option<Role>,
    /// With `role: Selfplay`: this worker's name.
    pub worker: Option<String>,
    /// Tournaments: play only this shard.
    pub shard: Option<Shard>,
    /// Tournaments and lobby servers: also serve a live page here.
    pub web: Option<SocketAddr>,
}

/// What a run produced.
#[derive(Debug)]
pub enum RunOutcome {
    /// `mode: match`: every game's record.
    Match { games: Vec<GameRecord> },
    /// `mode: tournament`: where its files are and the report as
    /// `report.json` holds it (`None` for a shard: `c4sim report` merges).
    Tournament {
        dir: PathBuf,
        report: Option<serde_json::Value>,
    },
    /// `mode: train`: the run's output directory.
    Train { out: PathBuf },
    /// `mode: serve`, `join` or `web`: ran until stopped.
    Served,
}

/// Checks that `opts` fit the scenario's mode and applies `out`; the error
/// says which option does not fit.
pub fn apply_options(sc: &mut Scenario, opts: &RunOptions) -> Result<(), &'static str> {
    if let Some(dir) = &opts.out {
        match sc.mode {
            Mode::Train => sc.train.get_or_insert_with(Default::default).out = Some(dir.clone()),
            Mode::Tournament => sc.report.get_or_insert_with(Default::default).dir = Some(dir.clone()),
            _ => return Err("--out names where a tournament or a training run writes"),
        }
    }
    if (opts.role.is_some() || opts.worker.is_some()) && sc.mode != Mode::Train {
        return Err("--role and --worker split a `mode: train` run only");
    }
    if opts.worker.is_some() && opts.role != Some(Role::Selfplay) {
        return Err("--worker names a `--role selfplay` worker");
    }
    if sc.mode == Mode::Train && opts.fresh && opts.role == Some(Role::Selfplay) {
        return Err("--fresh starts a run over: give it to the trainer (or a single-process run), not to a worker");
    }
    if opts.shard.is_some() && sc.mode != Mode::Tournament {
        return Err("--shard splits a `mode: tournament` run only");
    }
    if opts.web.is_some() && !matches!(sc.mode, Mode::Tournament | Mode::Serve) {
        return Err("--web shows a `mode: tournament` or `mode: serve` run only");
    }
    Ok(())
}

/// Runs a scenario in its mode, as `opts` ask: the options are checked
/// against the mode first (a misfit is [`ModeError::Usage`]).
pub fn run_scenario(mut sc: Scenario, opts: &RunOptions) -> Result<RunOutcome, ModeError> {
    apply_options(&mut sc, opts).map_err(|why| ModeError::Usage(format!("{}: {why}", sc.path.display()).into()))?;
    // An `agent` player without its agent is the caller's mistake, told
    // before anything starts (the CLI has none to give).
    for p in sc
        .players
        .iter()
        .filter(|p| p.kind.kind() == crate::players::PlayerKind::Agent)
    {
        crate::players::agent::AgentPlayer::new(&p.name).map_err(|why| {
            ModeError::usage(InScenario {
                file: sc.path.clone(),
                source: BuildError::Player {
                    player: p.name.clone(),
                    source: Box::new(why.into()),
                },
            })
        })?;
    }
    let sc = &sc;
    let json = opts.json;
    match sc.mode {
        Mode::Match => {
            let out = Output::for_scenario(sc, json);
            let games = run_mode(async { run_match(sc, out).await.map_err(ModeError::failed) }, || {
                "Interrupted.".into()
            })?;
            Ok(RunOutcome::Match { games })
        }
        Mode::Tournament => {
            let dir = sc.report.clone().unwrap_or_default().dir_for(&sc.path);
            let watch = match opts.web {
                None => Vec::new(),
                Some(bind) => {
                    let (addr, sink) = crate::web::watch_in_thread(bind, sc.name.clone(), "tournament", None)
                        .map_err(ModeError::failed)?;
                    eprintln!("Watch the tournament at http://{addr}/#watch");
                    vec![sink]
                }
            };
            let report = crate::tournament::run_tournament_watched(sc, json, opts.fresh, opts.shard, watch)?;
            Ok(RunOutcome::Tournament { dir, report })
        }
        Mode::Train => {
            let out = sc.train.clone().unwrap_or_default().out_dir(&sc.path);
            match opts.role {
                None => crate::train::run_train_as(sc, json, crate::train::Role::Single, opts.fresh)?,
                Some(Role::Trainer) => crate::train::run_train_as(sc, json, crate::train::Role::Trainer, opts.fresh)?,
                Some(Role::Selfplay) => crate::train::run_worker(sc, opts.worker.clone(), json)?,
            }
            Ok(RunOutcome::Train { out })
        }
        Mode::Serve => {
            let cfg = crate::net::server::ServeConfig {
                settings: sc.server.clone().unwrap_or_default(),
                max_invalid: sc.limits.max_invalid_moves,
                seed: sc.seed,
                json,
            };
            match opts.web {
                None => crate::net::server::serve(cfg)?,
                Some(bind) => serve_watched(cfg, bind)?,
            }
            Ok(RunOutcome::Served)
        }
        Mode::Join => crate::net::run_join(sc, json).map(|()| RunOutcome::Served),
        Mode::Web => crate::web::run_web(sc).map(|()| RunOutcome::Served),
    }
}

/// The lobby server with its matches shown on a page (`serve --web ADDR`,
/// and a `mode: serve` scenario run with `--web ADDR`).
pub fn serve_watched(cfg: crate::net::server::ServeConfig, bind: SocketAddr) -> Result<(), ModeError> {
    let (addr, sink) =
        crate::web::watch_in_thread(bind, "Lobby matches".into(), "lobby", None).map_err(ModeError::failed)?;
    eprintln!("Watch the lobby's matches at http://{addr}/#watch");
    crate::net::server::serve_watched(cfg, vec![sink])
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn scenario(text: &str) -> Scenario {
        crate::scenario::parse_str(text, Path::new("t.yaml")).unwrap()
    }

    #[test]
    fn options_that_do_not_fit_the_mode_are_usage_errors() {
        let m = || scenario("players: [{kind: leftmost}, {kind: rightmost}]\n");
        let bad = [
            RunOptions {
                out: Some("x".into()),
                ..Default::default()
            },
            RunOptions {
                role: Some(Role::Trainer),
                ..Default::default()
            },
            RunOptions {
                shard: Some(Shard::parse("1/2").unwrap()),
                ..Default::default()
            },
        ];
        for o in &bad {
            let e = run_scenario(m(), o).unwrap_err();
            assert!(
                matches!(e, ModeError::Usage(ref s) if s.to_string().starts_with("t.yaml: ")),
                "{e}"
            );
        }
    }

    #[test]
    fn a_match_returns_its_games() {
        let sc = scenario("render: none\nmatch: {games: 3}\nplayers: [{kind: leftmost}, {kind: rightmost}]\n");
        match run_scenario(sc, &RunOptions::default()).unwrap() {
            RunOutcome::Match { games } => assert_eq!(games.len(), 3),
            other => panic!("{other:?}"),
        }
    }
}
