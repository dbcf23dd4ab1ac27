//! Helpers for the network end-to-end tests: a lobby server as a real
//! child process on a free loopback port, `c4sim join` processes, and a
//! blocking raw-protocol client that speaks the wire format by hand (so the
//! tests check the lines themselves, not c4sim's own client).

use c4sim::net::codec::{as_sent, parse_server_line, ServerLine};
use serde_json::{json, Value};
use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub fn c4sim_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_c4sim"))
}

/// A lobby server process. Killed when dropped.
pub struct Server {
    child: Child,
    pub addr: String,
    events: mpsc::Receiver<Value>,
    _dir: tempfile::TempDir,
}

impl Server {
    /// Starts `c4sim run` on a `mode: serve` scenario whose `server:`
    /// mapping holds `settings` (YAML flow entries, e.g. `countdown: 200ms`)
    /// after `bind: 127.0.0.1:0`; `extra` goes at the top level.
    pub fn start(settings: &str, extra: &str) -> Server {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("server.yaml");
        let sep = if settings.is_empty() { "" } else { ", " };
        std::fs::write(
            &path,
            format!("mode: serve\n{extra}\nserver: {{ bind: 127.0.0.1:0{sep}{settings} }}\n"),
        )
        .unwrap();
        let mut child = Command::new(c4sim_bin())
            .args(["run", path.to_str().unwrap(), "--json"])
            .env_remove("RUST_LOG")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("server output `{line}`: {e}"));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let first = rx
            .recv_timeout(Duration::from_secs(20))
            .expect("the server announces itself");
        assert_eq!(first["event"], "listening", "{first}");
        let addr = first["addr"].as_str().unwrap().to_string();
        assert!(addr.starts_with("127.0.0.1:"), "{addr}");
        Server {
            child,
            addr,
            events: rx,
            _dir: dir,
        }
    }

    /// The next `match_over` the server prints.
    pub fn match_over(&self, within: Duration) -> Value {
        self.event("match_over", within)
    }

    pub fn event(&self, kind: &str, within: Duration) -> Value {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let v = self
                .events
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no `{kind}` from the server within {within:?}"));
            if v["event"] == kind {
                return v;
            }
        }
    }

    pub fn is_running(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Writes a `mode: join` scenario and runs it (`--json`) to completion.
pub fn run_join(addr: &str, game: &str, matches: u32, players_yaml: &str) -> Output {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("join.yaml");
    std::fs::write(
        &path,
        format!("mode: join\nseed: 5\njoin: {{ server: '{addr}', game: {game}, matches: {matches} }}\nplayers:\n{players_yaml}"),
    )
    .unwrap();
    let child = Command::new(c4sim_bin())
        .args(["run", path.to_str().unwrap(), "--json"])
        .env_remove("RUST_LOG")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_bounded(child, Duration::from_secs(60))
}

/// Waits for a child, killing it after `limit` (so a hung test fails, not hangs).
pub fn wait_bounded(mut child: Child, limit: Duration) -> Output {
    let deadline = Instant::now() + limit;
    while child.try_wait().unwrap().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

pub fn json_lines(out: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect()
}

/// An answer: `Ok(body or null)` or `Err((code, message))`.
pub type Answer = Result<Value, (String, String)>;

/// A blocking protocol client for tests.
pub struct Client {
    stream: TcpStream,
    reader: BufReader<TcpStream>,
    next_id: u64,
    /// Events read while waiting for an answer, oldest first.
    pub backlog: VecDeque<(Option<String>, String, Value)>,
    pub name: String,
}

/// What reading a line gave.
#[derive(Debug, PartialEq)]
pub enum Got {
    Line(String),
    TimedOut,
    Closed,
}

impl Client {
    pub fn connect(addr: &str) -> Client {
        let stream = TcpStream::connect(addr).unwrap();
        stream.set_nodelay(true).unwrap();
        stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let reader = BufReader::new(stream.try_clone().unwrap());
        Client {
            stream,
            reader,
            next_id: 0,
            backlog: VecDeque::new(),
            name: String::new(),
        }
    }

    /// Connects, says hello and logs in as `name`; returns the token too.
    pub fn login(addr: &str, name: &str) -> (Client, String) {
        let mut c = Client::connect(addr);
        c.req("session.hello", Some(json!({"version": 1}))).unwrap();
        let body = c.req("session.login", Some(json!({"player": name}))).unwrap();
        c.name = name.to_string();
        (c, body["session_token"].as_str().unwrap().to_string())
    }

    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.stream.write_all(bytes).unwrap();
    }

    /// Writes, giving up after a second of backpressure or on an error
    /// (for floods, and for clients the server may have dropped).
    pub fn try_send_raw(&mut self, bytes: &[u8]) -> bool {
        self.stream.set_write_timeout(Some(Duration::from_secs(1))).unwrap();
        self.stream.write_all(bytes).is_ok()
    }

    pub fn read_within(&mut self, within: Duration) -> Got {
        self.stream.set_read_timeout(Some(within)).unwrap();
        let mut line = String::new();
        let r = self.reader.read_line(&mut line);
        self.stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        match r {
            Ok(0) => Got::Closed,
            Ok(_) => Got::Line(line.trim_end_matches('\n').to_string()),
            Err(e) if matches!(e.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {
                Got::TimedOut
            }
            Err(_) => Got::Closed,
        }
    }

    /// The next line; panics if none comes within 10 s.
    pub fn line(&mut self) -> String {
        match self.read_within(Duration::from_secs(10)) {
            Got::Line(l) => l,
            other => panic!("{}: expected a line, got {other:?}", self.name),
        }
    }

    /// Reads until the server closes the connection (discarding lines);
    /// panics if it is still open after `within`.
    pub fn expect_closed(&mut self, within: Duration) {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "{}: the server did not close the connection",
                self.name
            );
            match self.read_within(left) {
                Got::Closed => return,
                Got::Line(_) => continue,
                Got::TimedOut => panic!(
                    "{}: the server did not close the connection within {within:?}",
                    self.name
                ),
            }
        }
    }

    fn id(&mut self) -> String {
        self.next_id += 1;
        format!("t{}", self.next_id)
    }

    /// Sends a request (inside match `m` if given) and returns its answer.
    pub fn req_in(&mut self, m: Option<&str>, method: &str, params: Option<Value>) -> Answer {
        let id = self.id();
        let line = c4sim::net::codec::req_line(&id, m, method, params.as_ref());
        self.send_raw(line.as_bytes());
        self.answer(&id)
    }

    pub fn req(&mut self, method: &str, params: Option<Value>) -> Answer {
        self.req_in(None, method, params)
    }

    /// Reads until the answer to `id`, keeping events in the backlog.
    pub fn answer(&mut self, id: &str) -> Answer {
        loop {
            let l = self.line();
            match parse_server_line(&l).unwrap_or_else(|e| panic!("bad server line {l}: {e}")) {
                ServerLine::Ok { id: got, body } if got == id => {
                    return Ok(body.map(Value::Object).unwrap_or(Value::Null))
                }
                ServerLine::Err {
                    id: got, code, message, ..
                } if got == id => return Err((as_sent(&code), message.unwrap_or_default())),
                ServerLine::Event { match_id, event, body } => self.backlog.push_back((
                    match_id,
                    as_sent(&event),
                    body.map(Value::Object).unwrap_or(Value::Null),
                )),
                other => panic!("{}: unexpected answer {other:?} while waiting for {id}", self.name),
            }
        }
    }

    /// The next event, from the backlog or the wire.
    pub fn next_event(&mut self) -> (Option<String>, String, Value) {
        if let Some(e) = self.backlog.pop_front() {
            return e;
        }
        let l = self.line();
        match parse_server_line(&l).unwrap_or_else(|e| panic!("bad server line {l}: {e}")) {
            ServerLine::Event { match_id, event, body } => (
                match_id,
                as_sent(&event),
                body.map(Value::Object).unwrap_or(Value::Null),
            ),
            other => panic!("{}: expected an event, got {other:?}", self.name),
        }
    }

    /// Skips events until one named `event`; returns its match id and body.
    pub fn event(&mut self, event: &str) -> (Option<String>, Value) {
        loop {
            let (m, e, b) = self.next_event();
            if e == event {
                return (m, b);
            }
        }
    }

    /// Subscribes to `game` and says ready.
    pub fn enter(&mut self, game: &str) {
        self.req("lobby.subscribe", Some(json!({"game": game}))).unwrap();
        self.req("lobby.ready", None).unwrap();
    }

    pub fn shutdown_write(&mut self) {
        let _ = self.stream.shutdown(Shutdown::Write);
    }

    pub fn close(self) {
        let _ = self.stream.shutdown(Shutdown::Both);
    }

    /// Drains whatever the server sent so far without blocking long.
    pub fn drain(&mut self) -> Vec<u8> {
        self.stream.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
        let mut buf = Vec::new();
        let mut chunk = [0u8; 65536];
        while let Ok(n) = self.reader.read(&mut chunk) {
            if n == 0 {
                break;
            }
            buf.extend_from_slice(&chunk[..n]);
        }
        buf
    }
}

