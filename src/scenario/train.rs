//! The `train` section (mode: train): AlphaZero self-play settings, owned by the AlphaZero engine.
//! Every key, its default and what it allows: docs/scenarios.md ("train"); the design: docs/alphazero.md.

use super::players::parse_one_entry;
use super::tree::Node;
use super::value::{get, Doc};
use super::ScenarioError;
/// `optimizer.reply_weight`'s default.
pub use crate::az::network::DEFAULT_REPLY_WEIGHT;
use crate::game::BoardConfig;
use crate::players::bots::MinimaxSpec;
use crate::players::{KindSpec, PlayerSpec};
use crate::solver::sets;
use std::path::PathBuf;

/// `network:` the residual tower's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NetworkSettings {
    pub blocks: u32,
    pub channels: u32,
    pub value_hidden: u32,
    /// The auxiliary head that predicts the opponent's reply.
    pub reply_head: bool,
}

/// `mcts:` the search used in self-play.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MctsSettings {
    pub simulations: u32,
    pub c_puct: f32,
    pub dirichlet_alpha: f32,
    pub dirichlet_weight: f32,
    /// Self-play's root priors become p^(1/T) before the noise (1: as the
    /// network gives them).
    pub root_prior_temperature: f32,
}

/// `self_play:` how games are generated.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SelfPlaySettings {
    pub games_per_iteration: u32,
    pub temperature_moves: u32,
    /// 0 = auto.
    pub workers: u32,
    /// 0 = auto.
    pub concurrent_games: u32,
    pub cache_size: u32,
    /// Playout cap randomization: the share of full searches.
    pub full_search_share: f32,
    /// `None`: `mcts.simulations` (every search is full).
    pub fast_simulations: Option<u32>,
    /// Weight of the search value q in the value target.
    pub q_weight: f32,
    /// q from the root's best move instead of the root's mean.
    pub q_best_child: bool,
    pub random_opening_plies: u32,
    /// The chance that a move after the opening is uniformly random.
    pub random_move_share: f32,
    /// Forced playouts' factor k, with policy target pruning (0: off).
    pub forced_playouts: f32,
    /// Solver nodes per recorded position for exact value targets (0: off).
    pub exact_value_nodes: u32,
    /// Solver nodes per proven position for exact policy targets (0: off).
    pub exact_policy_nodes: u32,
    /// Gumbel root search in self-play instead of PUCT + Dirichlet noise.
    pub gumbel: bool,
}

/// `optimizer:` AdamW on policy cross-entropy + value MSE.
#[derive(Clone, Debug, PartialEq)]
pub struct OptimizerSettings {
    pub steps_per_iteration: u32,
    pub batch_size: u32,
    pub learning_rate: f64,
    /// `learning_rate_schedule`: (from iteration, rate), `from` strictly
    /// increasing; before the first entry, `learning_rate`. A step schedule,
    /// as AlphaZero's, so a resumed run keeps one file as its whole recipe.
    pub learning_rate_schedule: Vec<(u32, f64)>,
    pub weight_decay: f64,
    /// `ema`: the played network's share of itself kept each iteration
    /// (an exponential moving average of the trained weights); 0 = off.
    /// Averaging damps the iteration-to-iteration noise of the weights
    /// that self-play and evaluation see, as KataGo's averaged networks.
    pub ema: f64,
    /// The weight of the reply head's loss (with `network.reply_head`).
    pub reply_weight: f64,
    /// 0 = one per core.
    pub threads: u32,
}

impl OptimizerSettings {
    /// The learning rate of iteration `it` (1-based).
    pub fn learning_rate_at(&self, it: u32) -> f64 {
        self.learning_rate_schedule
            .iter()
            .take_while(|(from, _)| *from <= it)
            .last()
            .map_or(self.learning_rate, |(_, lr)| *lr)
    }
}

/// `replay:` the buffer of self-play positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ReplaySettings {
    pub capacity: u32,
    pub min_size: u32,
    /// Position averaging of each iteration's samples.
    pub average_duplicates: bool,
    /// KataGo's growing window: its size at the start, in positions
    /// (0 = off: batches come from the whole buffer).
    pub growing_window: u32,
}

/// KataGo's window shape (Wu 2019, section 4.3: α 0.75, β 0.4).
const WINDOW_ALPHA: f64 = 0.75;
const WINDOW_BETA: f64 = 0.4;

