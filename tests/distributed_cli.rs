//! Distributed training with real processes on one shared directory:
//! `c4sim run FILE --role trainer` and `--role selfplay --worker NAME` on
//! `scenarios/train_tiny.yaml`; a run from nothing, bad files set aside,
//! waiting said out loud, and kill -9 at random moments with every game file
//! taken exactly once.

mod common;

use c4sim::train::exchange::{Layout, Ledger};
use c4sim::train::gamefile::Batch;
use common::{metrics_by_name, tiny_training};
use rand::{Rng, SeedableRng};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Small batches, one thread a worker, so several files make an iteration.
const DISTRIBUTED: &str = "  distributed: { games_per_batch: 5, worker_threads: 1, max_backlog: 3 }\n";

/// A c4sim process whose standard output lines arrive on `lines`; killed when dropped.
struct Proc {
    child: Child,
    lines: mpsc::Receiver<String>,
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn spawn(scenario: &Path, args: &[&str]) -> Proc {
    let mut child = Command::new(env!("CARGO_BIN_EXE_c4sim"))
        .arg("run")
        .arg(scenario)
        .args(args)
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("c4sim starts");
    let out = child.stdout.take().unwrap();
    let (tx, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for l in BufReader::new(out).lines().map_while(Result::ok) {
            if tx.send(l).is_err() {
                break;
            }
        }
    });
    Proc { child, lines }
}

fn trainer(scenario: &Path) -> Proc {
    spawn(scenario, &["--role", "trainer"])
}

fn worker(scenario: &Path, name: &str) -> Proc {
    spawn(scenario, &["--role", "selfplay", "--worker", name])
}

/// Waits for a line containing `what`; returns it.
fn line_with(p: &Proc, what: &str, within: Duration) -> String {
    let end = Instant::now() + within;
    let mut seen = Vec::new();
    loop {
        let left = end.saturating_duration_since(Instant::now());
        match p.lines.recv_timeout(left) {
            Ok(l) if l.contains(what) => return l,
            Ok(l) => seen.push(l),
            Err(_) => panic!("no line with `{what}` within {within:?}; it said: {seen:#?}"),
        }
    }
}

/// Waits for the process to end; its exit status.
fn finish(p: &mut Proc, within: Duration) -> std::process::ExitStatus {
    let end = Instant::now() + within;
    loop {
        if let Some(s) = p.child.try_wait().unwrap() {
            return s;
        }
        assert!(Instant::now() < end, "still running after {within:?}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The newest checkpoint's ledger: the files whose positions it holds.
fn ledger(out: &Path) -> Ledger {
    let dir = c4sim::players::model::latest(out).expect("a checkpoint");
    serde_json::from_slice(&std::fs::read(dir.join("ingest.json")).unwrap()).unwrap()
}

/// Every finished file in the workers' folders, decoded (a half-written or
/// damaged one fails the test).
fn batches(out: &Path) -> Vec<(String, u64, Batch)> {
    Layout::new(out)
        .finished_batches()
        .into_iter()
        .map(|(w, n, p)| {
            let b = Batch::decode(&std::fs::read(&p).unwrap()).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (w, n, b)
        })
        .collect()
}

/// Exactly once: the positions in the rows of the newest checkpoint, plus
/// those dropped as stale, are the positions of the files its ledger lists,
/// each counted once; every listed file exists.
fn check_exactly_once(out: &Path) -> (u64, u64) {
    let l = ledger(out);
    let files = batches(out);
    let taken: Vec<&(String, u64, Batch)> = files.iter().filter(|(w, n, _)| l.contains(w, *n)).collect();
    assert_eq!(taken.len() as u64, l.count(), "every file in the ledger exists, once");
    let in_files: u64 = taken.iter().map(|(_, _, b)| b.header.positions).sum();
    let rows = metrics_by_name(out);
    let kept: u64 = rows.iter().map(|r| r["positions"].parse::<u64>().unwrap()).sum();
    let stale: u64 = rows.iter().map(|r| r["stale"].parse::<u64>().unwrap()).sum();
    assert_eq!(
        kept + stale,
        in_files,
        "positions trained on + dropped = positions in the files taken"
    );
    assert_eq!((l.positions, l.stale), (kept, stale));
    (l.count(), files.len() as u64)
}

#[test]
fn a_trainer_and_two_workers_train_from_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let sc = tiny_training(dir.path(), 3, DISTRIBUTED);
    let out = dir.path().join("out");
    // Workers may start first: they wait for the trainer, and say so.
    let mut w1 = worker(&sc, "w1");
    line_with(&w1, "the trainer writes it when it starts", Duration::from_secs(30));
    let mut t = trainer(&sc);
    let mut w2 = worker(&sc, "w2");
    assert!(finish(&mut t, Duration::from_secs(300)).success());
    for w in [&mut w1, &mut w2] {
        assert!(
            finish(w, Duration::from_secs(60)).success(),
            "a worker stops by itself when the run is done"
        );
    }
    let rows = metrics_by_name(&out);
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|r| r["files"] != "0" && r["rejected"] == "0"));
    assert!(rows.iter().any(|r| r["workers"] == "2"), "{rows:?}");
    assert!(
        rows.iter().all(|r| r["eval_score"].parse::<f64>().is_ok()),
        "evaluation stays with the trainer"
    );
    assert!(out.join("DONE").is_file());
    assert_eq!(
        std::fs::read_to_string(out.join("networks/LATEST")).unwrap().trim(),
        "net-000003"
    );
    let (taken, written) = check_exactly_once(&out);
    assert!(taken <= written && taken >= 6, "{taken} of {written}");
    let (_, _, b) = &batches(&out)[0];
    assert_eq!(b.header.games, 5);
    assert!(b.games.iter().all(|g| !g.moves.is_empty()));
    // The same run given more iterations goes on: a worker of it plays
    // (DONE says 3), and a single process refuses the distributed directory.
    let more = tiny_training(dir.path(), 4, DISTRIBUTED);
    let w3 = worker(&more, "w3");
    loop {
        let l = w3
            .lines
            .recv_timeout(Duration::from_secs(60))
            .expect("the worker plays");
        assert!(!l.contains("differ"), "the same settings: {l}");
        if l.contains("batch 1:") {
            break;
        }
    }
    drop(w3);
    // A worker whose scenario plays games otherwise than the trainer's says so.
    let text = std::fs::read_to_string(&more)
        .unwrap()
        .replace("simulations: 32", "simulations: 33");
    let other = dir.path().join("other.yaml");
    std::fs::write(&other, text).unwrap();
    let w4 = worker(&other, "w4");
    let said = line_with(&w4, "differ from the trainer's", Duration::from_secs(60));
    assert!(said.contains("train.mcts"), "{said}");
    drop(w4);
    let single = Command::new(env!("CARGO_BIN_EXE_c4sim"))
        .arg("run")
        .arg(&more)
        .output()
        .unwrap();
    assert_eq!(single.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&single.stderr).contains("holds a distributed run"));
}

