//! End-to-end: `c4sim run` on match scenarios, every end reason, every
//! renderer, `--json`, `validate` and `analyze`, through the real binary.

mod common;
use common::*;
use predicates::prelude::*;
use serde_json::json;

#[test]
fn leftmost_vs_rightmost_first_seat_wins() {
    let ev = run_json("players: [{kind: leftmost}, {kind: rightmost}]\n");
    let over = game_overs(&ev);
    assert_eq!(over.len(), 1);
    assert_eq!(over[0]["moves"], json!([0, 6, 0, 6, 0, 6, 0]));
    assert_eq!(over[0]["reason"], "WIN");
    assert_eq!(over[0]["result"], "win");
    assert_eq!(over[0]["winner"], "leftmost");
    let start = &events(&ev, "game_start")[0];
    assert_eq!(start["players"], json!(["leftmost", "rightmost"]));
    assert_eq!(
        (
            start["rows"].as_u64(),
            start["cols"].as_u64(),
            start["win_length"].as_u64()
        ),
        (Some(6), Some(7), Some(4))
    );
    let first_move = &events(&ev, "move")[0];
    assert_eq!(first_move["player"], "leftmost");
    assert_eq!(
        (first_move["column"].as_u64(), first_move["row"].as_u64()),
        (Some(0), Some(0))
    );
    let summary = events(&ev, "summary")[0];
    assert_eq!(
        summary["players"][0],
        json!({"name": "leftmost", "wins": 1, "draws": 0, "losses": 0})
    );
    assert_eq!(
        summary["players"][1],
        json!({"name": "rightmost", "wins": 0, "draws": 0, "losses": 1})
    );
}

#[test]
fn leftmost_vs_leftmost_on_three_by_two_is_a_tie() {
    let ev = run_json("board: {rows: 3, cols: 2, win_length: 3}\nplayers: [{kind: leftmost}, {kind: leftmost}]\n");
    let over = game_overs(&ev)[0];
    assert_eq!(over["reason"], "TIE");
    assert_eq!(over["result"], "draw");
    assert_eq!(over["winner"], serde_json::Value::Null);
    assert_eq!(over["moves"].as_array().unwrap().len(), 6);
    assert_eq!(events(&ev, "summary")[0]["players"][0]["draws"], 1);
}

#[test]
fn invalid_vs_leftmost_is_too_many_invalid() {
    let ev = run_json("players: [{kind: invalid}, {kind: leftmost}]\n");
    let illegal = events(&ev, "illegal_move");
    assert_eq!(illegal.len(), 5);
    assert_eq!(illegal[0]["player"], "invalid");
    assert_eq!(illegal[0]["reason"], "column 7 is out of range (0 to 6)");
    let over = game_overs(&ev)[0];
    assert_eq!(over["reason"], "TOO_MANY_INVALID");
    assert_eq!(over["winner"], "leftmost");
}

#[test]
fn max_invalid_moves_is_a_setting() {
    let ev = run_json("limits: {max_invalid_moves: 2}\nplayers: [{kind: invalid}, {kind: leftmost}]\n");
    assert_eq!(events(&ev, "illegal_move").len(), 2);
}

#[test]
fn swap_colors_alternates_seats_and_summary_counts_games() {
    let ev = run_json("match: {games: 4, swap_colors: true}\nplayers: [{kind: leftmost}, {kind: rightmost}]\n");
    let starts = events(&ev, "game_start");
    assert_eq!(starts[0]["players"], json!(["leftmost", "rightmost"]));
    assert_eq!(starts[1]["players"], json!(["rightmost", "leftmost"]));
    // Whoever moves first wins this pairing, so each wins twice.
    let s = &events(&ev, "summary")[0]["players"];
    assert_eq!(s[0]["wins"], 2);
    assert_eq!(s[1]["wins"], 2);
}

#[test]
fn same_seed_same_games_other_seed_other_games() {
    let yaml =
        |seed: u64| format!("seed: {seed}\nmatch: {{games: 3}}\nplayers: [{{kind: random}}, {{kind: random}}]\n");
    let moves = |ev: &[serde_json::Value]| game_overs(ev).iter().map(|o| o["moves"].clone()).collect::<Vec<_>>();
    let a = moves(&run_json(&yaml(11)));
    assert_eq!(a, moves(&run_json(&yaml(11))));
    assert_ne!(a, moves(&run_json(&yaml(12))));
}

#[test]
fn minimax_beats_random_and_mcts_plays_legal_games() {
    let ev = run_json("match: {games: 2}\nplayers: [{kind: minimax, depth: 4, name: M}, {kind: random, name: R}]\n");
    assert_eq!(events(&ev, "summary")[0]["players"][0]["wins"], 2);
    let ev = run_json("players: [{kind: mcts, simulations: 300, name: U}, {kind: random, name: R}]\n");
    assert_eq!(game_overs(&ev).len(), 1);
    assert!(events(&ev, "illegal_move").is_empty());
}

