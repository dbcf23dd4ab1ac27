//! `c4sim web` over real loopback TCP: the embedded page and nothing else,
//! the Origin check, and hostile WebSocket messages (oversized, malformed,
//! wrong game, wrong turn, flood) each answered with an error while
//! another game in progress goes on unaffected.

mod common;

use common::web::{serve, serve_leftmost};
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::Message;

type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn connect(addr: SocketAddr) -> Ws {
    let (ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/ws"))
        .await
        .expect("WebSocket opens");
    ws
}

async fn send(ws: &mut Ws, v: Value) {
    ws.send(Message::text(v.to_string())).await.unwrap();
}

/// The next server message that `want` accepts (others are skipped), within 10 s.
async fn until(ws: &mut Ws, what: &str, want: impl Fn(&Value) -> bool) -> Value {
    let wait = async {
        while let Some(m) = ws.next().await {
            if let Ok(Message::Text(t)) = m {
                let v: Value = serde_json::from_str(&t).unwrap();
                if want(&v) {
                    return Some(v);
                }
            }
        }
        None
    };
    match tokio::time::timeout(Duration::from_secs(10), wait).await {
        Ok(Some(v)) => v,
        Ok(None) => panic!("closed while waiting for {what}"),
        Err(_) => panic!("no {what} within 10 s"),
    }
}

async fn error_code(ws: &mut Ws) -> String {
    let e = until(ws, "an error", |m| m["t"] == "error").await;
    e["d"]["code"].as_str().unwrap().to_string()
}

/// Plays `col` in `game` when it is the person's turn; returns the new state.
async fn play(ws: &mut Ws, game: &Value, col: usize) -> Value {
    let id = game["d"]["id"].clone();
    send(ws, json!({"t": "move", "d": {"id": id, "col": col, "v": game["v"]}})).await;
    until(ws, "the reply", |m| {
        m["t"] == "game" && m["d"]["id"] == id && (m["d"]["your_turn"] == true || m["d"]["over"] == true)
    })
    .await
}

async fn your_turn(ws: &mut Ws) -> Value {
    until(ws, "your turn", |m| m["t"] == "game" && m["d"]["your_turn"] == true).await
}

async fn http_get(addr: SocketAddr, path: &str) -> String {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    let req = format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
    s.write_all(req.as_bytes()).await.unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).await.unwrap();
    out
}

#[tokio::test]
async fn serves_its_page_and_nothing_else() {
    let srv = serve_leftmost(&[]);
    let page = http_get(srv.addr, "/").await;
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(page.contains("<script src=\"/app.js\">"));
    assert!(http_get(srv.addr, "/app.js").await.starts_with("HTTP/1.1 200"));
    assert!(http_get(srv.addr, "/style.css").await.starts_with("HTTP/1.1 200"));
    for path in [
        "/Cargo.toml",
        "/../Cargo.toml",
        "/src/web/page/app.js",
        "/%2e%2e/Cargo.toml",
    ] {
        let r = http_get(srv.addr, path).await;
        assert!(r.starts_with("HTTP/1.1 404"), "{path}: {r}");
    }
}

#[tokio::test]
async fn another_sites_page_cannot_connect() {
    let srv = serve_leftmost(&[]);
    let mut req = format!("ws://{}/ws", srv.addr).into_client_request().unwrap();
    req.headers_mut()
        .insert("Origin", "http://evil.example".parse().unwrap());
    let err = tokio_tungstenite::connect_async(req).await.expect_err("refused");
    assert!(err.to_string().contains("403"), "{err}");
    // A hostile name pointed at 127.0.0.1 (DNS rebinding): its Origin and
    // Host agree, but a loopback server answers to its own names only.
    let mut req = format!("ws://{}/ws", srv.addr).into_client_request().unwrap();
    let rebound = format!("evil.example:{}", srv.addr.port());
    req.headers_mut().insert("Host", rebound.parse().unwrap());
    req.headers_mut()
        .insert("Origin", format!("http://{rebound}").parse().unwrap());
    let err = tokio_tungstenite::connect_async(req).await.expect_err("refused");
    assert!(err.to_string().contains("403"), "{err}");
    // The server's own page may.
    let mut req = format!("ws://{}/ws", srv.addr).into_client_request().unwrap();
    req.headers_mut()
        .insert("Origin", format!("http://{}", srv.addr).parse().unwrap());
    assert!(tokio_tungstenite::connect_async(req).await.is_ok());
}

