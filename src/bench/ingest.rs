//! `c4sim bench ingest`: how many self-play positions a distributed trainer
//! takes in per second from many writer processes' small files, against the
//! positions one self-play worker (one core, the scenario's network and
//! search) produces per second, measured in the same run: their ratio is how
//! many workers one trainer's intake can keep up with (docs/distributed.md).
//! Intake only: training steps and evaluation, which the trainer also
//! spends its time on, are what `train.optimizer` and `eval` cost.

use crate::az::encode::Sample;
use crate::az::inference::{CpuEvaluator, Evaluate, Folded};
use crate::az::meta::BoardMeta;
use crate::az::network::{NetShape, PolicyValueNet};
use crate::bench::error::BenchError;
use crate::game::bitboard::{with_width, Geometry};
use crate::game::MAX_SIDE;
use crate::scenario::Scenario;
use crate::train::exchange::{Layout, Ledger};
use crate::train::gamefile::{Batch, BatchGame, BatchHeader};
use crate::train::ingest::Ingest;
use crate::train::replay::Replay;
use crate::train::selfplay::{play_parallel, SelfPlayConfig};
use rand::{Rng, SeedableRng};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Instant;

#[derive(clap::Args, Debug)]
pub struct IngestArgs {
    /// Writer processes, each writing its own folder at once.
    #[arg(long, default_value_t = 8)]
    pub writers: usize,
    /// Files each writer writes.
    #[arg(long, default_value_t = 40)]
    pub files: usize,
    /// Positions per file (a worker's batch of 32 games is about 600–1,000).
    #[arg(long, default_value_t = 800)]
    pub positions: usize,
    /// The training scenario whose network shape and search one worker runs for the baseline.
    #[arg(long, default_value = "scenarios/train_connect4.yaml")]
    pub scenario: PathBuf,
    /// Games the one-worker baseline plays.
    #[arg(long, default_value_t = 8)]
    pub games: u64,
    /// Rounds of writing and intake (medians are quoted).
    #[arg(long, default_value_t = 3)]
    pub rounds: usize,
    /// Internal: be one writer, named NAME, of the run in DIR (the bench starts itself so).
    #[arg(long, hide = true, value_names = ["DIR", "NAME"], num_args = 2)]
    pub write_into: Vec<String>,
}

/// A batch of `positions` random positions in one game, valid for `run`
/// (also what the distributed tests plant among a worker's files).
pub fn synthetic(run: &str, worker: &str, batch: u64, board: BoardMeta, shape: NetShape, positions: usize) -> Batch {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(batch);
    // Pieces on the board's cells (the first word's), none doubled; shares that sum to 1.
    let cells = board.rows * board.cols;
    let on_board = if cells >= 64 { u64::MAX } else { (1u64 << cells) - 1 };
    let mut samples: Vec<(Sample, u32, u16)> = (0..positions)
        .map(|i| {
            let mut policy = [0.0; MAX_SIDE];
            for p in policy.iter_mut().take(board.cols) {
                *p = rng.gen::<f32>() + 1e-3;
            }
            let sum: f32 = policy.iter().sum();
            policy.iter_mut().for_each(|p| *p /= sum);
            let mine = rng.gen::<u64>() & on_board;
            let s = Sample {
                mine: [mine, 0, 0, 0],
                theirs: [rng.gen::<u64>() & on_board & !mine, 0, 0, 0],
                policy,
                value: rng.gen_range(-1.0..1.0),
                reply: [0.0; MAX_SIDE],
            };
            (s, 0, i as u16)
        })
        .collect();
    // Reply targets as self-play links them for a network with a reply
    // head: the next position's policy (none for the last), so the files
    // are as large as real ones (without the head, version 1 and smaller).
    if shape.reply_head {
        for i in 1..samples.len() {
            samples[i - 1].0.reply = samples[i].0.policy;
        }
    }
    Batch {
        header: BatchHeader {
            run: run.into(),
            worker: worker.into(),
            batch,
            seed: batch,
            board,
            network: shape,
            net_iteration: 0,
            games: 1,
            positions: positions as u64,
            simulations: 0,
            exact_values: 0,
            seconds: 0.0,
            cpu_seconds: 0.0,
        },
        games: vec![BatchGame {
            index: 0,
            moves: vec![3; 20],
            winner: None,
            samples,
        }],
    }
}

fn shape_of(sc: &Scenario) -> NetShape {
    let t = sc.train.clone().unwrap_or_default();
    NetShape {
        rows: sc.board.rows,
        cols: sc.board.cols,
        blocks: t.network.blocks as usize,
        channels: t.network.channels as usize,
        value_hidden: t.network.value_hidden as usize,
        reply_head: t.network.reply_head,
    }
}

/// One writer process: `files` files into its own folder, each written atomically.
fn write_as(args: &IngestArgs, dir: &Path, name: &str) -> Result<(), BenchError> {
    let sc = crate::scenario::load(&args.scenario)?;
    let layout = Layout::new(dir);
    let run = layout.read_run().map_err(BenchError::below)?;
    for b in 1..=args.files as u64 {
        let batch = synthetic(&run.id, name, b, run.board, shape_of(&sc), args.positions);
        let path = layout.batch_file(name, b);
        crate::util::write_atomic(&path, &batch.encode()).map_err(BenchError::file(&path))?;
    }
    Ok(())
}

