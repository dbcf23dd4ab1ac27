//! End-to-end tests of AlphaZero training and the `alphazero` player, on
//! the shipped `scenarios/train_tiny.yaml` (with `out` and `iterations`
//! rewritten into a temporary directory).

mod common;

use common::{c4sim, events, game_overs, metrics_by_name, parse_events};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// `scenarios/train_tiny.yaml` with `out` and `iterations` replaced.
fn tiny(dir: &Path, iterations: u32) -> PathBuf {
    common::tiny_training(dir, iterations, "")
}

fn train(scenario: &Path, json: bool) -> std::process::Output {
    let mut cmd = c4sim();
    cmd.arg("run").arg(scenario);
    if json {
        cmd.arg("--json");
    }
    cmd.timeout(Duration::from_secs(240)).output().unwrap()
}

fn metrics_rows(out: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(out.join("metrics.csv")).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    assert!(lines.remove(0).starts_with("iteration,"));
    lines
}

/// A number from a row of [`metrics_by_name`], with the column's name in
/// the failure.
fn num(row: &HashMap<String, String>, name: &str) -> f64 {
    let cell = row.get(name).unwrap_or_else(|| panic!("no column {name}"));
    cell.parse().unwrap_or_else(|_| panic!("{name}: `{cell}`"))
}

