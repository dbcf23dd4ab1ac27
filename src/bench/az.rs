//! `c4sim bench inference` and `c4sim bench selfplay`: AlphaZero speed
//! figures, each against a baseline measured in the same run.
//!
//! - inference: positions per second through plain candle (the baseline),
//!   the folded fast path on one thread, and one fast worker per core; and
//!   PyTorch's CPU inference of the same shapes when a Python with torch is
//!   given (`benches/torch_inference.py`, run as a child process).
//! - self-play: simulations per second and games per hour with one leaf at
//!   a time (the baseline), with many games per network batch, and with one
//!   worker per core; the cache hit rate.
//!
//! - search: the player's time per move with a trained model, one leaf per
//!   network call (the baseline) against batches of [`PLAY_BATCH`] leaves
//!   on one thread and on every core.
//!
//! Every figure is the median of several timed rounds.

use crate::az::inference::{Cache, CpuEvaluator, Evaluate, Folded, ParallelCpu, Scratch};
use crate::az::mcts::{search_batched, NoProver, Tree};
use crate::az::network::{NetShape, PolicyValueNet};
use crate::bench::error::BenchError;
use crate::game::bitboard::Geometry;
use crate::game::bitboard::Position;
use crate::game::openings::parse_move_string;
use crate::game::BoardConfig;
use crate::players::alphazero::{PLAY_BATCH, PLAY_C_PUCT};
use crate::players::model;
use crate::train::selfplay::{play_parallel, SelfPlayConfig, SelfPlayStats};
use crate::util::median;
use candle_core::Device;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::io::Write;
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Random but plausible planes: pieces on about a third of the cells.
fn random_planes(shape: &NetShape, n: usize, seed: u64) -> Vec<f32> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut v = Vec::with_capacity(n * shape.cells() * 3);
    for _ in 0..n * shape.cells() {
        let r: f32 = rng.gen();
        v.push(if r < 0.17 { 1.0 } else { 0.0 });
        v.push(if (0.17..0.34).contains(&r) { 1.0 } else { 0.0 });
        v.push(1.0);
    }
    v
}

/// Positions per second of `f` (which evaluates `batch` positions per
/// call): median over `rounds` rounds of at least `min_time` each.
fn rate(batch: usize, rounds: usize, min_time: Duration, mut f: impl FnMut()) -> f64 {
    f(); // warm-up: allocations, caches
    let mut rates = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        let mut calls = 0u64;
        while t.elapsed() < min_time {
            f();
            calls += 1;
        }
        rates.push((calls * batch as u64) as f64 / t.elapsed().as_secs_f64());
    }
    median(&mut rates)
}

/// The benches' networks: `blocks` × `channels` with a 64-wide value head.
fn bench_shape(board: BoardConfig, blocks: usize, channels: usize) -> NetShape {
    NetShape {
        rows: board.rows,
        cols: board.cols,
        blocks,
        channels,
        value_hidden: 64,
        reply_head: false,
    }
}

/// A freshly initialised network (and its CPU fold) of `blocks` × `channels` for `board`
/// (seed 1), folded for the CPU: benches time the arithmetic, not the weights.
fn random_net(board: BoardConfig, blocks: usize, channels: usize) -> std::io::Result<(PolicyValueNet, Arc<Folded>)> {
    let net =
        PolicyValueNet::new(bench_shape(board, blocks, channels), 1, &Device::Cpu).map_err(std::io::Error::other)?;
    let folded = Arc::new(Folded::from_net(&net).map_err(std::io::Error::other)?);
    Ok((net, folded))
}

/// Parses `BLOCKSxCHANNELS` (`6x64`).
pub fn parse_net(s: &str) -> Result<(usize, usize), BenchError> {
    let bad = |why| BenchError::NetSize { spec: s.into(), why };
    let (b, c) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| bad("expected BLOCKSxCHANNELS like 6x64"))?;
    let b = b.parse().map_err(|_| bad("blocks must be a number"))?;
    let c: usize = c.parse().map_err(|_| bad("channels must be a number"))?;
    if c == 0 {
        return Err(bad("channels must be at least 1"));
    }
    Ok((b, c))
}