/// A well-formed batch of three positions for run `run`, as the intruder's
/// batch `n` (tiny's board and network).
fn handmade_batch(run: &str, n: u64) -> Batch {
    let board = c4sim::az::meta::BoardMeta {
        rows: 4,
        cols: 5,
        win_length: 3,
    };
    let shape = c4sim::az::network::NetShape {
        rows: 4,
        cols: 5,
        blocks: 1,
        channels: 16,
        value_hidden: 32,
        reply_head: false,
    };
    c4sim::bench::ingest::synthetic(run, "intruder", n, board, shape, 3)
}

#[test]
fn slow_bad_files_are_set_aside_and_waiting_is_said() {
    let dir = tempfile::tempdir().unwrap();
    let sc = tiny_training(dir.path(), 1, DISTRIBUTED);
    let out = dir.path().join("out");
    let mut t = trainer(&sc);
    line_with(&t, "waiting for self-play", Duration::from_secs(60));
    // One trainer per run: a second one is refused, and says why.
    let second = Command::new(env!("CARGO_BIN_EXE_c4sim"))
        .arg("run")
        .arg(&sc)
        .args(["--role", "trainer"])
        .output()
        .unwrap();
    assert_eq!(second.status.code(), Some(1));
    let why = String::from_utf8_lossy(&second.stderr);
    assert!(why.contains("another trainer is running"), "{why}");
    // Where a worker's files would be: garbage, a good batch cut in half,
    // a whole batch from another run, and one that names another file.
    let layout = Layout::new(&out);
    let run = layout.read_run().unwrap();
    std::fs::create_dir_all(layout.worker_dir("intruder")).unwrap();
    std::fs::write(layout.batch_file("intruder", 1), b"not a batch of games").unwrap();
    let good = handmade_batch(&run.id, 2).encode();
    assert!(Batch::decode(&good).is_ok());
    std::fs::write(layout.batch_file("intruder", 2), &good[..good.len() / 2]).unwrap();
    std::fs::write(
        layout.batch_file("intruder", 3),
        handmade_batch("some-other-run", 3).encode(),
    )
    .unwrap();
    // A good file whose header names another place (a copied folder's file).
    std::fs::write(layout.batch_file("intruder", 4), handmade_batch(&run.id, 9).encode()).unwrap();
    let rejected = line_with(&t, "rejected", Duration::from_secs(60));
    assert!(rejected.contains("intruder"), "the message names the file: {rejected}");
    // A worker that cannot read the network says why and tries again.
    let latest = out.join("networks/LATEST");
    let pointer = std::fs::read_to_string(&latest).unwrap();
    std::fs::write(&latest, "net-000099\n").unwrap();
    let mut w = worker(&sc, "w1");
    line_with(&w, "cannot read the network", Duration::from_secs(30));
    std::fs::write(&latest, pointer).unwrap();
    let first = line_with(&w, "batch 1:", Duration::from_secs(60));
    assert!(first.contains("with network 0"), "{first}");
    assert!(finish(&mut t, Duration::from_secs(300)).success());
    assert!(finish(&mut w, Duration::from_secs(60)).success());
    let rows = metrics_by_name(&out);
    let set_aside: u64 = rows.iter().map(|r| r["rejected"].parse::<u64>().unwrap()).sum();
    assert_eq!(set_aside, 4, "{rows:?}");
    for n in 1..=4 {
        let p = layout.batch_file("intruder", n);
        assert!(
            !p.exists() && p.with_extension("c4games.rejected").exists(),
            "{}",
            p.display()
        );
    }
}

