//! Checkpoints: everything a run needs to go on, written so that a kill at
//! any moment leaves the last complete checkpoint usable.
//!
//! Layout of a training output directory:
//! ```text
//! out/checkpoints/iter-000012/model.safetensors      network weights (and batch-norm statistics)
//!                            /optimizer.safetensors  AdamW moments
//!                            /replay.bin             the replay buffer
//!                            /meta.json              board, network shape, iteration, settings, metrics history
//! out/metrics.csv, out/curves.svg                    rewritten from meta.json after each iteration
//! ```
//! A checkpoint is written into a hidden temporary directory beside the
//! others, every file synced, and then renamed into place in one step; the
//! latest checkpoint is the highest-numbered complete directory. The two
//! newest are kept. Setting `C4SIM_FAULT=checkpoint-before-rename` kills
//! the process between writing and renaming (for the crash test).

use super::network::NetShape;
use crate::game::BoardConfig;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub const FORMAT: &str = "c4sim-alphazero";
pub const VERSION: u32 = 1;
/// Checkpoints kept in `out/checkpoints`.
const KEEP: usize = 2;

pub const MODEL_FILE: &str = "model.safetensors";
pub const OPTIMIZER_FILE: &str = "optimizer.safetensors";
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

/// Kills the process when the fault named `point` is requested through
/// `C4SIM_FAULT` (a test hook: a SIGKILL there is what a crash or a
/// Ctrl-C at the worst moment looks like to the file system).
fn fault(point: &str) {
    if std::env::var("C4SIM_FAULT").is_ok_and(|v| v == point) {
        eprintln!("C4SIM_FAULT: killing the process at {point}");
        // SAFETY: plain libc calls with valid arguments.
        unsafe {
            libc::kill(libc::getpid(), libc::SIGKILL);
        }
    }
}

fn sync_file(path: &Path) -> std::io::Result<()> {
    std::fs::File::open(path)?.sync_all()
}

fn sync_dir(path: &Path) {
    // Directory fsync is not supported everywhere; it only narrows the window.
    if let Ok(d) = std::fs::File::open(path) {
        let _ = d.sync_all();
    }
}

/// The files of one checkpoint, written by the caller into `dir`.
pub struct Writer {
    pub dir: PathBuf,
    target: PathBuf,
    parent: PathBuf,
}

/// Starts a checkpoint for `iteration` under `out`: returns the temporary
/// directory to write the files into.
pub fn begin(out: &Path, iteration: u32) -> std::io::Result<Writer> {
    let parent = out.join("checkpoints");
    std::fs::create_dir_all(&parent)?;
    let name = format!("iter-{iteration:06}");
    let dir = parent.join(format!(".tmp-{name}-{}", std::process::id()));
    if dir.exists() {
        std::fs::remove_dir_all(&dir)?;
    }
    std::fs::create_dir(&dir)?;
    Ok(Writer {
        dir,
        target: parent.join(name),
        parent,
    })
}

impl Writer {
    /// Syncs the files, writes `meta.json` last, renames the directory into
    /// place and prunes old checkpoints. Returns the final directory.
    pub fn commit(self, meta: &Meta) -> std::io::Result<PathBuf> {
        for f in [MODEL_FILE, OPTIMIZER_FILE] {
            sync_file(&self.dir.join(f))?;
        }
        let text = serde_json::to_string_pretty(meta).map_err(std::io::Error::other)?;
        let meta_path = self.dir.join(META_FILE);
        {
            let mut f = std::fs::File::create(&meta_path)?;
            std::io::Write::write_all(&mut f, text.as_bytes())?;
            f.sync_all()?;
        }
        sync_dir(&self.dir);
        fault("checkpoint-before-rename");
        if self.target.exists() {
            // The same iteration again (a run that started over): the
            // previous checkpoint still holds the run until the rename.
            std::fs::remove_dir_all(&self.target)?;
        }
        std::fs::rename(&self.dir, &self.target)?;
        sync_dir(&self.parent);
        prune(&self.parent);
        Ok(self.target)
    }
}

/// Complete checkpoints under `out/checkpoints`, oldest first.
pub fn list(out: &Path) -> Vec<(u32, PathBuf)> {
    let mut v = Vec::new();
    let Ok(rd) = std::fs::read_dir(out.join("checkpoints")) else {
        return v;
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if let Some(n) = name.strip_prefix("iter-").and_then(|s| s.parse::<u32>().ok()) {
            if e.path().join(META_FILE).is_file() {
                v.push((n, e.path()));
            }
        }
    }
    v.sort();
    v
}