#[tokio::test]
async fn hostile_messages_get_errors_and_leave_other_games_alone() {
    let srv = serve_leftmost(&[]);
    // A person's game in progress.
    let mut a = connect(srv.addr).await;
    until(&mut a, "hello", |m| m["t"] == "hello" && m["d"]["protocol"] == 1).await;
    send(&mut a, json!({"t": "new", "d": {"first": "you"}})).await;
    let mut game = your_turn(&mut a).await;
    let id = game["d"]["id"].as_str().unwrap().to_string();
    game = play(&mut a, &game, 3).await;
    assert_eq!(game["d"]["moves"], json!([3, 0]));

    let mut b = connect(srv.addr).await;
    // Oversized (but under the frame limit): an error, the connection stays.
    send(&mut b, json!({"t": "join", "d": {"id": "x".repeat(5000)}})).await;
    assert_eq!(error_code(&mut b).await, "too_large");
    // Malformed, in several ways.
    for bad in [
        "{nope",
        "[]",
        r#"{"t":"move","d":{"id":"a","col":"three"}}"#,
        r#"{"t":"format_disk"}"#,
    ] {
        b.send(Message::text(bad)).await.unwrap();
        assert_eq!(error_code(&mut b).await, "malformed", "{bad}");
    }
    b.send(Message::binary(vec![0u8, 159, 146, 150])).await.unwrap();
    assert_eq!(error_code(&mut b).await, "malformed");
    // Wrong game: someone else's (not joined) and one that does not exist.
    send(&mut b, json!({"t": "move", "d": {"id": id, "col": 0}})).await;
    assert_eq!(error_code(&mut b).await, "no_game");
    send(&mut b, json!({"t": "resign", "d": {"id": id}})).await;
    assert_eq!(error_code(&mut b).await, "no_game");
    send(&mut b, json!({"t": "move", "d": {"id": "0000000000000000", "col": 0}})).await;
    assert_eq!(error_code(&mut b).await, "no_game");
    // Wrong turn: its own game, after the game is over, and on a stale position.
    send(&mut b, json!({"t": "new", "d": {"first": "you"}})).await;
    let bg = your_turn(&mut b).await;
    let stale = bg["v"].as_u64().unwrap() - 1;
    send(
        &mut b,
        json!({"t": "move", "d": {"id": bg["d"]["id"], "col": 0, "v": stale}}),
    )
    .await;
    assert_eq!(error_code(&mut b).await, "stale");
    send(&mut b, json!({"t": "resign", "d": {"id": bg["d"]["id"]}})).await;
    let resigned = until(&mut b, "the resignation", |m| {
        m["t"] == "game" && m["d"]["over"] == true
    })
    .await;
    assert_eq!(resigned["d"]["result"]["text"], "You resigned: leftmost wins");
    assert_eq!(resigned["d"]["result"]["reason"], "FORFEIT");
    send(&mut b, json!({"t": "move", "d": {"id": bg["d"]["id"], "col": 0}})).await;
    assert_eq!(error_code(&mut b).await, "game_over");
    // Flood: past the burst, `rate` errors; past the strikes, hung up.
    let flood = json!({"t": "join", "d": {"id": "nope"}}).to_string();
    for _ in 0..300 {
        if b.send(Message::text(flood.clone())).await.is_err() {
            break;
        }
    }
    assert_eq!(
        until(&mut b, "a rate error", |m| m["d"]["code"] == "rate").await["t"],
        "error"
    );
    let closed = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(Ok(m)) = b.next().await {
            if let Message::Close(_) = m {
                return true;
            }
        }
        true
    })
    .await;
    assert_eq!(closed, Ok(true), "the flooding connection is closed");
    // A frame over the limit closes that connection, after an error.
    let mut c = connect(srv.addr).await;
    c.send(Message::text("x".repeat(100_000))).await.unwrap();
    assert_eq!(error_code(&mut c).await, "too_large");

    // Meanwhile the first game goes on as if nothing happened, to the end.
    game = play(&mut a, &game, 3).await;
    game = play(&mut a, &game, 3).await;
    assert_eq!(game["d"]["moves"], json!([3, 0, 3, 0, 3, 0]));
    game = play(&mut a, &game, 3).await;
    assert_eq!(game["d"]["over"], true);
    assert_eq!(game["d"]["result"]["text"], "You win");
    assert_eq!(game["d"]["line"], json!([[5, 3], [4, 3], [3, 3], [2, 3]]));
}