fn checkpoints(out: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(out.join("checkpoints"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn analyze(model: &Path, board: &str, input: &str) -> Vec<serde_json::Value> {
    let spec = format!("{{kind: alphazero, model: {}, simulations: 64}}", model.display());
    let out = c4sim()
        .args(["analyze", "--player", &spec, "--board", board])
        .write_stdin(input)
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    parse_events(&out.stdout)
}

/// Plays 100 games (colours alternating) of `model` with 16 simulations
/// against random on the tiny board; checks every move was legal and
/// returns the model's wins.
fn wins_against_random(dir: &Path, model: &Path) -> usize {
    let sc = dir.join("match.yaml");
    std::fs::write(
        &sc,
        format!(
            "mode: match\nseed: 3\nboard: {{ rows: 4, cols: 5, win_length: 3 }}\nrender: none\n\
             match: {{ games: 100, swap_colors: true }}\n\
             players:\n  - {{ name: AZ, kind: alphazero, model: {}, simulations: 16, device: cpu }}\n  - {{ name: Randy, kind: random }}\n",
            model.display()
        ),
    )
    .unwrap();
    let o = c4sim()
        .args(["run", sc.to_str().unwrap(), "--json"])
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let ev = parse_events(&o.stdout);
    assert!(events(&ev, "illegal_move").is_empty(), "only legal moves");
    let overs = game_overs(&ev);
    assert_eq!(overs.len(), 100);
    overs.iter().filter(|g| g["winner"] == "AZ").count()
}

/// A checkpoint of the tiny network that never trained (no optimizer step:
/// the buffer never reaches `min_size`).
fn untrained_model(dir: &Path) -> PathBuf {
    let out = dir.join("untrained");
    let sc = dir.join("untrained.yaml");
    std::fs::write(
        &sc,
        format!(
            "mode: train\nseed: 1\nboard: {{ rows: 4, cols: 5, win_length: 3 }}\ntrain:\n\
             \x20 network: {{ blocks: 1, channels: 16, value_hidden: 32 }}\n\
             \x20 mcts: {{ simulations: 4 }}\n  self_play: {{ games_per_iteration: 1 }}\n\
             \x20 replay: {{ capacity: 1000, min_size: 1000 }}\n  eval: {{ every: 0 }}\n\
             \x20 iterations: 1\n  out: {}\n",
            out.display()
        ),
    )
    .unwrap();
    let o = train(&sc, false);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("no training yet"));
    out
}

#[test]
fn train_writes_checkpoints_resumes_and_the_model_plays() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");

    // Two iterations, with JSON progress events.
    let o = train(&tiny(dir.path(), 2), true);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let ev = parse_events(&o.stdout);
    assert_eq!(events(&ev, "train_start").len(), 1);
    let its = events(&ev, "iteration");
    assert_eq!(its.len(), 2);
    assert_eq!(its[1]["iteration"], 2);
    assert!(its[1]["policy_loss"].as_f64().unwrap() > 0.0);
    assert!(its[1]["eval_score"].as_f64().is_some());
    assert_eq!(ev.last().unwrap()["event"], "summary");
    let rows = metrics_rows(&out);
    assert_eq!(rows.len(), 2);
    assert_eq!(checkpoints(&out), vec!["iter-000001", "iter-000002"]);
    let ck = out.join("checkpoints/iter-000002");
    for f in ["model.safetensors", "optimizer.safetensors", "replay.bin", "meta.json"] {
        assert!(ck.join(f).is_file(), "{f} missing");
    }
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(ck.join("meta.json")).unwrap()).unwrap();
    assert_eq!(meta["iteration"], 2);
    assert_eq!(meta["board"]["cols"], 5);
    assert_eq!(meta["network"]["channels"], 16);
    assert_eq!(meta["metrics"].as_array().unwrap().len(), 2);
    assert!(std::fs::read_to_string(out.join("curves.svg"))
        .unwrap()
        .contains("<svg"));

    // Asking for three with resume adds exactly one row, keeping the first two.
    let o = train(&tiny(dir.path(), 3), false);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("iteration 3/3"), "{text}");
    assert!(!text.contains("iteration 1/3"), "resumed, not restarted: {text}");
    let rows3 = metrics_rows(&out);
    assert_eq!(rows3.len(), 3);
    assert_eq!(&rows3[..2], &rows[..]);
    assert!(rows3[2].starts_with("3,"));
    assert_eq!(checkpoints(&out), vec!["iter-000002", "iter-000003"]);
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("checkpoints/iter-000003/meta.json")).unwrap()).unwrap();
    // The replay buffer came back: it grew from the resumed one.
    let buf = |r: &str| r.split(',').nth(3).unwrap().parse::<u64>().unwrap();
    assert!(buf(&rows3[2]) > buf(&rows3[1]));
    assert_eq!(meta["replay_samples"].as_u64().unwrap(), buf(&rows3[2]));

    // Asking again for three, the run at its end: nothing trained, no row
    // added, and the message says how to go on (the committed recipe run
    // is at its end on a fresh clone).
    let o = train(&tiny(dir.path(), 3), false);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("already at iteration 3 of 3"), "{text}");
    assert!(
        text.contains("`train.iterations`") && text.contains("--fresh --out DIR"),
        "{text}"
    );
    assert_eq!(metrics_rows(&out), rows3);

    // The trained model plays a match: legal moves only, and it beats
    // random in at least 90% of games, which the same search with an
    // untrained network of the same shape does not.
    let wins = wins_against_random(dir.path(), &out);
    assert!(wins >= 90, "the trained model won {wins} of 100 against random");
    let untrained = untrained_model(dir.path());
    let base = wins_against_random(dir.path(), &untrained);
    eprintln!("against random: trained {wins}/100, untrained {base}/100");
    assert!(base < 90 && base < wins, "untrained {base} of 100, trained {wins}");

    // analyze: column, visit shares and values; full columns are null.
    let lines = analyze(&out, "4x5x3", "\n11112\n");
    assert_eq!(lines.len(), 2);
    let col = lines[0]["column"].as_u64().unwrap();
    assert!((1..=5).contains(&col));
    let scores = lines[0]["scores"].as_array().unwrap();
    assert_eq!(scores.len(), 5);
    let total: f64 = scores.iter().map(|s| s["share"].as_f64().unwrap()).sum();
    assert!((total - 1.0).abs() < 1e-6, "{total}");
    let scores = lines[1]["scores"].as_array().unwrap();
    assert!(scores[0].is_null(), "column 1 is full: {:?}", lines[1]);
    assert_ne!(lines[1]["column"], 1);

    // A model for another board is refused before anything runs, saying both sizes.
    let spec = format!("{{kind: alphazero, model: {}}}", out.display());
    let refused = c4sim()
        .args(["analyze", "--player", &spec])
        .write_stdin("\n")
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("4×5") && err.contains("6×7"), "{err}");
    let sc = dir.path().join("wrong_board.yaml");
    std::fs::write(
        &sc,
        format!(
            "players:\n  - {{kind: alphazero, model: {}}}\n  - {{kind: random}}\n",
            out.display()
        ),
    )
    .unwrap();
    let refused = c4sim().args(["run", sc.to_str().unwrap(), "--json"]).output().unwrap();
    assert!(!refused.status.success());
    assert!(refused.stdout.is_empty(), "no game starts");
    let err = String::from_utf8_lossy(&refused.stderr);
    assert!(err.contains("4×5") && err.contains("6×7"), "{err}");

    // A resume with a deeper and wider network grows the checkpoint's and
    // trains on (one more row); a narrower one is refused, losing nothing.
    let reshaped = |iterations: u32, network: &str| {
        let sc = tiny(dir.path(), iterations);
        let text = std::fs::read_to_string(&sc).unwrap();
        let from = "network: { blocks: 1, channels: 16, value_hidden: 32 }";
        assert!(text.contains(from), "train_tiny.yaml's network line changed");
        std::fs::write(&sc, text.replace(from, network)).unwrap();
        sc
    };
    let o = train(
        &reshaped(4, "network: { blocks: 2, channels: 24, value_hidden: 32 }"),
        false,
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("growing the network from 1 × 16 to 2 × 24"));
    assert_eq!(metrics_rows(&out).len(), 4);
    assert_eq!(&metrics_rows(&out)[..3], &rows3[..]);
    let meta: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("checkpoints/iter-000004/meta.json")).unwrap()).unwrap();
    assert_eq!(
        (meta["network"]["blocks"].as_u64(), meta["network"]["channels"].as_u64()),
        (Some(2), Some(24))
    );
    assert_eq!(analyze(&out, "4x5x3", "\n").len(), 1, "the grown model plays");
    let o = train(
        &reshaped(5, "network: { blocks: 2, channels: 16, value_hidden: 32 }"),
        false,
    );
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("2 blocks × 24 channels"));
    assert_eq!(checkpoints(&out), vec!["iter-000003", "iter-000004"]);
}

