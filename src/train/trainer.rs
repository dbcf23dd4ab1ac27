//! `mode: train`: the Trainer actor and the iteration loop.
//!
//! Each iteration: self-play (workers, batched inference) → replay buffer →
//! AdamW steps (once the buffer holds `replay.min_size` positions) →
//! evaluation every `eval.every` iterations, through the same referee and
//! player actors as every other game, and on those iterations
//! `eval.accuracy`'s mistakes against perfect play ([`super::accuracy`]) →
//! checkpoint → `metrics.csv` and `curves.svg`. Evaluation runs before the checkpoint so that the
//! checkpoint's metrics include its score; a kill during evaluation repeats
//! that iteration on resume, never leaves a half-counted one.
//!
//! The Trainer actor owns the run's state. CPU-heavy phases run on the
//! blocking pool, so the actor system stays free to run evaluation games
//! (which need the referee and player actors) and to notice Ctrl-C.

use super::checkpoint;
use super::error::TrainError;
use super::eval_accuracy::{load_positions, measure};
use super::exchange::{Layout, Ledger};
use super::ingest::Ingest;
use super::metrics::{self, Row};
use super::progress::emit;
use super::replay::{average_duplicates, Batch, Replay};
use super::resume::{resume_from, start_fresh, Trained};
use super::selfplay::{play_parallel, SelfPlayConfig};
use crate::actors::mode::{run_mode, ModeError};
use crate::actors::player::Occupant;
use crate::az::cpu_trainer::{CpuTrainer, StepLoss};
use crate::az::device::{device_name, resolve_device};
use crate::az::encode::PLANES;
use crate::az::inference::{CandleEvaluator, CpuEvaluator, Evaluate, Folded, ParallelCpu};
use crate::az::meta::{self, BoardMeta, Meta, MODEL_FILE, OPTIMIZER_FILE, REPLAY_FILE, TRAINED_FILE};
use crate::az::network::{NetShape, PolicyValueNet};
use crate::az::optimizer::AdamW;
use crate::game::bitboard::{with_width, Geometry};
use crate::game::openings::{parse_opening_file, shuffled_openings};
use crate::game::BoardConfig;
use crate::players::alphazero::AlphaZeroBot;
use crate::players::build_strategy;
use crate::record::GameRecord;
use crate::scenario::train::{OpeningSuite, TrainSettings};
use crate::scenario::Scenario;
use crate::solver::sets::Labelled;
use crate::tournament::lanes::{play_on_lanes, Rules};
use crate::tournament::schedule::Planned;
use crate::util::seed;
use actix::prelude::*;
use candle_core::{Device, Tensor};
use indicatif::ProgressBar;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::json;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

mod evaluate;
mod setup;
mod steps;

use evaluate::evaluate;
use setup::{eval_openings, prepare_run_dir, say_start, summary_line};

/// Everything a run carries from one iteration to the next.
pub struct TrainState {
    name: String,
    seed: u64,
    cfg: BoardConfig,
    settings: TrainSettings,
    out: PathBuf,
    device: Device,
    /// The network the optimizer steps.
    net: PolicyValueNet,
    /// `optimizer.ema`: the moving average of `net` that plays; `None`
    /// when `net` itself plays (see [`TrainState::player`]).
    played: Option<PolicyValueNet>,
    opt: AdamW,
    replay: Replay,
    folded: Arc<Folded>,
    history: Vec<Row>,
    /// Iterations completed.
    iteration: u32,
    workers: usize,
    json: bool,
    openings: Vec<Vec<usize>>,
    /// `eval.accuracy`'s positions; empty when it is off.
    accuracy: Vec<Labelled>,
    /// `--role trainer`: new positions come from the workers' files, not
    /// from self-play here; `None` for a single-process run.
    ingest: Option<Ingest>,
}

/// Which part of a run this process plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Self-play and training in one process (no `--role`).
    Single,
    /// `--role trainer`: trains on the workers' files, publishes networks.
    Trainer,
}

/// The trainer's bars (self-play, train, eval): the one bar, with room for
/// the phase's label.
fn bar(len: u64, what: &str) -> ProgressBar {
    crate::events::bar(what).labelled().start(len)
}

