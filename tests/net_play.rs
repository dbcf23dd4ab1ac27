//! End-to-end network play on loopback: a lobby server process, c4sim
//! `join` processes and hand-written protocol clients, all over real TCP.
//! Matches of 3, 5 and 9 bots, a classic duel between two `c4sim join`
//! processes, and players skipped on timeout, resignation, too many illegal
//! moves and disconnection, with the others playing on; resuming with a token.

mod common;
use common::net::*;
use serde_json::{json, Value};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

fn by_event<'a>(ev: &'a [Value], kind: &str) -> Vec<&'a Value> {
    ev.iter().filter(|e| e["event"] == kind).collect()
}

#[test]
fn bot_clients_complete_matches_of_3_5_and_9_players() {
    let server = Server::start("countdown: 600ms, move_timeout: 5s", "");
    let kinds = ["random", "leftmost", "rightmost", "minimax"];
    for n in [3usize, 5, 9] {
        let players: String = (0..n)
            .map(|i| format!("  - {{ name: p{n}-{i}, kind: {} }}\n", kinds[i % kinds.len()]))
            .collect();
        let out = run_join(&server.addr, "connect4", 1, &players);
        assert!(
            out.status.success(),
            "join with {n} players failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let ev = json_lines(&out.stdout);
        let starts = by_event(&ev, "match_started");
        assert_eq!(starts.len(), n, "every client saw the match start");
        for s in &starts {
            assert_eq!(s["participants"].as_array().unwrap().len(), n);
            assert_eq!(
                (s["width"].as_u64(), s["height"].as_u64()),
                (Some(n as u64 + 4), Some(n as u64 + 3))
            );
        }
        let results = by_event(&ev, "result");
        assert_eq!(results.len(), n, "every client got its result");
        let wins = results.iter().filter(|r| r["result"] == "WIN").count();
        let draws = results.iter().filter(|r| r["result"] == "DRAW").count();
        assert!(wins == 1 || draws == n, "one winner or a draw for all: {results:?}");
        let summary = by_event(&ev, "summary");
        assert_eq!(summary[0]["players"].as_array().unwrap().len(), n);

        let over = server.match_over(Duration::from_secs(10));
        assert_eq!(over["players"].as_array().unwrap().len(), n);
        assert_eq!(
            (over["width"].as_u64(), over["height"].as_u64()),
            (Some(n as u64 + 4), Some(n as u64 + 3))
        );
        // The participants are in subscription order, which is turn order.
        let moves = over["moves"].as_array().unwrap().len();
        assert!(moves >= 4, "a line of four needs at least four moves of one player");
    }
}

#[test]
fn classic_duel_between_two_join_processes() {
    let records = tempfile::tempdir().unwrap();
    let games = records.path().join("games.jsonl");
    let server = Server::start(
        &format!("countdown: 200ms, move_timeout: 5s, records: '{}'", games.display()),
        "",
    );
    let join = |spec: &str| {
        Command::new(c4sim_bin())
            .args([
                "join",
                &server.addr,
                "--player",
                spec,
                "--game",
                "connect4-classic",
                "--matches",
                "2",
                "--json",
            ])
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mini = join("{kind: minimax, depth: 2, name: Mini}");
    let randy = join("{kind: random, name: Randy}");
    let mini = wait_bounded(mini, Duration::from_secs(60));
    let randy = wait_bounded(randy, Duration::from_secs(60));
    for out in [&mini, &randy] {
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    }
    let (m_ev, r_ev) = (json_lines(&mini.stdout), json_lines(&randy.stdout));
    let (m_res, r_res) = (by_event(&m_ev, "result"), by_event(&r_ev, "result"));
    assert_eq!((m_res.len(), r_res.len()), (2, 2));
    for (a, b) in m_res.iter().zip(&r_res) {
        assert_eq!(a["match"], b["match"], "the same two matches");
        assert_eq!((a["width"].as_u64(), a["height"].as_u64()), (Some(7), Some(6)));
        assert_eq!(a["participants"].as_array().unwrap().len(), 2);
        let pair = (a["result"].as_str().unwrap(), b["result"].as_str().unwrap());
        assert!(
            matches!(pair, ("WIN", "LOSS") | ("LOSS", "WIN") | ("DRAW", "DRAW")),
            "{pair:?}"
        );
    }
    for _ in 0..2 {
        let over = server.match_over(Duration::from_secs(5));
        assert_eq!(over["game"], "connect4-classic");
    }
    // The same game records as other modes write, one a line.
    let written = std::fs::read_to_string(&games).unwrap();
    let recs: Vec<c4sim::record::GameRecord> = written.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(recs.len(), 2);
    for r in &recs {
        assert_eq!(r.players.len(), 2);
        assert!(r.players.contains(&"Mini".to_string()) && r.players.contains(&"Randy".to_string()));
    }
}

/// Three raw clients in a connect4 lobby; returns them with the match id.
fn three_in_a_match(server: &Server, names: [&str; 3]) -> (Vec<Client>, String) {
    let mut clients: Vec<Client> = names
        .iter()
        .map(|n| {
            let (mut c, _) = Client::login(&server.addr, n);
            c.enter("connect4");
            c
        })
        .collect();
    let mut id = None;
    for c in &mut clients {
        let (m, body) = c.event("game.match_started");
        assert_eq!(body["participants"], json!(names));
        assert_eq!(body["to_move"], names[0]);
        assert_eq!((body["width"].as_u64(), body["height"].as_u64()), (Some(7), Some(6)));
        id = m;
    }
    (clients, id.unwrap())
}

fn play_in_thread(mut c: Client, m: &str) -> thread::JoinHandle<(Client, Played)> {
    let m = m.to_string();
    thread::spawn(move || {
        let p = play_out(&mut c, &m, 7, 6);
        (c, p)
    })
}

fn saw_out(p: &Played, player: &str, reason: &str) -> bool {
    p.events
        .iter()
        .any(|(e, b)| e == "game.player_out" && *b == json!({"player": player, "reason": reason}))
}

#[test]
fn a_timed_out_player_is_skipped_and_the_match_finishes() {
    let server = Server::start("countdown: 200ms, move_timeout: 500ms", "");
    let (mut clients, m) = three_in_a_match(&server, ["Sleepy", "Bee", "Cee"]);
    let c = clients.pop().unwrap();
    let b = clients.pop().unwrap();
    let mut a = clients.pop().unwrap();
    let (hb, hc) = (play_in_thread(b, &m), play_in_thread(c, &m));
    let (_, _) = a.event("game.your_turn");
    let asked = Instant::now();
    let (rm, r) = a.event("game.result");
    assert_eq!(rm.as_deref(), Some(m.as_str()));
    assert_eq!(r, json!({"result": "LOSS", "reason": "timeout"}));
    assert!(asked.elapsed() >= Duration::from_millis(400), "{:?}", asked.elapsed());
    // Out of the match: its requests for it are refused.
    let late = a.req_in(Some(&m), "game.action", Some(json!({"type": "move", "move": 0})));
    assert_code(&late, "NOT_IN_MATCH");
    let (_, pb) = hb.join().unwrap();
    let (_, pc) = hc.join().unwrap();
    assert!(saw_out(&pb, "Sleepy", "timeout") && saw_out(&pc, "Sleepy", "timeout"));
    let results = [pb.result.as_str(), pc.result.as_str()];
    assert!(
        matches!(results, ["WIN", "LOSS"] | ["LOSS", "WIN"] | ["DRAW", "DRAW"]),
        "{results:?}"
    );
    let over = server.match_over(Duration::from_secs(10));
    assert_eq!(
        over["results"][0],
        json!({"player": "Sleepy", "result": "LOSS", "reason": "timeout"})
    );
}

#[test]
fn a_resigning_player_is_skipped_and_the_others_play_on() {
    let server = Server::start("countdown: 200ms, move_timeout: 5s", "");
    let (mut clients, m) = three_in_a_match(&server, ["Ann", "Quitter", "Cid"]);
    let c = clients.pop().unwrap();
    let mut b = clients.pop().unwrap();
    let a = clients.pop().unwrap();
    // Ann is to move; Quitter gives up out of turn.
    assert_eq!(b.req_in(Some(&m), "game.leave", None), Ok(Value::Null));
    let (_, r) = b.event("game.result");
    assert_eq!(r, json!({"result": "LOSS", "reason": "resigned"}));
    assert_code(
        &b.req_in(Some(&m), "game.action", Some(json!({"type": "move", "move": 0}))),
        "NOT_IN_MATCH",
    );
    let (ha, hc) = (play_in_thread(a, &m), play_in_thread(c, &m));
    let (_, pa) = ha.join().unwrap();
    let (_, pc) = hc.join().unwrap();
    assert!(saw_out(&pa, "Quitter", "resigned") && saw_out(&pc, "Quitter", "resigned"));
    let over = server.match_over(Duration::from_secs(10));
    assert_eq!(
        over["results"][1],
        json!({"player": "Quitter", "result": "LOSS", "reason": "resigned"})
    );
    // Free again: the player can join another lobby.
    assert_eq!(
        b.req("lobby.subscribe", Some(json!({"game": "connect4"}))),
        Ok(Value::Null)
    );
}

#[test]
fn illegal_moves_are_refused_asked_again_and_counted_by_the_referee() {
    let server = Server::start("countdown: 200ms, move_timeout: 5s", "limits: { max_invalid_moves: 3 }");
    let (mut a, _) = Client::login(&server.addr, "Wild");
    a.enter("connect4-classic");
    let (mut b, _) = Client::login(&server.addr, "Calm");
    b.enter("connect4-classic");
    let (m, _) = a.event("game.match_started");
    let m = m.unwrap();
    for (i, col) in [7, -1, 1000].into_iter().enumerate() {
        a.event("game.your_turn");
        let r = a.req_in(Some(&m), "game.action", Some(json!({"type": "move", "move": col})));
        match &r {
            Err((code, msg)) => {
                assert_eq!(code, "INVALID_MOVE");
                assert!(msg.contains("out of range"), "{msg}");
                assert!(msg.contains(&format!("{} tr", 2 - i)), "tries left in: {msg}");
            }
            other => panic!("{other:?}"),
        }
    }
    // The third illegal move is the referee's limit: out, and the other wins.
    let (_, r) = a.event("game.result");
    assert_eq!(r, json!({"result": "LOSS", "reason": "invalid_moves"}));
    let (_, r) = b.event("game.result");
    assert_eq!(r, json!({"result": "WIN", "reason": "last_player"}));
    let over = server.match_over(Duration::from_secs(5));
    assert_eq!(over["reason"], "TOO_MANY_INVALID");
}

#[test]
fn a_dropped_client_resumes_with_its_token_and_plays_on() {
    let server = Server::start("countdown: 200ms, move_timeout: 5s, reconnect_grace: 3s", "");
    let (mut a, token) = Client::login(&server.addr, "Ada");
    a.enter("connect4-classic");
    let (mut b, _) = Client::login(&server.addr, "Bob");
    b.enter("connect4-classic");
    let (m, _) = a.event("game.match_started");
    let m = m.unwrap();
    b.event("game.match_started");
    a.event("game.your_turn");
    assert_eq!(
        a.req_in(Some(&m), "game.action", Some(json!({"type": "move", "move": 3}))),
        Ok(Value::Null)
    );
    b.event("game.your_turn");
    assert_eq!(
        b.req_in(Some(&m), "game.action", Some(json!({"type": "move", "move": 3}))),
        Ok(Value::Null)
    );
    a.event("game.your_turn");
    a.close();

    // While the token is valid, the name stays taken.
    let mut other = Client::connect(&server.addr);
    other.req("session.hello", Some(json!({"version": 1}))).unwrap();
    assert_code(
        &other.req("session.login", Some(json!({"player": "Ada"}))),
        "NAME_TAKEN",
    );

    let mut a2 = Client::connect(&server.addr);
    a2.name = "Ada again".into();
    a2.req("session.hello", Some(json!({"version": 1}))).unwrap();
    let r = a2.req("session.resume", Some(json!({"session_token": token}))).unwrap();
    assert_eq!(
        r,
        json!({"player": "Ada", "match": m, "moves": [["Ada", 3, 0], ["Bob", 3, 1]], "to_move": "Ada"})
    );
    let (rm, _) = a2.event("game.your_turn");
    assert_eq!(rm.as_deref(), Some(m.as_str()));
    assert_eq!(
        a2.req_in(Some(&m), "game.action", Some(json!({"type": "move", "move": 0}))),
        Ok(Value::Null)
    );
    // Both play the match out, checking every row they are sent against
    // their own boards. Bob has yet to read the event of his own first move.
    let hb = thread::spawn({
        let m = m.clone();
        move || {
            let p = play_out_from(&mut b, &m, 7, 6, vec![0, 0, 0, 1, 0, 0, 0]);
            (b, p)
        }
    });
    let pa = play_out_from(&mut a2, &m, 7, 6, vec![0, 0, 0, 2, 0, 0, 0]);
    let (_, pb) = hb.join().unwrap();
    let pair = (pa.result.as_str(), pb.result.as_str());
    assert!(
        matches!(pair, ("WIN", "LOSS") | ("LOSS", "WIN") | ("DRAW", "DRAW")),
        "{pair:?}"
    );
    let over = server.match_over(Duration::from_secs(5));
    assert_eq!(over["moves"].as_array().unwrap()[..3], [json!(3), json!(3), json!(0)]);
}

#[test]
fn resuming_takes_over_an_open_connection() {
    let server = Server::start("countdown: 200ms", "");
    let (mut a, token) = Client::login(&server.addr, "Twin");
    let mut a2 = Client::connect(&server.addr);
    a2.req("session.hello", Some(json!({"version": 1}))).unwrap();
    let r = a2.req("session.resume", Some(json!({"session_token": token}))).unwrap();
    assert_eq!(
        r,
        json!({"player": "Twin", "match": null, "moves": [], "to_move": null})
    );
    a.expect_closed(Duration::from_secs(2));
    // The new connection acts for the player.
    assert_eq!(
        a2.req("lobby.subscribe", Some(json!({"game": "connect4"}))),
        Ok(Value::Null)
    );
}

#[test]
fn a_player_gone_past_the_grace_is_skipped_as_disconnected() {
    let server = Server::start("countdown: 200ms, move_timeout: 5s, reconnect_grace: 300ms", "");
    let (mut clients, m) = three_in_a_match(&server, ["Una", "Dos", "Gone"]);
    let c = clients.pop().unwrap();
    let b = clients.pop().unwrap();
    let a = clients.pop().unwrap();
    c.close();
    let (ha, hb) = (play_in_thread(a, &m), play_in_thread(b, &m));
    let (_, pa) = ha.join().unwrap();
    let (_, pb) = hb.join().unwrap();
    assert!(saw_out(&pa, "Gone", "disconnected") && saw_out(&pb, "Gone", "disconnected"));
    let over = server.match_over(Duration::from_secs(10));
    assert_eq!(
        over["results"][2],
        json!({"player": "Gone", "result": "LOSS", "reason": "disconnected"})
    );
    // The grace is over: the name is free and the old token dead.
    let (_, _) = Client::login(&server.addr, "Gone");
}

#[test]
fn shipped_network_scenarios_validate() {
    for file in ["scenarios/server.yaml", "scenarios/join_bots.yaml"] {
        let out = Command::new(c4sim_bin()).args(["validate", file]).output().unwrap();
        assert!(out.status.success(), "{file}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

#[test]
fn the_lobby_benchmark_runs_and_loses_nothing() {
    let out = Command::new(c4sim_bin())
        .args([
            "bench",
            "lobby",
            "--clients",
            "30",
            "--seconds",
            "2",
            "--countdown-ms",
            "50",
        ])
        .env_remove("RUST_LOG")
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("clients finished: 30/30"), "{text}");
    assert!(
        text.contains("lost: 0 move requests without their event, 0 matches without a result"),
        "{text}"
    );
    assert!(text.contains("p99"), "{text}");
}
