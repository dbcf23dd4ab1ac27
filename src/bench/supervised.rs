//! `c4sim bench supervised`: trains a network on solver-labelled positions
//! instead of self-play, a capacity check for the learning issue.
//!
//! Why: self-play at 4 × 32 flattened at about 15–17% W/D/L mistakes alone
//! on the begin+middle test sets, and no lever moved it by more than the
//! noise. This answers the question underneath: can the network *represent*
//! perfect play on those positions at all? It trains on positions made the
//! way the test sets are made (`bench accuracy --make-sets` with other
//! seeds), with perfect targets, and reports the mistake rate of the network
//! alone on its own training positions and on the test sets, as training
//! goes. Low on both: the size suffices and self-play's targets are what
//! hold it back. Low on training, high on test: more data would help. High
//! on both: the network is too small for the goal.
//!
//! Targets (pure, [`targets`]): the value is the sign of the best column's
//! exact score; the policy is shared evenly between the columns of the best
//! W/D/L class (`--policy class`, what a mistake is judged by) or the
//! columns with the best exact score (`--policy best`, what the solver
//! would play). Training positions equal to a test position or its mirror
//! image are dropped ([`training_samples`]), and duplicates kept once.
//!
//! The steps are the trainer's own ([`CpuTrainer`], AdamW, batches drawn
//! uniformly with mirror augmentation), with a cosine-decayed learning rate.
//! The model directory it writes (`meta.json`, `model.safetensors`) plays
//! as `{kind: alphazero, model: DIR}`, so the final figure is measured with
//! `bench accuracy` like every other network's.

use crate::actors::mode::ModeError;
use crate::az::cpu_trainer::CpuTrainer;
use crate::az::encode::Sample;
use crate::az::inference::{CpuEvaluator, Evaluate, Folded};
use crate::az::meta::{BoardMeta, Meta, FORMAT, META_FILE, MODEL_FILE, VERSION};
use crate::az::network::{NetShape, PolicyValueNet};
use crate::bench::accuracy::load_sets;
use crate::bench::error::BenchError;
use crate::game::bitboard::{Geometry, Position};
use crate::game::openings::parse_move_string;
use crate::game::BoardConfig;
use crate::players::model::load_model;
use crate::solver::sets::{board, parse_choice, Labelled, Tally, BEGIN_MIDDLE, DEFAULT_SETS};
use crate::train::eval_accuracy::tally;
use crate::train::replay::{Batch, Replay};
use candle_core::Device;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use serde_json::json;
use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