/// The training settings as JSON, for `meta.json`.
pub(crate) fn settings_json(t: &TrainSettings) -> serde_json::Value {
    let openings = match &t.eval.openings {
        OpeningSuite::Plies(p) => json!({ "plies": p }),
        OpeningSuite::File(f) => json!({ "file": f }),
    };
    let mut settings = json!({
        "network": { "blocks": t.network.blocks, "channels": t.network.channels, "value_hidden": t.network.value_hidden,
                     "reply_head": t.network.reply_head },
        "mcts": { "simulations": t.mcts.simulations, "c_puct": t.mcts.c_puct,
                  "dirichlet_alpha": t.mcts.dirichlet_alpha, "dirichlet_weight": t.mcts.dirichlet_weight,
                  "root_prior_temperature": t.mcts.root_prior_temperature },
        "self_play": { "games_per_iteration": t.self_play.games_per_iteration, "temperature_moves": t.self_play.temperature_moves,
                       "workers": t.self_play.workers, "concurrent_games": t.self_play.concurrent_games,
                       "cache_size": t.self_play.cache_size, "full_search_share": t.self_play.full_search_share,
                       "fast_simulations": t.self_play.fast_simulations.unwrap_or(t.mcts.simulations),
                       "q_weight": t.self_play.q_weight,
                       "random_opening_plies": t.self_play.random_opening_plies,
                       "random_move_share": t.self_play.random_move_share },
        "optimizer": { "steps_per_iteration": t.optimizer.steps_per_iteration, "batch_size": t.optimizer.batch_size,
                       "learning_rate": t.optimizer.learning_rate,
                       "learning_rate_schedule": t.optimizer.learning_rate_schedule.iter()
                           .map(|(from, lr)| json!({ "from": from, "learning_rate": lr })).collect::<Vec<_>>(),
                       "weight_decay": t.optimizer.weight_decay,
                       "ema": t.optimizer.ema,
                       "reply_weight": t.optimizer.reply_weight,
                       "threads": t.optimizer.threads },
        "replay": { "capacity": t.replay.capacity, "min_size": t.replay.min_size,
                    "average_duplicates": t.replay.average_duplicates, "growing_window": t.replay.growing_window },
        "eval": { "every": t.eval.every, "games": t.eval.games, "opponent": t.eval.opponent.name,
                  "opponent_kind": t.eval.opponent.kind.as_str(), "openings": openings,
                  "simulations": t.eval_simulations(),
                  "accuracy": t.eval.accuracy.as_ref().map(|a| json!({
                      "set": a.set, "positions": a.positions, "file": a.file,
                      "simulations": t.accuracy_simulations() })) },
        "iterations": t.iterations,
        "device": t.device,
    });
    // These keys are written only when on, so that runs from before them compare equal
    // with a worker's settings (`worker::warn_if_settings_differ`).
    if t.self_play.forced_playouts > 0.0 {
        settings["self_play"]["forced_playouts"] = json!(t.self_play.forced_playouts);
    }
    if t.self_play.q_best_child {
        settings["self_play"]["q_best_child"] = json!(true);
    }
    settings
}

impl TrainState {
    /// Starts a run: resumes from the last checkpoint in `out` when asked
    /// and present, else starts from a fresh network.
    fn open(sc: &Scenario, json: bool, role: &Role) -> Result<TrainState, TrainError> {
        let settings = sc.train.clone().unwrap_or_default();
        let out = settings.out_dir(&sc.path);
        let cfg = sc.board;
        let device = resolve_device(&settings.device)?;
        let shape = net_shape(cfg, &settings);
        let workers = match settings.self_play.workers {
            0 if device.is_cpu() => crate::util::cores(),
            0 => 1,
            n => n as usize,
        };
        let openings = eval_openings(&settings.eval.openings, cfg, sc.seed)?;
        let accuracy = match &settings.eval.accuracy {
            Some(a) => load_positions(a)?,
            None => Vec::new(),
        };
        let latest = if settings.resume {
            checkpoint::latest(&out)
        } else {
            None
        };
        let ledger = match (&latest, role) {
            (Some(dir), Role::Trainer) => read_ledger(dir)?,
            _ => Ledger::default(),
        };
        let Trained {
            net,
            played,
            opt,
            replay,
            history,
            iteration,
        } = match latest {
            Some(dir) => resume_from(&dir, &out, cfg, shape, &settings, &device)?,
            None => start_fresh(&out, shape, &settings, &device, sc.seed)?,
        };
        std::fs::create_dir_all(&out).map_err(|source| TrainError::Create {
            path: out.clone(),
            source,
        })?;
        let folded = Arc::new(Folded::from_net(played.as_ref().unwrap_or(&net))?);
        let ingest = match role {
            Role::Single => None,
            Role::Trainer => Some(open_ingest(sc, &settings, &out, net.shape, ledger, json)?),
        };
        Ok(TrainState {
            name: sc.name.clone(),
            seed: sc.seed,
            cfg,
            settings,
            out,
            device,
            net,
            played,
            opt,
            replay,
            folded,
            history,
            iteration,
            workers,
            json,
            openings,
            accuracy,
            ingest,
        })
    }