/// Inference figures for each net in `nets` at each batch size.
#[allow(clippy::too_many_arguments)]
pub fn inference_bench(
    board: BoardConfig,
    nets: &[(usize, usize)],
    batches: &[usize],
    rounds: usize,
    min_time: Duration,
    workers: usize,
    torch: Option<&str>,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    crate::az::tune_allocator();
    writeln!(
        out,
        "network inference on {} (positions/s, median of {rounds} rounds of {:.1} s; {workers} cores):",
        board,
        min_time.as_secs_f64()
    )?;
    for &(blocks, channels) in nets {
        let (net, folded) = random_net(board, blocks, channels)?;
        let shape = net.shape;
        let gmac = shape.macs() as f64 * 2.0 / 1e9;
        writeln!(
            out,
            "\n  net {blocks} blocks × {channels} channels ({:.1} MFLOP per position)",
            gmac * 1e3
        )?;
        writeln!(
            out,
            "  {:>6} {:>14} {:>14} {:>16} {:>10} {:>10}",
            "batch", "candle plain", "fast 1 thread", "fast 1/core", "ratio", "GFLOP/s"
        )?;
        let torch_rates = torch.map(|py| torch_rates(py, board, blocks, channels, batches, rounds, min_time));
        for &b in batches {
            let planes = random_planes(&shape, b, b as u64);
            let (mut l, mut v) = (Vec::new(), Vec::new());
            let plain = rate(b, rounds, min_time, || {
                net.infer(&planes, b, &mut l, &mut v).expect("candle forward");
            });
            let mut scratch = Scratch::default();
            let fast = rate(b, rounds, min_time, || {
                folded.forward(&planes, b, &mut l, &mut v, &mut scratch);
            });
            let per_core = parallel_rate(&folded, &planes, b, workers, rounds, min_time);
            writeln!(
                out,
                "  {b:>6} {plain:>14.0} {fast:>14.0} {per_core:>16.0} {:>9.2}× {:>10.1}",
                per_core / plain,
                per_core * gmac
            )?;
            if let Some(Ok(t)) = &torch_rates {
                if let Some((_, def, one)) = t.iter().find(|(batch, _, _)| *batch == b) {
                    writeln!(
                        out,
                        "  {:>6} PyTorch default threads {def:>10.0}, 1 thread {one:>10.0}; c4sim fast 1/core ÷ PyTorch default = {:.2}×, fast 1 thread ÷ PyTorch 1 thread = {:.2}×",
                        "",
                        per_core / def,
                        fast / one
                    )?;
                }
            }
        }
        if let Some(Err(e)) = &torch_rates {
            writeln!(out, "  PyTorch: not measured ({e})")?;
        }
    }
    Ok(())
}

/// `workers` threads each running the fast path on its own copy of the
/// batch; total positions per second.
fn parallel_rate(
    folded: &Arc<Folded>,
    planes: &[f32],
    b: usize,
    workers: usize,
    rounds: usize,
    min_time: Duration,
) -> f64 {
    let mut rates = Vec::new();
    for _ in 0..rounds {
        let total = AtomicU64::new(0);
        let t = Instant::now();
        std::thread::scope(|s| {
            for _ in 0..workers {
                s.spawn(|| {
                    let mut ev = CpuEvaluator::new(folded.clone());
                    let (mut l, mut v) = (Vec::new(), Vec::new());
                    ev.evaluate(planes, b, &mut l, &mut v);
                    let mut n = 0;
                    while t.elapsed() < min_time {
                        ev.evaluate(planes, b, &mut l, &mut v);
                        n += b as u64;
                    }
                    total.fetch_add(n, std::sync::atomic::Ordering::Relaxed);
                });
            }
        });
        rates.push(total.into_inner() as f64 / t.elapsed().as_secs_f64());
    }
    median(&mut rates)
}

/// Runs `benches/torch_inference.py` with `python`; returns
/// (batch, default-threads rate, one-thread rate) per batch.
fn torch_rates(
    python: &str,
    board: BoardConfig,
    blocks: usize,
    channels: usize,
    batches: &[usize],
    rounds: usize,
    min_time: Duration,
) -> Result<Vec<(usize, f64, f64)>, BenchError> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/torch_inference.py");
    let b: Vec<String> = batches.iter().map(|b| b.to_string()).collect();
    let out = std::process::Command::new(python)
        .arg(script)
        .args(["--rows", &board.rows.to_string(), "--cols", &board.cols.to_string()])
        .args(["--blocks", &blocks.to_string(), "--channels", &channels.to_string()])
        .args([
            "--rounds",
            &rounds.to_string(),
            "--min-time",
            &min_time.as_secs_f64().to_string(),
        ])
        .arg("--batches")
        .args(&b)
        .output()
        .map_err(|source| BenchError::TorchStart {
            python: python.into(),
            source,
        })?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        return Err(BenchError::TorchFailed(
            err.lines().last().unwrap_or("failed").to_string(),
        ));
    }
    let mut v = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if let [batch, def, one] = f[..] {
            if let (Ok(b), Ok(d), Ok(o)) = (batch.parse(), def.parse(), one.parse()) {
                v.push((b, d, o));
            }
        }
    }
    Ok(v)
}