impl ReplaySettings {
    /// How many of the newest positions training draws from once `seen`
    /// positions have entered the buffer: with a growing window of
    /// start `c`, `c·(1 + β((seen/c)^α − 1)/α)`, never below `c` nor
    /// above `capacity`. Early positions, played by a network that knew
    /// little, leave the batches sooner than a full buffer would let them;
    /// the window then widens as the data improves more slowly.
    pub fn window(&self, seen: u64) -> usize {
        let cap = self.capacity as usize;
        if self.growing_window == 0 {
            return cap;
        }
        let c = self.growing_window as f64;
        let grown = c * (1.0 + WINDOW_BETA * ((seen as f64 / c).powf(WINDOW_ALPHA) - 1.0) / WINDOW_ALPHA);
        (grown.max(c) as usize).min(cap)
    }
}

/// Where evaluation games start from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpeningSuite {
    /// Every opening of this many plies.
    Plies(u32),
    /// One move string a line (columns from 1).
    File(PathBuf),
}

/// `eval.accuracy:` mistakes against perfect play on labelled positions.
#[derive(Clone, Debug, PartialEq)]
pub struct AccuracySettings {
    /// The choice as written (`begin+middle`), checked by
    /// [`sets::parse_choice`]; kept as text so the resolved scenario says
    /// what the user said.
    pub set: String,
    pub positions: u32,
    /// `None`: `eval.simulations`.
    pub simulations: Option<u32>,
    pub file: PathBuf,
}

impl Default for AccuracySettings {
    fn default() -> Self {
        AccuracySettings {
            set: sets::BEGIN_MIDDLE.into(),
            positions: 300,
            simulations: None,
            file: PathBuf::from(sets::DEFAULT_SETS),
        }
    }
}

/// `eval:` games against a fixed opponent through the referee.
#[derive(Clone, Debug, PartialEq)]
pub struct EvalSettings {
    /// 0 = never.
    pub every: u32,
    pub games: u32,
    pub opponent: PlayerSpec,
    pub openings: OpeningSuite,
    /// `None`: `mcts.simulations`.
    pub simulations: Option<u32>,
    /// `None`: not measured.
    pub accuracy: Option<AccuracySettings>,
}

/// `distributed:` how a trainer and its self-play workers share the work
/// (`c4sim run FILE --role trainer|selfplay`; docs/distributed.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DistributedSettings {
    /// 0 = the games of `self_play.games_per_iteration`.
    pub positions_per_iteration: u32,
    pub max_lag: u32,
    pub games_per_batch: u32,
    pub max_backlog: u32,
    /// 0 = one per core.
    pub worker_threads: u32,
}

impl Default for DistributedSettings {
    fn default() -> Self {
        DistributedSettings {
            positions_per_iteration: 0,
            max_lag: 3,
            games_per_batch: 32,
            max_backlog: 4,
            worker_threads: 0,
        }
    }
}

/// Typed `train:` settings with their defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct TrainSettings {
    pub network: NetworkSettings,
    pub mcts: MctsSettings,
    pub self_play: SelfPlaySettings,
    pub optimizer: OptimizerSettings,
    pub replay: ReplaySettings,
    pub eval: EvalSettings,
    pub iterations: u32,
    /// auto | cpu | cuda | metal.
    pub device: String,
    /// `None`: `models/<scenario file name>` (see [`TrainSettings::out_dir`]).
    pub out: Option<PathBuf>,
    pub resume: bool,
    pub distributed: DistributedSettings,
}

