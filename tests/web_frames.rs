//! `c4sim web` against frames no browser sends, over a raw loopback socket
//! (a WebSocket library would refuse to send them): a header announcing
//! 2^62 bytes is refused at once, before the server holds its payload, and
//! each protocol violation closes with the code that says what happened
//! (1002 protocol, 1007 invalid UTF-8, 1009 size), while a game on the same
//! server plays on.

mod common;

use common::web::serve;
use futures_util::{SinkExt, StreamExt};
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;

/// A WebSocket client that writes bytes as they are given.
struct Raw {
    s: TcpStream,
    buf: Vec<u8>,
}

/// What the server said before it closed: its `error` codes and the close code.
#[derive(Debug, Default)]
struct Ending {
    errors: Vec<String>,
    close: Option<u16>,
}

impl Raw {
    /// Connects and upgrades `/ws` (a Host header, no Origin, as a script would).
    async fn open(addr: SocketAddr) -> Raw {
        let mut s = TcpStream::connect(addr).await.unwrap();
        let req = format!(
            "GET /ws HTTP/1.1\r\nHost: {addr}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
        );
        s.write_all(req.as_bytes()).await.unwrap();
        let mut raw = Raw { s, buf: Vec::new() };
        let end = loop {
            if let Some(at) = raw.buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break at + 4;
            }
            assert!(raw.more().await, "closed during the handshake");
        };
        let head = String::from_utf8_lossy(&raw.buf[..end]).to_string();
        assert!(head.starts_with("HTTP/1.1 101"), "{head}");
        raw.buf.drain(..end);
        raw
    }

    async fn more(&mut self) -> bool {
        let mut chunk = [0u8; 4096];
        match self.s.read(&mut chunk).await {
            Ok(0) | Err(_) => false,
            Ok(n) => {
                self.buf.extend_from_slice(&chunk[..n]);
                true
            }
        }
    }

    /// The next server frame (servers do not mask): opcode and payload.
    async fn frame(&mut self) -> Option<(u8, Vec<u8>)> {
        loop {
            if self.buf.len() >= 2 {
                let (head, len) = match self.buf[1] & 0x7F {
                    126 if self.buf.len() >= 4 => (4, u16::from_be_bytes([self.buf[2], self.buf[3]]) as usize),
                    127 if self.buf.len() >= 10 => {
                        (10, u64::from_be_bytes(self.buf[2..10].try_into().unwrap()) as usize)
                    }
                    126 | 127 => (usize::MAX, 0),
                    n => (2, n as usize),
                };
                if head != usize::MAX && self.buf.len() >= head + len {
                    let op = self.buf[0] & 0x0F;
                    let payload = self.buf[head..head + len].to_vec();
                    self.buf.drain(..head + len);
                    return Some((op, payload));
                }
            }
            if !self.more().await {
                return None;
            }
        }
    }

    /// Reads until the server's close frame (or the end), within 10 s.
    async fn until_close(&mut self) -> Ending {
        let read = async {
            let mut seen = Ending::default();
            while let Some((op, payload)) = self.frame().await {
                match op {
                    1 => {
                        let v: Value = serde_json::from_slice(&payload).unwrap();
                        if v["t"] == "error" {
                            seen.errors.push(v["d"]["code"].as_str().unwrap().to_string());
                        }
                    }
                    8 => {
                        seen.close = (payload.len() >= 2).then(|| u16::from_be_bytes([payload[0], payload[1]]));
                        return seen;
                    }
                    _ => {}
                }
            }
            seen
        };
        tokio::time::timeout(Duration::from_secs(10), read)
            .await
            .expect("the server answers within 10 s")
    }

    /// The `hello` every connection gets first.
    async fn hello(&mut self) {
        let (op, payload) = self.frame().await.expect("hello");
        assert_eq!(op, 1);
        let v: Value = serde_json::from_slice(&payload).unwrap();
        assert_eq!(v["t"], "hello");
    }
}

/// A client frame: `b0` (FIN, RSV, opcode) and the payload, masked.
fn masked(b0: u8, payload: &[u8]) -> Vec<u8> {
    let mask = [0x37, 0xfa, 0x21, 0x3d];
    let mut f = vec![b0];
    if payload.len() < 126 {
        f.push(0x80 | payload.len() as u8);
    } else if payload.len() <= u16::MAX as usize {
        f.push(0x80 | 126);
        f.extend_from_slice(&(payload.len() as u16).to_be_bytes());
    } else {
        f.push(0x80 | 127);
        f.extend_from_slice(&(payload.len() as u64).to_be_bytes());
    }
    f.extend_from_slice(&mask);
    f.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    f
}

/// The server's resident memory in KiB (Linux).
fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

type Ws = tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<TcpStream>>;

/// The next `game` message where the person may move or the game is over.
async fn next_turn(ws: &mut Ws) -> Value {
    let wait = async {
        while let Some(Ok(m)) = ws.next().await {
            if let Message::Text(t) = m {
                let v: Value = serde_json::from_str(&t).unwrap();
                if v["t"] == "game" && (v["d"]["your_turn"] == true || v["d"]["over"] == true) {
                    return v;
                }
            }
        }
        panic!("the game's connection closed");
    };
    tokio::time::timeout(Duration::from_secs(10), wait)
        .await
        .expect("the game goes on within 10 s")
}

async fn play(ws: &mut Ws, game: &Value, col: i64) -> Value {
    let m = json!({"t": "move", "d": {"id": game["d"]["id"], "col": col, "v": game["v"]}});
    ws.send(Message::text(m.to_string())).await.unwrap();
    next_turn(ws).await
}

