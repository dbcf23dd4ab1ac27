//! End-to-end protocol checks against a lobby server process over real TCP
//! on loopback: every error code of the spec, the lobby rules (LOBBY_FULL
//! for the tenth subscriber, the countdown stopping on a join), and hostile
//! clients — junk, over-long lines, floods, silent and half-closed
//! connections, moves for someone else's match, too many connections.

mod common;
use c4sim::net::codec::ErrorCode;
use common::net::*;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

/// Checks the raw shape of an error line and returns its code.
fn err_code_of(line: &str, id: &str) -> String {
    let prefix = format!("RES {id} ERR ");
    assert!(line.starts_with(&prefix), "expected `{prefix}...`, got `{line}`");
    let rest = &line[prefix.len()..];
    let (code, body) = rest.split_once(' ').expect("a message follows the code");
    let body: Value = serde_json::from_str(body).unwrap();
    assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()), "{line}");
    code.to_string()
}

#[test]
fn every_error_code_of_the_spec_is_produced() {
    let server = Server::start("countdown: 200ms, move_timeout: 5s", "");
    let mut seen = BTreeSet::new();
    let mut check = |a: &Answer, code: &str| {
        assert_code(a, code);
        seen.insert(code.to_string());
    };
    let mut c = Client::connect(&server.addr);

    // Framing comes first; the connection stays open.
    c.send_raw(b"hello there\n");
    let code = err_code_of(&c.line(), "-");
    assert_eq!(code, "BAD_REQUEST");
    c.send_raw(b"REQ 7 session.hello {\"version\": \n");
    assert_eq!(err_code_of(&c.line(), "7"), "BAD_REQUEST");
    // Then HELLO_REQUIRED, before UNKNOWN_METHOD.
    check(&c.req("lobby.ready", None), "HELLO_REQUIRED");
    check(&c.req("no.such_method", None), "HELLO_REQUIRED");
    check(&c.req("session.hello", Some(json!({}))), "BAD_REQUEST");
    check(
        &c.req("session.hello", Some(json!({"version": 2}))),
        "UNSUPPORTED_VERSION",
    );
    assert_eq!(c.req("session.hello", Some(json!({"version": 1}))), Ok(Value::Null));
    check(&c.req("lobby.dance", None), "UNKNOWN_METHOD");
    check(
        &c.req("lobby.subscribe", Some(json!({"game": "connect4"}))),
        "LOGIN_REQUIRED",
    );
    check(
        &c.req_in(Some("m1"), "game.action", Some(json!({"type": "move", "move": 0}))),
        "LOGIN_REQUIRED",
    );
    check(
        &c.req("session.resume", Some(json!({"session_token": "0".repeat(64)}))),
        "BAD_TOKEN",
    );
    check(&c.req("session.login", Some(json!({"player": ""}))), "BAD_REQUEST");
    let token = c.req("session.login", Some(json!({"player": "Zed"}))).unwrap()["session_token"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        token.len() >= 32 && token.bytes().all(|b| b.is_ascii_hexdigit()),
        "≥128 bits: {token}"
    );
    c.name = "Zed".into();

    let mut y = Client::connect(&server.addr);
    y.req("session.hello", Some(json!({"version": 1}))).unwrap();
    check(&y.req("session.login", Some(json!({"player": "Zed"}))), "NAME_TAKEN");
    let other = y.req("session.login", Some(json!({"player": "Yan"}))).unwrap();
    assert_ne!(
        other["session_token"].as_str().unwrap(),
        token,
        "every login gets its own token"
    );
    y.name = "Yan".into();

    check(&c.req("lobby.ready", None), "NOT_IN_LOBBY");
    check(&c.req("lobby.leave", None), "NOT_IN_LOBBY");
    check(
        &c.req("lobby.subscribe", Some(json!({"game": "chess"}))),
        "UNKNOWN_GAME",
    );
    check(
        &c.req_in(Some("m42"), "game.action", Some(json!({"type": "move", "move": 0}))),
        "NOT_IN_MATCH",
    );

    // A full duel lobby refuses a third player.
    let (mut p, _) = Client::login(&server.addr, "P");
    let (mut q, _) = Client::login(&server.addr, "Q");
    p.req("lobby.subscribe", Some(json!({"game": "connect4-classic"})))
        .unwrap();
    q.req("lobby.subscribe", Some(json!({"game": "connect4-classic"})))
        .unwrap();
    check(
        &c.req("lobby.subscribe", Some(json!({"game": "connect4-classic"}))),
        "LOBBY_FULL",
    );
    p.req("lobby.leave", None).unwrap();
    q.req("lobby.leave", None).unwrap();

    c.enter("connect4-classic");
    y.enter("connect4-classic");
    let (m, _) = c.event("game.match_started");
    let m = m.unwrap();
    let mv = |col: i64| Some(json!({"type": "move", "move": col}));
    // Zed subscribed first, so Zed moves first.
    check(&y.req_in(Some(&m), "game.action", mv(0)), "NOT_YOUR_TURN");
    c.event("game.your_turn");
    check(
        &c.req_in(Some(&m), "game.action", Some(json!({"type": "jump", "move": 0}))),
        "UNKNOWN_ACTION",
    );
    check(
        &c.req_in(Some(&m), "game.action", Some(json!({"move": 0}))),
        "UNKNOWN_ACTION",
    );
    check(
        &c.req_in(Some(&m), "game.action", Some(json!({"type": "move"}))),
        "BAD_REQUEST",
    );
    check(
        &c.req_in(Some(&m), "game.action", Some(json!({"type": "move", "move": "three"}))),
        "BAD_REQUEST",
    );
    check(&c.req_in(Some(&m), "game.action", mv(9)), "INVALID_MOVE");
    c.event("game.your_turn");
    // Fill column 0 with alternating pieces (no line), then Zed tries it.
    for i in 0..6 {
        let who = if i % 2 == 0 { &mut c } else { &mut y };
        if i > 0 {
            who.event("game.your_turn");
        }
        assert_eq!(who.req_in(Some(&m), "game.action", mv(0)), Ok(Value::Null));
    }
    c.event("game.your_turn");
    let full = c.req_in(Some(&m), "game.action", mv(0));
    match &full {
        Err((code, msg)) => assert!(code == "INVALID_MOVE" && msg.contains("column 0 is full"), "{full:?}"),
        other => panic!("{other:?}"),
    }
    let all: BTreeSet<String> = ErrorCode::ALL.iter().map(|c| c.as_str().to_string()).collect();
    assert_eq!(seen, all, "every code of the spec was produced");
}

