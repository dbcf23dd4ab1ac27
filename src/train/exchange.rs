//! The shared volume between a distributed trainer and its self-play
//! workers: where each file lives and how it is written, so that files are
//! the whole protocol (docs/distributed.md). Every write is atomic (a
//! temporary name, then a rename), so a reader sees a whole file or none,
//! and a process killed at any moment leaves nothing half-written behind.
//!
//! ```text
//! OUT/run.json                          the run's id, written once by the trainer
//! OUT/networks/net-000012/              each network the trainer trained (model + meta.json)
//! OUT/networks/LATEST                   the newest one's name
//! OUT/selfplay/WORKER/batch-000042.c4games   one worker's batches (crate::train::gamefile)
//! OUT/selfplay/WORKER/.lock             held while the worker runs (two workers, one name: refused)
//! OUT/intake.json                       per worker, the highest batch the trainer took (workers pace themselves)
//! OUT/DONE                              the trainer reached its last iteration: workers stop
//! ```

use crate::az::meta::{BoardMeta, Meta, META_FILE, MODEL_FILE};
use crate::az::network::PolicyValueNet;
use crate::players::model;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What goes wrong on the shared volume: a file that cannot be read or
/// written, a run of another board, a live process in the way of
/// `--fresh`, a lock someone holds. The texts are those people read.
#[derive(Debug, thiserror::Error)]
pub enum ExchangeError {
    #[error("cannot read {}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("cannot write {}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
    #[error("cannot create {}: {source}", path.display())]
    Create { path: PathBuf, source: std::io::Error },
    #[error("cannot open {}: {source}", path.display())]
    Open { path: PathBuf, source: std::io::Error },
    #[error("cannot clear {}: {source}", path.display())]
    Clear { path: PathBuf, source: std::io::Error },
    #[error("cannot remove {}: {source}", path.display())]
    Remove { path: PathBuf, source: std::io::Error },
    #[error("{} is not a c4sim run file: {source}", path.display())]
    NotARunFile { path: PathBuf, source: serde_json::Error },
    #[error("cannot write {}: {source}", path.display())]
    Encode { path: PathBuf, source: serde_json::Error },
    #[error("{} is a run on a {theirs} board, this scenario's is {ours}: use another `out` or `--fresh`", out.display())]
    OtherBoard {
        out: PathBuf,
        theirs: BoardMeta,
        ours: BoardMeta,
    },
    #[error("no network published yet ({}: {source})", path.display())]
    NothingPublished { path: PathBuf, source: std::io::Error },
    #[error("{} names `{name}`, not a network", path.display())]
    NotANetwork { path: PathBuf, name: String },
    #[error(transparent)]
    Model(#[from] model::ModelError),
    #[error("a trainer is running on {}: stop it before --fresh", out.display())]
    TrainerRunning { out: PathBuf },
    #[error("worker `{worker}` is running on {}: stop the workers before --fresh", out.display())]
    WorkerRunning { worker: String, out: PathBuf },
    /// The lock is taken; `holder` is the pid its file names.
    #[error("held by process {holder}")]
    Held { holder: String },
}

/// Published networks kept (older ones are removed; a worker still loading
/// one that goes simply retries with the newest).
const KEEP_NETWORKS: usize = 8;
const BATCH_EXT: &str = "c4games";

/// `run.json`: what makes this run's files its own.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunInfo {
    pub id: String,
    pub seed: u64,
    pub board: BoardMeta,
}

/// The paths of one run's shared directory.
#[derive(Clone, Debug)]
pub struct Layout {
    pub out: PathBuf,
}

