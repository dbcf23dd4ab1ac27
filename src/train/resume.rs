//! What a training run starts from: its newest checkpoint (the network, the
//! optimizer's moments, the replay buffer and the metrics so far, after
//! checking the board and the network's shape), or a new network from the
//! run's seed. With `optimizer.ema` a checkpoint holds two networks: the
//! trained weights (`trained.safetensors`), which training continues from,
//! and their moving average (`model.safetensors`), which plays.

use super::checkpoint;
use super::error::TrainError;
use super::metrics::Row;
use super::replay::Replay;
use crate::az::meta::{BoardMeta, MODEL_FILE, OPTIMIZER_FILE, REPLAY_FILE, TRAINED_FILE};
use crate::az::network::{NetShape, PolicyValueNet};
use crate::az::optimizer::AdamW;
use crate::game::BoardConfig;
use crate::scenario::train::TrainSettings;
use crate::util::seed;
use std::path::Path;

/// What a run trains and carries from one iteration to the next.
pub(super) struct Trained {
    /// The network the optimizer steps.
    pub net: PolicyValueNet,
    /// With `optimizer.ema`, the moving average of `net` that plays
    /// (self-play, evaluation, the saved model); `None` when `net` plays.
    pub played: Option<PolicyValueNet>,
    pub opt: AdamW,
    pub replay: Replay,
    /// The metrics of the iterations done.
    pub history: Vec<Row>,
    /// Iterations done.
    pub iteration: u32,
}

/// The played network for a run with `ema` > 0: the saved average where the
/// checkpoint has one, else a copy of the trained network (the average
/// starts there).
fn played_net(
    ema: f64,
    saved: Option<PolicyValueNet>,
    net: &PolicyValueNet,
) -> candle_core::Result<Option<PolicyValueNet>> {
    if ema <= 0.0 {
        return Ok(None);
    }
    match saved {
        Some(p) => Ok(Some(p)),
        None => net.duplicate(&net.device).map(Some),
    }
}

/// What growing `from` into `to` ([`NetShape::grows_from`]) changes, said.
fn growth(from: NetShape, to: NetShape) -> String {
    let mut said = Vec::new();
    if (from.blocks, from.channels) != (to.blocks, to.channels) {
        said.push(format!(
            "growing the network from {} × {} to {} × {} (blocks × channels); it starts computing what the saved one did",
            from.blocks, from.channels, to.blocks, to.channels
        ));
    }
    match (from.reply_head, to.reply_head) {
        (false, true) => said.push("adding a reply head (network.reply_head), from fresh weights".to_string()),
        (true, false) => said.push("dropping the checkpoint's reply head (network.reply_head is off)".to_string()),
        _ => {}
    }
    said.join("; ")
}

/// Resumes from checkpoint `dir` of run `out`: checks that it holds this
/// board and this network (or one it grows from), then loads the weights,
/// the optimizer's moments and the replay buffer.
pub(super) fn resume_from(
    dir: &Path,
    out: &Path,
    cfg: BoardConfig,
    shape: NetShape,
    settings: &TrainSettings,
    device: &candle_core::Device,
) -> Result<Trained, TrainError> {
    let capacity = settings.replay.capacity as usize;
    let meta = checkpoint::read_meta(dir)?;
    let board = BoardMeta::from(cfg);
    if meta.board != board {
        return Err(TrainError::OtherBoard {
            out: out.to_path_buf(),
            theirs: meta.board,
            ours: board,
        });
    }
    let grow = shape.grows_from(&meta.network);
    if grow {
        tracing::warn!("{}", growth(meta.network, shape));
    }
    if meta.network != shape && !grow {
        return Err(TrainError::OtherNetwork {
            out: out.to_path_buf(),
            theirs: meta.network,
            ours: shape,
        });
    }
    let load = |file: &str| {
        if grow {
            PolicyValueNet::load_grown(shape, meta.network, &dir.join(file), device)
        } else {
            PolicyValueNet::load(shape, &dir.join(file), device)
        }
    };
    // A checkpoint of a run with `ema` trains on from its trained weights;
    // its model, their average, is read only if this run averages too.
    let has_trained = dir.join(TRAINED_FILE).exists();
    let net = load(if has_trained { TRAINED_FILE } else { MODEL_FILE })?;
    let saved_average = if has_trained && settings.optimizer.ema > 0.0 {
        Some(load(MODEL_FILE)?)
    } else {
        None
    };
    let played = played_net(settings.optimizer.ema, saved_average, &net)?;
    let mut opt = AdamW::new(&net, settings.optimizer.learning_rate, settings.optimizer.weight_decay)?;
    if grow {
        opt.load_grown(&net, meta.network, &dir.join(OPTIMIZER_FILE), meta.optimizer_step)
    } else {
        opt.load(&net, &dir.join(OPTIMIZER_FILE), meta.optimizer_step)
    }?;
    let replay = Replay::load(&dir.join(REPLAY_FILE), capacity).map_err(|source| TrainError::File {
        path: dir.join(REPLAY_FILE),
        source,
    })?;
    Ok(Trained {
        net,
        played,
        opt,
        replay,
        history: meta.metrics,
        iteration: meta.iteration,
    })
}

/// A run from nothing: a new network from the run's seed (clearing the
/// checkpoints of an earlier run when `resume: false`).
pub(super) fn start_fresh(
    out: &Path,
    shape: NetShape,
    settings: &TrainSettings,
    device: &candle_core::Device,
    run_seed: u64,
) -> Result<Trained, TrainError> {
    let capacity = settings.replay.capacity as usize;
    if out.join("checkpoints").exists() && !settings.resume {
        tracing::warn!("resume: false: starting over in {}", out.display());
        std::fs::remove_dir_all(out.join("checkpoints")).map_err(|source| TrainError::Clear {
            path: out.to_path_buf(),
            source,
        })?;
    }
    let net = PolicyValueNet::new(shape, seed::derive(run_seed, 0, seed::NET_INIT), device)?;
    let opt = AdamW::new(&net, settings.optimizer.learning_rate, settings.optimizer.weight_decay)?;
    let played = played_net(settings.optimizer.ema, None, &net)?;
    Ok(Trained {
        net,
        played,
        opt,
        replay: Replay::new(capacity),
        history: Vec::new(),
        iteration: 0,
    })
}