#[test]
fn small_board_and_nine_seats() {
    let ev = run_json("board: {rows: 4, cols: 5, win_length: 3}\nplayers: [{kind: leftmost}, {kind: random}]\n");
    assert_eq!(game_overs(&ev).len(), 1);
    let ev = run_json(
        "board: {rows: 12, cols: 13, win_length: 4}\nplayers: [{kind: random}, {kind: random}, {kind: random}, {kind: random}, {kind: random}, {kind: random}, {kind: random}, {kind: random}, {kind: leftmost}]\n",
    );
    let start = &events(&ev, "game_start")[0];
    assert_eq!(start["players"].as_array().unwrap().len(), 9);
    assert_eq!(start["players"][1], "random 2");
}

#[test]
fn human_with_junk_first_wins_by_stacking() {
    let sc = scenario("render: ascii\nplayers: [{name: Ann, kind: human}, {kind: leftmost}]\n");
    let out = c4sim()
        .args(["run", sc.path.to_str().unwrap()])
        .write_stdin("hello\n99\n\n4\n4\n4\n4\n")
        .timeout(std::time::Duration::from_secs(30))
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(text.contains("X Red (Ann), your move [1-7]: "), "{text}");
    assert!(
        text.contains("`hello` is not a column: type a number from 1 to 7 — 4 tries left"),
        "{text}"
    );
    assert!(
        text.contains("column 99 is out of range (1 to 7) — 3 tries left"),
        "{text}"
    );
    assert!(text.contains("Game over! X Red (Ann) wins in 7 moves!"), "{text}");
}

#[test]
fn human_end_of_input_forfeits() {
    let sc = scenario("players: [{kind: leftmost}, {name: Bob, kind: human}]\n");
    let out = c4sim()
        .args(["run", sc.path.to_str().unwrap(), "--json"])
        .write_stdin("1\n")
        .assert()
        .success();
    let ev = parse_events(&out.get_output().stdout);
    let over = game_overs(&ev)[0];
    assert_eq!(over["reason"], "FORFEIT");
    assert_eq!(over["winner"], "leftmost");
    // prompts go to stderr with --json, so stdout stays JSON
    assert!(String::from_utf8_lossy(&out.get_output().stderr).contains("your move [1-7]"));
}

#[test]
fn quit_is_a_resignation_in_words_and_in_the_record() {
    let sc = scenario("render: ascii\nplayers: [{kind: leftmost}, {name: Bob, kind: human}]\n");
    let out = c4sim()
        .args(["run", sc.path.to_str().unwrap()])
        .write_stdin("quit\n")
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        text.contains("Game over! X Red (leftmost) wins — O Yellow (Bob) resigned (FORFEIT)"),
        "{text}"
    );
    assert!(!text.contains("could not move"), "{text}");
    // In JSON the reason stays FORFEIT (docs/rules.md) and `resigned` names who did;
    // end of input is no resignation and carries none.
    let json = |stdin: &str| {
        let out = c4sim()
            .args(["run", sc.path.to_str().unwrap(), "--json"])
            .write_stdin(stdin.to_string())
            .assert()
            .success();
        game_overs(&parse_events(&out.get_output().stdout))[0].clone()
    };
    let over = json("quit\n");
    assert_eq!(
        (&over["reason"], &over["resigned"]),
        (&"FORFEIT".into(), &serde_json::json!(["Bob"]))
    );
    let over = json("");
    assert_eq!(over["reason"], "FORFEIT");
    assert!(over.get("resigned").is_none(), "{over}");
}

#[test]
fn every_renderer_draws_the_board() {
    let yaml =
        |look: &str| format!("render: {look}\ncolor: always\nplayers: [{{kind: leftmost}}, {{kind: rightmost}}]\n");
    let run = |look: &str| {
        let sc = scenario(&yaml(look));
        let out = c4sim().args(["run", sc.path.to_str().unwrap()]).assert().success();
        String::from_utf8_lossy(&out.get_output().stdout).to_string()
    };
    let emoji = run("emoji");
    assert!(emoji.contains("Game started! Red goes first"));
    assert!(emoji.contains("┃ 🔴 ⚪ ⚪ ⚪ ⚪ ⚪ 🟡 ┃"));
    assert!(emoji.contains("Move 7 — 🔴 Red (leftmost) played column 1"));
    assert!(emoji.contains("Next: 🟡 Yellow (rightmost)'s turn"));
    assert!(emoji.contains("Game over! 🔴 Red (leftmost) wins in 7 moves!"));
    let full = run("fullwidth");
    assert!(full.contains("　１　２　３　４　５　６　７"));
    assert!(full.contains("｜Ｘ｜　｜　｜　｜　｜　｜Ｏ｜"));
    let ascii = run("ascii");
    assert!(ascii.contains("| X | . | . | . | . | . | O |"));
    assert!(ascii.contains("+---+---+---+---+---+---+---+"));
    let none = run("none");
    assert!(!none.contains("+---+"));
    assert!(none.contains("Summary after 1 game:"));
}