    /// The network that plays: self-play, evaluation, the saved model and
    /// the workers' published one. With `optimizer.ema` the moving average
    /// of the trained weights, else the trained network.
    fn player(&self) -> &PolicyValueNet {
        self.played.as_ref().unwrap_or(&self.net)
    }

    /// An evaluator of the current network for one evaluating thread:
    /// position by position on the CPU, so results replay exactly (see
    /// `ParallelCpu`); a copy of the network on other devices.
    fn play_evaluator(&self) -> Result<Box<dyn Evaluate>, TrainError> {
        Ok(if self.device.is_cpu() {
            Box::new(ParallelCpu::new(self.folded.clone(), 1))
        } else {
            Box::new(CandleEvaluator {
                net: self.player().duplicate(&self.device)?,
            })
        })
    }

    /// `eval.accuracy` on the current network, on one thread per worker;
    /// fills the row's `acc_*` fields.
    fn measure_accuracy(&self, row: &mut Row) -> Result<(), TrainError> {
        let Some(sims) = self.settings.accuracy_simulations() else {
            return Ok(());
        };
        let a = measure(
            &|| self.play_evaluator(),
            self.cfg.into(),
            &self.accuracy,
            sims,
            self.seed,
            self.workers.max(1),
        )?;
        row.acc_positions = a.raw.n as u32;
        row.acc_raw_mistakes = Some(a.raw.mistake_rate());
        row.acc_raw_se = Some(a.raw.mistake_se());
        row.acc_mcts_mistakes = Some(a.mcts.mistake_rate());
        row.acc_mcts_se = Some(a.mcts.mistake_se());
        row.acc_s = a.seconds;
        Ok(())
    }

    fn evaluators(&self) -> Result<Vec<Box<dyn Evaluate>>, TrainError> {
        if self.device.is_cpu() {
            Ok((0..self.workers)
                .map(|_| Box::new(CpuEvaluator::new(self.folded.clone())) as Box<dyn Evaluate>)
                .collect())
        } else {
            (0..self.workers)
                .map(|_| {
                    let net = self.player().duplicate(&self.device)?;
                    Ok(Box::new(CandleEvaluator { net }) as Box<dyn Evaluate>)
                })
                .collect()
        }
    }

    /// The next iteration's new positions (self-play here, or the workers'
    /// files), then its optimizer steps.
    fn selfplay_and_train(&mut self) -> Result<Row, TrainError> {
        let (new, row) = match self.ingest.as_mut() {
            None => self.self_play()?,
            Some(ing) => {
                let got = ing.gather(self.iteration);
                let row = Row {
                    iteration: self.iteration + 1,
                    games: got.games,
                    // Per CPU-second of the workers that played them.
                    simulations_per_s: got.simulations as f64 / got.worker_cpu_seconds.max(1e-9),
                    selfplay_s: got.seconds,
                    exact_values: got.exact_values,
                    workers: got.workers.len() as u32,
                    files: got.files,
                    stale: got.stale,
                    rejected: got.rejected,
                    mean_lag: got.mean_lag(),
                    worker_s: got.worker_seconds,
                    selfplay_positions: got.positions_played,
                    selfplay_cpu_s: got.worker_cpu_seconds,
                    ..Default::default()
                };
                (got.samples, row)
            }
        };
        self.learn(new, row)
    }

