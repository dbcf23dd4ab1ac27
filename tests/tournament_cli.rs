//! End-to-end: `mode: tournament` through the real binary — schedules,
//! ratings order, reports on disk, concurrency-independence, kill-and-resume.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

fn tournament_yaml(dir: &Path, extra: &str, players: &str) -> String {
    format!(
        "mode: tournament\nseed: 5\nreport: {{dir: '{}'}}\n{extra}players:\n{players}",
        dir.display()
    )
}

const FOUR: &str = "  - {kind: minimax, depth: 4, name: Deep}\n  - {kind: minimax, depth: 2, name: Shallow}\n  - {kind: random, name: Random}\n  - {kind: leftmost, name: Leftmost}\n";

/// games.jsonl's lines, parsed, in file order.
fn games(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("games.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// games.jsonl sorted by game number, without the wall-clock durations and
/// thinking times (the turn counts stay: they are the game's own).
fn games_without_time(dir: &Path) -> Vec<Value> {
    let mut v = games(dir);
    for g in &mut v {
        let o = g.as_object_mut().unwrap();
        o.remove("duration_ms");
        o.remove("think_ms").expect("think_ms");
    }
    v.sort_by_key(|g| g["game"].as_u64());
    v
}

fn run_ok(yaml: &str, args: &[&str]) -> String {
    let sc = scenario(yaml);
    let mut a = vec!["run", sc.path.to_str().unwrap()];
    a.extend_from_slice(args);
    let out = c4sim().args(&a).timeout(Duration::from_secs(120)).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).to_string()
}

#[test]
fn round_robin_of_four_players_with_four_games_per_pair() {
    let dir = tempfile::tempdir().unwrap();
    let out = run_ok(
        &tournament_yaml(dir.path(), "tournament: {games_per_pair: 4, concurrency: 2}\n", FOUR),
        &[],
    );
    assert!(out.contains("## Standings"), "{out}");
    let r = report_json(dir.path());
    assert_eq!(r["finished_games"], 24);
    let st = r["standings"].as_array().unwrap();
    let wins: u64 = st.iter().map(|p| p["wins"].as_u64().unwrap()).sum();
    let losses: u64 = st.iter().map(|p| p["losses"].as_u64().unwrap()).sum();
    assert_eq!(wins, losses);
    for p in st {
        assert_eq!(p["games"], 12, "{p}");
        for key in ["name", "elo", "elo_error", "games", "wins", "draws", "losses", "score"] {
            assert!(p.get(key).is_some(), "{key}");
        }
    }
    let order: Vec<&str> = st.iter().map(|p| p["name"].as_str().unwrap()).collect();
    assert_eq!(&order[..2], ["Deep", "Shallow"], "{order:?}");
    let games = games(dir.path());
    assert_eq!(games.len(), 24);
    // Each seat's thinking time and turns; these bots never answer illegally,
    // so every move after the opening is exactly one turn.
    for g in &games {
        let (think, turns) = (g["think_ms"].as_array().unwrap(), g["turns"].as_array().unwrap());
        assert_eq!((think.len(), turns.len()), (2, 2), "{g}");
        assert!(think.iter().all(Value::is_u64), "{g}");
        let asked: u64 = turns.iter().map(|t| t.as_u64().unwrap()).sum();
        let played = g["moves"].as_array().unwrap().len() - g["opening"].as_array().unwrap().len();
        assert_eq!(asked, played as u64, "{g}");
    }
    // And each player's mean of them in the report (every player moved).
    for p in st {
        assert!(p["ms_per_move"].as_f64().is_some_and(|x| x >= 0.0), "{p}");
    }
    let md = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    assert!(md.contains("| LOS next | ms/move |"), "{md}");
    let csv = std::fs::read_to_string(dir.path().join("standings.csv")).unwrap();
    assert!(csv.lines().next().unwrap().ends_with(",los_next,ms_per_move"), "{csv}");
    for f in ["report.md", "report.html", "standings.csv", "state.json"] {
        assert!(dir.path().join(f).exists(), "{f}");
    }
    let html = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(html.contains("<svg") && !html.contains("<script"));
}

#[test]
fn gauntlet_and_double_round_robin_sizes() {
    let dir = tempfile::tempdir().unwrap();
    run_ok(
        &tournament_yaml(
            dir.path(),
            "tournament: {schedule: gauntlet, games_per_pair: 2, openings: {plies: 1}}\n",
            FOUR,
        ),
        &[],
    );
    assert_eq!(report_json(dir.path())["finished_games"], 6);
    let dir = tempfile::tempdir().unwrap();
    run_ok(
        &tournament_yaml(
            dir.path(),
            "tournament: {schedule: double-round-robin, games_per_pair: 2, openings: {plies: 1}}\n",
            FOUR,
        ),
        &[],
    );
    assert_eq!(report_json(dir.path())["finished_games"], 24);
}

#[test]
fn concurrency_one_and_two_give_identical_reports() {
    let players =
        "  - {kind: random, name: R1}\n  - {kind: random, name: R2}\n  - {kind: mcts, simulations: 50, name: M}\n";
    let a = tempfile::tempdir().unwrap();
    let b = tempfile::tempdir().unwrap();
    run_ok(
        &tournament_yaml(a.path(), "tournament: {games_per_pair: 8, concurrency: 1}\n", players),
        &[],
    );
    run_ok(
        &tournament_yaml(b.path(), "tournament: {games_per_pair: 8, concurrency: 2}\n", players),
        &[],
    );
    assert_eq!(report_without_time(a.path()), report_without_time(b.path()));
    assert_eq!(games_without_time(a.path()), games_without_time(b.path()));
}

#[test]
fn killed_at_random_moments_then_resumed_equals_an_uninterrupted_run() {
    // Players slow enough (about 1.5 s for the 120 games here) that a kill
    // lands mid-run even when a loaded machine wakes this poller late: at
    // 1 ms per game the whole run took 0.12 s and CI once saw it finish
    // between a target and its kill.
    let players = "  - {kind: minimax, depth: 8, name: M8}\n  - {kind: random, name: R}\n  - {kind: mcts, simulations: 6000, name: U}\n  - {kind: rightmost, name: Right}\n";
    let extra = "tournament: {games_per_pair: 20, concurrency: 2}\n";
    let whole = tempfile::tempdir().unwrap();
    run_ok(&tournament_yaml(whole.path(), extra, players), &[]);

    let cut = tempfile::tempdir().unwrap();
    let sc = scenario(&tournament_yaml(cut.path(), extra, players));
    let done = |d: &Path| std::fs::read_to_string(d.join("games.jsonl")).map_or(0, |t| t.lines().count());
    // Kill (SIGKILL) at moments spread over the run: once almost at once,
    // then each time a few more games have been recorded.
    let mut kills = 0;
    for more in [0usize, 5, 13, 3, 17] {
        let target = done(cut.path()) + more;
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("c4sim"))
            .args(["run", sc.path.to_str().unwrap()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let start = std::time::Instant::now();
        while done(cut.path()) < target && start.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(2));
        }
        if more == 0 {
            std::thread::sleep(Duration::from_millis(30));
        }
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap();
            kills += 1;
        }
        child.wait().unwrap();
    }
    assert!(
        kills >= 4,
        "the tournament should still have been running when killed ({kills} kills)"
    );
    let partial = done(cut.path());
    assert!(partial < 120, "some games must be left to resume ({partial} done)");
    let out = c4sim()
        .args(["run", sc.path.to_str().unwrap()])
        .timeout(Duration::from_secs(120))
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(report_without_time(cut.path()), report_without_time(whole.path()));
    assert_eq!(games_without_time(cut.path()), games_without_time(whole.path()));
}