/// Training steps per second (forward, backward, AdamW) on a fixed random
/// batch: candle with the unfold op (the baseline), candle's `conv2d`,
/// and the hand-written CPU backward of [`crate::az::cpu_trainer`].
pub fn train_bench(
    board: BoardConfig,
    nets: &[(usize, usize)],
    batch: usize,
    steps: usize,
    rounds: usize,
    out: &mut dyn Write,
) -> Result<(), BenchError> {
    use candle_core::Tensor;
    if std::env::var_os("C4SIM_NO_MALLOPT").is_none() {
        crate::az::tune_allocator();
    }
    writeln!(
        out,
        "training steps on {board} (batch {batch}, steps/s, median of {rounds} rounds of {steps} steps):"
    )?;
    for &(blocks, channels) in nets {
        let shape = bench_shape(board, blocks, channels);
        let dev = Device::Cpu;
        let planes = random_planes(&shape, batch, 3);
        let x = Tensor::from_vec(planes, (batch, board.rows, board.cols, 3), &dev)?;
        let mut pol = vec![0f32; batch * board.cols];
        for i in 0..batch {
            pol[i * board.cols + i % board.cols] = 1.0;
        }
        let p = Tensor::from_vec(pol, (batch, board.cols), &dev)?;
        let z: Vec<f32> = (0..batch).map(|i| if i % 2 == 0 { 1.0 } else { -1.0 }).collect();
        let z = Tensor::from_vec(z, batch, &dev)?;
        let threads = std::env::var("RAYON_NUM_THREADS")
            .ok()
            .and_then(|t| t.parse().ok())
            .unwrap_or_else(crate::util::cores);
        let work = TrainWork {
            shape,
            x: &x,
            p: &p,
            z: &z,
            steps,
            rounds,
        };
        let results = [
            candle_rate(&work, false)?,
            candle_rate(&work, true)?,
            host_rate(&work, threads)?,
        ];
        writeln!(
            out,
            "  net {blocks}×{channels}: candle unfold+matmul {:.2} steps/s (baseline), candle conv2d {:.2} ({:.2}×), \
             hand-written CPU backward, {threads} thread(s) {:.2} ({:.2}×); first-step loss {:.5} / {:.5} / {:.5}",
            results[0].0,
            results[1].0,
            results[1].0 / results[0].0,
            results[2].0,
            results[2].0 / results[0].0,
            results[0].1,
            results[1].1,
            results[2].1
        )?;
    }
    Ok(())
}

/// One training-speed measurement's work: a network shape, one batch
/// (planes, policy and value targets), and how many steps and rounds.
#[derive(Clone, Copy)]
struct TrainWork<'a> {
    shape: NetShape,
    x: &'a candle_core::Tensor,
    p: &'a candle_core::Tensor,
    z: &'a candle_core::Tensor,
    steps: usize,
    rounds: usize,
}

/// Training steps per second through candle (its conv2d when `native`,
/// else unfold + matmul), median of `rounds`, and the first step's loss.
fn candle_rate(w: &TrainWork, native: bool) -> candle_core::Result<(f64, f32)> {
    let mut net = PolicyValueNet::new(w.shape, 1, &Device::Cpu)?;
    net.native_conv = native;
    let first = net.loss(w.x, w.p, w.z, None)?.total.to_scalar::<f32>()?;
    let mut opt = crate::az::optimizer::AdamW::new(&net, 1e-3, 1e-4)?;
    let rate = steps_per_second(w.steps, w.rounds, || {
        let l = net.loss(w.x, w.p, w.z, None)?.total;
        opt.step(&net, &l)
    })?;
    Ok((rate, first))
}

/// `step` run `steps` times a round: the median rate of `rounds` rounds.
fn steps_per_second<E>(steps: usize, rounds: usize, mut step: impl FnMut() -> Result<(), E>) -> Result<f64, E> {
    let mut rates = Vec::new();
    for _ in 0..rounds {
        let t = Instant::now();
        for _ in 0..steps {
            step()?;
        }
        rates.push(steps as f64 / t.elapsed().as_secs_f64());
    }
    Ok(median(&mut rates))
}