impl Layout {
    pub fn new(out: &Path) -> Self {
        Layout { out: out.to_path_buf() }
    }
    pub fn run_file(&self) -> PathBuf {
        self.out.join("run.json")
    }
    pub fn networks(&self) -> PathBuf {
        self.out.join("networks")
    }
    pub fn selfplay(&self) -> PathBuf {
        self.out.join("selfplay")
    }
    pub fn worker_dir(&self, worker: &str) -> PathBuf {
        self.selfplay().join(worker)
    }
    pub fn done_file(&self) -> PathBuf {
        self.out.join("DONE")
    }
    /// Held by the live trainer (see [`lock`]): one trainer per run.
    pub fn trainer_lock(&self) -> PathBuf {
        self.out.join(".trainer.lock")
    }
    /// Held by a live worker (see [`lock`]).
    pub fn worker_lock(&self, worker: &str) -> PathBuf {
        self.worker_dir(worker).join(".lock")
    }

    /// The trainer reached `iterations`: read back by [`done_at`].
    pub fn write_done(&self, iterations: u32) -> std::io::Result<()> {
        crate::util::write_atomic(&self.done_file(), format!("{iterations}\n").as_bytes())
    }
    pub fn intake_file(&self) -> PathBuf {
        self.out.join("intake.json")
    }

    /// Tells the workers how far the trainer got (see [`Ledger::highest`]).
    pub fn write_intake(&self, ledger: &Ledger) -> std::io::Result<()> {
        let highest: BTreeMap<&str, u64> = ledger.taken.keys().map(|w| (w.as_str(), ledger.highest(w))).collect();
        let text = serde_json::to_vec(&serde_json::json!({ "taken": highest })).map_err(std::io::Error::other)?;
        crate::util::write_atomic(&self.intake_file(), &text)
    }

    /// The highest batch of `worker` the trainer took, as it last said (0: none yet).
    pub fn taken_of(&self, worker: &str) -> u64 {
        std::fs::read(self.intake_file())
            .ok()
            .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
            .and_then(|v| v["taken"][worker].as_u64())
            .unwrap_or(0)
    }

    pub fn batch_file(&self, worker: &str, batch: u64) -> PathBuf {
        self.worker_dir(worker).join(batch_name(batch))
    }

    pub fn read_run(&self) -> Result<RunInfo, ExchangeError> {
        let path = self.run_file();
        let text = std::fs::read_to_string(&path).map_err(|source| ExchangeError::Read {
            path: path.clone(),
            source,
        })?;
        serde_json::from_str(&text).map_err(|source| ExchangeError::NotARunFile { path, source })
    }

    /// The run's id: read, or made and written once (by the trainer).
    pub fn ensure_run(&self, seed: u64, board: BoardMeta) -> Result<RunInfo, ExchangeError> {
        if self.run_file().is_file() {
            let run = self.read_run()?;
            if run.board != board {
                return Err(ExchangeError::OtherBoard {
                    out: self.out.clone(),
                    theirs: run.board,
                    ours: board,
                });
            }
            return Ok(run);
        }
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let run = RunInfo {
            id: format!(
                "{:016x}",
                crate::util::seed::derive(seed, nanos as u64, std::process::id() as u64)
            ),
            seed,
            board,
        };
        let path = self.run_file();
        let text = serde_json::to_string_pretty(&run).map_err(|source| ExchangeError::Encode {
            path: path.clone(),
            source,
        })?;
        crate::util::write_atomic(&path, text.as_bytes()).map_err(|source| ExchangeError::Write { path, source })?;
        Ok(run)
    }