#[test]
fn a_kill_while_writing_a_checkpoint_leaves_the_last_one_usable() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let o = train(&tiny(dir.path(), 1), false);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    // Killed (SIGKILL) after writing iteration 2's files, before the rename.
    let o = c4sim()
        .arg("run")
        .arg(tiny(dir.path(), 2))
        .env("C4SIM_FAULT", "checkpoint-before-rename")
        .timeout(Duration::from_secs(240))
        .output()
        .unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("C4SIM_FAULT"));
    let left = checkpoints(&out);
    assert!(left.iter().any(|n| n.starts_with(".tmp-iter-000002")), "{left:?}");
    assert!(left.contains(&"iter-000001".to_string()));
    assert!(!left.contains(&"iter-000002".to_string()));
    assert_eq!(metrics_rows(&out).len(), 1);

    // The model directory still loads (iteration 1) ...
    let lines = analyze(&out, "4x5x3", "\n");
    assert!(lines[0]["column"].is_u64(), "{:?}", lines[0]);
    // ... and the run resumes from it, cleaning up the half-written one.
    let o = train(&tiny(dir.path(), 2), false);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(metrics_rows(&out).len(), 2);
    assert_eq!(checkpoints(&out), vec!["iter-000001", "iter-000002"]);
}

#[test]
fn bad_train_settings_and_models_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    let sc = dir.path().join("bad.yaml");
    std::fs::write(&sc, "mode: train\ntrain:\n  mcts: { simulatons: 5 }\n").unwrap();
    let o = c4sim().args(["validate", sc.to_str().unwrap()]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("bad.yaml:3:") && err.contains("did you mean `simulations`"),
        "{err}"
    );

    let o = c4sim()
        .args(["analyze", "--player", "{kind: alphazero, model: /no/such/model}"])
        .write_stdin("\n")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("does not exist"));
}

