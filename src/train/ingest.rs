//! The distributed trainer's intake: finished batch files from the workers'
//! folders, each taken exactly once, one at a time, until an iteration's
//! worth of fresh positions has arrived (docs/distributed.md).
//!
//! Exactly once across kills: what was taken is the [`Ledger`], saved in
//! each checkpoint beside the replay buffer that holds those positions. A
//! trainer killed between two checkpoints restarts from the last one and
//! takes again the files taken since, whose positions that checkpoint does
//! not hold. Memory stays bounded by the replay capacity plus one
//! iteration's positions however many files wait: files are read one by
//! one, only their names are listed ahead.

use super::exchange::{Layout, Ledger, RunInfo};
use super::gamefile::{Batch, BatchError};
use crate::az::encode::Sample;
use crate::az::meta::BoardMeta;
use crate::az::network::NetShape;
use std::collections::{BTreeSet, VecDeque};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// How long the trainer waits without a new file before it says so: soon
/// while no worker has written anything (a missing worker is worth
/// knowing), later once they have (pauses between batches are normal).
const QUIET_ALONE: Duration = Duration::from_secs(5);
const QUIET: Duration = Duration::from_secs(60);

/// What one iteration took in.
#[derive(Debug, Default)]
pub struct Intake {
    pub samples: Vec<Sample>,
    pub files: u64,
    pub games: u64,
    /// Positions dropped as played by a network older than `max_lag` iterations.
    pub stale: u64,
    pub rejected: u64,
    pub workers: BTreeSet<String>,
    /// Sum over kept positions of (trainer iteration − the position's network iteration).
    pub lag_sum: u64,
    pub simulations: u64,
    pub exact_values: u64,
    /// Seconds (wall, CPU) the workers spent on these files.
    pub worker_seconds: f64,
    pub worker_cpu_seconds: f64,
    /// Positions in the files, stale ones included.
    pub positions_played: u64,
    /// Wall seconds from the first look to the last file taken.
    pub seconds: f64,
}

impl Intake {
    pub fn mean_lag(&self) -> f64 {
        if self.samples.is_empty() {
            0.0
        } else {
            self.lag_sum as f64 / self.samples.len() as f64
        }
    }
}

/// The largest batch file read: a worker's batch of 32 games is about
/// 100 KB; anything near this is not one.
const MAX_FILE: u64 = 256 << 20;