#[tokio::test]
async fn not_your_turn_while_the_opponent_thinks() {
    // An opponent that never answers: it is its turn for as long as the test runs.
    let srv = serve(
        &[
            "web",
            "--bind",
            "127.0.0.1:0",
            "--player",
            "{kind: external, command: [sleep, '20'], name: Sleeper}",
        ],
        false,
    );
    let mut a = connect(srv.addr).await;
    send(&mut a, json!({"t": "new", "d": {"first": "ai"}})).await;
    let g = until(&mut a, "the game", |m| m["t"] == "game").await;
    assert_eq!(g["d"]["your_turn"], false);
    send(&mut a, json!({"t": "move", "d": {"id": g["d"]["id"], "col": 0}})).await;
    assert_eq!(error_code(&mut a).await, "not_your_turn");
}

#[tokio::test]
async fn a_reconnecting_page_gets_the_same_position() {
    let srv = serve_leftmost(&[]);
    let mut a = connect(srv.addr).await;
    send(&mut a, json!({"t": "new", "d": {"first": "ai"}})).await;
    let mut game = your_turn(&mut a).await;
    game = play(&mut a, &game, 6).await;
    let id = game["d"]["id"].clone();
    drop(a);
    let mut again = connect(srv.addr).await;
    send(&mut again, json!({"t": "join", "d": {"id": id}})).await;
    let back = until(&mut again, "the game again", |m| m["t"] == "game").await;
    assert_eq!(back["d"]["moves"], json!([0, 6, 0]));
    assert_eq!(back["d"]["cells"], game["d"]["cells"]);
    assert!(back["v"].as_u64() >= game["v"].as_u64());
    assert_eq!(back["d"]["your_turn"], true);
    play(&mut again, &back, 6).await;
}

