//! `c4sim run FILE --role selfplay [--worker NAME]`: a self-play worker of
//! a distributed run. It plays batches of games with the newest network the
//! trainer published and writes each batch as one file in its own folder
//! ([`super::exchange`], [`super::gamefile`]); it never talks to the trainer
//! otherwise. Killed at any moment, it loses at most the batch in progress,
//! which it plays again from the same seed when restarted (its number is
//! one past the last file it wrote), so no game is lost or written twice.
//! Exact value targets (`self_play.exact_value_nodes`) are computed here.

use super::exchange::{done_at, valid_worker_name, Layout, RunInfo};
use super::gamefile::{Batch, BatchGame, BatchHeader};
use super::progress::emit as say;
use super::selfplay::{play_parallel, SelfPlayConfig};
use crate::actors::mode::ModeError;
use crate::az::inference::{CpuEvaluator, Evaluate, Folded};
use crate::az::meta::{BoardMeta, Meta};
use crate::game::bitboard::{with_width, Geometry};
use crate::scenario::Scenario;
use crate::util::seed;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Longest wait between tries when the network cannot be read.
const MAX_RETRY: Duration = Duration::from_secs(10);
/// Longest wait between looks for the run's `run.json`: a worker started
/// before its trainer joins within about a second of the trainer's start
/// (a look is one small read), instead of up to `MAX_RETRY` late, when a
/// short run may be half over.
const JOIN_POLL: Duration = Duration::from_secs(1);

/// This machine's name, for a worker started without `--worker`.
fn hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most `buf.len()` bytes into `buf`.
    let ok = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) } == 0;
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let name: String = String::from_utf8_lossy(&buf[..end])
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' { c } else { '_' })
        .collect();
    if ok && !name.is_empty() {
        name
    } else {
        "worker".into()
    }
}

/// The default name: this machine and process, so two workers on one
/// machine never share a folder. Give `--worker` for a name that survives a
/// restart (a restarted worker then continues its own numbering).
pub fn default_name() -> String {
    let mut n = format!("{}-{}", hostname(), std::process::id());
    n.truncate(64);
    n
}