impl Default for TrainSettings {
    fn default() -> Self {
        let opponent = PlayerSpec {
            name: "minimax8".into(),
            move_time: None,
            kind: KindSpec::Minimax(MinimaxSpec { depth: 8 }),
        };
        TrainSettings {
            network: NetworkSettings {
                blocks: 6,
                channels: 64,
                value_hidden: 64,
                reply_head: false,
            },
            mcts: MctsSettings {
                simulations: 100,
                c_puct: 2.5,
                dirichlet_alpha: 0.5,
                dirichlet_weight: 0.25,
                root_prior_temperature: 1.0,
            },
            self_play: SelfPlaySettings {
                games_per_iteration: 100,
                temperature_moves: 15,
                workers: 0,
                concurrent_games: 0,
                cache_size: 200_000,
                full_search_share: 1.0,
                fast_simulations: None,
                q_weight: 0.0,
                q_best_child: false,
                random_opening_plies: 0,
                random_move_share: 0.0,
                forced_playouts: 0.0,
                exact_value_nodes: 0,
                exact_policy_nodes: 0,
                gumbel: false,
            },
            optimizer: OptimizerSettings {
                steps_per_iteration: 1000,
                batch_size: 64,
                learning_rate: 1e-3,
                learning_rate_schedule: Vec::new(),
                weight_decay: 1e-4,
                ema: 0.0,
                reply_weight: DEFAULT_REPLY_WEIGHT,
                threads: 0,
            },
            replay: ReplaySettings {
                capacity: 200_000,
                min_size: 20_000,
                average_duplicates: false,
                growing_window: 0,
            },
            eval: EvalSettings {
                every: 5,
                games: 200,
                opponent,
                openings: OpeningSuite::Plies(2),
                simulations: None,
                accuracy: None,
            },
            iterations: 50,
            device: "auto".into(),
            out: None,
            resume: true,
            distributed: DistributedSettings::default(),
        }
    }
}

impl TrainSettings {
    /// The output directory: `out`, or `models/<scenario file stem>`.
    pub fn out_dir(&self, scenario_path: &std::path::Path) -> PathBuf {
        self.out.clone().unwrap_or_else(|| {
            let stem = scenario_path
                .file_stem()
                .map_or_else(|| "train".to_string(), |s| s.to_string_lossy().into_owned());
            PathBuf::from("models").join(stem)
        })
    }

    /// The network player's simulations in evaluation games.
    pub fn eval_simulations(&self) -> u32 {
        self.eval.simulations.unwrap_or(self.mcts.simulations)
    }

    /// The search's simulations in `eval.accuracy` (when it is given).
    pub fn accuracy_simulations(&self) -> Option<u32> {
        let a = self.eval.accuracy.as_ref()?;
        Some(a.simulations.unwrap_or_else(|| self.eval_simulations()))
    }
}

const TRAIN_KEYS: [&str; 11] = [
    "network",
    "mcts",
    "self_play",
    "optimizer",
    "replay",
    "eval",
    "iterations",
    "device",
    "out",
    "resume",
    "distributed",
];
const DISTRIBUTED_KEYS: [&str; 5] = [
    "positions_per_iteration",
    "max_lag",
    "games_per_batch",
    "max_backlog",
    "worker_threads",
];
const NETWORK_KEYS: [&str; 4] = ["blocks", "channels", "value_hidden", "reply_head"];
const MCTS_KEYS: [&str; 5] = [
    "simulations",
    "c_puct",
    "dirichlet_alpha",
    "dirichlet_weight",
    "root_prior_temperature",
];
const SELF_PLAY_KEYS: [&str; 15] = [
    "games_per_iteration",
    "temperature_moves",
    "workers",
    "concurrent_games",
    "cache_size",
    "full_search_share",
    "fast_simulations",
    "q_weight",
    "q_best_child",
    "random_opening_plies",
    "random_move_share",
    "forced_playouts",
    "exact_value_nodes",
    "exact_policy_nodes",
    "gumbel",
];
const OPTIMIZER_KEYS: [&str; 8] = [
    "steps_per_iteration",
    "batch_size",
    "learning_rate",
    "learning_rate_schedule",
    "weight_decay",
    "ema",
    "reply_weight",
    "threads",
];
const REPLAY_KEYS: [&str; 4] = ["capacity", "min_size", "average_duplicates", "growing_window"];
const EVAL_KEYS: [&str; 6] = ["every", "games", "opponent", "openings", "simulations", "accuracy"];
const ACCURACY_KEYS: [&str; 4] = ["set", "positions", "simulations", "file"];
const OPENINGS_KEYS: [&str; 2] = ["plies", "file"];
use crate::players::alphazero::DEVICES;
use crate::players::kinds::RunsAs;