#[derive(clap::Args, Debug, Clone)]
pub struct SupervisedArgs {
    /// A labelled sets file to train on (written by `bench accuracy --make-sets --seed N`); repeat for more.
    #[arg(long = "train", required = true)]
    pub train: Vec<PathBuf>,
    /// The test sets: measured on, and excluded from training (mirrors included).
    #[arg(long, default_value = DEFAULT_SETS)]
    pub sets: PathBuf,
    /// The sets trained on and measured: sets, groups (begin, middle, end) or `all`, joined by `+`.
    #[arg(long, default_value = BEGIN_MIDDLE)]
    pub only: String,
    /// Residual blocks of a new network.
    #[arg(long, default_value_t = 4)]
    pub blocks: usize,
    /// Channels of a new network.
    #[arg(long, default_value_t = 32)]
    pub channels: usize,
    /// Start from this model (a model directory) instead of a new network (--blocks and --channels are then its own).
    #[arg(long)]
    pub init: Option<PathBuf>,
    /// What the policy learns: the columns of the best W/D/L class, or the best exact score.
    #[arg(long, value_enum, default_value_t = PolicyTarget::Class)]
    pub policy: PolicyTarget,
    /// AdamW steps.
    #[arg(long, default_value_t = 20_000)]
    pub steps: u64,
    #[arg(long, default_value_t = 64)]
    pub batch_size: usize,
    /// The first step's learning rate; it decays to 0 on a cosine.
    #[arg(long, default_value_t = 0.001)]
    pub learning_rate: f64,
    #[arg(long, default_value_t = 0.03)]
    pub weight_decay: f64,
    /// How much the value loss counts: 0 learns the policy alone and freezes the value head (values then change only through the shared tower).
    #[arg(long, default_value_t = 1.0)]
    pub value_weight: f64,
    /// Measure (and write the model) every N steps.
    #[arg(long, default_value_t = 2_000)]
    pub eval_every: u64,
    /// Training positions measured each time (the first N of the chosen sets' training positions, spread evenly).
    #[arg(long, default_value_t = 600)]
    pub train_measured: usize,
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Threads (0: one per core).
    #[arg(long, default_value_t = 0)]
    pub threads: u32,
    /// The model directory written.
    #[arg(long)]
    pub out: PathBuf,
    /// Also write the curve as JSON to this file.
    #[arg(long)]
    pub json: Option<PathBuf>,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PolicyTarget {
    Class,
    Best,
}

/// The policy and value targets of a labelled position (`scores` per
/// column, `None` for a full column); `None` when no column is legal.
pub fn targets(scores: &[Option<i32>], policy: PolicyTarget) -> Option<(Vec<f32>, f32)> {
    let best = scores.iter().flatten().copied().max()?;
    let picked = |s: i32| match policy {
        PolicyTarget::Class => s.signum() == best.signum(),
        PolicyTarget::Best => s == best,
    };
    let chosen: Vec<bool> = scores.iter().map(|s| s.is_some_and(picked)).collect();
    let share = 1.0 / chosen.iter().filter(|&&c| c).count() as f32;
    let p = chosen.iter().map(|&c| if c { share } else { 0.0 }).collect();
    Some((p, best.signum() as f32))
}

fn position(p: &Labelled, geo: &Geometry<u64>) -> Result<Position<u64>, BenchError> {
    let at = |source| BenchError::Moves {
        moves: p.moves.clone(),
        source,
    };
    let moves = parse_move_string(&p.moves, geo.cfg.cols).map_err(at)?;
    Position::from_moves(geo, &moves).map_err(at)
}

/// A position and its mirror image share one key (the smaller of the two).
fn canonical(pos: &Position<u64>, geo: &Geometry<u64>) -> (u64, u64) {
    let m = pos.mirrored(geo);
    (pos.mine, pos.theirs).min((m.mine, m.theirs))
}

/// Training samples from `train`'s positions of the sets in `order`:
/// each position once (mirrors count as the same), none that is a test
/// position or its mirror. Returns the samples and the positions kept.
pub fn training_samples<'a>(
    train: &'a [Labelled],
    test: &[Labelled],
    order: &[String],
    policy: PolicyTarget,
) -> Result<(Vec<Sample>, Vec<&'a Labelled>), BenchError> {
    let geo = Geometry::<u64>::new(board());
    let mut seen = HashSet::new();
    for p in test {
        seen.insert(canonical(&position(p, &geo)?, &geo));
    }
    let mut samples = Vec::new();
    let mut kept = Vec::new();
    for p in train.iter().filter(|p| order.contains(&p.set)) {
        let pos = position(p, &geo)?;
        if !seen.insert(canonical(&pos, &geo)) {
            continue;
        }
        if let Some((pol, value)) = targets(&p.scores, policy) {
            samples.push(Sample::new(&pos, geo.cfg.cells(), &pol, value));
            kept.push(p);
        }
    }
    Ok((samples, kept))
}

/// `n` positions spread evenly over `all` (all of them when fewer).
fn spread<'a>(all: &[&'a Labelled], n: usize) -> Vec<&'a Labelled> {
    if all.len() <= n {
        return all.to_vec();
    }
    (0..n).map(|i| all[i * all.len() / n]).collect()
}

/// The learning rate at `step` of `steps`: cosine from `lr` to 0.
pub fn cosine(lr: f64, step: u64, steps: u64) -> f64 {
    0.5 * lr * (1.0 + (std::f64::consts::PI * step as f64 / steps.max(1) as f64).cos())
}