    /// Publishes the network of `meta.iteration` as `networks/net-NNNNNN`
    /// and points `LATEST` at it. Publishing the same iteration again (a
    /// trainer that restarted) replaces nothing.
    pub fn publish(&self, net: &PolicyValueNet, meta: &Meta) -> std::io::Result<PathBuf> {
        let dir = self.networks();
        std::fs::create_dir_all(&dir)?;
        let name = net_name(meta.iteration);
        let target = dir.join(&name);
        // The same network again (a restarted trainer) is left as it is; a
        // different one at the same iteration (a network grown on resume)
        // replaces it, or workers would play on with the old shape.
        let same = model::read_meta(&target)
            .is_ok_and(|m| m.network == meta.network && m.optimizer_step == meta.optimizer_step);
        if !same {
            let tmp = dir.join(format!(".tmp-{name}-{}", std::process::id()));
            if tmp.exists() {
                std::fs::remove_dir_all(&tmp)?;
            }
            std::fs::create_dir(&tmp)?;
            net.save(&tmp.join(MODEL_FILE)).map_err(std::io::Error::other)?;
            let text = serde_json::to_vec_pretty(meta).map_err(std::io::Error::other)?;
            crate::util::write_atomic(&tmp.join(META_FILE), &text)?;
            if target.exists() {
                std::fs::remove_dir_all(&target)?;
            }
            std::fs::rename(&tmp, &target)?;
        }
        crate::util::write_atomic(&dir.join("LATEST"), format!("{name}\n").as_bytes())?;
        self.prune_networks();
        Ok(target)
    }

    fn prune_networks(&self) {
        let Ok(rd) = std::fs::read_dir(self.networks()) else {
            return;
        };
        let mut nets: Vec<(u32, PathBuf)> = Vec::new();
        for e in rd.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if let Some(it) = name.strip_prefix("net-").and_then(|s| s.parse().ok()) {
                nets.push((it, e.path()));
            } else if name.starts_with(".tmp-") && !name.ends_with(&format!("-{}", std::process::id())) {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
        nets.sort();
        if nets.len() > KEEP_NETWORKS {
            for (_, p) in &nets[..nets.len() - KEEP_NETWORKS] {
                let _ = std::fs::remove_dir_all(p);
            }
        }
    }

    /// The newest published network: its iteration and directory.
    pub fn latest_network(&self) -> Result<(u32, PathBuf), ExchangeError> {
        let path = self.networks().join("LATEST");
        let text = std::fs::read_to_string(&path).map_err(|source| ExchangeError::NothingPublished {
            path: path.clone(),
            source,
        })?;
        let name = text.trim();
        let it = name
            .strip_prefix("net-")
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| ExchangeError::NotANetwork {
                path,
                name: name.to_string(),
            })?;
        Ok((it, self.networks().join(name)))
    }

    /// Loads the newest published network and its metadata.
    pub fn load_latest(&self) -> Result<(Meta, PolicyValueNet), ExchangeError> {
        let (_, dir) = self.latest_network()?;
        Ok(model::load_model(&dir, &candle_core::Device::Cpu)?)
    }

    /// Every finished batch file, as (worker, batch number, path), oldest
    /// first (by modification time, then worker and number), so a worker
    /// that joins late does not overtake the others' waiting files;
    /// temporary files, set-aside ones and anything else are not listed.
    pub fn finished_batches(&self) -> Vec<(String, u64, PathBuf)> {
        self.batches_where(|_, _| true)
    }

    /// [`Layout::finished_batches`] that `keep` accepts (by worker and
    /// number), so files already taken cost no `stat`.
    pub fn batches_where(&self, keep: impl Fn(&str, u64) -> bool) -> Vec<(String, u64, PathBuf)> {
        let mut out = Vec::new();
        let Ok(workers) = std::fs::read_dir(self.selfplay()) else {
            return Vec::new();
        };
        for w in workers.flatten() {
            let worker = w.file_name().to_string_lossy().into_owned();
            if !valid_worker_name(&worker) || !w.path().is_dir() {
                continue;
            }
            let Ok(files) = std::fs::read_dir(w.path()) else {
                continue;
            };
            for f in files.flatten() {
                if let Some(batch) = parse_batch_name(&f.file_name().to_string_lossy()).filter(|&b| keep(&worker, b)) {
                    let when = f.metadata().and_then(|m| m.modified()).ok();
                    out.push((when, worker.clone(), batch, f.path()));
                }
            }
        }
        out.sort_by(|a, b| (a.0, &a.1, a.2).cmp(&(b.0, &b.1, b.2)));
        out.into_iter().map(|(_, w, b, p)| (w, b, p)).collect()
    }