/// A number (integer or decimal, `1e-3` allowed) within `[min, max]`;
/// `min_open` makes the lower bound exclusive ("more than 0").
fn number(doc: Doc, key: &str, v: &Node, min: f64, min_open: bool, max: f64) -> Result<f64, ScenarioError> {
    let parsed = match v {
        Node::Scalar { text, plain: true, .. } => text.parse::<f64>().ok().filter(|x| x.is_finite()),
        _ => None,
    };
    let Some(x) = parsed else {
        return Err(doc.err(v.pos(), format!("`{key}` must be a number, got {}", v.describe())));
    };
    let low_ok = if min_open { x > min } else { x >= min };
    if !low_ok || x > max {
        let low = if min_open {
            format!("more than {min}")
        } else {
            format!("at least {min}")
        };
        let high = if max.is_finite() {
            format!(" and at most {max}")
        } else {
            String::new()
        };
        return Err(doc.err(v.pos(), format!("`{key}` must be {low}{high}, got {x}")));
    }
    Ok(x)
}

/// A sub-mapping of `train`, checked against its keys; `None` when absent.
fn sub<'n>(
    doc: Doc,
    entries: &'n [(Node, Node)],
    key: &str,
    allowed: &[&str],
    shape: &str,
) -> Result<Option<&'n [(Node, Node)]>, ScenarioError> {
    let Some((_, v)) = get(entries, key) else {
        return Ok(None);
    };
    let e = doc.mapping(key, v, shape)?;
    doc.check_keys(e, allowed, &format!(" in `train.{key}`"))?;
    Ok(Some(e))
}

/// `learning_rate_schedule`: a list of `{from: N, learning_rate: X}`,
/// `from` (an iteration ≥ 1) strictly increasing.
fn schedule(doc: Doc, v: &Node) -> Result<Vec<(u32, f64)>, ScenarioError> {
    const SHAPE: &str =
        "a list of `{from: ITERATION, learning_rate: RATE}`, e.g. `[{from: 200, learning_rate: 0.0003}]`";
    let Node::Seq { items, .. } = v else {
        return Err(doc.err(
            v.pos(),
            format!("`learning_rate_schedule` must be {SHAPE}, got {}", v.describe()),
        ));
    };
    let mut out: Vec<(u32, f64)> = Vec::new();
    for item in items {
        let e = doc.mapping(
            "learning_rate_schedule` entry",
            item,
            "`{from: 200, learning_rate: 0.0003}`",
        )?;
        doc.check_keys(e, &["from", "learning_rate"], "a `learning_rate_schedule` entry")?;
        let (Some((_, f)), Some((_, r))) = (get(e, "from"), get(e, "learning_rate")) else {
            return Err(doc.err(
                item.pos(),
                format!("a `learning_rate_schedule` entry needs both `from` and `learning_rate`: {SHAPE}"),
            ));
        };
        let from = doc.u32_at_least("from", f, 1)?;
        let rate = number(doc, "learning_rate", r, 0.0, true, f64::INFINITY)?;
        if let Some(&(prev, _)) = out.last() {
            if from <= prev {
                return Err(doc.err(
                    f.pos(),
                    format!("`learning_rate_schedule` entries must go up by `from`: {from} comes after {prev}"),
                ));
            }
        }
        out.push((from, rate));
    }
    Ok(out)
}

fn u32_key(doc: Doc, entries: &[(Node, Node)], key: &str, min: u32, slot: &mut u32) -> Result<(), ScenarioError> {
    if let Some((_, v)) = get(entries, key) {
        *slot = doc.u32_at_least(key, v, min)?;
    }
    Ok(())
}