/// `eval.accuracy` end to end: a tiny 6×7 run judges its network on a few
/// labelled positions each iteration, fills the `acc_*` and `hours`
/// columns, and draws the mistakes panel. Its first checkpoint is made to
/// look like one from before these columns, and the run resumes from it.
#[test]
fn train_with_eval_accuracy_fills_the_columns_and_the_panel() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let sets = concat!(env!("CARGO_MANIFEST_DIR"), "/benches/accuracy/sets-v1.jsonl");
    let sc = dir.path().join("acc.yaml");
    std::fs::write(
        &sc,
        format!(
            "mode: train\nseed: 2\ntrain:\n\
             \x20 network: {{ blocks: 1, channels: 8, value_hidden: 16 }}\n\
             \x20 mcts: {{ simulations: 4 }}\n\
             \x20 self_play: {{ games_per_iteration: 2, temperature_moves: 4 }}\n\
             \x20 optimizer: {{ steps_per_iteration: 2, batch_size: 16, threads: 1 }}\n\
             \x20 replay: {{ capacity: 2000, min_size: 10 }}\n\
             \x20 eval: {{ every: 1, games: 2, opponent: {{ kind: random }}, openings: {{ plies: 0 }},\n\
             \x20   accuracy: {{ set: middle-easy+end, positions: 8, simulations: 8, file: {sets} }} }}\n\
             \x20 iterations: ITERATIONS\n  out: {}\n",
            out.display()
        ),
    )
    .unwrap();
    let text = std::fs::read_to_string(&sc).unwrap();
    std::fs::write(&sc, text.replace("ITERATIONS", "1")).unwrap();
    let o = train(&sc, false);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // An older c4sim wrote no acc_* fields in the checkpoint's history.
    let meta_path = out.join("checkpoints/iter-000001/meta.json");
    let mut meta: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&meta_path).unwrap()).unwrap();
    for row in meta["metrics"].as_array_mut().unwrap() {
        let row = row.as_object_mut().unwrap();
        assert!(row.contains_key("acc_raw_mistakes"));
        row.retain(|k, _| !k.starts_with("acc_"));
    }
    std::fs::write(&meta_path, meta.to_string()).unwrap();
    std::fs::write(&sc, text.replace("ITERATIONS", "2")).unwrap();
    let o = train(&sc, false);
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}\n{stdout}", String::from_utf8_lossy(&o.stderr));
    assert!(stdout.contains("% with search"), "{stdout}");
    let rows = metrics_by_name(&out);
    assert_eq!(rows.len(), 2);
    // The old row reads as not measured; the resumed one is measured.
    assert_eq!(num(&rows[0], "acc_positions"), 0.0);
    assert_eq!(rows[0]["acc_raw_mistakes"], "");
    let mut last_hours = 0.0;
    for row in &rows[1..] {
        assert_eq!(num(row, "acc_positions"), 8.0);
        for name in ["acc_raw_mistakes", "acc_mcts_mistakes"] {
            let p = num(row, name);
            // 8 positions: a rate is a whole number of eighths.
            assert!(
                (0.0..=1.0).contains(&p) && (p * 8.0 - (p * 8.0).round()).abs() < 1e-3,
                "{name} {p}"
            );
        }
        for (rate, se) in [("acc_raw_mistakes", "acc_raw_se"), ("acc_mcts_mistakes", "acc_mcts_se")] {
            let p = num(row, rate);
            assert!((num(row, se) - (p * (1.0 - p) / 8.0).sqrt()).abs() < 1e-4);
        }
        assert!(num(row, "acc_s") >= 0.0);
        // The iteration's CPU time: measured, and no more than its wall
        // time on every core (plus a second for what the phases leave out).
        let wall: f64 = ["selfplay_s", "train_s", "eval_s", "acc_s"]
            .iter()
            .map(|c| num(row, c))
            .sum();
        let cores = c4sim::util::cores() as f64;
        let cpu = num(row, "cpu_s");
        assert!(
            cpu > 0.0 && cpu <= (wall + 1.0) * cores,
            "cpu_s {cpu}, wall {wall} s on {cores} cores"
        );
        let hours = num(row, "hours");
        assert!(hours > 0.0 && hours >= last_hours && hours < 1.0, "hours {hours}");
        last_hours = hours;
    }
    let svg = std::fs::read_to_string(out.join("curves.svg")).unwrap();
    assert!(svg.contains("mistakes against perfect play") && svg.contains("training hours"));
    let resolved = std::fs::read_to_string(out.join("scenario.resolved.yaml")).unwrap();
    assert!(resolved.contains("set: middle-easy+end"), "{resolved}");
}

