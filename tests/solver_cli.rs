//! The `solver` kind end to end, and `validate --resolved`, through the real
//! binary.

mod common;
use common::*;

#[test]
fn analyze_solver_prints_exact_scores_on_6x7() {
    // A position from Pascal Pons' test sets: the side to move scores 10.
    let out = c4sim()
        .args(["analyze", "--player", "{kind: solver, table_log2: 20}"])
        .write_stdin("7234472553\n")
        .assert()
        .success();
    let lines = parse_events(&out.get_output().stdout);
    let scores: Vec<i64> = lines[0]["scores"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_i64().expect("every column is open and proven"))
        .collect();
    assert_eq!(scores.len(), 7);
    assert_eq!(*scores.iter().max().unwrap(), 10, "{}", lines[0]);
    let best = lines[0]["column"].as_u64().unwrap() as usize;
    assert_eq!(scores[best - 1], 10, "it plays a best column: {}", lines[0]);
}

#[test]
fn the_solver_wins_and_says_how_soon() {
    let all = run_json(
        "board: {rows: 4, cols: 5, win_length: 3}\nmatch: {games: 2}\nplayers:\n  - {kind: solver, table_log2: 16}\n  - {kind: minimax, depth: 2}\n",
    );
    let over = game_overs(&all);
    assert_eq!(over.len(), 2);
    // 4 × 5 with three in a row is a first-player win; the solver moves
    // first in game 1 and must win it.
    assert_eq!(over[0]["winner"], "solver", "{:?}", over[0]);
    let notes: Vec<&str> = events(&all, "move")
        .iter()
        .filter(|m| m["player"] == "solver")
        .filter_map(|m| m["note"].as_str())
        .collect();
    assert!(
        !notes.is_empty()
            && notes
                .iter()
                .all(|n| n.contains("wins in") || n.contains("loses in") || *n == "draw"),
        "{notes:?}"
    );
}

#[test]
fn validate_resolved_expands_profiles_and_validates_again() {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = c4sim()
        .current_dir(root)
        .args(["validate", "scenarios/round_robin.yaml", "--resolved"])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&out.get_output().stdout).to_string();
    let doc: serde_yaml::Value = serde_yaml::from_str(&text).unwrap();
    let players = doc["players"].as_sequence().unwrap();
    let m8 = players.iter().find(|p| p["name"] == "Minimax8").unwrap();
    assert_eq!(m8["kind"], "minimax");
    assert_eq!(m8["depth"], 8);
    assert!(players.iter().all(|p| p["kind"].is_string()));
    assert_eq!(doc["tournament"]["games_per_pair"], 20);
    let sc = scenario(&text);
    let again = c4sim()
        .args(["validate", sc.path.to_str().unwrap(), "--resolved"])
        .assert()
        .success();
    let text2 = String::from_utf8_lossy(&again.get_output().stdout).to_string();
    // Only the header comment names another file.
    assert_eq!(
        text.lines().skip(1).collect::<Vec<_>>(),
        text2.lines().skip(1).collect::<Vec<_>>()
    );
}

#[test]
fn with_the_shipped_book_the_solver_plays_perfect_6x7_games_from_the_empty_board() {
    // Both sides perfect: the first player wins, in the centre first, with
    // her 21st and last piece (the 41st ply). Without the book the first
    // moves alone take minutes; the book answers them.
    let book = concat!(env!("CARGO_MANIFEST_DIR"), "/models/solver-book-6x7.bin");
    let all = run_json(&format!(
        "players:\n  - {{kind: solver, name: A, book: {book}}}\n  - {{kind: solver, name: B, book: {book}}}\n"
    ));
    let over = game_overs(&all);
    assert_eq!(over[0]["winner"], "A", "{:?}", over[0]);
    let moves = events(&all, "move");
    assert_eq!(moves.len(), 41);
    assert_eq!(moves[0]["column"], 3);
    assert_eq!(moves[0]["note"], "wins in 21");
    assert_eq!(moves[1]["note"], "loses in 20");
}