    /// Self-play here for the next iteration: its samples and the row so far.
    fn self_play(&mut self) -> Result<(Vec<crate::az::encode::Sample>, Row), TrainError> {
        let it = self.iteration + 1;
        let s = &self.settings;
        let games = s.self_play.games_per_iteration as u64;
        let cfg = SelfPlayConfig::from_settings(s, self.device.is_cpu(), games.div_ceil(self.workers as u64));
        let mut evals = self.evaluators()?;
        let seed = seed::derive(self.seed, it as u64, seed::SELF_PLAY_ITERATION);
        let done = AtomicU64::new(0);
        let pb = bar(games, "games");
        pb.set_prefix(format!("self-play {it}"));
        let t0 = Instant::now();
        let cpu0 = crate::util::cpu_seconds();
        let finished = std::sync::atomic::AtomicBool::new(false);
        let (outs, stats) = std::thread::scope(|scope| {
            let ticker = scope.spawn(|| {
                while !finished.load(Ordering::Relaxed) {
                    pb.set_position(done.load(Ordering::Relaxed));
                    std::thread::sleep(Duration::from_millis(100));
                }
            });
            let r = with_width!(self.cfg, B => play_parallel(&Geometry::<B>::new(self.cfg), &cfg, &mut evals, games, seed, &done));
            finished.store(true, Ordering::Relaxed);
            let _ = ticker.join();
            r
        });
        pb.finish_and_clear();
        let selfplay_s = t0.elapsed().as_secs_f64();
        let selfplay_cpu_s = crate::util::cpu_seconds() - cpu0;
        let new: Vec<_> = outs.into_iter().flat_map(|g| g.samples).collect();
        if stats.exact_policies > 0 {
            tracing::info!(
                "iteration {it}: {} of {} positions got the solver's best columns as policy target",
                stats.exact_policies,
                new.len()
            );
        }
        let row = Row {
            iteration: it,
            games: stats.games,
            selfplay_games_per_s: stats.games as f64 / selfplay_s.max(1e-9),
            simulations_per_s: stats.simulations as f64 / selfplay_s.max(1e-9),
            cache_hit_rate: stats.cache_hit_rate(),
            mean_batch: stats.mean_batch(),
            selfplay_s,
            exact_values: stats.exact_values,
            selfplay_positions: new.len() as u64,
            selfplay_cpu_s,
            ..Default::default()
        };
        Ok((new, row))
    }

    /// Puts an iteration's new samples in the replay buffer and trains on it.
    fn learn(&mut self, mut new: Vec<crate::az::encode::Sample>, mut row: Row) -> Result<Row, TrainError> {
        let it = row.iteration;
        if self.settings.replay.average_duplicates {
            new = average_duplicates(new);
        }
        row.positions = new.len() as u64;
        for smp in new {
            self.replay.push(smp);
        }
        row.buffer = self.replay.len() as u64;
        if self.replay.len() >= self.settings.replay.min_size as usize && !self.replay.is_empty() {
            let t1 = Instant::now();
            // Every position taken so far, this iteration's included.
            let seen = row.positions
                + self
                    .history
                    .iter()
                    .filter(|r| r.iteration < it)
                    .map(|r| r.positions)
                    .sum::<u64>();
            let window = self.settings.replay.window(seen);
            if window < self.replay.len() {
                tracing::info!(
                    "iteration {it}: batches from the newest {window} of {} positions",
                    self.replay.len()
                );
            }
            let losses = self.train_steps(it, window).map_err(TrainError::Step)?;
            row.train_s = t1.elapsed().as_secs_f64();
            row.train_steps = losses.steps;
            row.learning_rate = Some(self.settings.optimizer.learning_rate_at(it));
            row.policy_loss = Some(losses.policy);
            row.value_loss = Some(losses.value);
            row.reply_loss = losses.reply;
            row.train_steps_per_s = losses.steps as f64 / row.train_s.max(1e-9);
            if let Some(p) = &self.played {
                p.average_toward(&self.net, self.settings.optimizer.ema)
                    .map_err(TrainError::Average)?;
            }
            self.folded = Arc::new(Folded::from_net(self.player())?);
        }
        if self.ingest.is_some() {
            // The trainer waits for files while the workers play, and they
            // play on while it trains: games arrived per second of both.
            row.selfplay_games_per_s = row.games as f64 / (row.selfplay_s + row.train_s).max(1e-9);
        }
        Ok(row)
    }