/// What a bot saw of one match.
#[derive(Debug, Default)]
pub struct Played {
    pub result: String,
    pub reason: String,
    pub events: Vec<(String, Value)>,
}

/// Plays the match `m` to its result: the left-most column with room on
/// each `game.your_turn`, tracking the board from `game.action` events.
pub fn play_out(c: &mut Client, m: &str, width: usize, height: usize) -> Played {
    play_out_from(c, m, width, height, vec![0; width])
}

/// [`play_out`] from a board whose column heights are `heights`.
pub fn play_out_from(c: &mut Client, m: &str, width: usize, height: usize, mut heights: Vec<usize>) -> Played {
    let mut played = Played::default();
    loop {
        let (mid, event, body) = c.next_event();
        if mid.as_deref() != Some(m) {
            continue;
        }
        played.events.push((event.clone(), body.clone()));
        match event.as_str() {
            "game.action" => {
                let col = body["move"].as_u64().unwrap() as usize;
                assert_eq!(
                    body["row"].as_u64().unwrap() as usize,
                    heights[col],
                    "rows count from the bottom"
                );
                heights[col] += 1;
            }
            "game.your_turn" => {
                let col = (0..width).find(|&c| heights[c] < height).unwrap();
                let r = c.req_in(Some(m), "game.action", Some(json!({"type": "move", "move": col})));
                assert_eq!(r, Ok(Value::Null), "{}: a legal move is answered OK", c.name);
            }
            "game.result" => {
                played.result = body["result"].as_str().unwrap().to_string();
                played.reason = body["reason"].as_str().unwrap().to_string();
                return played;
            }
            _ => {}
        }
    }
}

/// Asserts an error answer's code.
pub fn assert_code(a: &Answer, code: &str) {
    match a {
        Err((c, _)) if c == code => {}
        other => panic!("expected {code}, got {other:?}"),
    }
}