#[test]
fn exact_value_targets_and_position_averaging_in_a_run() {
    let dir = tempfile::tempdir().unwrap();
    let sc = tiny(dir.path(), 1);
    let text = std::fs::read_to_string(&sc).unwrap();
    let text = text
        .replace(
            "temperature_moves: 4 }",
            "temperature_moves: 4, exact_value_nodes: 100000 }",
        )
        .replace("min_size: 200 }", "min_size: 200, average_duplicates: true }");
    assert!(text.contains("exact_value_nodes") && text.contains("average_duplicates"));
    std::fs::write(&sc, &text).unwrap();
    let o = train(&sc, false);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = dir.path().join("out");
    let rows = metrics_by_name(&out);
    // On 4×5 (three in a row) the solver proves every position within the
    // budget; averaging then leaves fewer samples than positions labelled.
    let (exact, kept) = (num(&rows[0], "exact_values"), num(&rows[0], "positions"));
    assert!(exact > 0.0, "{rows:?}");
    assert!(
        kept < exact,
        "{kept} samples kept of {exact} labelled: the 40 games share their openings"
    );
    let resolved = std::fs::read_to_string(out.join("scenario.resolved.yaml")).unwrap();
    assert!(resolved.contains("exact_value_nodes: 100000"), "{resolved}");
    assert!(resolved.contains("average_duplicates: true"), "{resolved}");
}

#[test]
fn a_learning_rate_schedule_steps_down_and_is_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let sc = tiny(dir.path(), 3);
    let text = std::fs::read_to_string(&sc).unwrap().replace(
        "learning_rate: 0.002,",
        "learning_rate: 0.002, learning_rate_schedule: [{from: 3, learning_rate: 0.0005}],",
    );
    assert!(text.contains("learning_rate_schedule"));
    std::fs::write(&sc, &text).unwrap();
    let o = train(&sc, false);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = dir.path().join("out");
    let rows = metrics_by_name(&out);
    let rates: Vec<&str> = rows.iter().map(|r| r["learning_rate"].as_str()).collect();
    assert_eq!(rates, ["0.002", "0.002", "0.0005"]);
    let resolved = std::fs::read_to_string(out.join("scenario.resolved.yaml")).unwrap();
    assert!(resolved.contains("learning_rate_schedule:"), "{resolved}");
    assert!(resolved.contains("from: 3"), "{resolved}");
}

/// Every tensor of a safetensors file, flattened.
fn weights(file: &Path) -> HashMap<String, Vec<f32>> {
    candle_core::safetensors::load(file, &candle_core::Device::Cpu)
        .unwrap()
        .into_iter()
        .map(|(k, t)| (k, t.flatten_all().unwrap().to_vec1::<f32>().unwrap()))
        .collect()
}

/// `optimizer.ema`: each checkpoint's model is the moving average of the
/// trained weights saved beside it, `ema·previous + (1 − ema)·trained`, and
/// a resumed run trains on from the trained weights, not the average.
#[test]
fn with_ema_the_model_is_the_moving_average_of_the_trained_weights() {
    let dir = tempfile::tempdir().unwrap();
    let sc = tiny(dir.path(), 2);
    let text = std::fs::read_to_string(&sc)
        .unwrap()
        .replace("weight_decay: 0.0001,", "weight_decay: 0.0001, ema: 0.75,")
        .replace("eval: { every: 1,", "eval: { every: 0,");
    assert!(text.contains("ema: 0.75") && text.contains("every: 0"));
    std::fs::write(&sc, &text).unwrap();
    let o = train(&sc, false);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = dir.path().join("out");
    assert_eq!(checkpoints(&out), ["iter-000001", "iter-000002"]);
    let ck = |it: u32, f: &str| weights(&out.join(format!("checkpoints/iter-{it:06}/{f}")));
    // Checks iteration `it`'s model against the previous model and its own
    // trained weights; returns how many of its weights differ from the latter.
    let check_blend = |it: u32, before: &HashMap<String, Vec<f32>>| {
        let (model, trained) = (ck(it, "model.safetensors"), ck(it, "trained.safetensors"));
        let mut differ = 0;
        for (name, m) in &model {
            for ((p, t), m) in before[name].iter().zip(&trained[name]).zip(m) {
                assert!((m - (0.75 * p + 0.25 * t)).abs() < 1e-5, "{name}: {m} from {p} and {t}");
                differ += usize::from((m - t).abs() > 1e-4);
            }
        }
        differ
    };
    let differ = check_blend(2, &ck(1, "model.safetensors"));
    assert!(differ > 100, "the average lags the trained weights: {differ} differ");
    let resolved = std::fs::read_to_string(out.join("scenario.resolved.yaml")).unwrap();
    assert!(resolved.contains("ema: 0.75"), "{resolved}");

    // Resumed to a third iteration: it starts from iteration 2's trained
    // weights (its average is iteration 2's model moved toward them).
    std::fs::write(&sc, text.replace("iterations: 2", "iterations: 3")).unwrap();
    let o = train(&sc, false);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(metrics_rows(&out).len(), 3);
    check_blend(3, &ck(2, "model.safetensors"));

    // `ema: 1` would never take the trained weights: refused.
    std::fs::write(&sc, text.replace("ema: 0.75", "ema: 1")).unwrap();
    let o = train(&sc, false);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("`ema` must be at least 0 and below 1, got 1"), "{err}");
}