/// A page's connection with a new game where the person moves first.
async fn new_game(addr: SocketAddr) -> (Ws, Value) {
    let (mut a, _) = tokio_tungstenite::connect_async(format!("ws://{addr}/ws"))
        .await
        .unwrap();
    a.send(Message::text(json!({"t": "new", "d": {"first": "you"}}).to_string()))
        .await
        .unwrap();
    let game = next_turn(&mut a).await;
    (a, game)
}

#[tokio::test]
async fn a_frame_announcing_gigabytes_is_refused_at_its_header() {
    let srv = serve(&["web", "--bind", "127.0.0.1:0", "--player", "leftmost"], false);
    // A person's game in progress on the same server.
    let (mut a, mut game) = new_game(srv.addr).await;
    game = play(&mut a, &game, 3).await;

    let pid = srv.child.id();
    let before = rss_kib(pid);
    let mut raw = Raw::open(srv.addr).await;
    raw.hello().await;
    // FIN + text, masked, 64-bit length 2^62, then the mask.
    let mut header = vec![0x81, 0xFF];
    header.extend_from_slice(&(1u64 << 62).to_be_bytes());
    header.extend_from_slice(&[1, 2, 3, 4]);
    raw.s.write_all(&header).await.unwrap();
    // Refused on the header alone: nothing of the payload has been sent yet.
    let seen = raw.until_close().await;
    assert_eq!(seen.close, Some(1009), "{seen:?}");
    assert_eq!(seen.errors, ["too_large"], "{seen:?}");
    // Whatever the client sends now is not kept: 8 MiB, written until the
    // server stops taking it.
    let chunk = vec![0x5Au8; 64 * 1024];
    let _ = tokio::time::timeout(Duration::from_secs(10), async {
        for _ in 0..128 {
            if raw.s.write_all(&chunk).await.is_err() {
                break;
            }
        }
    })
    .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let after = rss_kib(pid);
    assert!(
        after < before + 2 * 1024,
        "resident memory went from {before} KiB to {after} KiB"
    );

    // The game next door plays on to its end.
    for _ in 0..2 {
        game = play(&mut a, &game, 3).await;
    }
    game = play(&mut a, &game, 3).await;
    assert_eq!(game["d"]["over"], true);
    assert_eq!(game["d"]["result"]["text"], "You win");
}

#[tokio::test]
async fn each_violation_closes_with_the_code_that_says_what_happened() {
    let srv = serve(&["web", "--bind", "127.0.0.1:0", "--player", "leftmost"], false);
    let cases: Vec<(&str, Vec<u8>, u16, &str)> = vec![
        (
            "invalid UTF-8",
            masked(0x81, &[b'{', 0xff, 0xfe, b'}']),
            1007,
            "malformed",
        ),
        ("reserved bits", masked(0xC1, b"{}"), 1002, "malformed"),
        ("unknown opcode", masked(0x83, b"{}"), 1002, "malformed"),
        ("a 200-byte ping", masked(0x89, &[7; 200]), 1002, "malformed"),
        ("a fragmented ping", masked(0x09, b"hi"), 1002, "malformed"),
        ("an unmasked frame", vec![0x81, 0x02, b'{', b'}'], 1002, "malformed"),
        ("continuation first", masked(0x80, b"{}"), 1002, "malformed"),
        ("a 64 KiB frame", masked(0x81, &[b' '; 64 * 1024]), 1009, "too_large"),
        (
            "a fragmented message over 16 KiB",
            [masked(0x01, &[b' '; 10_000]), masked(0x80, &[b' '; 10_000])].concat(),
            1009,
            "too_large",
        ),
    ];
    for (what, bytes, close, error) in cases {
        let mut raw = Raw::open(srv.addr).await;
        raw.hello().await;
        raw.s.write_all(&bytes).await.unwrap();
        let seen = raw.until_close().await;
        assert_eq!(seen.close, Some(close), "{what}: {seen:?}");
        assert_eq!(seen.errors, [error], "{what}: {seen:?}");
    }
    // A well-formed connection after all that: a ping is answered, a
    // message gets its reply.
    let mut raw = Raw::open(srv.addr).await;
    raw.hello().await;
    raw.s.write_all(&masked(0x89, b"still there?")).await.unwrap();
    assert_eq!(raw.frame().await, Some((10, b"still there?".to_vec())));
    raw.s
        .write_all(&masked(0x81, br#"{"t":"join","d":{"id":"nope"}}"#))
        .await
        .unwrap();
    let (op, payload) = raw.frame().await.unwrap();
    assert_eq!(op, 1);
    let v: Value = serde_json::from_slice(&payload).unwrap();
    assert_eq!(v["d"]["code"], "no_game", "{v}");
}

#[tokio::test]
async fn a_huge_column_is_refused_with_its_true_number() {
    let srv = serve(&["web", "--bind", "127.0.0.1:0", "--player", "leftmost"], false);
    let (mut a, mut game) = new_game(srv.addr).await;
    for (col, shown) in [
        (i64::MAX, "column 9223372036854775808 is out of range (1 to 7)"),
        (i64::MIN, "column -9223372036854775807 is out of range (1 to 7)"),
        (7, "column 8 is out of range (1 to 7)"),
    ] {
        game = play(&mut a, &game, col).await;
        assert_eq!(game["d"]["refusal"], shown, "{col}");
    }
}