/// Why a worker waits (the `why` of a `worker_waiting` event): passing
/// states of the shared volume, tried again until they pass.
#[derive(Debug, thiserror::Error)]
enum Waiting {
    #[error("no {} yet (the trainer writes it when it starts)", .0.display())]
    NoRun(std::path::PathBuf),
    #[error("{} is a run on a {theirs} board, this scenario's is {ours}", out.display())]
    OtherBoard {
        out: std::path::PathBuf,
        theirs: BoardMeta,
        ours: BoardMeta,
    },
    #[error("cannot read the network: {0}")]
    Network(#[source] super::exchange::ExchangeError),
    #[error("the published network is for a {theirs} board, not {ours}")]
    NetworkBoard { theirs: BoardMeta, ours: BoardMeta },
    #[error("cannot prepare the network: {0}")]
    Prepare(#[source] candle_core::Error),
    #[error("{0} batches not yet taken by the trainer")]
    Backlog(u64),
}

/// Tries `what` until it works, saying why it waits (once, then every
/// minute), with waits growing to `max_wait`. `None` once the run is done.
fn retry<T>(
    done: &dyn Fn() -> bool,
    worker: &str,
    json: bool,
    max_wait: Duration,
    mut what: impl FnMut() -> Result<T, Waiting>,
) -> Option<T> {
    let mut wait = Duration::from_millis(200);
    let mut said: Option<Instant> = None;
    loop {
        if done() {
            return None;
        }
        match what() {
            Ok(t) => return Some(t),
            Err(why) => {
                if said.map_or(true, |t| t.elapsed() >= Duration::from_secs(60)) {
                    say(
                        json,
                        &crate::events::Event::WorkerWaiting {
                            worker: worker.to_string(),
                            why: why.to_string(),
                        },
                        &format!("worker {worker}: waiting: {why}"),
                    );
                    said = Some(Instant::now());
                }
                std::thread::sleep(wait);
                wait = (wait * 2).min(max_wait);
            }
        }
    }
}

/// The games are played with this worker's own scenario: a copy that
/// differs from the trainer's in how games are played is worth a line.
fn warn_if_settings_differ(meta: &Meta, settings: &crate::scenario::train::TrainSettings, name: &str, json: bool) {
    let mine = super::trainer::settings_json(settings);
    let differ: Vec<&str> = ["mcts", "self_play"]
        .into_iter()
        .filter(|k| meta.settings.get(*k).is_some_and(|theirs| *theirs != mine[*k]))
        .collect();
    if !differ.is_empty() {
        say(
            json,
            &crate::events::Event::WorkerSettingsDiffer {
                worker: name.to_string(),
                sections: differ.iter().map(|d| d.to_string()).collect(),
            },
            &format!(
                "worker {name}: this scenario's train.{} differ from the trainer's; playing with this scenario's",
                differ.join(" and train.")
            ),
        );
    }
}

/// `--role selfplay`: joins the run in the scenario's `out`, then plays
/// batch after batch with the newest network until the trainer says done.
pub fn run_worker(sc: &Scenario, name: Option<String>, json: bool) -> Result<(), ModeError> {
    crate::az::tune_allocator();
    let settings = sc.train.clone().unwrap_or_default();
    let out = settings.out_dir(&sc.path);
    let layout = Layout::new(&out);
    let name = name.unwrap_or_else(default_name);
    if !valid_worker_name(&name) {
        return Err(ModeError::Usage(
            format!(
            "--worker `{name}`: a worker's name is its folder's name: letters, digits, `-`, `_` and `.` (not first), \
             at most 64 characters"
        )
            .into(),
        ));
    }
    // Held for as long as the worker lives; the kernel drops it however it ends.
    let _lock = super::exchange::lock(&layout.worker_lock(&name)).map_err(|held| {
        ModeError::Failed(
            format!(
                "another worker named `{name}` is running on {} ({held}): give each worker its own --worker NAME",
                out.display()
            )
            .into(),
        )
    })?;
    layout.clear_leftovers(&name);
    let Some(mut w) = Worker::join(sc, settings, layout, name, json) else {
        return Ok(());
    };
    let mut net: Option<(Meta, Arc<Folded>)> = None;
    loop {
        if w.done() {
            w.say_done();
            return Ok(());
        }
        // A run started over (`--fresh`) has a new id: this worker's files
        // would all be refused, so it stops and says why.
        if w.layout.read_run().is_ok_and(|r| r.id != w.run.id) {
            return Err(ModeError::Failed(
                format!(
                    "the run in {} was started over; start this worker again to join the new one",
                    w.out().display()
                )
                .into(),
            ));
        }
        if !w.refresh_network(&mut net) || !w.wait_for_the_trainer() {
            continue;
        }
        let (meta, folded) = net.as_ref().expect("loaded above");
        let batch = w.play_batch(sc, meta, folded);
        w.write(batch)?;
    }
}

/// Whether the trainer wrote DONE for at least `iterations` (a scenario
/// asking for more means the run goes on: its trainer will say so).
fn run_done(layout: &Layout, iterations: u32) -> bool {
    done_at(layout).is_some_and(|n| n >= iterations)
}

/// One worker in a run: what it plays with and where its files go.
struct Worker {
    settings: crate::scenario::train::TrainSettings,
    layout: Layout,
    name: String,
    json: bool,
    run: RunInfo,
    board: BoardMeta,
    cfg: SelfPlayConfig,
    threads: usize,
    games: u64,
    seed: u64,
    /// The number of the next batch file.
    batch: u64,
}

impl Worker {
    /// Waits for the trainer's `run.json` (on this scenario's board) and
    /// says how the worker will play; `None` when the run is already done.
    fn join(
        sc: &Scenario,
        settings: crate::scenario::train::TrainSettings,
        layout: Layout,
        name: String,
        json: bool,
    ) -> Option<Worker> {
        let board = BoardMeta::from(sc.board);
        let out = layout.out.clone();
        let iterations = settings.iterations;
        let done = || run_done(&layout, iterations);
        let run = retry(&done, &name, json, JOIN_POLL, || {
            let run = layout.read_run().map_err(|_| Waiting::NoRun(layout.run_file()))?;
            if run.board != board {
                return Err(Waiting::OtherBoard {
                    out: out.clone(),
                    theirs: run.board,
                    ours: board,
                });
            }
            Ok(run)
        });
        let threads = crate::util::threads_or_cores(settings.distributed.worker_threads);
        let games = settings.distributed.games_per_batch as u64;
        let cfg = SelfPlayConfig::from_settings(&settings, true, games.div_ceil(threads as u64));
        let batch = layout.next_batch(&name);
        let Some(run) = run else {
            say(
                json,
                &crate::events::Event::WorkerDone { worker: name.clone() },
                &format!("worker {name}: the run is done"),
            );
            return None;
        };
        let seed = seed::derive(
            run.seed,
            u64::from(crc32fast::hash(name.as_bytes())),
            seed::SELF_PLAY_WORKER,
        );
        say(
            json,
            &crate::events::Event::WorkerStart {
                worker: name.clone(),
                out: out.clone(),
                threads,
                next_batch: batch,
            },
            &format!(
                "worker {name}: self-play for {} in {} ({threads} thread{}, {games} games a batch), from batch {batch}",
                sc.name,
                out.display(),
                if threads == 1 { "" } else { "s" }
            ),
        );
        Some(Worker {
            settings,
            layout,
            name,
            json,
            run,
            board,
            cfg,
            threads,
            games,
            seed,
            batch,
        })
    }

    fn out(&self) -> &std::path::Path {
        &self.layout.out
    }

    /// Whether the run is done for this worker's scenario ([`run_done`]).
    fn done(&self) -> bool {
        run_done(&self.layout, self.settings.iterations)
    }

    fn say_done(&self) {
        let name = &self.name;
        say(
            self.json,
            &crate::events::Event::WorkerDone { worker: name.clone() },
            &format!("worker {name}: the run is done"),
        );
    }

    /// Loads the newest network when a newer one is published; with one in
    /// hand a failed read only delays the switch, without one it is waited
    /// for. `false` when the wait ended without one (the run is done).
    fn refresh_network(&self, net: &mut Option<(Meta, Arc<Folded>)>) -> bool {
        let newest = self.layout.latest_network().map(|(it, _)| it);
        let stale = match (&*net, &newest) {
            (None, _) => true,
            (Some((m, _)), Ok(it)) => *it > m.iteration,
            (Some(_), Err(_)) => false,
        };
        if !stale {
            return true;
        }
        let (board, name) = (self.board, &self.name);
        let load = || -> Result<(Meta, Arc<Folded>), Waiting> {
            let (meta, n) = self.layout.load_latest().map_err(Waiting::Network)?;
            if meta.board != board {
                return Err(Waiting::NetworkBoard {
                    theirs: meta.board,
                    ours: board,
                });
            }
            let folded = Folded::from_net(&n).map_err(Waiting::Prepare)?;
            Ok((meta, Arc::new(folded)))
        };
        match (load(), net.is_some()) {
            (Ok(n), _) => {
                warn_if_settings_differ(&n.0, &self.settings, name, self.json);
                *net = Some(n);
                true
            }
            (Err(why), true) => {
                tracing::warn!("worker {name}: {why}; playing on with the network in hand");
                true
            }
            (Err(_), false) => match retry(&|| self.done(), name, self.json, MAX_RETRY, load) {
                Some(n) => {
                    *net = Some(n);
                    true
                }
                None => false,
            },
        }
    }

    /// Paced by the trainer: waits while it has not taken `max_backlog` of
    /// this worker's batches. `false` when the wait ended because the run is
    /// done.
    fn wait_for_the_trainer(&self) -> bool {
        let max = u64::from(self.settings.distributed.max_backlog);
        let backlog = || (self.batch - 1).saturating_sub(self.layout.taken_of(&self.name));
        if backlog() < max {
            return true;
        }
        // Polled often: the trainer takes files in seconds.
        retry(
            &|| self.done(),
            &self.name,
            self.json,
            Duration::from_millis(300),
            || {
                let n = backlog();
                if n >= max {
                    Err(Waiting::Backlog(n))
                } else {
                    Ok(())
                }
            },
        )
        .is_some()
    }

    /// Plays the next batch of games with `folded` (network `meta`).
    fn play_batch(&self, sc: &Scenario, meta: &Meta, folded: &Arc<Folded>) -> Batch {
        let t0 = Instant::now();
        let cpu0 = crate::util::cpu_seconds();
        let mut evals: Vec<Box<dyn Evaluate>> = (0..self.threads)
            .map(|_| Box::new(CpuEvaluator::new(folded.clone())) as Box<dyn Evaluate>)
            .collect();
        let batch_seed = seed::derive(self.seed, self.batch, seed::SELF_PLAY_BATCH);
        let played = AtomicU64::new(0);
        let (outs, stats) = with_width!(sc.board, B => play_parallel(&Geometry::<B>::new(sc.board), &self.cfg, &mut evals, self.games, batch_seed, &played));
        let it = meta.iteration;
        let games: Vec<BatchGame> = outs
            .into_iter()
            .map(|g| BatchGame {
                index: g.index as u32,
                moves: g.moves.iter().map(|&m| m as u8).collect(),
                winner: g.winner.map(|w| w as u8),
                samples: g
                    .samples
                    .into_iter()
                    .zip(g.plies)
                    .map(|(s, ply)| (s, it, ply as u16))
                    .collect(),
            })
            .collect();
        Batch {
            header: BatchHeader {
                run: self.run.id.clone(),
                worker: self.name.clone(),
                batch: self.batch,
                seed: batch_seed,
                board: self.board,
                network: meta.network,
                net_iteration: it,
                games: games.len() as u32,
                positions: games.iter().map(|g| g.samples.len() as u64).sum(),
                simulations: stats.simulations,
                exact_values: stats.exact_values,
                seconds: t0.elapsed().as_secs_f64(),
                cpu_seconds: crate::util::cpu_seconds() - cpu0,
            },
            games,
        }
    }

    /// Writes `file` atomically as the next batch and says so.
    fn write(&mut self, file: Batch) -> Result<(), ModeError> {
        let path = self.layout.batch_file(&self.name, self.batch);
        crate::util::write_atomic(&path, &file.encode())
            .map_err(|e| ModeError::Failed(format!("cannot write {}: {e}", path.display()).into()))?;
        let h = &file.header;
        let (name, batch, it) = (&self.name, self.batch, h.net_iteration);
        say(
            self.json,
            &crate::events::Event::Batch {
                worker: name.clone(),
                batch,
                games: h.games,
                positions: h.positions,
                network: it,
                seconds: h.seconds,
                file: path.clone(),
            },
            &format!(
                "worker {name}: batch {batch}: {} games, {} positions with network {it} in {:.1} s",
                h.games, h.positions, h.seconds
            ),
        );
        self.batch += 1;
        Ok(())
    }
}