/// The network alone (1 simulation, as `bench accuracy` asks it) on `positions`.
fn mistakes(net: &PolicyValueNet, positions: &[&Labelled], seed: u64, threads: usize) -> Result<Tally, BenchError> {
    let folded = Arc::new(Folded::from_net(net)?);
    // The evaluator's error type is the tally's own (it never fails here).
    let evaluator =
        &|| Ok::<_, std::convert::Infallible>(Box::new(CpuEvaluator::new(folded.clone())) as Box<dyn Evaluate>);
    tally(evaluator, BoardMeta::from(board()), positions, 1, seed, threads).map_err(BenchError::below)
}

/// Writes the model directory: `model.safetensors`, then `meta.json`.
fn save(net: &PolicyValueNet, args: &SupervisedArgs, step: u64, samples: usize) -> Result<(), BenchError> {
    std::fs::create_dir_all(&args.out).map_err(BenchError::file(&args.out))?;
    net.save(&args.out.join(MODEL_FILE))?;
    let meta = Meta {
        format: FORMAT.into(),
        version: VERSION,
        board: board().into(),
        network: net.shape,
        iteration: 0,
        optimizer_step: step,
        replay_samples: samples,
        seed: args.seed,
        settings: json!({
            "supervised": {
                "train": args.train, "sets": args.sets, "only": args.only, "policy": format!("{:?}", args.policy),
                "steps": args.steps, "batch_size": args.batch_size, "learning_rate": args.learning_rate,
                "weight_decay": args.weight_decay, "init": args.init,
            }
        }),
        metrics: Vec::new(),
    };
    let text = serde_json::to_string_pretty(&meta)?;
    let path = args.out.join(META_FILE);
    std::fs::write(&path, text).map_err(BenchError::file(path))
}

/// The inputs, read and checked before anything runs.
struct Inputs {
    samples: Vec<Sample>,
    /// Training positions measured each time.
    measured: Vec<Labelled>,
    test: Vec<Labelled>,
    read: usize,
}

fn read_inputs(args: &SupervisedArgs) -> Result<Inputs, BenchError> {
    // The arguments first: a bad one is refused before any file is read.
    if args.eval_every == 0 || args.batch_size == 0 {
        return Err(BenchError::ZeroSteps);
    }
    if !(args.value_weight.is_finite() && args.value_weight >= 0.0) {
        return Err(BenchError::ValueWeight(args.value_weight));
    }
    let order = parse_choice(&args.only).map_err(BenchError::below)?;
    let test_sets = load_sets(&args.sets)?;
    let mut train = Vec::new();
    for f in &args.train {
        train.extend(load_sets(f)?.positions);
    }
    let (samples, kept) = training_samples(&train, &test_sets.positions, &order, args.policy)?;
    if samples.is_empty() {
        return Err(BenchError::NoTrainingPosition {
            only: args.only.clone(),
        });
    }
    Ok(Inputs {
        samples,
        measured: spread(&kept, args.train_measured).into_iter().cloned().collect(),
        test: test_sets
            .positions
            .into_iter()
            .filter(|p| order.contains(&p.set))
            .collect(),
        read: train.iter().filter(|p| order.contains(&p.set)).count(),
    })
}

/// `c4sim bench supervised`: unreadable or unusable inputs are
/// [`ModeError::Usage`] (exit 2), a failure while training
/// [`ModeError::Failed`].
pub fn run(args: &SupervisedArgs) -> Result<(), ModeError> {
    let inputs = read_inputs(args).map_err(|e| ModeError::Usage(format!("error: {e}").into()))?;
    train(args, inputs).map_err(ModeError::failed)
}