    /// The batch number a worker continues from: one past the highest it
    /// ever wrote (set-aside files included) or the trainer took (files
    /// someone cleaned away), so no number is used twice.
    pub fn next_batch(&self, worker: &str) -> u64 {
        let on_disk = std::fs::read_dir(self.worker_dir(worker))
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let name = name.strip_suffix(".rejected").unwrap_or(&name);
                parse_batch_name(name)
            })
            .max()
            .unwrap_or(0);
        on_disk.max(self.taken_of(worker)).saturating_add(1)
    }

    /// Removes the temporary files a killed worker of this name left (its
    /// folder is locked by the caller, so nobody is writing them).
    pub fn clear_leftovers(&self, worker: &str) {
        if let Ok(rd) = std::fs::read_dir(self.worker_dir(worker)) {
            for e in rd.flatten() {
                if e.file_name().to_string_lossy().ends_with(".tmp") {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
    }

    /// Sets a file the trainer cannot use aside, beside where it was, so the
    /// worker's numbering goes on and a person can look at it.
    pub fn set_aside(&self, path: &Path) -> std::io::Result<PathBuf> {
        let to = path.with_extension(format!("{BATCH_EXT}.rejected"));
        std::fs::rename(path, &to)?;
        Ok(to)
    }
}

/// `--fresh` for a training run: removes what c4sim wrote in its `out`
/// (checkpoints, published networks, workers' files, the run id, reports),
/// nothing else, so the run starts from nothing.
/// `holding_trainer_lock`: the caller is the trainer and holds the run's
/// lock (a lock held by anyone else means a trainer is running).
pub fn start_over(out: &Path, holding_trainer_lock: bool) -> Result<(), ExchangeError> {
    // Removing a live process's files would leave it writing into a run
    // that no longer exists: stop them first.
    let layout = Layout::new(out);
    if !holding_trainer_lock && locked(&layout.trainer_lock()) {
        return Err(ExchangeError::TrainerRunning { out: out.to_path_buf() });
    }
    if let Ok(rd) = std::fs::read_dir(layout.selfplay()) {
        for w in rd.flatten() {
            if locked(&layout.worker_lock(&w.file_name().to_string_lossy())) {
                return Err(ExchangeError::WorkerRunning {
                    worker: w.file_name().to_string_lossy().into_owned(),
                    out: out.to_path_buf(),
                });
            }
        }
    }
    for dir in ["checkpoints", "networks", "selfplay"] {
        let p = out.join(dir);
        if p.exists() {
            std::fs::remove_dir_all(&p).map_err(|source| ExchangeError::Clear {
                path: p.clone(),
                source,
            })?;
        }
    }
    for p in [
        layout.run_file(),
        layout.done_file(),
        layout.intake_file(),
        out.join("metrics.csv"),
        out.join("curves.svg"),
    ] {
        if p.exists() {
            std::fs::remove_file(&p).map_err(|source| ExchangeError::Remove {
                path: p.clone(),
                source,
            })?;
        }
    }
    Ok(())
}

/// An exclusive `flock` on `path` (created if missing), held until the
/// returned file is dropped or the process ends, however it ends. `Err`
/// says who holds it, as far as the file tells (the holder's pid).
pub fn lock(path: &Path) -> Result<std::fs::File, ExchangeError> {
    use std::io::{Read, Seek, Write};
    use std::os::unix::io::AsRawFd;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|source| ExchangeError::Create {
            path: dir.to_path_buf(),
            source,
        })?;
    }
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(path)
        .map_err(|source| ExchangeError::Open {
            path: path.to_path_buf(),
            source,
        })?;
    // SAFETY: flock on a file descriptor this function owns.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
        let mut holder = String::new();
        let _ = f.read_to_string(&mut holder);
        return Err(ExchangeError::Held {
            holder: holder.trim().to_string(),
        });
    }
    let _ = f.set_len(0);
    let _ = f.rewind();
    let _ = write!(f, "{}", std::process::id());
    Ok(f)
}