/// Why the trainer sets a file aside (the `why` of a `file_rejected` event).
#[derive(Debug, thiserror::Error)]
pub enum Rejected {
    #[error("{0} bytes, not a batch of games")]
    TooBig(u64),
    #[error(transparent)]
    Damaged(#[from] BatchError),
    #[error("its header says worker `{worker}` batch {batch}, not the folder and name it is in")]
    Misplaced { worker: String, batch: u64 },
    #[error("played by network {theirs}, newer than this trainer's {ours} (another history of this directory)")]
    NewerNetwork { theirs: u32, ours: u32 },
    #[error("from another run ({theirs}, this run is {ours})")]
    OtherRun { theirs: String, ours: String },
    #[error("for a {theirs} board, this run's is {ours}")]
    OtherBoard { theirs: BoardMeta, ours: BoardMeta },
    #[error("played by a {}×{} network, this run's is {}×{}", theirs.blocks, theirs.channels, ours.blocks, ours.channels)]
    OtherNetwork { theirs: NetShape, ours: NetShape },
}

/// Why a file cannot be trained on, if it cannot: damage, another run,
/// another board or network shape, a network newer than the trainer's (a
/// history that is not this one), or a header that does not name the
/// folder and file it is in (a copied folder would be taken twice).
pub fn judge(b: &Batch, run: &RunInfo, at: (&str, u64), iteration: u32, shape: NetShape) -> Result<(), Rejected> {
    let h = &b.header;
    if (h.worker.as_str(), h.batch) != at {
        return Err(Rejected::Misplaced {
            worker: h.worker.clone(),
            batch: h.batch,
        });
    }
    if h.net_iteration > iteration {
        return Err(Rejected::NewerNetwork {
            theirs: h.net_iteration,
            ours: iteration,
        });
    }
    if h.run != run.id {
        return Err(Rejected::OtherRun {
            theirs: h.run.clone(),
            ours: run.id.clone(),
        });
    }
    if h.board != run.board {
        return Err(Rejected::OtherBoard {
            theirs: h.board,
            ours: run.board,
        });
    }
    // The reply head is never used in play: games of a network with or
    // without it are the same games (a run that turns it on at a resume
    // still takes the files played just before).
    if !h.network.plays_as(&shape) {
        return Err(Rejected::OtherNetwork {
            theirs: h.network,
            ours: shape,
        });
    }
    Ok(())
}

/// The trainer's side of the shared volume.
pub struct Ingest {
    pub layout: Layout,
    /// This run's id and board.
    pub run: RunInfo,
    pub shape: NetShape,
    pub ledger: Ledger,
    pub max_lag: u32,
    /// Fresh positions that make an iteration (0: count games instead).
    pub positions: u64,
    /// Games that make an iteration when `positions` is 0.
    pub games: u64,
    pub json: bool,
    /// Finished files seen and not yet taken, in the order they will be.
    queue: VecDeque<(String, u64, PathBuf)>,
    workers_seen: BTreeSet<String>,
    /// Batches taken when `intake.json` was last written.
    told: u64,
}

impl Ingest {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        layout: Layout,
        run: RunInfo,
        shape: NetShape,
        ledger: Ledger,
        max_lag: u32,
        positions: u64,
        games: u64,
        json: bool,
    ) -> Self {
        Ingest {
            layout,
            run,
            shape,
            ledger,
            max_lag,
            positions,
            games,
            json,
            queue: VecDeque::new(),
            workers_seen: BTreeSet::new(),
            told: u64::MAX,
        }
    }

    fn enough(&self, got: &Intake) -> bool {
        if self.positions > 0 {
            got.samples.len() as u64 >= self.positions
        } else {
            got.games >= self.games
        }
    }

    /// The next file not yet taken, listing the folders again when the
    /// list ran out; `None` when there is none now.
    fn next_file(&mut self) -> Option<(String, u64, PathBuf)> {
        if self.queue.is_empty() {
            let ledger = &self.ledger;
            self.queue = self.layout.batches_where(|w, b| !ledger.contains(w, b)).into();
        }
        self.queue.pop_front()
    }

    /// Takes files until an iteration's worth of positions played by
    /// networks at most `max_lag` iterations older than `iteration` (the
    /// trainer's newest) has arrived; waits, and says so, while none come.
    pub fn gather(&mut self, iteration: u32) -> Intake {
        let t0 = Instant::now();
        let mut got = Intake::default();
        let mut last_news = Instant::now();
        let mut said_at: Option<Instant> = None;
        while !self.enough(&got) {
            let Some((worker, batch, path)) = self.next_file() else {
                // Idle: workers waiting on their backlog learn they may go on.
                self.tell_workers();
                if last_news.elapsed() >= self.quiet() && said_at.map_or(true, |t| t.elapsed() >= QUIET) {
                    self.say_waiting(&got);
                    said_at = Some(Instant::now());
                }
                std::thread::sleep(Duration::from_millis(250));
                continue;
            };
            last_news = Instant::now();
            said_at = None;
            self.take(&worker, batch, &path, iteration, &mut got);
        }
        got.seconds = t0.elapsed().as_secs_f64();
        let l = &mut self.ledger;
        l.files += got.files;
        l.games += got.games;
        l.positions += got.samples.len() as u64;
        l.stale += got.stale;
        l.rejected += got.rejected;
        self.tell_workers();
        got
    }

    /// How long without a new file before the trainer says it waits.
    fn quiet(&self) -> Duration {
        if self.workers_seen.is_empty() {
            QUIET_ALONE
        } else {
            QUIET
        }
    }

    /// Writes `intake.json` when the ledger changed since it was last written.
    fn tell_workers(&mut self) {
        let taken = self.ledger.count();
        if taken == self.told {
            return;
        }
        match self.layout.write_intake(&self.ledger) {
            Ok(()) => self.told = taken,
            Err(e) => tracing::warn!("cannot write {}: {e}", self.layout.intake_file().display()),
        }
    }

