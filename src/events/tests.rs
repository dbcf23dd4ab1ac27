//! Each event against the object the mode printed before the enum existed
//! (the field names users and tests read), the README's example lines byte
//! for byte, and a guard against events built by hand elsewhere again.

use super::*;
use serde_json::json;
use std::path::Path;

fn board() -> BoardMeta {
    BoardMeta {
        rows: 6,
        cols: 7,
        win_length: 4,
    }
}

#[test]
fn game_events_are_the_objects_of_docs_events() {
    let cases = [
        (
            Event::GameStart {
                game: 1,
                players: vec!["A".into(), "B".into()],
                rows: 6,
                cols: 7,
                win_length: 4,
                opening: vec![3],
                seed: 42,
            },
            json!({"event": "game_start", "game": 1, "players": ["A", "B"], "rows": 6, "cols": 7,
                   "win_length": 4, "opening": [3], "seed": 42}),
        ),
        (
            Event::Move {
                game: 2,
                player: "A".into(),
                column: 3,
                row: 0,
                note: None,
            },
            json!({"event": "move", "game": 2, "player": "A", "column": 3, "row": 0}),
        ),
        (
            Event::Move {
                game: 2,
                player: "A".into(),
                column: 3,
                row: 1,
                note: Some("evaluation +5".into()),
            },
            json!({"event": "move", "game": 2, "player": "A", "column": 3, "row": 1, "note": "evaluation +5"}),
        ),
        (
            Event::IllegalMove {
                game: 1,
                player: "B".into(),
                reason: "column 9 is out of range (0 to 6)".into(),
                tries_left: 4,
            },
            json!({"event": "illegal_move", "game": 1, "player": "B",
                   "reason": "column 9 is out of range (0 to 6)", "tries_left": 4}),
        ),
        (
            Event::PlayerOut {
                game: 1,
                player: "C".into(),
                reason: EndReason::Timeout,
                resigned: false,
            },
            json!({"event": "player_out", "game": 1, "player": "C", "reason": "TIMEOUT"}),
        ),
        (
            Event::PlayerOut {
                game: 1,
                player: "C".into(),
                reason: EndReason::Forfeit,
                resigned: true,
            },
            json!({"event": "player_out", "game": 1, "player": "C", "reason": "FORFEIT", "resigned": true}),
        ),
        (
            Event::GameOver {
                game: 3,
                result: "draw".into(),
                winner: None,
                reason: EndReason::Forfeit,
                moves: vec![3, 3],
                players: vec!["A".into(), "B".into()],
                opening: vec![],
                duration_ms: 5,
                think_ms: vec![1, 2],
                turns: vec![1, 1],
                resigned: Some(vec!["B".into()]),
            },
            json!({"event": "game_over", "game": 3, "result": "draw", "winner": null, "reason": "FORFEIT",
                   "moves": [3, 3], "players": ["A", "B"], "opening": [], "duration_ms": 5,
                   "think_ms": [1, 2], "turns": [1, 1], "resigned": ["B"]}),
        ),
        (
            Event::MatchSummary {
                players: vec![TallyLine::from(&Tally {
                    name: "A".into(),
                    wins: 2,
                    draws: 1,
                    losses: 0,
                })],
            },
            json!({"event": "summary", "players": [{"name": "A", "wins": 2, "draws": 1, "losses": 0}]}),
        ),
    ];
    for (ev, want) in cases {
        assert_eq!(ev.value(), want, "{}", ev.line());
    }
}

