//! A trained model's description (`meta.json`): the board, the network's
//! shape, the iteration and every iteration's figures. Pure data with its
//! serde form; reading models is `players::model`, writing
//! checkpoints `train::checkpoint`.

use super::network::NetShape;
use crate::game::BoardConfig;
use serde::{Deserialize, Serialize};

pub const FORMAT: &str = "c4sim-alphazero";
pub const VERSION: u32 = 1;
pub const MODEL_FILE: &str = "model.safetensors";
pub const OPTIMIZER_FILE: &str = "optimizer.safetensors";
/// With `optimizer.ema`, the trained weights training resumes from;
/// `MODEL_FILE` then holds their moving average, the network that plays.
pub const TRAINED_FILE: &str = "trained.safetensors";
pub const REPLAY_FILE: &str = "replay.bin";
pub const META_FILE: &str = "meta.json";

/// The board a model was trained for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BoardMeta {
    pub rows: usize,
    pub cols: usize,
    pub win_length: usize,
}

impl From<BoardConfig> for BoardMeta {
    fn from(c: BoardConfig) -> Self {
        BoardMeta {
            rows: c.rows,
            cols: c.cols,
            win_length: c.win_length,
        }
    }
}

impl From<BoardMeta> for BoardConfig {
    fn from(b: BoardMeta) -> Self {
        BoardConfig {
            rows: b.rows,
            cols: b.cols,
            win_length: b.win_length,
        }
    }
}

impl std::fmt::Display for BoardMeta {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}×{} (win {})", self.rows, self.cols, self.win_length)
    }
}

/// `meta.json`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    pub format: String,
    pub version: u32,
    pub board: BoardMeta,
    pub network: NetShape,
    /// Iterations completed.
    pub iteration: u32,
    pub optimizer_step: u64,
    pub replay_samples: usize,
    pub seed: u64,
    /// The training settings of the run, as written in its scenario.
    pub settings: serde_json::Value,
    /// Every iteration's figures so far (the latest is the last).
    pub metrics: Vec<Row>,
}

/// One iteration's figures. Missing fields read as their defaults, so a
/// checkpoint written by an older c4sim still loads.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Row {
    pub iteration: u32,
    pub games: u64,
    pub positions: u64,
    pub buffer: u64,
    pub train_steps: u64,
    /// `None` while the buffer is below `replay.min_size` (no training yet).
    pub policy_loss: Option<f64>,
    pub value_loss: Option<f64>,
    /// The reply head's cross-entropy (`network.reply_head`) per sample with
    /// a reply target, unweighted; `None` without the head, before
    /// training, and in checkpoints older than it.
    pub reply_loss: Option<f64>,
    pub selfplay_games_per_s: f64,
    pub simulations_per_s: f64,
    pub cache_hit_rate: f64,
    pub mean_batch: f64,
    pub train_steps_per_s: f64,
    /// Score against the evaluation opponent (draws count half), when evaluated.
    pub eval_score: Option<f64>,
    pub eval_games: u32,
    pub eval_wins: u32,
    pub eval_draws: u32,
    pub eval_losses: u32,
    pub selfplay_s: f64,
    pub train_s: f64,
    pub eval_s: f64,
    /// `eval.accuracy`'s positions (0: not measured this iteration). The
    /// rates are W/D/L mistakes against perfect play, with their binomial
    /// standard errors, of the network alone (`raw`, 1 simulation) and of
    /// its search (`mcts`).
    pub acc_positions: u32,
    pub acc_raw_mistakes: Option<f64>,
    pub acc_raw_se: Option<f64>,
    pub acc_mcts_mistakes: Option<f64>,
    pub acc_mcts_se: Option<f64>,
    pub acc_s: f64,
    /// Recorded positions whose value target is exact
    /// (`self_play.exact_value_nodes`).
    pub exact_values: u64,
    /// The iteration's learning rate (`optimizer.learning_rate_schedule`);
    /// `None` before training starts, and in checkpoints older than it.
    pub learning_rate: Option<f64>,
    /// A distributed trainer's intake (`--role trainer`; 0 in a
    /// single-process run): workers whose files it took this iteration,
    /// files taken, positions dropped as stale (`distributed.max_lag`),
    /// files set aside, the mean age in iterations of the networks that
    /// played the kept positions, and the seconds the workers spent on them.
    pub workers: u32,
    pub files: u64,
    pub stale: u64,
    pub rejected: u64,
    pub mean_lag: f64,
    pub worker_s: f64,
    /// Self-play positions before `replay.average_duplicates`, and the CPU
    /// seconds self-play used (this process's during self-play here, the
    /// workers' for a distributed trainer): positions per CPU-second
    /// compare single-process and distributed runs. In JSON, not the CSV.
    pub selfplay_positions: u64,
    pub selfplay_cpu_s: f64,
    /// CPU seconds this process used for the whole iteration (self-play,
    /// training, evaluation, accuracy; all threads; not the checkpoint's
    /// writing): the compute the iteration took, whatever else shared the
    /// machine, where the wall-clock seconds above grow with the load.
    /// 0 in checkpoints older than it.
    pub cpu_s: f64,
}