    /// Writes the checkpoint for the iteration in `row`, then the metrics
    /// and the chart. Returns the checkpoint directory.
    fn checkpoint(&mut self, row: Row) -> Result<PathBuf, TrainError> {
        let it = row.iteration;
        self.history.retain(|r| r.iteration < it);
        self.history.push(row);
        let io = |source: std::io::Error| TrainError::Checkpoint {
            out: self.out.clone(),
            iteration: it,
            source,
        };
        let save = |what: &'static str| move |source: candle_core::Error| TrainError::Save { what, source };
        let w = checkpoint::begin(&self.out, it).map_err(io)?;
        self.player()
            .save(&w.dir.join(MODEL_FILE))
            .map_err(save("the network"))?;
        if self.played.is_some() {
            self.net
                .save(&w.dir.join(TRAINED_FILE))
                .map_err(save("the trained network"))?;
        }
        self.opt
            .save(&self.net, &w.dir.join(OPTIMIZER_FILE))
            .map_err(save("the optimizer"))?;
        self.replay.save(&w.dir.join(REPLAY_FILE)).map_err(io)?;
        if let Some(ing) = &self.ingest {
            // The files whose positions this checkpoint's buffer holds.
            let text = serde_json::to_vec_pretty(&ing.ledger).map_err(TrainError::Ledger)?;
            crate::util::write_atomic(&w.dir.join(LEDGER_FILE), &text).map_err(io)?;
        }
        let dir = w.commit(&self.meta(it, self.history.clone())).map_err(io)?;
        self.iteration = it;
        self.publish()?;
        self.write_reports()?;
        Ok(dir)
    }

    /// `meta.json` of the network at iteration `it`, with `metrics`.
    fn meta(&self, it: u32, metrics: Vec<Row>) -> Meta {
        Meta {
            format: meta::FORMAT.into(),
            version: meta::VERSION,
            board: self.cfg.into(),
            network: self.net.shape,
            iteration: it,
            optimizer_step: self.opt.step,
            replay_samples: self.replay.len(),
            seed: self.seed,
            settings: settings_json(&self.settings),
            metrics,
        }
    }

    /// A distributed trainer publishes its current network for the workers
    /// (nothing for a single process). The metrics stay in the checkpoint.
    fn publish(&self) -> Result<(), TrainError> {
        let Some(ing) = &self.ingest else {
            return Ok(());
        };
        let it = self.iteration;
        ing.layout
            .publish(self.player(), &self.meta(it, Vec::new()))
            .map(|_| ())
            .map_err(|source| TrainError::Publish { iteration: it, source })
    }

    /// `metrics.csv` and `curves.svg`, from the history.
    fn write_reports(&self) -> Result<(), TrainError> {
        let csv = self.out.join("metrics.csv");
        crate::util::write_atomic(&csv, metrics::csv(&self.history).as_bytes())
            .map_err(|source| TrainError::File { path: csv, source })?;
        match metrics::chart_svg(&self.history, &format!("{}: training curves", self.name)) {
            Ok(svg) => {
                let p = self.out.join("curves.svg");
                crate::util::write_atomic(&p, svg.as_bytes()).map_err(|source| TrainError::File { path: p, source })?;
            }
            Err(e) => tracing::warn!("could not draw the chart: {e}"),
        }
        Ok(())
    }

    fn due_for_eval(&self, it: u32) -> bool {
        let every = self.settings.eval.every;
        every > 0 && (it % every == 0 || it == self.settings.iterations)
    }
}

/// The network `train.network` asks for on board `cfg`.
fn net_shape(cfg: BoardConfig, settings: &TrainSettings) -> NetShape {
    NetShape {
        rows: cfg.rows,
        cols: cfg.cols,
        blocks: settings.network.blocks as usize,
        channels: settings.network.channels as usize,
        value_hidden: settings.network.value_hidden as usize,
        reply_head: settings.network.reply_head,
    }
}