/// Trains on `inputs`, measuring (and writing the model) every
/// `--eval-every` steps and after the last.
fn train(args: &SupervisedArgs, inputs: Inputs) -> Result<(), BenchError> {
    let started = Instant::now();
    let threads = crate::util::threads_or_cores(args.threads);
    let Inputs {
        samples,
        measured,
        test,
        read,
    } = inputs;
    let measured: Vec<&Labelled> = measured.iter().collect();
    let test: Vec<&Labelled> = test.iter().collect();
    println!(
        "{} training positions ({read} read; duplicates, mirrors and test positions dropped), {} test positions",
        samples.len(),
        test.len()
    );
    let cfg = board();
    let mut replay = Replay::new(samples.len());
    for s in &samples {
        replay.push(*s);
    }
    let net = initial_net(args)?;
    let mut host = CpuTrainer::from_net(
        &net,
        &Default::default(),
        0,
        args.learning_rate as f32,
        args.weight_decay as f32,
        threads,
    )?;
    host.value_weight = args.value_weight as f32;
    let mut rng = ChaCha8Rng::seed_from_u64(args.seed);
    let mut batch = Batch::default();
    let mut curve = Curve {
        started,
        points: Vec::new(),
    };
    let (mut pl, mut vl, mut since) = (0f64, 0f64, 0u64);
    println!("| step | policy loss | value loss | training positions alone | test positions alone | s |");
    println!("|---:|---:|---:|---:|---:|---:|");
    for step in 0..=args.steps {
        if step % args.eval_every == 0 || step == args.steps {
            net.set_from_host(&host.weights())?;
            let losses = (pl / since.max(1) as f64, vl / since.max(1) as f64);
            curve.measure(&net, args, step, losses, (&measured, &test), threads)?;
            save(&net, args, step, samples.len())?;
            curve.write(args, samples.len(), measured.len(), test.len())?;
            (pl, vl, since) = (0.0, 0.0, 0);
        }
        if step == args.steps {
            break;
        }
        host.lr = cosine(args.learning_rate, step, args.steps) as f32;
        replay.batch(&mut rng, args.batch_size, usize::MAX, (cfg.rows, cfg.cols), &mut batch);
        let l = host.step(&batch.planes, &batch.policy, &batch.value, None, args.batch_size);
        (pl, vl, since) = (pl + l.policy as f64, vl + l.value as f64, since + 1);
    }
    println!("model: {}", args.out.display());
    Ok(())
}

/// The network trained: `--init`'s model (which must be for 6×7, win 4, the
/// sets' board) or a new one of `--blocks` × `--channels`.
fn initial_net(args: &SupervisedArgs) -> Result<PolicyValueNet, BenchError> {
    let device = Device::Cpu;
    let cfg = board();
    match &args.init {
        Some(dir) => {
            let (meta, net) = load_model(dir, &device)?;
            if BoardConfig::from(meta.board) != cfg {
                return Err(BenchError::ModelBoard {
                    dir: dir.clone(),
                    board: meta.board.to_string(),
                });
            }
            Ok(net)
        }
        None => {
            let shape = NetShape {
                rows: cfg.rows,
                cols: cfg.cols,
                blocks: args.blocks,
                channels: args.channels,
                value_hidden: 64,
                reply_head: false,
            };
            Ok(PolicyValueNet::new(shape, args.seed, &device)?)
        }
    }
}

/// The learning curve: one point per measurement, printed as a table row
/// when measured and written whole to `--json` each time (so a long run
/// that is stopped still leaves its curve).
struct Curve {
    started: Instant,
    points: Vec<serde_json::Value>,
}