/// The same through the hand-written CPU backward (what training uses on a
/// CPU) on `threads` threads.
fn host_rate(w: &TrainWork, threads: usize) -> candle_core::Result<(f64, f32)> {
    let net = PolicyValueNet::new(w.shape, 1, &Device::Cpu)?;
    let mut host = crate::az::cpu_trainer::CpuTrainer::from_net(&net, &Default::default(), 0, 1e-3, 1e-4, threads)?;
    let xs = w.x.flatten_all()?.to_vec1::<f32>()?;
    let ps = w.p.flatten_all()?.to_vec1::<f32>()?;
    let zs = w.z.to_vec1::<f32>()?;
    let batch = zs.len();
    let first = host.gradients(&xs, &ps, &zs, None, batch).0;
    let rate = steps_per_second(w.steps, w.rounds, || {
        host.step(&xs, &ps, &zs, None, batch);
        Ok::<(), candle_core::Error>(())
    })?;
    Ok((rate, first.policy + first.value))
}

/// One self-play measurement.
pub struct SelfPlayFigure {
    pub label: String,
    pub stats: SelfPlayStats,
    pub seconds: f64,
}

impl SelfPlayFigure {
    pub fn sims_per_s(&self) -> f64 {
        self.stats.simulations as f64 / self.seconds
    }
}

/// Self-play speed with an untrained network of `blocks × channels`:
/// one leaf at a time on one worker (baseline), `concurrent` games per
/// batch on one worker, and the same on `workers` workers.
#[allow(clippy::too_many_arguments)]
pub fn selfplay_bench(
    board: BoardConfig,
    blocks: usize,
    channels: usize,
    games: u64,
    simulations: u32,
    concurrent: usize,
    workers: usize,
    rounds: usize,
    out: &mut dyn Write,
) -> std::io::Result<Vec<SelfPlayFigure>> {
    let (_, folded) = random_net(board, blocks, channels)?;
    let geo = Geometry::<u64>::new(board);
    assert!(board.cells() <= 64, "the self-play bench uses boards of up to 64 cells");
    writeln!(
        out,
        "self-play on {board}: net {blocks}×{channels}, {simulations} simulations per move, {games} games per round, \
         median of {rounds} rounds"
    )?;
    let cases = [
        ("one leaf at a time, 1 worker", 1usize, 1usize),
        ("batched, 1 worker", concurrent, 1),
        ("batched, 1 worker per core", concurrent, workers),
    ];
    let mut figures = Vec::new();
    for (label, conc, w) in cases {
        let cfg = bench_selfplay_config(simulations, conc.min((games as usize).div_ceil(w)).max(1));
        let (stats, seconds) = time_selfplay(&geo, &cfg, &folded, w, games, rounds);
        let f = SelfPlayFigure {
            label: label.to_string(),
            stats,
            seconds,
        };
        writeln!(
            out,
            "  {label:<30} {:>9.0} sims/s {:>9.0} games/hour  mean batch {:>6.1}  cache hits {:>5.1}%",
            f.sims_per_s(),
            f.stats.games as f64 / seconds * 3600.0,
            f.stats.mean_batch(),
            f.stats.cache_hit_rate() * 100.0
        )?;
        figures.push(f);
    }
    let base = figures[0].sims_per_s();
    writeln!(
        out,
        "  ratios to one leaf at a time: batched {:.2}×, batched per core {:.2}×",
        figures[1].sims_per_s() / base,
        figures[2].sims_per_s() / base
    )?;
    Ok(figures)
}

/// The self-play settings the bench times: full searches of `simulations`
/// with training's usual noise and temperature, `concurrent` games per
/// network batch, and none of the options that change the work per move
/// (exact values, random openings, Gumbel), so figures stay comparable.
fn bench_selfplay_config(simulations: u32, concurrent: usize) -> SelfPlayConfig {
    SelfPlayConfig {
        simulations,
        c_puct: 2.5,
        dirichlet_alpha: 0.5,
        dirichlet_weight: 0.25,
        root_prior_temperature: 1.0,
        temperature_moves: 15,
        full_search_share: 1.0,
        fast_simulations: simulations,
        q_weight: 0.0,
        q_best_child: false,
        random_opening_plies: 0,
        random_move_share: 0.0,
        reply_targets: false,
        exact_value_nodes: 0,
        exact_policy_nodes: 0,
        gumbel: false,
        forced_playouts: 0.0,
        concurrent,
        cache_size: 200_000,
    }
}