/// Whether a process holds the lock at `path` now.
fn locked(path: &Path) -> bool {
    use std::os::unix::io::AsRawFd;
    let Ok(f) = std::fs::File::open(path) else {
        return false;
    };
    // SAFETY: as in `lock`; a shared try-lock taken and dropped at once.
    let free = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_SH | libc::LOCK_NB) } == 0;
    !free
}

/// The iterations a finished trainer wrote in `DONE`; `None` while the run goes on.
pub fn done_at(layout: &Layout) -> Option<u32> {
    let text = std::fs::read_to_string(layout.done_file()).ok()?;
    // Older DONE files said "done: N iterations".
    text.split_whitespace().find_map(|w| w.parse().ok())
}

pub fn net_name(iteration: u32) -> String {
    format!("net-{iteration:06}")
}

pub fn batch_name(batch: u64) -> String {
    format!("batch-{batch:06}.{BATCH_EXT}")
}

/// `batch-000042.c4games` → 42; anything else (a `.tmp`, a `.rejected`) → `None`.
pub fn parse_batch_name(name: &str) -> Option<u64> {
    let digits = name.strip_prefix("batch-")?.strip_suffix(&format!(".{BATCH_EXT}"))?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// A worker's name is a folder name on every file system: letters, digits,
/// `-`, `_` and `.`, not starting with `.`, at most 64 characters.
pub fn valid_worker_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
}

/// What the trainer has taken, saved with each checkpoint so that a
/// restarted trainer takes every file exactly once: the batches whose
/// positions are in that checkpoint's replay buffer (or were dropped or set
/// aside), per worker, as ranges of batch numbers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Ledger {
    pub taken: BTreeMap<String, Vec<(u64, u64)>>,
    /// Totals over the run.
    pub files: u64,
    pub games: u64,
    pub positions: u64,
    pub stale: u64,
    pub rejected: u64,
}

impl Ledger {
    pub fn contains(&self, worker: &str, batch: u64) -> bool {
        self.taken
            .get(worker)
            .is_some_and(|r| r.iter().any(|&(a, b)| a <= batch && batch <= b))
    }

    /// Records a batch as taken (merging ranges, so the ledger stays small
    /// when workers write their batches in order).
    pub fn insert(&mut self, worker: &str, batch: u64) {
        let ranges = self.taken.entry(worker.to_string()).or_default();
        ranges.push((batch, batch));
        ranges.sort();
        let mut merged: Vec<(u64, u64)> = Vec::with_capacity(ranges.len());
        for &(a, b) in ranges.iter() {
            match merged.last_mut() {
                Some(last) if a <= last.1.saturating_add(1) => last.1 = last.1.max(b),
                _ => merged.push((a, b)),
            }
        }
        *ranges = merged;
    }

    /// The highest batch of `worker` taken (0: none).
    pub fn highest(&self, worker: &str) -> u64 {
        self.taken.get(worker).and_then(|r| r.last()).map_or(0, |r| r.1)
    }