#[test]
fn the_tenth_subscriber_gets_lobby_full() {
    let server = Server::start("countdown: 10s", "");
    let mut players: Vec<Client> = (0..9)
        .map(|i| {
            let (mut c, _) = Client::login(&server.addr, &format!("p{i}"));
            assert_eq!(
                c.req("lobby.subscribe", Some(json!({"game": "connect4"}))),
                Ok(Value::Null)
            );
            c
        })
        .collect();
    let (_, update) = players[0].event("lobby.update");
    assert_eq!(update, json!({"players": ["p0"], "ready": [], "min": 3, "max": 9}));
    let (mut tenth, _) = Client::login(&server.addr, "p9");
    assert_code(
        &tenth.req("lobby.subscribe", Some(json!({"game": "connect4"}))),
        "LOBBY_FULL",
    );
    // Someone leaves: there is room again, and everyone is told.
    assert_eq!(players[8].req("lobby.leave", None), Ok(Value::Null));
    assert_eq!(
        tenth.req("lobby.subscribe", Some(json!({"game": "connect4"}))),
        Ok(Value::Null)
    );
    let (_, update) = tenth.event("lobby.update");
    let names: Vec<&str> = update["players"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(names, ["p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p9"]);
}

#[test]
fn the_countdown_stops_on_a_join_and_the_match_takes_everyone() {
    let server = Server::start("countdown: 400ms", "");
    let mut cs: Vec<Client> = ["a", "b", "c"]
        .iter()
        .map(|n| {
            let (mut c, _) = Client::login(&server.addr, n);
            c.enter("connect4");
            c
        })
        .collect();
    let (_, cd) = cs[0].event("lobby.countdown");
    assert_eq!(cd, json!({"seconds": 0.4}));
    let (mut d, _) = Client::login(&server.addr, "d");
    d.req("lobby.subscribe", Some(json!({"game": "connect4"}))).unwrap();
    let (_, cd) = cs[0].event("lobby.countdown");
    assert_eq!(cd, json!({"seconds": null}), "a join stops the countdown");
    let (_, update) = d.event("lobby.update");
    assert_eq!(update["ready"], json!(["a", "b", "c"]), "the others stay ready");
    let (_, cd) = d.event("lobby.countdown");
    assert_eq!(
        cd,
        json!({"seconds": null}),
        "the newcomer is in the lobby and told too"
    );
    d.req("lobby.ready", None).unwrap();
    let (_, cd) = d.event("lobby.countdown");
    assert_eq!(cd, json!({"seconds": 0.4}));
    let (_, started) = d.event("game.match_started");
    assert_eq!(started["participants"], json!(["a", "b", "c", "d"]));
    assert_eq!(
        (started["width"].as_u64(), started["height"].as_u64()),
        (Some(8), Some(7))
    );
    cs.push(d);
}

/// Random junk bytes without a line end, some after a valid `REQ <id> `.
fn junk(rng: &mut rand::rngs::StdRng, i: usize) -> (Vec<u8>, String) {
    let n = rng.gen_range(0..120);
    let mut bytes: Vec<u8> = (0..n).map(|_| rng.gen::<u8>()).filter(|&b| b != b'\n').collect();
    if i % 3 == 0 {
        let id = format!("j{i}");
        let mut line = format!("REQ {id} {{").into_bytes();
        line.append(&mut bytes);
        (line, id)
    } else {
        // Not starting with "REQ ": no id can be read.
        bytes.insert(0, b'#');
        (bytes, "-".into())
    }
}

#[test]
fn junk_is_answered_line_by_line_and_twenty_bad_lines_in_a_row_close_the_connection() {
    let mut server = Server::start("", "");
    let mut c = Client::connect(&server.addr);
    let mut rng = rand::rngs::StdRng::seed_from_u64(6);
    for round in 0..2 {
        for i in 0..19 {
            let (mut line, id) = junk(&mut rng, i);
            line.push(b'\n');
            c.send_raw(&line);
            assert_eq!(err_code_of(&c.line(), &id), "BAD_REQUEST", "round {round}, line {i}");
        }
        // A good line resets the count.
        assert_eq!(c.req("session.hello", Some(json!({"version": 1}))), Ok(Value::Null));
    }
    for i in 0..20 {
        let (mut line, id) = junk(&mut rng, i);
        line.push(b'\n');
        c.send_raw(&line);
        assert_eq!(err_code_of(&c.line(), &id), "BAD_REQUEST");
    }
    c.expect_closed(Duration::from_secs(2));
    // The server is fine.
    let (_, _) = Client::login(&server.addr, "after");
    assert!(server.is_running());
}

#[test]
fn over_long_lines_are_refused_and_the_connection_stays_open() {
    let server = Server::start("", "");
    let mut c = Client::connect(&server.addr);
    let mut big = b"REQ big session.hello ".to_vec();
    big.resize(200_000, b'x');
    big.push(b'\n');
    c.send_raw(&big);
    let line = c.line();
    assert_eq!(err_code_of(&line, "big"), "BAD_REQUEST");
    assert!(line.contains("4096"), "{line}");
    // Exactly 4096 bytes is allowed; 4097 is not.
    let line_of = |len: usize, id: &str| {
        let head = format!("REQ {id} session.hello {{\"version\": 1, \"pad\": \"");
        let mut l = head.into_bytes();
        l.resize(len - 2, b'p');
        l.extend_from_slice(b"\"}\r\n");
        l
    };
    c.send_raw(&line_of(4096, "exact"));
    assert_eq!(c.answer("exact"), Ok(Value::Null));
    c.send_raw(&line_of(4097, "over"));
    assert_code(&c.answer("over"), "BAD_REQUEST");
    assert!(c.req("session.login", Some(json!({"player": "long"}))).is_ok());
}

#[test]
fn silent_and_half_finished_connections_are_closed() {
    let server = Server::start("hello_timeout: 500ms", "");
    let mut silent = Client::connect(&server.addr);
    let mut half_line = Client::connect(&server.addr);
    half_line.send_raw(b"REQ 1 session.hel");
    let mut no_login = Client::connect(&server.addr);
    no_login.req("session.hello", Some(json!({"version": 1}))).unwrap();
    let (mut good, _) = Client::login(&server.addr, "good");
    let t = Instant::now();
    for c in [&mut silent, &mut half_line, &mut no_login] {
        c.expect_closed(Duration::from_secs(3));
    }
    assert!(t.elapsed() >= Duration::from_millis(300), "{:?}", t.elapsed());
    assert_eq!(
        good.read_within(Duration::from_millis(700)),
        Got::TimedOut,
        "a logged-in client stays"
    );
    assert_eq!(
        good.req("lobby.subscribe", Some(json!({"game": "connect4"}))),
        Ok(Value::Null)
    );
}

#[test]
fn a_half_closed_client_in_a_match_is_a_disconnect_and_the_others_play_on() {
    let server = Server::start("countdown: 200ms, move_timeout: 5s, reconnect_grace: 200ms", "");
    let mut cs: Vec<Client> = ["one", "two", "half"]
        .iter()
        .map(|n| {
            let (mut c, _) = Client::login(&server.addr, n);
            c.enter("connect4");
            c
        })
        .collect();
    let (m, _) = cs[2].event("game.match_started");
    let m = m.unwrap();
    let mut half = cs.pop().unwrap();
    half.shutdown_write();
    half.expect_closed(Duration::from_secs(3));
    let handles: Vec<_> = cs
        .into_iter()
        .map(|mut c| {
            let m = m.clone();
            std::thread::spawn(move || {
                c.event("game.match_started");
                play_out(&mut c, &m, 7, 6)
            })
        })
        .collect();
    for h in handles {
        let p = h.join().unwrap();
        assert!(
            p.events
                .iter()
                .any(|(e, b)| e == "game.player_out" && *b == json!({"player": "half", "reason": "disconnected"})),
            "{:?}",
            p.events
        );
    }
    let over = server.match_over(Duration::from_secs(5));
    assert_eq!(over["results"][2]["reason"], "disconnected");
}

#[test]
fn floods_and_junk_do_not_disturb_a_match() {
    let mut server = Server::start("countdown: 200ms, move_timeout: 5s", "");
    // A flooder sends valid requests as fast as it can and never reads.
    let (mut flooder, _) = Client::login(&server.addr, "flood");
    let flood = std::thread::spawn(move || {
        let chunk = b"REQ f lobby.ready\n".repeat(2000);
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(3) {
            if !flooder.try_send_raw(&chunk) {
                break;
            }
        }
        flooder
    });
    // Another streams one endless line of junk.
    let mut junker = Client::connect(&server.addr);
    let junk = std::thread::spawn(move || {
        let chunk = vec![b'z'; 64 * 1024];
        let t = Instant::now();
        while t.elapsed() < Duration::from_secs(3) {
            if !junker.try_send_raw(&chunk) {
                break;
            }
        }
        junker
    });
    let t = Instant::now();
    let (mut a, _) = Client::login(&server.addr, "A");
    a.enter("connect4-classic");
    let (mut b, _) = Client::login(&server.addr, "B");
    b.enter("connect4-classic");
    let (m, _) = a.event("game.match_started");
    let m = m.unwrap();
    let hb = std::thread::spawn({
        let m = m.clone();
        move || {
            b.event("game.match_started");
            play_out(&mut b, &m, 7, 6)
        }
    });
    let pa = play_out(&mut a, &m, 7, 6);
    let pb = hb.join().unwrap();
    assert!(!pa.result.is_empty() && !pb.result.is_empty());
    assert!(
        t.elapsed() < Duration::from_secs(3),
        "the match took {:?} under the flood",
        t.elapsed()
    );
    // A newcomer is served at once.
    let t = Instant::now();
    let (_, _) = Client::login(&server.addr, "newcomer");
    assert!(t.elapsed() < Duration::from_millis(500), "{:?}", t.elapsed());
    drop(flood.join().unwrap());
    drop(junk.join().unwrap());
    assert!(server.is_running());
}

#[test]
fn a_connection_acts_only_for_its_own_player_and_match() {
    let server = Server::start("countdown: 200ms, move_timeout: 5s", "");
    let (mut a, _) = Client::login(&server.addr, "A");
    a.enter("connect4-classic");
    let (mut b, _) = Client::login(&server.addr, "B");
    b.enter("connect4-classic");
    let (m1, _) = a.event("game.match_started");
    let m1 = m1.unwrap();
    let (mut c, _) = Client::login(&server.addr, "C");
    c.enter("connect4-classic");
    let (mut d, _) = Client::login(&server.addr, "D");
    d.enter("connect4-classic");
    let (m2, _) = c.event("game.match_started");
    let m2 = m2.unwrap();
    assert_ne!(m1, m2);
    let mv = Some(json!({"type": "move", "move": 0}));
    // Moves for the other match, for the other player, or with no login.
    assert_code(&a.req_in(Some(&m2), "game.action", mv.clone()), "NOT_IN_MATCH");
    assert_code(&c.req_in(Some(&m1), "game.action", mv.clone()), "NOT_IN_MATCH");
    assert_code(&c.req_in(Some(&m1), "game.leave", None), "NOT_IN_MATCH");
    assert_code(&b.req_in(Some(&m1), "game.action", mv.clone()), "NOT_YOUR_TURN");
    let mut anon = Client::connect(&server.addr);
    anon.req("session.hello", Some(json!({"version": 1}))).unwrap();
    assert_code(&anon.req_in(Some(&m1), "game.action", mv.clone()), "LOGIN_REQUIRED");
    // Both matches are undisturbed.
    let games: Vec<_> = [(a, m1.clone()), (b, m1), (c, m2.clone()), (d, m2)]
        .into_iter()
        .enumerate()
        .map(|(i, (mut cl, m))| {
            std::thread::spawn(move || {
                if i % 2 == 1 {
                    cl.event("game.match_started");
                }
                play_out(&mut cl, &m, 7, 6).result
            })
        })
        .collect();
    let results: Vec<String> = games.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(
        results.iter().all(|r| ["WIN", "LOSS", "DRAW"].contains(&r.as_str())),
        "{results:?}"
    );
}

#[test]
fn connections_per_address_are_limited() {
    let server = Server::start("max_connections_per_address: 3", "");
    let mut open: Vec<Client> = (0..3)
        .map(|_| {
            let mut c = Client::connect(&server.addr);
            c.req("session.hello", Some(json!({"version": 1}))).unwrap();
            c
        })
        .collect();
    let mut fourth = Client::connect(&server.addr);
    fourth.expect_closed(Duration::from_secs(2));
    open.pop().unwrap().close();
    // Room again once the server has seen the close.
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let mut c = Client::connect(&server.addr);
        c.send_raw(b"REQ 1 session.hello {\"version\": 1}\n");
        if c.read_within(Duration::from_millis(500)) == Got::Line("RES 1 OK".into()) {
            break;
        }
        assert!(Instant::now() < deadline, "no room after a close");
    }
}