impl Curve {
    /// Measures the network alone on the `(training, test)` positions at
    /// `step`, with the mean `(policy, value)` losses since the last point.
    fn measure(
        &mut self,
        net: &PolicyValueNet,
        args: &SupervisedArgs,
        step: u64,
        (p, v): (f64, f64),
        (measured, test): (&[&Labelled], &[&Labelled]),
        threads: usize,
    ) -> Result<(), BenchError> {
        let on_train = mistakes(net, measured, args.seed, threads)?;
        let on_test = mistakes(net, test, args.seed, threads)?;
        println!(
            "| {step} | {p:.3} | {v:.3} | {:.1} ± {:.1}% | {:.1} ± {:.1}% | {:.0} |",
            100.0 * on_train.mistake_rate(),
            100.0 * on_train.mistake_se(),
            100.0 * on_test.mistake_rate(),
            100.0 * on_test.mistake_se(),
            self.started.elapsed().as_secs_f64()
        );
        self.points.push(json!({
            "step": step, "policy_loss": p, "value_loss": v,
            "train_mistake_rate": on_train.mistake_rate(), "train_mistake_se": on_train.mistake_se(),
            "test_mistake_rate": on_test.mistake_rate(), "test_mistake_se": on_test.mistake_se(),
            "seconds": self.started.elapsed().as_secs_f64(),
        }));
        Ok(())
    }

    /// Writes the curve so far to `--json`, if given.
    fn write(&self, args: &SupervisedArgs, samples: usize, measured: usize, test: usize) -> Result<(), BenchError> {
        let Some(path) = &args.json else {
            return Ok(());
        };
        let doc = json!({"training_positions": samples, "test_positions": test,
                         "train_measured": measured, "curve": self.points});
        std::fs::write(path, serde_json::to_string_pretty(&doc)?).map_err(BenchError::file(path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn targets_share_the_best_class_or_the_best_score() {
        // A full column, two wins (one faster), a draw, losses.
        let s = [None, Some(3), Some(1), Some(0), Some(-2), Some(-1), Some(1)];
        let (p, v) = targets(&s, PolicyTarget::Class).unwrap();
        assert_eq!(v, 1.0);
        let third = 1.0 / 3.0;
        assert_eq!(p, vec![0.0, third, third, 0.0, 0.0, 0.0, third]);
        let (p, _) = targets(&s, PolicyTarget::Best).unwrap();
        assert_eq!(p, vec![0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        // Only draws and losses: the draws are the class.
        let (p, v) = targets(&[Some(0), Some(-4), Some(0)], PolicyTarget::Class).unwrap();
        assert_eq!((p, v), (vec![0.5, 0.0, 0.5], 0.0));
        let (_, v) = targets(&[Some(-3), Some(-4)], PolicyTarget::Class).unwrap();
        assert_eq!(v, -1.0);
        assert!(targets(&[None, None], PolicyTarget::Best).is_none());
    }

    fn labelled(set: &str, moves: &str) -> Labelled {
        Labelled {
            set: set.into(),
            moves: moves.into(),
            ply: moves.len(),
            nodes: 0,
            scores: vec![Some(1), Some(-1), Some(0), Some(0), Some(0), Some(0), Some(0)],
        }
    }

    #[test]
    fn training_drops_test_positions_mirrors_and_duplicates() {
        let order = vec!["begin-easy".to_string()];
        // "17" mirrored is "71"; "4453" reached by another order is "5344".
        let test = vec![labelled("begin-easy", "17")];
        let train = vec![
            labelled("begin-easy", "71"),
            labelled("begin-easy", "4453"),
            labelled("begin-easy", "5344"),
            labelled("begin-easy", "3544"),
            labelled("middle-easy", "1234"),
            labelled("begin-easy", "12"),
        ];
        let (samples, kept) = training_samples(&train, &test, &order, PolicyTarget::Class).unwrap();
        let moves: Vec<&str> = kept.iter().map(|p| p.moves.as_str()).collect();
        // 3544 is 4453's mirror (columns 3↔5): dropped with it.
        assert_eq!(moves, vec!["4453", "12"]);
        assert_eq!(samples.len(), 2);
        assert_eq!(samples[0].value, 1.0);
        assert_eq!(samples[0].policy[0], 1.0);
    }

    #[test]
    fn the_learning_rate_decays_on_a_cosine() {
        assert_eq!(cosine(0.001, 0, 100), 0.001);
        assert!((cosine(0.001, 50, 100) - 0.0005).abs() < 1e-12);
        assert!(cosine(0.001, 100, 100).abs() < 1e-12);
    }
}