    /// Reads one file into `got` (or sets it aside) and records it as taken.
    fn take(&mut self, worker: &str, batch: u64, path: &std::path::Path, iteration: u32, got: &mut Intake) {
        // A file that cannot be read now (a network file system's passing
        // error) is not taken: it stays for the next listing.
        let bytes = std::fs::metadata(path).and_then(|m| match m.len() {
            n if n > MAX_FILE => Ok(Err(Rejected::TooBig(n))),
            _ => std::fs::read(path).map(Ok),
        });
        let bytes = match bytes {
            Ok(b) => b,
            Err(e) => {
                tracing::warn!("{}: cannot be read now ({e}); trying again later", path.display());
                return;
            }
        };
        let read = bytes
            .and_then(|bytes| Batch::decode(&bytes).map_err(Rejected::from))
            .and_then(|b| judge(&b, &self.run, (worker, batch), iteration, self.shape).map(|()| b));
        self.workers_seen.insert(worker.to_string());
        match read {
            Ok(b) => {
                got.files += 1;
                got.workers.insert(worker.to_string());
                got.simulations += b.header.simulations;
                got.exact_values += b.header.exact_values;
                got.worker_seconds += b.header.seconds;
                got.worker_cpu_seconds += b.header.cpu_seconds;
                got.positions_played += b.header.positions;
                for g in b.games {
                    // A game counts toward an iteration by the positions it brings.
                    let mut kept = false;
                    for (s, net_it, _) in g.samples {
                        let lag = iteration.saturating_sub(net_it);
                        if lag > self.max_lag {
                            got.stale += 1;
                        } else {
                            got.lag_sum += u64::from(lag);
                            got.samples.push(s);
                            kept = true;
                        }
                    }
                    got.games += u64::from(kept);
                }
            }
            Err(why) => {
                got.rejected += 1;
                let aside = self.layout.set_aside(path).map_or_else(
                    |e| format!("(could not rename it: {e})"),
                    |p| format!("set aside as {}", p.display()),
                );
                let text = format!("{}: {why}; {aside}", path.display());
                tracing::warn!("{text}");
                super::progress::emit(
                    self.json,
                    &crate::events::Event::FileRejected {
                        file: path.to_path_buf(),
                        why: why.to_string(),
                    },
                    &format!("rejected {text}"),
                );
            }
        }
        self.ledger.insert(worker, batch);
    }

