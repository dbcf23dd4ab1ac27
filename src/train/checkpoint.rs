//! Writing checkpoints: everything a run needs to go on, written so that
//! a kill at any moment leaves the last complete checkpoint usable.
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

use crate::az::meta::{Meta, META_FILE, MODEL_FILE, OPTIMIZER_FILE};
pub use crate::players::model::{latest, list, read_meta};
use std::path::{Path, PathBuf};

/// Checkpoints kept in `out/checkpoints`.
const KEEP: usize = 2;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::az::meta::{FORMAT, VERSION};
    use crate::az::network::NetShape;
    use crate::game::BoardConfig;
    use crate::players::model::{read_meta, resolve_model};

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
                reply_head: false,
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
        assert!(resolve_model(&out.join("nope"))
            .unwrap_err()
            .to_string()
            .contains("does not exist"));
    }

    #[test]
    fn rewriting_an_iteration_replaces_it() {
        let dir = tempfile::tempdir().unwrap();
        write(dir.path(), 1);
        let p = write(dir.path(), 1);
        assert_eq!(list(dir.path()).len(), 1);
        assert!(p.join(META_FILE).is_file());
    }
}