#[tokio::test]
async fn lobby_matches_can_be_watched() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let lobby = format!("127.0.0.1:{port}");
    let srv = serve(
        &[
            "serve",
            "--bind",
            &lobby,
            "--countdown",
            "100ms",
            "--web",
            "127.0.0.1:0",
        ],
        true,
    );
    let mut w = connect(srv.addr).await;
    send(&mut w, json!({"t": "watch"})).await;
    let first = until(&mut w, "the watch view", |m| m["t"] == "watch").await;
    assert_eq!(first["d"]["kind"], "lobby");
    assert_eq!(first["d"]["done"], 0);
    let mut join = std::process::Command::new(env!("CARGO_BIN_EXE_c4sim"))
        .args([
            "join",
            &lobby,
            "--game",
            "connect4-classic",
            "--player",
            "leftmost",
            "--player",
            "rightmost",
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let seen = until(&mut w, "a finished match", |m| m["t"] == "watch" && m["d"]["done"] == 1).await;
    let _ = join.kill();
    let _ = join.wait();
    let names: Vec<&str> = seen["d"]["standings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 2, "{seen}");
    assert!(names.contains(&"leftmost") && names.contains(&"rightmost"), "{seen}");
    assert_eq!(seen["d"]["recent"][0]["over"], true);
}

/// "Show the solution" requests: within the rate (`rate`), a bad position
/// refused (`bad_position`), one at a time for the server (`busy` for
/// another page while the one analyst works); meanwhile another page's
/// game keeps its pace (its reply times are printed, before and during).
/// A position past any score book that takes the solver seconds (ply 9,
/// the slowest of the labelled begin-hard set: 77 M nodes). The
/// progressive answers themselves: tests/web_analysis.rs.
const SLOW: &str = "744466474";

#[tokio::test]
async fn analysis_is_one_at_a_time_for_the_server_and_within_the_rate() {
    let srv = serve_leftmost(&["--analysts", "1"]);
    let mut a = connect(srv.addr).await;
    until(&mut a, "hello", |m| m["t"] == "hello").await;
    send(&mut a, json!({"t": "new", "d": {"first": "you"}})).await;
    let mut game = your_turn(&mut a).await;
    let pace = |game: &Value, t: std::time::Instant| (game["d"]["moves"].as_array().unwrap().len(), t.elapsed());
    let t = std::time::Instant::now();
    game = play(&mut a, &game, 2).await;
    let before = pace(&game, t);

    let mut b = connect(srv.addr).await;
    until(&mut b, "hello", |m| m["t"] == "hello").await;
    send(&mut b, json!({"t": "analyze", "d": {"pos": "9"}})).await;
    assert_eq!(error_code(&mut b).await, "bad_position");
    send(&mut b, json!({"t": "analyze", "d": {"pos": "4", "player": "nobody"}})).await;
    assert_eq!(error_code(&mut b).await, "no_player");
    send(&mut b, json!({"t": "analyze", "d": {"pos": "4", "player": "leftmost"}})).await;
    assert_eq!(error_code(&mut b).await, "no_player", "leftmost has no view to show");
    send(&mut b, json!({"t": "analyze", "d": {"pos": SLOW}})).await;
    let r = until(&mut b, "the first analysis", |m| m["t"] == "analysis").await;
    assert_eq!(r["d"]["pos"], SLOW);
    assert_eq!(r["d"]["final"], false, "{SLOW} takes a while: {r}");
    // The server's one analyst is at work: another page waits its turn.
    let mut c = connect(srv.addr).await;
    until(&mut c, "hello", |m| m["t"] == "hello").await;
    send(&mut c, json!({"t": "analyze", "d": {"pos": "4"}})).await;
    let e = until(&mut c, "an error", |m| m["t"] == "error").await;
    assert_eq!(e["d"]["code"], "busy", "one at a time for the server (--analysts 1)");
    assert!(
        e["d"]["message"].as_str().unwrap().contains("solvers are all busy"),
        "{e}"
    );
    let t = std::time::Instant::now();
    game = play(&mut a, &game, 2).await;
    let during = pace(&game, t);
    // A new position replaces the page's running search.
    send(&mut b, json!({"t": "analyze", "d": {"pos": "4"}})).await;
    let r = until(&mut b, "the analysis of 4", |m| {
        m["t"] == "analysis" && m["d"]["pos"] == "4"
    })
    .await;
    assert_eq!(r["d"]["proven"], true, "{r}");
    drop(b);

    // A burst beyond the rate: refused with `rate`.
    for _ in 0..40 {
        send(&mut c, json!({"t": "analyze", "d": {"pos": "4444"}})).await;
    }
    assert_eq!(
        until(&mut c, "a rate error", |m| m["t"] == "error"
            && m["d"]["code"] == "rate")
        .await["d"]["code"],
        "rate"
    );
    let t = std::time::Instant::now();
    game = play(&mut a, &game, 2).await;
    let after_burst = pace(&game, t);
    assert_eq!(game["d"]["moves"].as_array().unwrap().len(), 6);
    eprintln!("reply to a move: before {before:?}, during an analysis {during:?}, after a burst {after_burst:?}");
}

/// One game against the server's player: the person plays the first legal
/// column of a fixed order, for up to `moves` moves; returns the moves and
/// how long each reply took.
async fn timed_game(ws: &mut Ws, moves: usize) -> (Vec<u64>, Vec<Duration>) {
    send(ws, json!({"t": "new", "d": {"first": "you"}})).await;
    let mut game = your_turn(ws).await;
    let mut took = Vec::new();
    for _ in 0..moves {
        let legal: Vec<u64> = game["d"]["legal"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_u64().unwrap())
            .collect();
        let col = [3, 2, 4, 1, 5, 0, 6].into_iter().find(|c| legal.contains(c)).unwrap();
        let t = std::time::Instant::now();
        game = play(ws, &game, col as usize).await;
        took.push(t.elapsed());
        if game["d"]["over"] == true {
            break;
        }
    }
    let played = game["d"]["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_u64().unwrap())
        .collect();
    (played, took)
}

/// The pace of a game against a searching opponent (minimax depth 14, a
/// few hundred milliseconds a move on one core) while
/// four other pages ask for analyses without pause: the same game is played
/// without them and with them (the opponent is deterministic, so the
/// positions are the same), and the per-move ratio printed, with the server's
/// default cap on analyses at once (half the cores) and with 4. Prints the
/// figures; run on purpose:
/// `cargo test --release --test web -- --ignored pace --nocapture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement (a minute); run on purpose"]
async fn pace_of_a_game_against_a_searching_opponent_during_an_analysis_flood() {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let default = (std::thread::available_parallelism().map_or(1, |n| n.get()) / 2)
        .max(1)
        .to_string();
    for analysts in [default.as_str(), "4"] {
        let srv = serve(
            &[
                "web",
                "--bind",
                "127.0.0.1:0",
                "--player",
                "{kind: minimax, depth: 14}",
                "--analysts",
                analysts,
            ],
            false,
        );
        let mut a = connect(srv.addr).await;
        until(&mut a, "hello", |m| m["t"] == "hello").await;
        let (quiet_moves, quiet) = timed_game(&mut a, 10).await;

        let stop = Arc::new(AtomicBool::new(false));
        let answered = Arc::new(std::sync::atomic::AtomicU64::new(0));
        let mut flood = Vec::new();
        for _ in 0..4 {
            let (stop, answered, addr) = (stop.clone(), answered.clone(), srv.addr);
            flood.push(tokio::spawn(async move {
                let mut p = connect(addr).await;
                until(&mut p, "hello", |m| m["t"] == "hello").await;
                while !stop.load(Ordering::Relaxed) {
                    send(&mut p, json!({"t": "analyze", "d": {"pos": SLOW}})).await;
                    let r = until(&mut p, "an answer", |m| m["t"] == "analysis" || m["t"] == "error").await;
                    if r["t"] == "analysis" {
                        answered.fetch_add(1, Ordering::Relaxed);
                    } else {
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    }
                }
            }));
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
        let t = std::time::Instant::now();
        let (flood_moves, during) = timed_game(&mut a, 10).await;
        let flood_s = t.elapsed().as_secs_f64();
        stop.store(true, Ordering::Relaxed);
        for f in flood {
            let _ = f.await;
        }
        assert_eq!(quiet_moves, flood_moves, "the same game both times");
        let mut ratios: Vec<f64> = quiet
            .iter()
            .zip(&during)
            .map(|(q, d)| d.as_secs_f64() / q.as_secs_f64())
            .collect();
        ratios.sort_by(f64::total_cmp);
        let ms = |v: &[Duration]| {
            v.iter()
                .map(|d| format!("{:.0}", d.as_secs_f64() * 1e3))
                .collect::<Vec<_>>()
                .join(" ")
        };
        eprintln!(
            "--analysts {analysts}: replies (ms) quiet [{}], during the flood [{}]; median ratio {:.2} (max {:.2}); {} analyses answered in {flood_s:.1} s",
            ms(&quiet),
            ms(&during),
            ratios[ratios.len() / 2],
            ratios[ratios.len() - 1],
            answered.load(Ordering::Relaxed)
        );
    }
}