/// Parses the `train:` mapping (called only when the key is present).
pub(crate) fn parse_train(doc: Doc, v: &Node, board: BoardConfig) -> Result<TrainSettings, ScenarioError> {
    let top = doc.mapping("train", v, "`train:` followed by indented keys")?;
    doc.check_keys(top, &TRAIN_KEYS, " in `train`")?;
    let mut t = TrainSettings::default();

    if let Some(e) = sub(doc, top, "network", &NETWORK_KEYS, "{blocks: 6, channels: 64}")? {
        parse_network(doc, e, &mut t.network)?;
    }
    if let Some(e) = sub(doc, top, "mcts", &MCTS_KEYS, "{simulations: 100, c_puct: 2.5}")? {
        parse_mcts(doc, e, &mut t.mcts)?;
    }
    if let Some(e) = sub(
        doc,
        top,
        "self_play",
        &SELF_PLAY_KEYS,
        "{games_per_iteration: 100, temperature_moves: 15}",
    )? {
        parse_self_play(doc, e, &mut t.self_play)?;
    }
    if let Some(e) = sub(
        doc,
        top,
        "optimizer",
        &OPTIMIZER_KEYS,
        "{steps_per_iteration: 1000, batch_size: 64, learning_rate: 0.001}",
    )? {
        parse_optimizer(doc, e, &mut t.optimizer)?;
    }
    if let Some(e) = sub(doc, top, "replay", &REPLAY_KEYS, "{capacity: 200000, min_size: 20000}")? {
        parse_replay(doc, e, &mut t.replay)?;
    }
    if let Some(e) = sub(
        doc,
        top,
        "eval",
        &EVAL_KEYS,
        "{every: 5, games: 200, opponent: {kind: minimax, depth: 8}}",
    )? {
        parse_eval(doc, e, &mut t.eval, board)?;
    }
    u32_key(doc, top, "iterations", 1, &mut t.iterations)?;
    if let Some((_, v)) = get(top, "device") {
        t.device = DEVICES[doc.choice("device", "device", v, &DEVICES)?].to_string();
    }
    if let Some((_, v)) = get(top, "out") {
        t.out = Some(PathBuf::from(doc.nonempty_string("out", v)?));
    }
    if let Some((_, v)) = get(top, "resume") {
        t.resume = doc.bool("resume", v)?;
    }
    if let Some(e) = sub(
        doc,
        top,
        "distributed",
        &DISTRIBUTED_KEYS,
        "{positions_per_iteration: 20000, max_lag: 3, games_per_batch: 32}",
    )? {
        let d = &mut t.distributed;
        u32_key(doc, e, "positions_per_iteration", 0, &mut d.positions_per_iteration)?;
        u32_key(doc, e, "max_lag", 0, &mut d.max_lag)?;
        u32_key(doc, e, "games_per_batch", 1, &mut d.games_per_batch)?;
        u32_key(doc, e, "max_backlog", 1, &mut d.max_backlog)?;
        u32_key(doc, e, "worker_threads", 0, &mut d.worker_threads)?;
    }
    Ok(t)
}

/// `train.network`.
fn parse_network(doc: Doc, e: &[(Node, Node)], n: &mut NetworkSettings) -> Result<(), ScenarioError> {
    u32_key(doc, e, "blocks", 0, &mut n.blocks)?;
    u32_key(doc, e, "channels", 1, &mut n.channels)?;
    u32_key(doc, e, "value_hidden", 1, &mut n.value_hidden)?;
    if let Some((_, v)) = get(e, "reply_head") {
        n.reply_head = doc.bool("reply_head", v)?;
    }
    for (key, val, max) in [
        ("blocks", n.blocks, 64),
        ("channels", n.channels, 1024),
        ("value_hidden", n.value_hidden, 4096),
    ] {
        if val > max {
            let (_, node) = get(e, key).expect("read above");
            return Err(doc.err(node.pos(), format!("`{key}` must be at most {max}, got {val}")));
        }
    }
    Ok(())
}

/// `train.mcts`.
fn parse_mcts(doc: Doc, e: &[(Node, Node)], m: &mut MctsSettings) -> Result<(), ScenarioError> {
    u32_key(doc, e, "simulations", 1, &mut m.simulations)?;
    if let Some((_, v)) = get(e, "c_puct") {
        m.c_puct = number(doc, "c_puct", v, 0.0, true, f64::INFINITY)? as f32;
    }
    if let Some((_, v)) = get(e, "dirichlet_alpha") {
        m.dirichlet_alpha = number(doc, "dirichlet_alpha", v, 0.0, true, f64::INFINITY)? as f32;
    }
    if let Some((_, v)) = get(e, "dirichlet_weight") {
        m.dirichlet_weight = number(doc, "dirichlet_weight", v, 0.0, false, 1.0)? as f32;
    }
    if let Some((_, v)) = get(e, "root_prior_temperature") {
        m.root_prior_temperature = number(doc, "root_prior_temperature", v, 0.0, true, f64::INFINITY)? as f32;
    }
    Ok(())
}