/// Keeps the newest [`KEEP`] checkpoints and removes stale temporary
/// directories left by killed runs.
fn prune(parent: &Path) {
    if let Ok(rd) = std::fs::read_dir(parent) {
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            let ours = format!("-{}", std::process::id());
            if name.starts_with(".tmp-") && !name.ends_with(&ours) {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
    let out = parent.parent().unwrap_or(parent);
    let all = list(out);
    if all.len() > KEEP {
        for (_, p) in &all[..all.len() - KEEP] {
            let _ = std::fs::remove_dir_all(p);
        }
    }
}

/// The newest complete checkpoint in a training output directory.
pub fn latest(out: &Path) -> Option<PathBuf> {
    list(out).pop().map(|(_, p)| p)
}

pub fn read_meta(dir: &Path) -> Result<Meta, String> {
    let path = dir.join(META_FILE);
    let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let meta: Meta =
        serde_json::from_str(&text).map_err(|e| format!("{} is not a c4sim checkpoint: {e}", path.display()))?;
    if meta.format != FORMAT || meta.version > VERSION {
        return Err(format!(
            "{} is format `{}` version {}; this c4sim reads `{FORMAT}` up to version {VERSION}",
            path.display(),
            meta.format,
            meta.version
        ));
    }
    Ok(meta)
}

/// Loads the network a `model:` path names (see [`resolve_model`]) onto
/// `device`, with its metadata.
pub fn load_model(model: &Path, device: &candle_core::Device) -> Result<(Meta, super::network::Net), String> {
    let dir = resolve_model(model)?;
    let meta = read_meta(&dir)?;
    let file = dir.join(MODEL_FILE);
    let net = super::network::Net::load(meta.network, &file, device)
        .map_err(|e| format!("cannot load {}: {e}", file.display()))?;
    Ok((meta, net))
}

/// Resolves a `model:` path: a checkpoint directory (with `meta.json`), a
/// training output directory (its latest checkpoint), or a file inside a
/// checkpoint directory (`model.safetensors`).
pub fn resolve_model(path: &Path) -> Result<PathBuf, String> {
    if path.join(META_FILE).is_file() {
        return Ok(path.to_path_buf());
    }
    if path.is_file() {
        if let Some(dir) = path.parent().filter(|d| d.join(META_FILE).is_file()) {
            return Ok(dir.to_path_buf());
        }
    }
    if path.join("checkpoints").is_dir() {
        return latest(path).ok_or_else(|| format!("{} has no complete checkpoint yet", path.display()));
    }
    if !path.exists() {
        return Err(format!(
            "model `{}` does not exist (expected a training `out` directory or a checkpoint directory)",
            path.display()
        ));
    }
    Err(format!(
        "`{}` is not a c4sim model: expected a training `out` directory (with checkpoints/), \
         a checkpoint directory (with {META_FILE}), or its {MODEL_FILE}",
        path.display()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(iteration: u32) -> Meta {
        Meta {
            format: FORMAT.into(),
            version: VERSION,
            board: BoardConfig::default().into(),
            network: NetShape {
                rows: 6,
                cols: 7,
                blocks: 1,
                channels: 8,
                value_hidden: 8,
            },
            iteration,
            optimizer_step: 0,
            replay_samples: 0,
            seed: 0,
            settings: serde_json::json!({}),
            metrics: Vec::new(),
        }
    }

    fn write(out: &Path, it: u32) -> PathBuf {
        let w = begin(out, it).unwrap();
        for f in [MODEL_FILE, OPTIMIZER_FILE] {
            std::fs::write(w.dir.join(f), b"x").unwrap();
        }
        w.commit(&meta(it)).unwrap()
    }

    #[test]
    fn latest_is_the_newest_complete_one_and_old_ones_go() {
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path();
        assert!(latest(out).is_none());
        for it in 1..=4 {
            write(out, it);
        }
        assert_eq!(list(out).iter().map(|x| x.0).collect::<Vec<_>>(), vec![3, 4]);
        // A half-written checkpoint (no rename yet) is ignored.
        let w = begin(out, 5).unwrap();
        std::fs::write(w.dir.join(MODEL_FILE), b"x").unwrap();
        let l = latest(out).unwrap();
        assert!(l.ends_with("iter-000004"));
        assert_eq!(read_meta(&l).unwrap().iteration, 4);
        assert_eq!(resolve_model(out).unwrap(), l);
        assert_eq!(resolve_model(&l).unwrap(), l);
        assert_eq!(resolve_model(&l.join(MODEL_FILE)).unwrap(), l);
        assert!(resolve_model(&out.join("nope")).unwrap_err().contains("does not exist"));
    }

    #[test]
    fn rewriting_an_iteration_replaces_it() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), 1);
        let p = write(dir.path(), 1);
        assert_eq!(list(dir.path()).len(), 1);
        assert!(p.join(META_FILE).is_file());
    }

    #[test]
    fn foreign_meta_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(META_FILE), "{\"format\": 3}").unwrap();
        assert!(read_meta(dir.path()).unwrap_err().contains("not a c4sim checkpoint"));
    }
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
}