    /// Batches taken, over all workers.
    pub fn count(&self) -> u64 {
        self.taken.values().flatten().map(|(a, b)| b - a + 1).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ledger_keeps_ranges_and_answers_membership() {
        let mut l = Ledger::default();
        for b in [1, 2, 3, 7, 5, 6, 9] {
            l.insert("w1", b);
        }
        l.insert("w2", 1);
        assert_eq!(l.taken["w1"], vec![(1, 3), (5, 7), (9, 9)]);
        assert!(l.contains("w1", 6) && !l.contains("w1", 4) && !l.contains("w3", 1));
        l.insert("w1", 4);
        l.insert("w1", 4);
        assert_eq!(l.taken["w1"], vec![(1, 7), (9, 9)]);
        assert_eq!(l.count(), 9);
    }

    #[test]
    fn only_finished_batch_files_are_listed() {
        let dir = tempfile::tempdir().unwrap();
        let lay = Layout::new(dir.path());
        for (w, f) in [
            ("w1", "batch-000001.c4games"),
            ("w1", "batch-000002.c4games.1234.tmp"),
            ("w1", "batch-000003.c4games.rejected"),
            ("w2", "batch-000001.c4games"),
            ("w2", "notes.txt"),
            (".hidden", "batch-000001.c4games"),
        ] {
            std::fs::create_dir_all(lay.worker_dir(w)).unwrap();
            std::fs::write(lay.worker_dir(w).join(f), b"x").unwrap();
        }
        let got: Vec<(String, u64)> = lay.finished_batches().into_iter().map(|(w, b, _)| (w, b)).collect();
        assert_eq!(got, vec![("w1".to_string(), 1), ("w2".to_string(), 1)]);
        // The worker goes on after everything it ever wrote, set-aside files
        // included, but not after a temporary file a kill left behind.
        assert_eq!(lay.next_batch("w1"), 4);
        std::fs::write(lay.worker_dir("w2").join("batch-000009.c4games.77.tmp"), b"x").unwrap();
        assert_eq!(lay.next_batch("w2"), 2);
        lay.clear_leftovers("w2");
        assert!(!lay.worker_dir("w2").join("batch-000009.c4games.77.tmp").exists());
        assert_eq!(lay.next_batch("w9"), 1);
    }

    #[test]
    fn fresh_waits_for_live_processes_then_clears_only_what_c4sim_wrote() {
        let dir = tempfile::tempdir().unwrap();
        let lay = Layout::new(dir.path());
        lay.ensure_run(
            1,
            BoardMeta {
                rows: 4,
                cols: 5,
                win_length: 3,
            },
        )
        .unwrap();
        std::fs::write(dir.path().join("notes.txt"), b"mine").unwrap();
        let held = lock(&lay.worker_lock("w1")).unwrap();
        assert!(lock(&lay.worker_lock("w1"))
            .unwrap_err()
            .to_string()
            .contains(&std::process::id().to_string()));
        let e = start_over(dir.path(), false).unwrap_err().to_string();
        assert!(e.contains("worker `w1` is running"), "{e}");
        drop(held);
        let trainer = lock(&lay.trainer_lock()).unwrap();
        assert!(start_over(dir.path(), false)
            .unwrap_err()
            .to_string()
            .contains("a trainer is running"));
        // The trainer itself, holding the lock, may start its run over.
        start_over(dir.path(), true).unwrap();
        drop(trainer);
        start_over(dir.path(), false).unwrap();
        assert!(!lay.run_file().exists() && !lay.selfplay().exists());
        assert!(dir.path().join("notes.txt").exists());
    }

    #[test]
    fn done_says_how_far_the_run_went() {
        let dir = tempfile::tempdir().unwrap();
        let lay = Layout::new(dir.path());
        assert_eq!(done_at(&lay), None);
        lay.write_done(12).unwrap();
        assert_eq!(done_at(&lay), Some(12));
        std::fs::write(lay.done_file(), "done: 4 iterations\n").unwrap();
        assert_eq!(done_at(&lay), Some(4));
    }

    #[test]
    fn worker_names_are_plain_folder_names() {
        for ok in ["w1", "node-3.cpu_2", "a"] {
            assert!(valid_worker_name(ok), "{ok}");
        }
        for bad in ["", ".", "..", "a/b", "w 1", ".lock", &"x".repeat(65)] {
            assert!(!valid_worker_name(bad), "{bad}");
        }
        assert_eq!(parse_batch_name("batch-000042.c4games"), Some(42));
        assert_eq!(parse_batch_name("batch-.c4games"), None);
        assert_eq!(parse_batch_name("batch-1.c4games.tmp"), None);
    }
}