/// `train.self_play`.
fn parse_self_play(doc: Doc, e: &[(Node, Node)], sp: &mut SelfPlaySettings) -> Result<(), ScenarioError> {
    u32_key(doc, e, "games_per_iteration", 1, &mut sp.games_per_iteration)?;
    u32_key(doc, e, "temperature_moves", 0, &mut sp.temperature_moves)?;
    u32_key(doc, e, "workers", 0, &mut sp.workers)?;
    u32_key(doc, e, "concurrent_games", 0, &mut sp.concurrent_games)?;
    u32_key(doc, e, "cache_size", 0, &mut sp.cache_size)?;
    if let Some((_, v)) = get(e, "full_search_share") {
        sp.full_search_share = number(doc, "full_search_share", v, 0.0, true, 1.0)? as f32;
    }
    if let Some((_, v)) = get(e, "fast_simulations") {
        sp.fast_simulations = Some(doc.u32_at_least("fast_simulations", v, 1)?);
    }
    u32_key(doc, e, "random_opening_plies", 0, &mut sp.random_opening_plies)?;
    if let Some((_, v)) = get(e, "random_move_share") {
        sp.random_move_share = number(doc, "random_move_share", v, 0.0, false, 1.0)? as f32;
    }
    if let Some((_, v)) = get(e, "forced_playouts") {
        sp.forced_playouts = number(doc, "forced_playouts", v, 0.0, false, 100.0)? as f32;
    }
    u32_key(doc, e, "exact_value_nodes", 0, &mut sp.exact_value_nodes)?;
    u32_key(doc, e, "exact_policy_nodes", 0, &mut sp.exact_policy_nodes)?;
    if let Some((_, v)) = get(e, "gumbel") {
        sp.gumbel = doc.bool("gumbel", v)?;
    }
    if let Some((_, v)) =
        get(e, "exact_policy_nodes").filter(|_| sp.exact_policy_nodes > 0 && sp.exact_value_nodes == 0)
    {
        return Err(doc.err(
            v.pos(),
            "`exact_policy_nodes` scores positions that `exact_value_nodes` proved: set that too (e.g. 20000)"
                .to_string(),
        ));
    }
    if let Some((_, v)) = get(e, "q_weight") {
        sp.q_weight = number(doc, "q_weight", v, 0.0, false, 1.0)? as f32;
    }
    if let Some((_, v)) = get(e, "q_best_child") {
        sp.q_best_child = doc.bool("q_best_child", v)?;
    }
    Ok(())
}

/// `train.optimizer`.
fn parse_optimizer(doc: Doc, e: &[(Node, Node)], o: &mut OptimizerSettings) -> Result<(), ScenarioError> {
    u32_key(doc, e, "steps_per_iteration", 1, &mut o.steps_per_iteration)?;
    u32_key(doc, e, "batch_size", 2, &mut o.batch_size)?;
    u32_key(doc, e, "threads", 0, &mut o.threads)?;
    if let Some((_, v)) = get(e, "learning_rate") {
        o.learning_rate = number(doc, "learning_rate", v, 0.0, true, f64::INFINITY)?;
    }
    if let Some((_, v)) = get(e, "learning_rate_schedule") {
        o.learning_rate_schedule = schedule(doc, v)?;
    }
    if let Some((_, v)) = get(e, "weight_decay") {
        o.weight_decay = number(doc, "weight_decay", v, 0.0, false, f64::INFINITY)?;
    }
    if let Some((_, v)) = get(e, "reply_weight") {
        o.reply_weight = number(doc, "reply_weight", v, 0.0, false, f64::INFINITY)?;
    }
    if let Some((_, v)) = get(e, "ema") {
        // `number` takes a closed upper bound; 1 itself is refused here, so
        // every value from 1 up reads the same message.
        o.ema = number(doc, "ema", v, 0.0, false, f64::INFINITY)?;
        if o.ema >= 1.0 {
            return Err(doc.err(
                v.pos(),
                format!("`ema` must be at least 0 and below 1, got {}: 1 would never take the trained weights (0 turns it off)", o.ema),
            ));
        }
    }
    Ok(())
}