#[test]
fn slow_kill_nine_at_random_loses_and_duplicates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    // About four times an ordinary iteration's positions, so the run outlasts the kills.
    let sc = tiny_training(
        dir.path(),
        12,
        "  distributed: { games_per_batch: 5, worker_threads: 1, max_backlog: 3, positions_per_iteration: 1500 }\n",
    );
    let out = dir.path().join("out");
    let mut procs: Vec<(String, Proc)> = vec![
        ("trainer".into(), trainer(&sc)),
        ("w1".into(), worker(&sc, "w1")),
        ("w2".into(), worker(&sc, "w2")),
    ];
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(2026);
    let mut kills = 0;
    let deadline = Instant::now() + Duration::from_secs(600);
    while kills < 12 {
        assert!(Instant::now() < deadline, "the kills took too long");
        std::thread::sleep(Duration::from_millis(rng.gen_range(50..800)));
        let i = rng.gen_range(0..procs.len());
        let (name, p) = &mut procs[i];
        if p.child.try_wait().unwrap().is_some() {
            break; // the run finished before all the kills
        }
        // SIGKILL: no handler runs, files are left as they were at that instant.
        p.child.kill().unwrap();
        p.child.wait().unwrap();
        kills += 1;
        let again = if name == "trainer" {
            trainer(&sc)
        } else {
            worker(&sc, name)
        };
        procs[i].1 = again;
    }
    assert!(kills >= 10, "only {kills} kills before the run finished");
    let (_, t) = &mut procs[0];
    assert!(
        finish(t, Duration::from_secs(600)).success(),
        "the trainer finishes after its kills"
    );
    for (_, w) in &mut procs[1..] {
        assert!(finish(w, Duration::from_secs(60)).success());
    }
    let rows = metrics_by_name(&out);
    let its: Vec<&str> = rows.iter().map(|r| r["iteration"].as_str()).collect();
    assert_eq!(its, (1..=12).map(|i| i.to_string()).collect::<Vec<_>>());
    check_exactly_once(&out);
    assert!(
        rows.iter().all(|r| r["rejected"] == "0"),
        "no file was read half-written"
    );
    // Nothing half-written is left where a reader would take it.
    let leftovers: Vec<PathBuf> = ["w1", "w2"]
        .iter()
        .flat_map(|w| std::fs::read_dir(Layout::new(&out).worker_dir(w)).unwrap())
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".rejected"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn the_kubernetes_recipe_runs_one_trainer_and_workers_named_after_their_pods() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/k8s/train.yaml");
    let text = std::fs::read_to_string(path).unwrap();
    let docs: Vec<serde_yaml::Value> = serde_yaml::Deserializer::from_str(&text)
        .map(|d| serde::Deserialize::deserialize(d).unwrap())
        .collect();
    let of_kind = |k: &str| docs.iter().find(|d| d["kind"] == k).unwrap_or_else(|| panic!("a {k}"));
    let claim = of_kind("PersistentVolumeClaim");
    assert_eq!(claim["spec"]["accessModes"][0], "ReadWriteMany");
    let script = |d: &serde_yaml::Value| -> String {
        let c = &d["spec"]["template"]["spec"]["containers"][0];
        let volumes = &d["spec"]["template"]["spec"]["volumes"];
        assert!(
            volumes
                .as_sequence()
                .unwrap()
                .iter()
                .any(|v| v["persistentVolumeClaim"]["claimName"] == claim["metadata"]["name"]),
            "every pod mounts the shared volume"
        );
        c["args"][0].as_str().unwrap().to_string()
    };
    let trainer = of_kind("StatefulSet");
    assert_eq!(trainer["spec"]["replicas"].as_u64(), Some(1), "one trainer per run");
    assert!(script(trainer).contains("--role trainer --out /data/run"));
    let workers = of_kind("Deployment");
    let w = script(workers);
    assert!(
        w.contains("--role selfplay --worker \"$POD_NAME\" --out /data/run"),
        "{w}"
    );
}