    fn say_waiting(&self, got: &Intake) {
        let seen: Vec<&str> = self.workers_seen.iter().map(String::as_str).collect();
        let text = format!(
            "waiting for self-play: no new game file in {} for {} s ({} of {} {} this iteration; workers seen: {})",
            self.layout.selfplay().display(),
            self.quiet().as_secs(),
            if self.positions > 0 {
                got.samples.len() as u64
            } else {
                got.games
            },
            if self.positions > 0 { self.positions } else { self.games },
            if self.positions > 0 { "positions" } else { "games" },
            if seen.is_empty() {
                "none".to_string()
            } else {
                seen.join(", ")
            }
        );
        super::progress::emit(
            self.json,
            &crate::events::Event::Waiting {
                dir: self.layout.selfplay(),
                workers_seen: seen.iter().map(|w| w.to_string()).collect(),
            },
            &text,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::super::gamefile::{BatchGame, BatchHeader};
    use super::*;
    use crate::az::meta::BoardMeta;
    use crate::game::MAX_SIDE;

    fn shape() -> NetShape {
        NetShape {
            rows: 4,
            cols: 5,
            blocks: 1,
            channels: 8,
            value_hidden: 8,
            reply_head: false,
        }
    }

    fn board() -> BoardMeta {
        BoardMeta {
            rows: 4,
            cols: 5,
            win_length: 3,
        }
    }

    fn batch(run: &str, worker: &str, n: u64, net_it: u32, positions: usize) -> Batch {
        let s = Sample {
            mine: [1, 0, 0, 0],
            theirs: [2, 0, 0, 0],
            policy: [0.2; MAX_SIDE],
            value: 1.0,
            reply: [0.0; MAX_SIDE],
        };
        Batch {
            header: BatchHeader {
                run: run.into(),
                worker: worker.into(),
                batch: n,
                seed: n,
                board: board(),
                network: shape(),
                net_iteration: net_it,
                games: 1,
                positions: positions as u64,
                simulations: 10,
                exact_values: 0,
                seconds: 0.1,
                cpu_seconds: 0.1,
            },
            games: vec![BatchGame {
                index: 0,
                moves: vec![1, 2],
                winner: Some(0),
                samples: vec![(s, net_it, 0); positions],
            }],
        }
    }

    /// A file fits whether or not the network that played it had a reply
    /// head (play never reads it); another tower does not.
    #[test]
    fn the_reply_head_does_not_change_which_files_fit() {
        let dir = tempfile::tempdir().unwrap();
        let run = Layout::new(dir.path()).ensure_run(1, board()).unwrap();
        let with_head = NetShape {
            reply_head: true,
            ..shape()
        };
        let b = batch(&run.id, "a", 1, 2, 3);
        assert!(judge(&b, &run, ("a", 1), 2, shape()).is_ok());
        assert!(judge(&b, &run, ("a", 1), 2, with_head).is_ok());
        let mut headed = b.clone();
        headed.header.network = with_head;
        assert!(judge(&headed, &run, ("a", 1), 2, shape()).is_ok());
        let mut wider = b;
        wider.header.network = NetShape {
            channels: 16,
            ..with_head
        };
        let e = judge(&wider, &run, ("a", 1), 2, with_head).unwrap_err().to_string();
        assert!(e.contains("1×16 network"), "{e}");
    }

    #[test]
    fn each_file_is_taken_once_and_bad_ones_are_set_aside() {
        let dir = tempfile::tempdir().unwrap();
        let layout = Layout::new(dir.path());
        let run = layout.ensure_run(1, board()).unwrap();
        let write = |w: &str, n: u64, bytes: Vec<u8>| {
            std::fs::create_dir_all(layout.worker_dir(w)).unwrap();
            std::fs::write(layout.batch_file(w, n), bytes).unwrap();
        };
        write("a", 1, batch(&run.id, "a", 1, 5, 10).encode());
        write("a", 2, batch(&run.id, "a", 2, 1, 10).encode()); // stale at iteration 5, max_lag 3
        write("b", 1, batch("other-run", "b", 1, 5, 10).encode());
        write("b", 2, b"garbage".to_vec());
        let mut bad_shape = batch(&run.id, "b", 3, 5, 10);
        bad_shape.header.network.channels = 16;
        write("b", 3, bad_shape.encode());
        write("c", 3, batch(&run.id, "c", 3, 4, 30).encode());
        let mut ing = Ingest::new(layout.clone(), run.clone(), shape(), Ledger::default(), 3, 35, 0, false);
        let got = ing.gather(5);
        assert_eq!(got.samples.len(), 40);
        // Three files read (one of them all stale), three set aside.
        assert_eq!((got.files, got.stale, got.rejected), (3, 10, 3));
        assert_eq!(got.lag_sum, 30);
        assert_eq!(ing.ledger.count(), 6);
        // The three bad files are renamed beside where they were.
        assert!(layout.worker_dir("b").join("batch-000002.c4games.rejected").is_file());
        assert!(layout.finished_batches().iter().all(|(w, _, _)| w != "b"));
        // A new file is the only one taken next; a trainer restarted from the
        // ledger of a checkpoint takes again only what came after it.
        let saved = ing.ledger.clone();
        write("a", 3, batch(&run.id, "a", 3, 5, 40).encode());
        let got = ing.gather(5);
        assert_eq!((got.files, got.samples.len()), (1, 40));
        let mut again = Ingest::new(layout, run, shape(), saved, 3, 35, 0, false);
        let got = again.gather(5);
        assert_eq!((got.files, got.samples.len()), (1, 40));
    }
}