#[test]
fn emoji_falls_back_to_ascii_without_a_terminal() {
    let sc = scenario("render: emoji\nplayers: [{kind: leftmost}, {kind: rightmost}]\n");
    c4sim()
        .args(["run", sc.path.to_str().unwrap()])
        .assert()
        .success()
        .stdout(predicate::str::contains("| X |").and(predicate::str::contains("🔴").not()));
}

#[test]
fn validate_accepts_the_shipped_scenarios() {
    for f in std::fs::read_dir("scenarios").unwrap() {
        let p = f.unwrap().path();
        c4sim()
            .args(["validate", p.to_str().unwrap()])
            .assert()
            .success()
            .stdout(predicate::str::contains(": ok"));
    }
}

#[test]
fn broken_scenarios_exit_2_with_a_location() {
    let cases = [
        ("match: {gmes: 3}\n", ":1:", "did you mean `games`"),
        ("match:\n  games: ten\n", ":2:", "games"),
        ("board:\n  rows: 4\n  cols: 4\n  win_length: 5\n", ":4:", "win_length"),
        (
            "players:\n  - {kind: minmax}\n  - {kind: random}\n",
            ":2:",
            "did you mean `minimax`",
        ),
        (
            "players:\n  - {use: nosuchprofile}\n  - {kind: random}\n",
            ":2:",
            "nosuchprofile",
        ),
    ];
    for (yaml, at, says) in cases {
        let sc = scenario(yaml);
        for cmd in ["run", "validate"] {
            let out = c4sim().args([cmd, sc.path.to_str().unwrap()]).assert().code(2);
            let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
            assert!(err.contains(&format!("scenario.yaml{at}")), "{yaml:?}: {err}");
            assert!(err.contains(says), "{yaml:?}: {err}");
            assert!(out.get_output().stdout.is_empty(), "nothing runs for {yaml:?}");
        }
    }
}

#[test]
fn analyze_minimax_answers_each_position() {
    let out = c4sim()
        .args(["analyze", "--player", "{kind: minimax, depth: 4}"])
        .write_stdin("\n4453\n1212121\n")
        .assert()
        .success();
    let lines = parse_events(&out.get_output().stdout);
    assert_eq!(lines[0]["position"], "");
    assert_eq!(lines[0]["column"], 4);
    assert_eq!(lines[0]["scores"].as_array().unwrap().len(), 7);
    assert_eq!(lines[1]["position"], "4453");
    assert!(lines[1]["column"].as_u64().unwrap() >= 1);
    assert!(
        lines[2]["error"].is_string(),
        "a finished game is refused: {}",
        lines[2]
    );
}

#[test]
fn analyze_by_profile_name_and_board() {
    let out = c4sim()
        .args(["analyze", "--player", "minimax4", "--board", "4x5x3"])
        .write_stdin("\n")
        .assert()
        .success();
    let lines = parse_events(&out.get_output().stdout);
    assert_eq!(lines[0]["scores"].as_array().unwrap().len(), 5);
    let out = c4sim()
        .args(["analyze", "--player", "leftmost"])
        .write_stdin("1\n")
        .assert()
        .success();
    assert_eq!(parse_events(&out.get_output().stdout)[0]["column"], 1);
    c4sim()
        .args(["analyze", "--player", "{kind: human}"])
        .write_stdin("\n")
        .assert()
        .code(2);
}

#[test]
fn searches_say_what_they_think_of_their_moves() {
    let sc = scenario("render: ascii\nplayers: [{kind: minimax, depth: 4, name: M}, {kind: leftmost}]\n");
    let out = c4sim().args(["run", sc.path.to_str().unwrap()]).assert().success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    assert!(
        text.contains("  ~ M evaluation ") || text.contains("  ~ M sees a forced"),
        "{text}"
    );
    let ev = run_json("players: [{kind: minimax, depth: 4, name: M}, {kind: leftmost}]\n");
    let moves = events(&ev, "move");
    assert!(moves
        .iter()
        .filter(|m| m["player"] == "M")
        .all(|m| m["note"].is_string()));
    assert!(moves
        .iter()
        .filter(|m| m["player"] == "leftmost")
        .all(|m| m.get("note").is_none()));
    // The winning move is one the search saw coming.
    let last_m = moves.iter().rev().find(|m| m["player"] == "M").unwrap();
    assert!(last_m["note"].as_str().unwrap().contains("forced win"), "{last_m}");
}

#[test]
fn an_agent_player_without_its_agent_is_a_usage_error() {
    // Agents come from a program that embeds c4sim (Python's c4sim.run);
    // the command line has none to give, and says so before any game.
    let sc = scenario("players: [{kind: agent, name: mine}, {kind: leftmost}]\n");
    c4sim()
        .args(["run", sc.path.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "player `mine`: no agent named `mine` was given",
        ));
}