/// One worker's self-play rate on one core: positions per second (wall, CPU).
fn one_worker(args: &IngestArgs, sc: &Scenario) -> Result<(f64, f64, u64), BenchError> {
    let settings = sc.train.clone().unwrap_or_default();
    let shape = shape_of(sc);
    let net = PolicyValueNet::new(shape, 7, &candle_core::Device::Cpu)?;
    let folded = Arc::new(Folded::from_net(&net)?);
    let cfg = SelfPlayConfig::from_settings(&settings, true, args.games);
    let mut evals: Vec<Box<dyn Evaluate>> = vec![Box::new(CpuEvaluator::new(folded))];
    let done = AtomicU64::new(0);
    let (t0, c0) = (Instant::now(), crate::util::cpu_seconds());
    let (outs, _) = with_width!(sc.board, B => play_parallel(&Geometry::<B>::new(sc.board), &cfg, &mut evals, args.games, 11, &done));
    let (wall, cpu) = (t0.elapsed().as_secs_f64(), crate::util::cpu_seconds() - c0);
    let positions: u64 = outs.iter().map(|g| g.samples.len() as u64).sum();
    Ok((positions as f64 / wall, positions as f64 / cpu, positions))
}

struct Round {
    write_s: f64,
    ingest_s: f64,
    positions: u64,
    bytes: u64,
    files: u64,
}

fn round(args: &IngestArgs, sc: &Scenario, seed: u64) -> Result<Round, BenchError> {
    let dir = std::env::temp_dir().join(format!("c4sim-bench-ingest-{}-{seed}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).map_err(BenchError::file(&dir))?;
    let layout = Layout::new(&dir);
    let board = BoardMeta::from(sc.board);
    let run = layout.ensure_run(seed, board).map_err(BenchError::below)?;
    let exe = std::env::current_exe()?;
    let t0 = Instant::now();
    let children: Vec<std::process::Child> = (0..args.writers)
        .map(|w| {
            std::process::Command::new(&exe)
                .args(["bench", "ingest", "--scenario"])
                .arg(&args.scenario)
                .args([
                    "--files",
                    &args.files.to_string(),
                    "--positions",
                    &args.positions.to_string(),
                ])
                .arg("--write-into")
                .arg(&dir)
                .arg(format!("writer{w}"))
                .spawn()
                .map_err(BenchError::WriterStart)
        })
        .collect::<Result<_, _>>()?;
    for mut c in children {
        let status = c.wait()?;
        if !status.success() {
            return Err(BenchError::WriterFailed(status));
        }
    }
    let write_s = t0.elapsed().as_secs_f64();
    let files = (args.writers * args.files) as u64;
    let bytes: u64 = layout
        .finished_batches()
        .iter()
        .map(|(_, _, p)| std::fs::metadata(p).map_or(0, |m| m.len()))
        .sum();
    let total = files * args.positions as u64;
    let mut ingest = Ingest::new(layout, run, shape_of(sc), Ledger::default(), 0, total, 0, false);
    let mut replay = Replay::new(200_000);
    let t1 = Instant::now();
    let got = ingest.gather(0);
    let positions = got.samples.len() as u64;
    for s in got.samples {
        replay.push(s);
    }
    let ingest_s = t1.elapsed().as_secs_f64();
    let _ = std::fs::remove_dir_all(&dir);
    if got.files != files || got.rejected > 0 {
        return Err(BenchError::Intake {
            took: got.files,
            files,
            rejected: got.rejected,
        });
    }
    Ok(Round {
        write_s,
        ingest_s,
        positions,
        bytes,
        files,
    })
}

/// `c4sim bench ingest`.
pub fn run(args: &IngestArgs) -> Result<(), BenchError> {
    if let [dir, name] = args.write_into.as_slice() {
        return write_as(args, Path::new(dir), name);
    }
    let sc = crate::scenario::load(&args.scenario)?;
    let shape = shape_of(&sc);
    let sims = sc.train.clone().unwrap_or_default().mcts.simulations;
    let (worker_wall, worker_cpu, worker_positions) = one_worker(args, &sc)?;
    let mut rounds = Vec::new();
    for r in 0..args.rounds.max(1) {
        rounds.push(round(args, &sc, r as u64)?);
    }
    let med = |f: &dyn Fn(&Round) -> f64| {
        let mut v: Vec<f64> = rounds.iter().map(f).collect();
        crate::util::median(&mut v)
    };
    let ingest_rate = med(&|r| r.positions as f64 / r.ingest_s);
    let write_rate = med(&|r| r.positions as f64 / r.write_s);
    let files_rate = med(&|r| r.files as f64 / r.ingest_s);
    let bytes_per_position = med(&|r| r.bytes as f64 / r.positions as f64);
    println!(
        "distributed intake, {} rounds (medians): {} writer processes × {} files × {} positions",
        rounds.len(),
        args.writers,
        args.files,
        args.positions
    );
    println!("  writers (all at once):         {write_rate:>10.0} positions/s written");
    println!("  trainer intake (one thread):   {ingest_rate:>10.0} positions/s, {files_rate:.0} files/s (read, checked, into the replay buffer)");
    println!(
        "  one worker, 1 core, {} (network {}×{}, {sims} simulations): {worker_wall:.0} positions/s ({worker_cpu:.0} per CPU-second; {worker_positions} positions in {} games)",
        args.scenario.display(),
        shape.blocks,
        shape.channels,
        args.games
    );
    let feeds = ingest_rate / worker_wall;
    println!("  ratio intake / one worker:     {feeds:>10.0} workers' output per trainer");
    let hundred = 100.0 * worker_wall;
    println!(
        "  100 workers: {hundred:.0} positions/s = {:.1}% of the intake, {:.1} MB/hour of game files ({bytes_per_position:.0} bytes a position)",
        100.0 * hundred / ingest_rate,
        hundred * bytes_per_position * 3600.0 / 1e6
    );
    Ok(())
}