/// `rounds` timed runs of `games` self-play games on `workers` workers
/// (round `r` seeded `r`): the last round's statistics and the median
/// seconds.
fn time_selfplay(
    geo: &Geometry<u64>,
    cfg: &SelfPlayConfig,
    folded: &Arc<Folded>,
    workers: usize,
    games: u64,
    rounds: usize,
) -> (SelfPlayStats, f64) {
    let mut times = Vec::new();
    let mut stats = SelfPlayStats::default();
    for r in 0..rounds {
        let mut evals: Vec<Box<dyn Evaluate>> = (0..workers)
            .map(|_| Box::new(CpuEvaluator::new(folded.clone())) as Box<dyn Evaluate>)
            .collect();
        let done = AtomicU64::new(0);
        let t = Instant::now();
        let (_, s) = play_parallel(geo, cfg, &mut evals, games, r as u64, &done);
        times.push(t.elapsed().as_secs_f64());
        stats = s;
    }
    (stats, median(&mut times))
}

/// Positions of plies 8 to 14 from games of the shipped model's gauntlet
/// against minimax depth 8 (move strings, columns from 1): the kind of
/// position a player searches most.
pub const SEARCH_POSITIONS: [&str; 8] = [
    "17633336",
    "1766433744",
    "123334323312",
    "12322233434335",
    "66454446",
    "6645644555",
    "362424442265",
    "36243324444673",
];

/// The player's search on `model` at `simulations` per move: seconds per
/// position (each searched from an empty tree and cache), one leaf per
/// network call on one thread (the baseline), batches of [`PLAY_BATCH`]
/// on one thread, and batches shared by `threads` threads.
pub fn search_bench(
    model: &std::path::Path,
    simulations: u32,
    threads: usize,
    rounds: usize,
    out: &mut dyn Write,
) -> Result<(), BenchError> {
    let (meta, net) = model::load_model(model, &Device::Cpu)?;
    let folded = Arc::new(Folded::from_net(&net)?);
    let cfg = BoardConfig::from(meta.board);
    if cfg.cells() > 64 {
        return Err(BenchError::SearchBoard);
    }
    let geo = Geometry::<u64>::new(cfg);
    let positions: Vec<Position<u64>> = SEARCH_POSITIONS
        .iter()
        .map(|m| Ok(Position::from_moves(&geo, &parse_move_string(m, cfg.cols)?)?))
        .collect::<Result<_, BenchError>>()?;
    writeln!(
        out,
        "player search with {} (iteration {}), {simulations} simulations per move, {} positions from an empty tree, \
         median of {rounds} rounds:",
        model.display(),
        meta.iteration,
        positions.len()
    )?;
    let cases: [(String, usize, usize); 3] = [
        ("one leaf per call, 1 thread".into(), 1, 1),
        (format!("batches of {PLAY_BATCH}, 1 thread"), PLAY_BATCH, 1),
        (
            format!("batches of {PLAY_BATCH}, {threads} threads"),
            PLAY_BATCH,
            threads,
        ),
    ];
    let mut per_move = Vec::new();
    for (label, batch, t) in cases {
        let mut eval = ParallelCpu::new(folded.clone(), t);
        let mut times = Vec::new();
        for _ in 0..rounds {
            let start = Instant::now();
            for pos in &positions {
                let mut tree = Tree::new(*pos);
                let mut cache = Cache::new(200_000);
                search_batched(
                    &mut tree,
                    &geo,
                    &mut eval,
                    &mut cache,
                    simulations,
                    PLAY_C_PUCT,
                    batch,
                    &mut NoProver,
                );
            }
            times.push(start.elapsed().as_secs_f64() / positions.len() as f64);
        }
        let s = median(&mut times);
        writeln!(
            out,
            "  {label:<32} {s:>7.3} s per move  {:>9.0} simulations/s",
            simulations as f64 / s
        )?;
        per_move.push(s);
    }
    writeln!(
        out,
        "  speed-up over one leaf per call: batches on 1 thread {:.2}×, on {threads} threads {:.2}×",
        per_move[0] / per_move[1],
        per_move[0] / per_move[2]
    )?;
    Ok(())
}
