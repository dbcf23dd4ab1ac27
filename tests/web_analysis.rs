//! The analysis board's progressive answers over real loopback TCP: one
//! `analyze` request answered by several `analysis` messages (outcomes,
//! then exact scores), the last `final` and proven with `c4sim analyze`'s
//! scores; and a new position cancelling the search of the old one.

mod common;

use common::web::serve_leftmost;
use common::{c4sim, parse_events};
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::time::{Duration, Instant};
use tokio_tungstenite::tungstenite::Message;

type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A middle game (ply 10 on 6×7): past the score book, solved in about a
/// second.
const MIDDLE: &str = "4444353526";
/// An earlier one (ply 9, past a score book even of ply 9: the slowest of
/// the labelled begin-hard set, 77 M nodes) that takes the solver far longer.
const SLOW: &str = "744466474";

async fn connect(addr: SocketAddr) -> Ws {
    let (mut ws, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/ws"))
        .await
        .expect("WebSocket opens");
    next(&mut ws, Duration::from_secs(10)).await.expect("hello");
    ws
}

async fn send(ws: &mut Ws, v: Value) {
    ws.send(Message::text(v.to_string())).await.unwrap();
}

/// The next text message within `wait`, or `None`.
async fn next(ws: &mut Ws, wait: Duration) -> Option<Value> {
    let read = async {
        while let Some(m) = ws.next().await {
            if let Ok(Message::Text(t)) = m {
                return Some(serde_json::from_str(&t).unwrap());
            }
        }
        None
    };
    tokio::time::timeout(wait, read).await.ok().flatten()
}

/// Every `analysis` message up to the final one for `pos` (within 60 s);
/// also the ones for other positions seen on the way, in order.
async fn until_final(ws: &mut Ws, pos: &str) -> (Vec<Value>, Vec<Value>) {
    let (mut mine, mut others) = (Vec::new(), Vec::new());
    let end = Instant::now() + Duration::from_secs(60);
    loop {
        let left = end.saturating_duration_since(Instant::now());
        let m = next(ws, left)
            .await
            .unwrap_or_else(|| panic!("no final analysis of {pos}"));
        assert_ne!(m["t"], "error", "{m}");
        if m["t"] != "analysis" {
            continue;
        }
        if m["d"]["pos"] == pos {
            let last = m["d"]["final"] == true;
            mine.push(m["d"].clone());
            if last {
                return (mine, others);
            }
        } else {
            others.push(m["d"].clone());
        }
    }
}

/// `c4sim analyze`'s scores of `pos` with the solver.
fn cli_scores(pos: &str) -> Value {
    let out = c4sim()
        .args(["analyze", "--player", "{kind: solver, table_log2: 20}"])
        .write_stdin(format!("{pos}\n"))
        .assert()
        .success();
    parse_events(&out.get_output().stdout)[0]["scores"].clone()
}

#[tokio::test]
async fn a_position_is_answered_as_it_is_proven() {
    let srv = serve_leftmost(&[]);
    let mut ws = connect(srv.addr).await;
    send(&mut ws, json!({"t": "analyze", "d": {"pos": MIDDLE}})).await;
    let (msgs, others) = until_final(&mut ws, MIDDLE).await;
    assert!(others.is_empty());
    assert!(msgs.len() > 1, "several messages: {msgs:?}");
    let last = msgs.last().unwrap();
    assert_eq!(last["proven"], true, "{last}");
    assert_eq!(last["working"], json!([]));
    assert_eq!(last["scores"], cli_scores(MIDDLE), "the same scores as c4sim analyze");
    let scores: Vec<i64> = last["scores"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_i64().unwrap())
        .collect();
    for m in &msgs[..msgs.len() - 1] {
        assert_eq!(m["final"], false, "{m}");
        let working = m["working"].as_array().unwrap();
        assert!(!working.is_empty(), "a column is still worked on: {m}");
        for (c, o) in m["outcomes"].as_array().unwrap().iter().enumerate() {
            if let Some(o) = o.as_i64() {
                assert_eq!(o, scores[c].signum(), "column {c}'s outcome: {m}");
            }
            if let Some(s) = m["scores"][c].as_i64() {
                assert_eq!(s, scores[c], "column {c}'s score: {m}");
                assert!(!working.contains(&json!(c)), "an exact column is not worked on: {m}");
            }
        }
    }
    // Outcomes come before the scores: some message knows an outcome but
    // not yet the score of that column.
    assert!(
        msgs.iter()
            .any(|m| (0..7).any(|c| !m["outcomes"][c].is_null() && m["scores"][c].is_null())),
        "{msgs:?}"
    );

    // An early position comes from the score book: one final message.
    send(&mut ws, json!({"t": "analyze", "d": {"pos": "44"}})).await;
    let (msgs, _) = until_final(&mut ws, "44").await;
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert_eq!(msgs[0]["proven"], true);
}

#[tokio::test]
async fn asking_about_another_position_cancels_the_old_search() {
    let srv = serve_leftmost(&["--analysts", "1"]);
    let mut ws = connect(srv.addr).await;
    send(&mut ws, json!({"t": "analyze", "d": {"pos": SLOW}})).await;
    let first = next(&mut ws, Duration::from_secs(10)).await.expect("a first message");
    assert_eq!(first["d"]["pos"], SLOW, "{first}");
    assert_eq!(first["d"]["final"], false, "{first}");
    // Another page meanwhile: the server's one analyst is at work.
    let mut other = connect(srv.addr).await;
    send(&mut other, json!({"t": "analyze", "d": {"pos": "4"}})).await;
    let e = next(&mut other, Duration::from_secs(10)).await.unwrap();
    assert_eq!(e["d"]["code"], "busy", "{e}");

    let t = Instant::now();
    send(&mut ws, json!({"t": "analyze", "d": {"pos": MIDDLE}})).await;
    let (msgs, old) = until_final(&mut ws, MIDDLE).await;
    assert!(t.elapsed() < Duration::from_secs(30), "the old search stopped at once");
    assert_eq!(msgs.last().unwrap()["proven"], true);
    assert!(old.iter().all(|m| m["pos"] == SLOW && m["final"] == false), "{old:?}");
    // Nothing more of the old position, ever.
    if let Some(m) = next(&mut ws, Duration::from_millis(1500)).await {
        panic!("a message after the final one: {m}");
    }

    // A page that leaves stops its search: the slot is free again soon.
    send(&mut ws, json!({"t": "analyze", "d": {"pos": SLOW}})).await;
    next(&mut ws, Duration::from_secs(10)).await.expect("a first message");
    drop(ws);
    let end = Instant::now() + Duration::from_secs(10);
    loop {
        send(&mut other, json!({"t": "analyze", "d": {"pos": "4"}})).await;
        let m = next(&mut other, Duration::from_secs(10)).await.unwrap();
        if m["t"] == "analysis" {
            assert_eq!(m["d"]["final"], true);
            break;
        }
        assert_eq!(m["d"]["code"], "busy", "{m}");
        assert!(Instant::now() < end, "the page that left still holds the analyst");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