/// `--role trainer`'s intake of the workers' files in `out`: the run's id
/// (made on its first start) and the `ledger` of files already taken.
fn open_ingest(
    sc: &Scenario,
    settings: &TrainSettings,
    out: &std::path::Path,
    shape: NetShape,
    ledger: Ledger,
    json: bool,
) -> Result<Ingest, TrainError> {
    let layout = Layout::new(out);
    let run = layout.ensure_run(sc.seed, BoardMeta::from(sc.board))?;
    let d = &settings.distributed;
    Ok(Ingest::new(
        layout,
        run,
        shape,
        ledger,
        d.max_lag,
        u64::from(d.positions_per_iteration),
        u64::from(settings.self_play.games_per_iteration),
        json,
    ))
}

/// The distributed trainer's ledger in a checkpoint (see [`super::ingest`]).
const LEDGER_FILE: &str = "ingest.json";

fn read_ledger(dir: &std::path::Path) -> Result<Ledger, TrainError> {
    let path = dir.join(LEDGER_FILE);
    match std::fs::read(&path) {
        Ok(bytes) => serde_json::from_slice(&bytes).map_err(|source| TrainError::Json { path, source }),
        // A checkpoint of a single-process run: nothing taken yet.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Ledger::default()),
        Err(source) => Err(TrainError::Read { path, source }),
    }
}

/// Runs one iteration on the actor's state.
#[derive(Message)]
#[rtype(result = "Result<(Row, PathBuf), TrainError>")]
pub struct RunIteration;

/// The actor that owns a training run and drives its iterations.
pub struct Trainer {
    state: Option<Box<TrainState>>,
}

impl Actor for Trainer {
    type Context = Context<Self>;
}

impl Handler<RunIteration> for Trainer {
    type Result = ResponseActFuture<Self, Result<(Row, PathBuf), TrainError>>;

    fn handle(&mut self, _: RunIteration, _: &mut Context<Self>) -> Self::Result {
        let Some(mut st) = self.state.take() else {
            return Box::pin(actix::fut::ready(Err(TrainError::LostState)));
        };
        let work = async move {
            let cpu0 = crate::util::cpu_seconds();
            let (mut st, row) = match tokio::task::spawn_blocking(move || {
                let r = st.selfplay_and_train();
                (st, r)
            })
            .await
            {
                Ok(x) => x,
                Err(e) => return (None, Err(panicked("self-play or training", e))),
            };
            let mut row = match row {
                Ok(r) => r,
                Err(e) => return (Some(st), Err(e)),
            };
            if st.due_for_eval(row.iteration) {
                let t = Instant::now();
                match evaluate(&st, row.iteration).await {
                    Ok((score, w, d, l)) => {
                        row.eval_score = Some(score);
                        row.eval_wins = w;
                        row.eval_draws = d;
                        row.eval_losses = l;
                        row.eval_games = st.settings.eval.games;
                        row.eval_s = t.elapsed().as_secs_f64();
                    }
                    Err(e) => return (Some(st), Err(e)),
                }
            }
            if st.due_for_eval(row.iteration) && !st.accuracy.is_empty() {
                let (st2, row2) = match tokio::task::spawn_blocking(move || {
                    let r = st.measure_accuracy(&mut row);
                    (st, r.map(|()| row))
                })
                .await
                {
                    Ok(x) => x,
                    Err(e) => return (None, Err(panicked("measuring eval.accuracy", e))),
                };
                st = st2;
                row = match row2 {
                    Ok(r) => r,
                    Err(e) => return (Some(st), Err(e)),
                };
            }
            row.cpu_s = crate::util::cpu_seconds() - cpu0;
            match tokio::task::spawn_blocking(move || {
                let r = st.checkpoint(row.clone()).map(|dir| (row, dir));
                (st, r)
            })
            .await
            {
                Ok((st, r)) => (Some(st), r),
                Err(e) => (None, Err(panicked("writing the checkpoint", e))),
            }
        };
        Box::pin(work.into_actor(self).map(|(st, r), act, _| {
            act.state = st;
            r
        }))
    }
}

/// A blocking task of the iteration that panicked.
fn panicked(what: &'static str, e: tokio::task::JoinError) -> TrainError {
    TrainError::Panicked {
        what,
        why: e.to_string(),
    }
}