#[test]
fn another_tournament_in_the_same_directory_needs_fresh() {
    let dir = tempfile::tempdir().unwrap();
    let extra = "tournament: {games_per_pair: 2, openings: {plies: 1}}\n";
    run_ok(&tournament_yaml(dir.path(), extra, FOUR), &[]);
    let other = tournament_yaml(dir.path(), extra, "  - {kind: random}\n  - {kind: leftmost}\n");
    let sc = scenario(&other);
    c4sim()
        .args(["run", sc.path.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--fresh"));
    c4sim()
        .args(["run", sc.path.to_str().unwrap(), "--fresh"])
        .assert()
        .success();
    assert_eq!(report_json(dir.path())["finished_games"], 2);
}

#[test]
fn faulty_players_lose_their_games_and_the_tournament_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let players = "  - {name: Quitter, kind: external, command: [python3, tests/bots/exiter.py]}\n  - {kind: invalid, name: Bad}\n  - {kind: leftmost, name: Left}\n";
    let ev = parse_events(
        run_ok(
            &tournament_yaml(
                dir.path(),
                "tournament: {games_per_pair: 2, openings: {plies: 1}}\n",
                players,
            ),
            &["--json"],
        )
        .as_bytes(),
    );
    assert_eq!(events(&ev, "game_over").len(), 6);
    assert!(!events(&ev, "progress").is_empty());
    assert_eq!(events(&ev, "summary").len(), 1);
    let r = report_json(dir.path());
    let reasons = r["reasons"].as_array().unwrap();
    let q = reasons.iter().find(|p| p["name"] == "Quitter").unwrap();
    // It exits at once in every game it gets to move in: restarted each time.
    assert_eq!(q["faults"]["FORFEIT"], q["ended_by"]["FORFEIT"], "{q}");
    assert!(q["faults"]["FORFEIT"].as_u64().unwrap() >= 3, "{q}");
    let b = reasons.iter().find(|p| p["name"] == "Bad").unwrap();
    assert!(b["faults"]["TOO_MANY_INVALID"].as_u64().unwrap() >= 2, "{b}");
    let left = r["standings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "Left")
        .unwrap()
        .clone();
    assert_eq!(left["wins"], 4);
}