#[test]
fn tournament_events_are_the_objects_of_docs_events() {
    let line = json!({"game": 7, "result": "win", "winner": "A", "reason": "WIN", "moves": [3],
                      "players": ["A", "B"], "opening": [], "duration_ms": 1, "seed": 9,
                      "think_ms": [1, 0], "turns": [1, 0]});
    let serde_json::Value::Object(map) = line.clone() else {
        unreachable!()
    };
    let mut want = json!({"event": "game_over"});
    want.as_object_mut().unwrap().extend(map.clone());
    let ev = Event::TournamentGame { line: map };
    assert_eq!(ev.value(), want);
    assert!(
        ev.line().starts_with(r#"{"event":"game_over","game":7,"#),
        "{}",
        ev.line()
    );

    let sprt = json!({"llr": 0.5, "result": "continue"});
    let cases = [
        (
            Event::Progress {
                done: 3,
                total: 10,
                leader: "A".into(),
                sprt: None,
            },
            json!({"event": "progress", "done": 3, "total": 10, "leader": "A"}),
        ),
        (
            Event::Progress {
                done: 3,
                total: 10,
                leader: "A".into(),
                sprt: Some(sprt.clone()),
            },
            json!({"event": "progress", "done": 3, "total": 10, "leader": "A", "sprt": sprt}),
        ),
        (
            Event::ShardSummary {
                shard: "1/2".into(),
                games: 5,
                total: 10,
                records: "reports/x/games.shard-1-of-2.jsonl".into(),
            },
            json!({"event": "summary", "shard": "1/2", "games": 5, "total": 10,
                   "records": "reports/x/games.shard-1-of-2.jsonl"}),
        ),
        (
            Event::TournamentSummary {
                players: vec![RatedLine {
                    name: "A".into(),
                    wins: 1,
                    draws: 0,
                    losses: 0,
                    elo: f64::INFINITY,
                    elo_error: 12.5,
                    ms_per_move: None,
                }],
                report: "reports/x".into(),
                sprt: None,
            },
            json!({"event": "summary", "players": [{"name": "A", "wins": 1, "draws": 0, "losses": 0,
                   "elo": null, "elo_error": 12.5, "ms_per_move": null}], "report": "reports/x"}),
        ),
        (
            Event::ReportSummary {
                players: json!([{"rank": 1, "name": "A"}]),
                sprt: None,
                games: 4,
                total: 4,
                records: vec!["games.shard-1-of-2.jsonl".into()],
                report: "reports/x".into(),
            },
            json!({"event": "summary", "players": [{"rank": 1, "name": "A"}], "sprt": null, "games": 4,
                   "total": 4, "records": ["games.shard-1-of-2.jsonl"], "report": "reports/x"}),
        ),
    ];
    for (ev, want) in cases {
        assert_eq!(ev.value(), want, "{}", ev.line());
    }
}

#[test]
fn lobby_events_are_the_objects_of_docs_events() {
    // One match, as both its start and its end name it.
    let m1 = || ServerMatch {
        match_id: "m1".into(),
        game: "connect4".into(),
        players: vec!["ann".into(), "bob".into()],
        width: 7,
        height: 6,
    };
    let cases = [
        (
            Event::Listening {
                addr: "127.0.0.1:7000".into(),
                games: vec!["connect4".into()],
            },
            json!({"event": "listening", "addr": "127.0.0.1:7000", "games": ["connect4"]}),
        ),
        (
            Event::MatchStarted { table: m1() },
            json!({"event": "match_started", "match": "m1", "game": "connect4", "players": ["ann", "bob"],
                   "width": 7, "height": 6}),
        ),
        (
            Event::MatchOver {
                table: m1(),
                moves: vec![3, 4],
                results: vec![SeatResult {
                    player: "ann".into(),
                    result: "WIN".into(),
                    reason: "normal".into(),
                }],
                reason: EndReason::Win,
                duration_ms: 12,
            },
            json!({"event": "match_over", "match": "m1", "game": "connect4", "players": ["ann", "bob"],
                   "width": 7, "height": 6, "moves": [3, 4],
                   "results": [{"player": "ann", "result": "WIN", "reason": "normal"}],
                   "reason": "WIN", "duration_ms": 12}),
        ),
        (
            Event::JoinedMatch { seat: ann_in_m1() },
            json!({"event": "match_started", "player": "ann", "match": "m1", "game": "connect4",
                   "participants": ["ann", "bob"], "width": 7, "height": 6}),
        ),
        (
            Event::Result {
                seat: ann_in_m1(),
                result: "win".into(),
                reason: "normal".into(),
                moves: 9,
            },
            json!({"event": "result", "player": "ann", "match": "m1", "game": "connect4",
                   "participants": ["ann", "bob"], "width": 7, "height": 6, "result": "win",
                   "reason": "normal", "moves": 9}),
        ),
    ];
    for (ev, want) in cases {
        assert_eq!(ev.value(), want, "{}", ev.line());
    }
}

#[test]
fn training_events_are_the_objects_of_docs_events() {
    let shape = NetShape {
        rows: 6,
        cols: 7,
        blocks: 2,
        channels: 16,
        value_hidden: 32,
        reply_head: false,
    };
    let row = Row {
        iteration: 3,
        games: 10,
        ..Row::default()
    };
    let mut iteration = serde_json::to_value(&row).unwrap();
    let metrics = iteration.as_object().unwrap().clone();
    iteration = json!({"event": "iteration"});
    iteration.as_object_mut().unwrap().extend(metrics);
    iteration["checkpoint"] = json!("out/checkpoints/3");
    let cases = [
        (
            Event::TrainStart {
                name: "t".into(),
                out: "out".into(),
                device: "cpu".into(),
                workers: 2,
                resumed_from: 0,
                iterations: 5,
                board: board(),
                network: shape,
                simulations: 50,
                games_per_iteration: 8,
            },
            json!({"event": "train_start", "name": "t", "out": "out", "device": "cpu", "workers": 2,
                   "resumed_from": 0, "iterations": 5, "board": {"rows": 6, "cols": 7, "win_length": 4},
                   "network": serde_json::to_value(shape).unwrap(), "simulations": 50, "games_per_iteration": 8}),
        ),
        (
            Event::Iteration {
                row: row.clone(),
                checkpoint: "out/checkpoints/3".into(),
            },
            iteration,
        ),
        (
            Event::TrainSummary {
                iterations: 5,
                out: "out".into(),
                done: true,
                last: None,
            },
            json!({"event": "summary", "iterations": 5, "out": "out", "done": true}),
        ),
        (
            Event::TrainSummary {
                iterations: 5,
                out: "out".into(),
                done: true,
                last: Some(None),
            },
            json!({"event": "summary", "iterations": 5, "out": "out", "done": true, "last": null}),
        ),
        (
            Event::TrainSummary {
                iterations: 5,
                out: "out".into(),
                done: true,
                last: Some(Some(row.clone())),
            },
            json!({"event": "summary", "iterations": 5, "out": "out", "done": true,
                   "last": serde_json::to_value(&row).unwrap()}),
        ),
        (
            Event::FileRejected {
                file: "sp/w1/batch-3.c4g".into(),
                why: "truncated".into(),
            },
            json!({"event": "file_rejected", "file": "sp/w1/batch-3.c4g", "why": "truncated"}),
        ),
        (
            Event::Waiting {
                dir: "sp".into(),
                workers_seen: vec!["w1".into()],
            },
            json!({"event": "waiting", "dir": "sp", "workers_seen": ["w1"]}),
        ),
        (
            Event::WorkerStart {
                worker: "w1".into(),
                out: "out".into(),
                threads: 4,
                next_batch: 0,
            },
            json!({"event": "worker_start", "worker": "w1", "out": "out", "threads": 4, "next_batch": 0}),
        ),
        (
            Event::WorkerWaiting {
                worker: "w1".into(),
                why: "no network yet".into(),
            },
            json!({"event": "worker_waiting", "worker": "w1", "why": "no network yet"}),
        ),
        (
            Event::WorkerSettingsDiffer {
                worker: "w1".into(),
                sections: vec!["mcts".into()],
            },
            json!({"event": "worker_settings_differ", "worker": "w1", "sections": ["mcts"]}),
        ),
        (
            Event::Batch {
                worker: "w1".into(),
                batch: 2,
                games: 8,
                positions: 160,
                network: 1,
                seconds: 1.5,
                file: "sp/w1/batch-2.c4g".into(),
            },
            json!({"event": "batch", "worker": "w1", "batch": 2, "games": 8, "positions": 160, "network": 1,
                   "seconds": 1.5, "file": "sp/w1/batch-2.c4g"}),
        ),
        (
            Event::WorkerDone { worker: "w1".into() },
            json!({"event": "worker_done", "worker": "w1"}),
        ),
    ];
    for (ev, want) in cases {
        assert_eq!(ev.value(), want, "{}", ev.line());
    }
}

/// The README's example lines, byte for byte: `event` first, then the
/// fields in the order users have seen them.
#[test]
fn the_readme_lines_come_out_byte_for_byte() {
    let lines = [
        (
            Event::GameStart {
                game: 1,
                players: vec!["A".into(), "B".into()],
                rows: 6,
                cols: 7,
                win_length: 4,
                opening: vec![],
                seed: 42,
            },
            r#"{"event":"game_start","game":1,"players":["A","B"],"rows":6,"cols":7,"win_length":4,"opening":[],"seed":42}"#,
        ),
        (
            Event::Move {
                game: 1,
                player: "A".into(),
                column: 3,
                row: 0,
                note: None,
            },
            r#"{"event":"move","game":1,"player":"A","column":3,"row":0}"#,
        ),
        (
            Event::IllegalMove {
                game: 1,
                player: "B".into(),
                reason: "column 9 is out of range (0 to 6)".into(),
                tries_left: 4,
            },
            r#"{"event":"illegal_move","game":1,"player":"B","reason":"column 9 is out of range (0 to 6)","tries_left":4}"#,
        ),
        (
            Event::GameOver {
                game: 1,
                result: "win".into(),
                winner: Some("A".into()),
                reason: EndReason::Win,
                moves: vec![3, 3, 2, 4],
                players: vec!["A".into(), "B".into()],
                opening: vec![],
                duration_ms: 3,
                think_ms: vec![2, 1],
                turns: vec![2, 3],
                resigned: None,
            },
            r#"{"event":"game_over","game":1,"result":"win","winner":"A","reason":"WIN","moves":[3,3,2,4],"players":["A","B"],"opening":[],"duration_ms":3,"think_ms":[2,1],"turns":[2,3]}"#,
        ),
        (
            Event::MatchSummary {
                players: vec![TallyLine {
                    name: "A".into(),
                    wins: 1,
                    draws: 0,
                    losses: 0,
                }],
            },
            r#"{"event":"summary","players":[{"name":"A","wins":1,"draws":0,"losses":0}]}"#,
        ),
    ];
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let events = std::fs::read_to_string(root.join("docs/events.md")).unwrap();
    for (ev, want) in lines {
        assert_eq!(ev.line(), want);
        assert!(readme.contains(want), "README.md shows {want}");
        assert!(events.contains(want), "docs/events.md shows {want}");
    }
}

#[test]
fn a_path_that_is_not_utf8_still_prints() {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let odd = std::ffi::OsStr::from_bytes(b"out\xff").into();
        let ev = Event::WorkerDone { worker: "w".into() };
        assert_eq!(ev.line(), r#"{"event":"worker_done","worker":"w"}"#);
        let ev = Event::Waiting {
            dir: odd,
            workers_seen: vec![],
        };
        assert_eq!(ev.value()["dir"], "out\u{fffd}");
    }
}

/// Every event of docs/events.md is documented: each variant's `event`
/// name appears there as a heading's code.
#[test]
fn docs_events_names_every_event() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/events.md")).unwrap();
    let src = include_str!("mod.rs");
    let enum_body = &src[src.find("pub enum Event {").unwrap()..src.find("/// One player's tally").unwrap()];
    let mut names = Vec::new();
    let mut rename: Option<String> = None;
    for line in enum_body.lines().map(str::trim) {
        if let Some(r) = line.strip_prefix("#[serde(rename = \"") {
            rename = Some(r.trim_end_matches("\")]").to_string());
        } else if line.starts_with(|c: char| c.is_ascii_uppercase()) && !line.starts_with("///") {
            let variant: String = line.chars().take_while(|c| c.is_alphanumeric()).collect();
            let snake = variant.chars().fold(String::new(), |mut s, c| {
                if c.is_ascii_uppercase() && !s.is_empty() {
                    s.push('_');
                }
                s.push(c.to_ascii_lowercase());
                s
            });
            names.push(rename.take().unwrap_or(snake));
        } else {
            rename = None;
        }
    }
    assert!(names.len() >= 25, "{names:?}");
    for n in names {
        assert!(doc.contains(&format!("`{n}`")), "docs/events.md documents `{n}`");
    }
}

/// No `"event"` built by hand outside this module, so every line keeps
/// going through [`Event::line`]. Test code (after a file's `#[cfg(test)]`,
/// and `tests.rs` files) may read events by that name.
#[test]
fn no_event_is_built_by_hand_elsewhere() {
    fn walk(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, files);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    walk(&src, &mut files);
    assert!(files.len() > 50);
    let mut found = Vec::new();
    for f in files {
        if f.starts_with(src.join("events")) || f.file_name().is_some_and(|n| n == "tests.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&f).unwrap();
        let code = text.split("#[cfg(test)]").next().unwrap_or("");
        for (i, line) in code.lines().enumerate() {
            if line.contains("\"event\"") || line.contains("\\\"event\\\"") {
                found.push(format!("{}:{}: {}", f.display(), i + 1, line.trim()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "build these as crate::events::Event and print them with Event::line or emit:\n{}",
        found.join("\n")
    );
}

fn ann_in_m1() -> ClientSeat {
    ClientSeat {
        player: "ann".into(),
        match_id: "m1".into(),
        game: "connect4".into(),
        participants: vec!["ann".into(), "bob".into()],
        width: 7,
        height: 6,
    }
}