/// `network.reply_head` turned on at a resume, as it is A/B-tested (a
/// branch from a checkpoint without it): the run says so, trains the head
/// from fresh weights (its loss in the metrics, its tensors and moments in
/// the checkpoint), resumes with it, and the model plays; turned off
/// again, the head is dropped and training goes on.
#[test]
fn a_reply_head_added_at_a_resume_trains_and_the_model_plays() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let scenario = |iterations: u32, head: bool| {
        let sc = tiny(dir.path(), iterations);
        let from = "network: { blocks: 1, channels: 16, value_hidden: 32 }";
        let to = format!("network: {{ blocks: 1, channels: 16, value_hidden: 32, reply_head: {head} }}");
        let text = std::fs::read_to_string(&sc)
            .unwrap()
            .replace(from, &to)
            .replace("eval: { every: 1,", "eval: { every: 0,");
        assert!(text.contains(&to) && text.contains("every: 0"));
        std::fs::write(&sc, text).unwrap();
        sc
    };
    let run = |iterations: u32, head: bool| {
        let o = train(&scenario(iterations, head), false);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    let meta = |it: u32| -> serde_json::Value {
        let p = out.join(format!("checkpoints/iter-{it:06}/meta.json"));
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    };
    let ck = |it: u32, f: &str| weights(&out.join(format!("checkpoints/iter-{it:06}/{f}")));

    run(1, false);
    assert_eq!(metrics_by_name(&out)[0]["reply_loss"], "", "no head, no reply loss");
    assert_eq!(meta(1)["network"]["reply_head"], false);

    let said = run(2, true);
    assert!(said.contains("adding a reply head"), "{said}");
    let rows = metrics_by_name(&out);
    let reply = num(&rows[1], "reply_loss");
    assert!(reply > 0.0 && reply < 5.0, "{reply}");
    let m = meta(2);
    assert_eq!(m["network"]["reply_head"], true);
    assert_eq!(m["settings"]["network"]["reply_head"], true);
    assert_eq!(m["settings"]["optimizer"]["reply_weight"], 0.15);
    let model = ck(2, "model.safetensors");
    assert_eq!(model["reply.fc.w"].len(), 2 * 20 * 5);
    let moments = ck(2, "optimizer.safetensors");
    assert!(moments["m.reply.fc.w"].iter().any(|&m| m != 0.0), "the head trained");
    let before = ck(1, "model.safetensors");
    assert_ne!(before["policy.conv.w"], model["policy.conv.w"]);

    // Resumed with the head: loaded as saved, and it trains on.
    let said = run(3, true);
    assert!(!said.contains("reply head"), "nothing to add: {said}");
    assert!(num(&metrics_by_name(&out)[2], "reply_loss") > 0.0);
    let lines = analyze(&out, "4x5x3", "\n");
    assert!(
        lines[0]["column"].is_u64(),
        "the model with the head plays: {:?}",
        lines[0]
    );
    let resolved = std::fs::read_to_string(out.join("scenario.resolved.yaml")).unwrap();
    assert!(resolved.contains("reply_head: true"), "{resolved}");

    // Off again: dropped.
    let said = run(4, false);
    assert!(said.contains("dropping the checkpoint's reply head"), "{said}");
    assert_eq!(metrics_by_name(&out)[3]["reply_loss"], "");
    assert_eq!(meta(4)["network"]["reply_head"], false);
    assert!(!ck(4, "model.safetensors").contains_key("reply.fc.w"));
    assert_eq!(analyze(&out, "4x5x3", "\n").len(), 1);
}
