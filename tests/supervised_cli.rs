//! `c4sim bench supervised` end to end: a network trained on solver labels
//! learns its training positions, never sees a test position, and the model
//! it writes plays in `bench accuracy` with the figure it reported.

mod common;
use c4sim::bench::accuracy::DEFAULT_SETS;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn sets_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(DEFAULT_SETS)
}

/// A test file of the committed sets' first `n` begin-easy positions.
fn small_test_file(dir: &Path, n: usize) -> PathBuf {
    let text = std::fs::read_to_string(sets_path()).unwrap();
    let mut lines = text.lines();
    let mut out = vec![lines.next().unwrap()];
    out.extend(lines.filter(|l| l.contains("\"set\":\"begin-easy\"")).take(n));
    let path = dir.join("test.jsonl");
    std::fs::write(&path, out.join("\n") + "\n").unwrap();
    path
}

#[test]
fn supervised_training_learns_its_positions_and_the_model_plays_as_reported() {
    let dir = tempfile::tempdir().unwrap();
    let test = small_test_file(dir.path(), 20);
    let (model, json) = (dir.path().join("model"), dir.path().join("curve.json"));
    let stdout = stdout_of_success(
        c4sim()
            .args(["bench", "supervised", "--train"])
            .arg(sets_path())
            .arg("--sets")
            .arg(&test)
            .args([
                "--only",
                "begin-easy",
                "--blocks",
                "1",
                "--channels",
                "16",
                "--steps",
                "300",
            ])
            .args(["--eval-every", "150", "--threads", "1", "--out"])
            .arg(&model)
            .arg("--json")
            .arg(&json),
    );
    // The 20 test positions are among the 100 begin-easy ones: 80 are left.
    assert!(stdout.contains("80 training positions (100 read"), "{stdout}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(
        (v["training_positions"].as_u64(), v["test_positions"].as_u64()),
        (Some(80), Some(20))
    );
    let curve = v["curve"].as_array().unwrap();
    assert_eq!(
        curve.iter().map(|r| r["step"].as_u64().unwrap()).collect::<Vec<_>>(),
        [0, 150, 300]
    );
    let rate = |r: &Value, k: &str| r[k].as_f64().unwrap();
    let (first, last) = (&curve[0], &curve[2]);
    assert!(
        rate(last, "train_mistake_rate") < rate(first, "train_mistake_rate"),
        "training positions not learned: {curve:?}"
    );
    // The written model, judged by `bench accuracy`, makes the reported mistakes.
    let acc = dir.path().join("acc.json");
    let spec = format!("{{kind: alphazero, model: {}, simulations: 1}}", model.display());
    stdout_of_success(
        c4sim()
            .args(["bench", "accuracy", "--sets"])
            .arg(&test)
            .args(["--only", "begin-easy", "--player", &spec, "--json"])
            .arg(&acc),
    );
    let a: Value = serde_json::from_str(&std::fs::read_to_string(&acc).unwrap()).unwrap();
    let judged = a["players"][0]["sets"]["begin-easy"]["mistake_rate"].as_f64().unwrap();
    assert!(
        (judged - rate(last, "test_mistake_rate")).abs() < 1e-9,
        "{judged} vs {last:?}"
    );
}

#[test]
fn supervised_refuses_training_files_of_only_test_positions() {
    let dir = tempfile::tempdir().unwrap();
    c4sim()
        .args(["bench", "supervised", "--train"])
        .arg(sets_path())
        .arg("--sets")
        .arg(sets_path())
        .arg("--out")
        .arg(dir.path().join("m"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no training position of `begin+middle`"));
}

#[test]
fn supervised_refuses_a_negative_value_weight() {
    let dir = tempfile::tempdir().unwrap();
    let train = small_test_file(dir.path(), 30);
    c4sim()
        .args(["bench", "supervised", "--train"])
        .arg(&train)
        .args(["--value-weight=-0.5", "--out"])
        .arg(dir.path().join("m"))
        .assert()
        .code(2)
        .stderr(predicates::str::contains(
            "--value-weight must be a number ≥ 0, not -0.5",
        ));
}
