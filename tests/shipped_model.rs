//! End-to-end tests of the shipped AlphaZero model (`models/connect4-6x7`,
//! `players/alphazero.yaml`) through the README's main command,
//! `c4sim run scenarios/human_vs_az.yaml`, with a person's answers piped
//! into standard input, and through `c4sim analyze --player alphazero`.

mod common;

use common::{c4sim, events, game_overs, parse_events};
use std::time::Duration;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Only against a hang: these tests check what the shipped model plays and
/// says, not how fast (that is `bench search`), so no limit here is one a
/// busy machine can reach.
const HANG_GUARD: Duration = Duration::from_secs(900);

/// The README's main scenario, as shipped, with the referee's move-time
/// limit lifted: the AI searches a fixed 64,000 simulations a move, which a
/// machine busy with other builds can stretch past the shipped 30 s, and a
/// timed-out move would be a TIMEOUT loss instead of the game this checks.
fn human_vs_az_untimed(dir: &tempfile::TempDir) -> std::path::PathBuf {
    let shipped = std::fs::read_to_string(format!("{ROOT}/scenarios/human_vs_az.yaml")).unwrap();
    assert!(
        !shipped.contains("limits:"),
        "the shipped scenario sets its own limits now"
    );
    let path = dir.path().join("human_vs_az.yaml");
    std::fs::write(&path, format!("{shipped}\nlimits: {{ move_time: 24h }}\n")).unwrap();
    path
}

/// The person's side of a game: who moves first, then columns 1..7 over
/// and over (a full column is refused and asked again, as for any person).
fn script(first: &str) -> String {
    let mut s = format!("{first}\n");
    for _ in 0..6 {
        s.push_str("1\n2\n3\n4\n5\n6\n7\n");
    }
    s
}

fn play(first: &str, json: bool) -> std::process::Output {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = c4sim();
    cmd.current_dir(ROOT).arg("run").arg(human_vs_az_untimed(&dir));
    if json {
        cmd.arg("--json");
    }
    cmd.write_stdin(script(first)).timeout(HANG_GUARD).output().unwrap()
}

#[test]
fn slow_human_vs_az_plays_to_the_end_with_the_ai_moving_first() {
    let out = play("2", false);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("Who moves first? 1 = You, 2 = AlphaZero"), "{stdout}");
    // The AI moves first: its move comes before any prompt for the person.
    let first_ai = stdout.find("(AlphaZero) played column").expect("the AI moved");
    let first_prompt = stdout.find("your move").expect("the person was asked");
    assert!(first_ai < first_prompt, "{stdout}");
    // Its thinking after each of its moves, and a finished game.
    assert!(stdout.contains("AlphaZero expects to score"), "{stdout}");
    // The profile's exact endgames: its winning move is a proven one.
    assert!(stdout.contains("proven win in 1"), "{stdout}");
    assert!(stdout.contains("Game over!"), "{stdout}");
    // A person playing columns in turn is no match for the trained network.
    assert!(stdout.contains("(AlphaZero) wins"), "{stdout}");
    assert!(stdout.contains("Summary after 1 game"), "{stdout}");
}

#[test]
fn slow_human_vs_az_with_the_person_first_in_json() {
    let out = play("", true);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Prompts go to stderr when stdout carries JSON.
    assert!(String::from_utf8_lossy(&out.stderr).contains("Who moves first?"));
    let all = parse_events(&out.stdout);
    let start = events(&all, "game_start");
    assert_eq!(start[0]["players"], serde_json::json!(["You", "AlphaZero"]));
    let over = game_overs(&all);
    assert_eq!(over.len(), 1);
    assert_eq!(over[0]["winner"], "AlphaZero", "{over:?}");
    // Every move of the AI carries its note: the search's expectation, or
    // once the solver proves the position (the profile's exact endgames)
    // the proven result, to the last move, a proven win in 1.
    let ai_moves: Vec<_> = events(&all, "move")
        .into_iter()
        .filter(|m| m["player"] == "AlphaZero")
        .collect();
    assert!(!ai_moves.is_empty());
    let note = |m: &serde_json::Value| m["note"].as_str().unwrap_or("").to_string();
    assert!(ai_moves
        .iter()
        .all(|m| note(m).contains("expects to score") || note(m).starts_with("proven")));
    assert_eq!(note(ai_moves.last().unwrap()), "proven win in 1");
}

#[test]
fn slow_a_bad_answer_to_who_moves_first_is_asked_again() {
    let dir = tempfile::tempdir().unwrap();
    let mut cmd = c4sim();
    let out = cmd
        .current_dir(ROOT)
        .arg("run")
        .arg(human_vs_az_untimed(&dir))
        .write_stdin("9\nnobody\nalphazero\nquit\n")
        .timeout(HANG_GUARD)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    assert_eq!(stdout.matches("Who moves first?").count(), 3, "{stdout}");
    assert!(stdout.contains("Type a number from 1 to 2 or a name."), "{stdout}");
    // `alphazero` by name: the AI opened, then the person resigned, and
    // the result says so in words (the end reason stays FORFEIT).
    assert!(stdout.find("(AlphaZero) played column").unwrap() < stdout.find("your move").unwrap());
    assert!(stdout.contains("(You) resigned (FORFEIT)"), "{stdout}");
    assert!(!stdout.contains("could not move"), "{stdout}");
}

#[test]
fn slow_analyze_with_the_shipped_profile_answers_positions_from_stdin() {
    let out = c4sim()
        .current_dir(ROOT)
        .args(["analyze", "--player", "alphazero"])
        .write_stdin("\n445566\n4455\n")
        .timeout(HANG_GUARD)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let lines = parse_events(&out.stdout);
    assert_eq!(lines.len(), 3);
    // The empty board: the centre. Red to move with 4-5-6 on the bottom row:
    // either end wins at once. Red with 4-5 on the bottom row and both sides
    // free: 3 or 6 makes an open three, two threats Yellow cannot both stop.
    assert_eq!(lines[0]["position"], "");
    assert_eq!(lines[0]["column"], 4);
    assert!([3, 7].contains(&lines[1]["column"].as_u64().unwrap()), "{:?}", lines[1]);
    assert!([3, 6].contains(&lines[2]["column"].as_u64().unwrap()), "{:?}", lines[2]);
    for l in &lines {
        let scores = l["scores"].as_array().unwrap();
        assert_eq!(scores.len(), 7);
        let shares: f64 = scores.iter().map(|s| s["share"].as_f64().unwrap()).sum();
        assert!((shares - 1.0).abs() < 1e-3, "{l:?}");
    }
}

#[test]
fn the_search_benchmark_runs_on_the_shipped_model() {
    let out = c4sim()
        .current_dir(ROOT)
        .args(["bench", "search", "--simulations", "300", "--rounds", "1"])
        .timeout(HANG_GUARD)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("models/connect4-6x7 (iteration "), "{text}");
    assert_eq!(text.matches(" s per move").count(), 3, "{text}");
    assert!(text.contains("speed-up over one leaf per call"), "{text}");
}