/// Runs iterations `start + 1..=total` on the Trainer actor, a line each;
/// the last iteration's row.
fn iterate(st: TrainState, start: u32, total: u32, opponent: String) -> Result<Option<Row>, ModeError> {
    let (out, json) = (st.out.clone(), st.json);
    run_mode(
        async move {
            let trainer = Trainer {
                state: Some(Box::new(st)),
            }
            .start();
            let mut last = None;
            for _ in start..total {
                match trainer.send(RunIteration).await {
                    Ok(Ok((row, dir))) => {
                        emit(
                            json,
                            &crate::events::Event::Iteration {
                                row: row.clone(),
                                checkpoint: dir,
                            },
                            &summary_line(&row, total, &opponent),
                        );
                        last = Some(row);
                    }
                    Ok(Err(e)) => return Err(e.into()),
                    Err(e) => return Err(ModeError::Failed(format!("the trainer stopped: {e}").into())),
                }
            }
            Ok(last)
        },
        || {
            // Self-play threads may still be busy; every file is already consistent.
            format!(
                "Interrupted; the last complete checkpoint in {} is intact.",
                out.display()
            )
        },
    )
}

/// `mode: train` in one process.
pub fn run_train(sc: &Scenario, json: bool) -> Result<(), ModeError> {
    run_train_as(sc, json, Role::Single, false)
}

/// `mode: train` as `role`: the whole run, or the trainer of a distributed
/// one (its workers run [`super::worker::run_worker`]); `fresh` starts the
/// run over first (`--fresh`).
pub fn run_train_as(sc: &Scenario, json: bool, role: Role, fresh: bool) -> Result<(), ModeError> {
    crate::az::tune_allocator();
    let threads = sc.train.as_ref().map_or(0, |t| t.optimizer.threads);
    if threads > 0 && std::env::var_os("RAYON_NUM_THREADS").is_none() {
        // candle sizes its CPU thread pool from this variable when the pool
        // is first used; no other thread exists yet.
        std::env::set_var("RAYON_NUM_THREADS", threads.to_string());
    }
    let settings = sc.train.clone().unwrap_or_default();
    let out = settings.out_dir(&sc.path);
    let layout = Layout::new(&out);
    let _trainer_lock = prepare_run_dir(&layout, &settings, role, fresh)?;
    let st = TrainState::open(sc, json, &role)?;
    // Workers start from the network this trainer starts from.
    st.publish()?;
    crate::scenario::resolved::save(sc, &st.out)
        .map_err(|e| ModeError::Failed(format!("cannot write in {}: {e}", st.out.display()).into()))?;
    let total = st.settings.iterations;
    let start = st.iteration;
    let out = st.out.clone();
    let opponent = st.settings.eval.opponent.name.clone();
    let json = st.json;
    say_start(&st);
    if start >= total {
        // Nothing left to do, but the reports are brought up to date.
        st.write_reports()?;
        if role == Role::Trainer {
            let _ = layout.write_done(start);
        }
        emit(
            json,
            &crate::events::Event::TrainSummary {
                iterations: start,
                out: out.clone(),
                done: true,
                last: None,
            },
            &format!(
                "{}: already at iteration {start} of {total}; nothing to do (raise the scenario's \
                 `train.iterations` to train on, or train from nothing elsewhere with \
                 `--fresh --out DIR`)",
                out.display()
            ),
        );
        return Ok(());
    }
    let last = iterate(st, start, total, opponent)?;
    if role == Role::Trainer {
        // Tells the workers to stop (a worker whose scenario asks for more goes on).
        layout
            .write_done(total)
            .map_err(|e| ModeError::Failed(format!("cannot write {}: {e}", layout.done_file().display()).into()))?;
    }
    let score = last.as_ref().and_then(|r| r.eval_score);
    emit(
        json,
        &crate::events::Event::TrainSummary {
            iterations: total,
            out: out.clone(),
            done: true,
            last: Some(last),
        },
        &format!(
            "done: {total} iterations; model in {}{}",
            out.display(),
            score.map_or_else(String::new, |s| format!(" (last eval {:.1}%)", s * 100.0))
        ),
    );
    Ok(())
}
