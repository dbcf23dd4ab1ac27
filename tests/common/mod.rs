//! Helpers shared by the end-to-end tests, one style for all: each test
//! file says `mod common;` and uses what it needs. Here: write a scenario to
//! a temp dir, run c4sim on it, parse its `--json` stream; [`net`]: a lobby
//! server and raw protocol clients; [`web`]: a page served on loopback.
#![allow(dead_code)]

pub mod net;
pub mod web;

use assert_cmd::Command;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

pub struct Scenario {
    pub dir: tempfile::TempDir,
    pub path: PathBuf,
}

/// Writes `yaml` as a scenario file in a fresh temp dir.
pub fn scenario(yaml: &str) -> Scenario {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("scenario.yaml");
    std::fs::write(&path, yaml).unwrap();
    Scenario { dir, path }
}

pub fn c4sim() -> Command {
    let mut c = Command::cargo_bin("c4sim").unwrap();
    c.env_remove("RUST_LOG").env("NO_COLOR", "1");
    c
}

/// Runs `cmd` (at most two minutes), checks that it succeeded and returns
/// its standard output.
pub fn stdout_of_success(cmd: &mut Command) -> String {
    let out = cmd.timeout(std::time::Duration::from_secs(120)).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs `c4sim run FILE --json` and returns the events.
pub fn run_json(yaml: &str) -> Vec<Value> {
    let sc = scenario(yaml);
    let out = c4sim()
        .args(["run", sc.path.to_str().unwrap(), "--json"])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "c4sim failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    parse_events(&out.stdout)
}

pub fn parse_events(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect()
}

pub fn events<'a>(all: &'a [Value], kind: &str) -> Vec<&'a Value> {
    all.iter().filter(|e| e["event"] == kind).collect()
}

pub fn game_overs(all: &[Value]) -> Vec<&Value> {
    events(all, "game_over")
}

/// Whether a process is still running (a zombie waiting to be reaped counts
/// as gone: it runs no code and holds no resources but its table entry).
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat.rsplit(')').next().and_then(|s| s.split_whitespace().next()) != Some("Z"),
        Err(_) => false,
    }
}

/// A tournament's `report.json` in `dir`, parsed.
pub fn report_json(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap()
}

/// A tournament's `report.json` without what the clock measured (each
/// standing's `ms_per_move`): two runs of the same games agree on the rest.
pub fn report_without_time(dir: &Path) -> Value {
    let mut r = report_json(dir);
    for p in r["standings"].as_array_mut().unwrap() {
        p.as_object_mut().unwrap().remove("ms_per_move").expect("ms_per_move");
    }
    r
}

/// `standings.csv` without its last column (`ms_per_move`, measured by the
/// clock), for the same comparison.
pub fn standings_csv_without_time(dir: &Path) -> String {
    let text = std::fs::read_to_string(dir.join("standings.csv")).unwrap();
    text.lines()
        .map(|l| {
            let (rest, _) = l.rsplit_once(',').unwrap();
            format!("{rest}\n")
        })
        .collect()
}

/// `scenarios/train_tiny.yaml` with `out` (DIR/out) and `iterations`
/// replaced, and `extra` (indented YAML lines) added to its `train:` section.
pub fn tiny_training(dir: &Path, iterations: u32, extra: &str) -> PathBuf {
    let src = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/scenarios/train_tiny.yaml")).unwrap();
    let out = dir.join("out");
    let mut text: String = src
        .lines()
        .map(|l| {
            if l.trim_start().starts_with("out:") {
                format!("  out: {}", out.display())
            } else if l.trim_start().starts_with("iterations:") {
                format!("  iterations: {iterations}")
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    text.push('\n');
    text.push_str(extra);
    let path = dir.join(format!("tiny{iterations}.yaml"));
    std::fs::write(&path, text).unwrap();
    path
}

/// `metrics.csv` as one map per iteration, column name → cell (empty where
/// not measured), so a test reads a column by name wherever it stands.
pub fn metrics_by_name(out: &Path) -> Vec<HashMap<String, String>> {
    let text = std::fs::read_to_string(out.join("metrics.csv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    lines
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            assert_eq!(cells.len(), header.len(), "{text}");
            header
                .iter()
                .map(|h| h.to_string())
                .zip(cells.into_iter().map(str::to_string))
                .collect()
        })
        .collect()
}
