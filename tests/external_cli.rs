//! End-to-end: external programs as players — real child processes,
//! timeouts, crashes, doctored boards, floods, and no process left behind.

mod common;
use common::*;

#[test]
fn example_bot_plays_whole_games() {
    let ev = run_json("match: {games: 2}\nplayers: [{use: example_bot}, {kind: random}]\n");
    assert_eq!(game_overs(&ev).len(), 2);
    assert!(events(&ev, "illegal_move").is_empty(), "its BOARD lines pass the check");
}

#[test]
fn example_bot_takes_a_win_and_blocks_a_loss() {
    // Against leftmost, which stacks column 1: the bot must block it.
    let ev = run_json("players: [{kind: leftmost}, {use: example_bot}]\n");
    let over = game_overs(&ev)[0];
    assert_ne!(over["winner"], "leftmost", "{over}");
    // Against rightmost moving second, it wins.
    let ev = run_json("players: [{use: example_bot}, {kind: rightmost}]\n");
    assert_eq!(game_overs(&ev)[0]["winner"], "ExampleBot");
}

#[test]
fn a_bot_that_sleeps_past_move_time_loses_on_timeout_and_is_killed() {
    let pid_dir = tempfile::tempdir().unwrap();
    let pid_file = pid_dir.path().join("pids");
    let yaml = format!(
        "limits: {{move_time: 3s}}\nmatch: {{games: 2}}\nplayers:\n  - {{name: Sleepy, kind: external, command: [python3, tests/bots/sleeper.py], env: {{PID_FILE: '{}'}}}}\n  - {{kind: leftmost}}\n",
        pid_file.display()
    );
    let ev = run_json(&yaml);
    let over = game_overs(&ev);
    assert_eq!(over.len(), 2);
    for o in over {
        assert_eq!(o["reason"], "TIMEOUT");
        assert_eq!(o["winner"], "leftmost");
    }
    let pids: Vec<i32> = std::fs::read_to_string(&pid_file)
        .unwrap()
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 2, "restarted for its second game");
    std::thread::sleep(std::time::Duration::from_millis(200));
    for p in pids {
        assert!(!alive(p), "bot process {p} outlived the run");
    }
}

#[test]
fn a_bot_that_exits_at_once_forfeits() {
    let ev = run_json(
        "players: [{kind: leftmost}, {name: Quitter, kind: external, command: [python3, tests/bots/exiter.py]}]\n",
    );
    let over = game_overs(&ev)[0];
    assert_eq!(over["reason"], "FORFEIT");
    assert_eq!(over["winner"], "leftmost");
}

#[test]
fn a_program_that_cannot_start_forfeits() {
    let ev = run_json("players: [{name: Ghost, kind: external, command: [/nonexistent/bot]}, {kind: leftmost}]\n");
    assert_eq!(game_overs(&ev)[0]["reason"], "FORFEIT");
}

#[test]
fn a_doctored_board_is_re_asked_then_too_many_invalid() {
    let ev = run_json(
        "players: [{name: Cheat, kind: external, command: [python3, tests/bots/doctored.py]}, {kind: leftmost}]\n",
    );
    let illegal = events(&ev, "illegal_move");
    assert_eq!(illegal.len(), 5);
    assert!(
        illegal[0]["reason"].as_str().unwrap().contains("BOARD is wrong"),
        "{}",
        illegal[0]
    );
    let over = game_overs(&ev)[0];
    assert_eq!(over["reason"], "TOO_MANY_INVALID");
    assert_eq!(over["winner"], "leftmost");
}

#[test]
fn a_flood_of_junk_is_bounded_and_illegal() {
    let ev = run_json("limits: {move_time: 5s}\nplayers: [{name: Flood, kind: external, command: [python3, tests/bots/flood.py]}, {kind: leftmost}]\n");
    let over = game_overs(&ev)[0];
    assert_eq!(over["winner"], "leftmost");
    assert!(!events(&ev, "illegal_move").is_empty());
}