/// `train.replay`.
fn parse_replay(doc: Doc, e: &[(Node, Node)], r: &mut ReplaySettings) -> Result<(), ScenarioError> {
    u32_key(doc, e, "capacity", 1, &mut r.capacity)?;
    u32_key(doc, e, "min_size", 0, &mut r.min_size)?;
    u32_key(doc, e, "growing_window", 0, &mut r.growing_window)?;
    if let Some((_, v)) = get(e, "average_duplicates") {
        r.average_duplicates = doc.bool("average_duplicates", v)?;
    }
    if r.min_size > r.capacity {
        let (_, v) = get(e, "min_size")
            .or_else(|| get(e, "capacity"))
            .expect("one was given");
        return Err(doc.err(
            v.pos(),
            format!(
                "`replay.min_size` ({}) must not exceed `replay.capacity` ({}): training would never start",
                r.min_size, r.capacity
            ),
        ));
    }
    Ok(())
}

/// `train.eval`.
fn parse_eval(doc: Doc, e: &[(Node, Node)], ev: &mut EvalSettings, board: BoardConfig) -> Result<(), ScenarioError> {
    u32_key(doc, e, "every", 0, &mut ev.every)?;
    u32_key(doc, e, "games", 1, &mut ev.games)?;
    if let Some((_, v)) = get(e, "simulations") {
        ev.simulations = Some(doc.u32_at_least("simulations", v, 1)?);
    }
    if let Some((_, v)) = get(e, "opponent") {
        let p = parse_one_entry(doc, v, "`train.eval.opponent`", " in `train.eval.opponent`")?;
        if p.kind.runs_as() != RunsAs::Bot {
            return Err(doc.err(
                v.pos(),
                format!(
                    "`train.eval.opponent` must play without a person or a program (an in-process kind such as \
                     minimax, mcts, random, alphazero), got `{}`",
                    p.kind.as_str()
                ),
            ));
        }
        ev.opponent = p;
    }
    if let Some((_, v)) = get(e, "openings") {
        let o = doc.mapping("openings", v, "{plies: 2} or {file: openings.txt}")?;
        doc.check_keys(o, &OPENINGS_KEYS, " in `train.eval.openings`")?;
        ev.openings = match (get(o, "plies"), get(o, "file")) {
            (Some((_, p)), None) => OpeningSuite::Plies(doc.uint("plies", p, 0, 16)? as u32),
            (None, Some((_, f))) => OpeningSuite::File(PathBuf::from(doc.nonempty_string("file", f)?)),
            (Some(_), Some((k, _))) => {
                return Err(doc.err(
                    k.pos(),
                    "give either `plies` or `file` in `train.eval.openings`, not both",
                ))
            }
            (None, None) => OpeningSuite::Plies(2),
        };
    }
    if let Some((k, v)) = get(e, "accuracy") {
        ev.accuracy = Some(parse_accuracy(doc, k, v, board)?);
        if ev.every == 0 {
            // It runs on the evaluated iterations: with none it would
            // silently never measure.
            return Err(doc.err(
                k.pos(),
                "`train.eval.accuracy` is measured every `eval.every` iterations, so it needs `eval.every` of at least 1",
            ));
        }
    }
    Ok(())
}

/// `train.eval.accuracy`: refused on boards the labelled sets are not for.
fn parse_accuracy(doc: Doc, key: &Node, v: &Node, board: BoardConfig) -> Result<AccuracySettings, ScenarioError> {
    let e = doc.mapping("accuracy", v, "{set: begin+middle, positions: 300, simulations: 100}")?;
    doc.check_keys(e, &ACCURACY_KEYS, " in `train.eval.accuracy`")?;
    if board != sets::board() {
        return Err(doc.err(
            key.pos(),
            format!(
                "`train.eval.accuracy` needs the 6×7 board (four in a row) its labelled positions are on, \
                 but this scenario's board is {board}"
            ),
        ));
    }
    let mut a = AccuracySettings::default();
    if let Some((_, v)) = get(e, "set") {
        a.set = doc.nonempty_string("set", v)?;
        sets::parse_choice(&a.set).map_err(|why| doc.err(v.pos(), format!("`set`: {why}")))?;
    }
    u32_key(doc, e, "positions", 1, &mut a.positions)?;
    if let Some((_, v)) = get(e, "simulations") {
        a.simulations = Some(doc.u32_at_least("simulations", v, 1)?);
    }
    if let Some((_, v)) = get(e, "file") {
        a.file = PathBuf::from(doc.nonempty_string("file", v)?);
    }
    Ok(a)
}

#[cfg(test)]
mod tests;
