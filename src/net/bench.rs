//! `c4sim bench lobby`: load on a lobby server over loopback. The server
//! runs as a separate process (`c4sim serve` on a free port), and this
//! process is the swarm: hundreds of clients, each logging in, joining a
//! lobby, and playing random legal moves in many matches at once. Every
//! figure printed is measured in this run: matches per second and the time
//! from writing a `game.action` request to reading that move's
//! `game.action` event (so it includes both processes' scheduling and the
//! swarm's own queueing, on the same two loopback sockets a real client uses).
//!
//! Nothing may get lost: every move request must be answered by its event
//! (or an error), and every match a client saw start must give it a result.
//! The run is bounded by `--seconds` even when something is lost.

use super::codec::{parse_server_line, req_line, ErrorCode, Event, Method, Named, ServerLine};
use super::lines::{Line, LineReader};
use crate::actors::mode::ModeError;
use serde_json::{Map, Value};
use std::cell::RefCell;
use std::collections::HashMap;
use std::io::BufRead;
use std::process::{Child, Command, Stdio};
use std::rc::Rc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;

#[derive(clap::Args, Debug, Clone)]
pub struct LobbyArgs {
    /// Concurrent clients.
    #[arg(long, default_value_t = 300)]
    pub clients: usize,
    /// Seconds of play: clients join new matches until then, then finish
    /// the match they are in and leave.
    #[arg(long, default_value_t = 10)]
    pub seconds: u64,
    /// Each client waits a random 0..=THINK ms before moving, like a real
    /// player; it keeps many matches going at once. Not part of the latency.
    #[arg(long, default_value_t = 10)]
    pub think_ms: u64,
    /// One client in this many plays connect4-classic; the rest play connect4.
    #[arg(long, default_value_t = 3)]
    pub classic_every: usize,
    /// The server's lobby countdown, in ms. At 0 a match starts as soon as
    /// enough players are ready, so the lobbies do not throttle the load.
    #[arg(long, default_value_t = 0)]
    pub countdown_ms: u64,
}

/// Seconds allowed after play time for the last matches to end.
const GRACE_S: u64 = 30;

/// What one run measured.
#[derive(Debug, Default)]
pub struct LobbyReport {
    pub clients: usize,
    pub clients_done: usize,
    /// `game.result` events the clients received.
    pub results: usize,
    pub matches_finished: usize,
    pub wall: Duration,
    pub matches_per_s: f64,
    pub max_live_matches: usize,
    pub mean_live_matches: f64,
    /// Move request to `game.action` event, sorted, in microseconds.
    pub latencies_us: Vec<u64>,
    pub lost_actions: usize,
    pub lost_matches: usize,
    pub errors: usize,
    pub lobby_full: usize,
    pub board_errors: usize,
}

impl LobbyReport {
    /// The `p`-th percentile (0..=100) of the latencies, nearest rank, in ms.
    pub fn percentile_ms(&self, p: f64) -> f64 {
        if self.latencies_us.is_empty() {
            return f64::NAN;
        }
        let n = self.latencies_us.len();
        let rank = ((p / 100.0) * n as f64).ceil().max(1.0) as usize;
        self.latencies_us[rank.min(n) - 1] as f64 / 1000.0
    }
}

struct Shared {
    /// Match id → participants that have not had their result yet.
    live: HashMap<String, usize>,
    finished: usize,
    latencies_us: Vec<u64>,
    errors: usize,
    lobby_full: usize,
    board_errors: usize,
    /// Move requests sent and not yet answered by their event or an error.
    actions_open: usize,
    /// Clients that finished cleanly.
    done: usize,
    /// `game.result` events received.
    results: usize,
    stop_at: Instant,
}

impl Default for Shared {
    fn default() -> Self {
        Shared {
            live: HashMap::new(),
            finished: 0,
            latencies_us: Vec::new(),
            errors: 0,
            lobby_full: 0,
            board_errors: 0,
            actions_open: 0,
            done: 0,
            results: 0,
            stop_at: Instant::now(),
        }
    }
}

/// A tiny deterministic generator for the swarm's moves and waits.
struct XorShift(u64);
impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

struct SwarmMatch {
    id: String,
    heights: Vec<usize>,
    rows: usize,
}

/// One swarm client's connection and state between server lines.
struct SwarmClient {
    name: String,
    game: &'static str,
    think_ms: u64,
    shared: Rc<RefCell<Shared>>,
    stop_at: Instant,
    rng: XorShift,
    w: OwnedWriteHalf,
    next_id: u64,
    /// The last subscribe request's id.
    sub_id: String,
    current: Option<SwarmMatch>,
    /// The move in flight: when it was sent.
    in_flight: Option<Instant>,
    /// Set once play time is over and this client has asked to leave its lobby.
    leave_id: Option<String>,
    /// This client finished cleanly.
    done: bool,
    /// Requests queued while acting on one server line, written together.
    send: String,
}

impl SwarmClient {
    /// Client `i`'s state before it says anything: its name, its game (one
    /// in `classic_every` plays connect4-classic) and its own random sequence.
    fn new(i: usize, args: &LobbyArgs, shared: Rc<RefCell<Shared>>, w: OwnedWriteHalf) -> Self {
        let game = if args.classic_every > 0 && i % args.classic_every == 0 {
            "connect4-classic"
        } else {
            "connect4"
        };
        let stop_at = shared.borrow().stop_at;
        SwarmClient {
            name: format!("b{i}"),
            game,
            think_ms: args.think_ms,
            shared,
            stop_at,
            rng: XorShift(0x9e37_79b9_7f4a_7c15 ^ (i as u64 + 1).wrapping_mul(0x2545_f491_4f6c_dd1d)),
            w,
            next_id: 0,
            sub_id: String::new(),
            current: None,
            in_flight: None,
            leave_id: None,
            done: false,
            send: String::new(),
        }
    }

    /// Queues a request with the next id; returns that id.
    fn request(&mut self, method: Method, m: Option<&str>, params: Option<serde_json::Value>) -> String {
        self.next_id += 1;
        let id = self.next_id.to_string();
        self.send.push_str(&req_line(&id, m, method.as_str(), params.as_ref()));
        id
    }

    /// Queues a subscribe to this client's game and remembers its id, to
    /// recognise the answer.
    fn subscribe(&mut self) {
        let params = serde_json::json!({"game": self.game});
        self.sub_id = self.request(Method::Subscribe, None, Some(params));
    }

    /// Queues the way into the lobby: hello, login and subscribe, sent at once.
    fn greet(&mut self) {
        self.request(Method::Hello, None, Some(serde_json::json!({"version": 1})));
        let params = serde_json::json!({"player": self.name});
        self.request(Method::Login, None, Some(params));
        self.subscribe();
    }

    /// Writes the queued requests, if any; `false` when the write failed.
    async fn flush(&mut self) -> bool {
        if self.send.is_empty() {
            return true;
        }
        let ok = self.w.write_all(self.send.as_bytes()).await.is_ok();
        self.send.clear();
        ok
    }

    /// Acts on server lines until this client is done or the connection
    /// ends (or a write fails).
    async fn drive(&mut self, lines: &mut LineReader<BufReader<OwnedReadHalf>>) {
        while !self.done {
            let Some(next) = self.next_line(lines).await else {
                // Play time is over: leave the lobby, unless a match starts first.
                self.leave_id = Some(self.request(Method::LobbyLeave, None, None));
                if !self.flush().await {
                    break;
                }
                continue;
            };
            let l = match next {
                Ok(Some(Line::Text(t))) => String::from_utf8_lossy(&t).into_owned(),
                _ => break,
            };
            let Ok(msg) = parse_server_line(&l) else {
                self.shared.borrow_mut().errors += 1;
                continue;
            };
            self.on_line(msg).await;
            if !self.flush().await {
                break;
            }
        }
    }

    /// Waits for the next server line; `None` when play time ran out while
    /// waiting in the lobby (the only wait that play time cuts short).
    async fn next_line(
        &self,
        lines: &mut LineReader<BufReader<OwnedReadHalf>>,
    ) -> Option<std::io::Result<Option<Line>>> {
        let waiting_in_lobby = self.current.is_none() && self.leave_id.is_none();
        if waiting_in_lobby {
            tokio::select! {
                l = lines.next_line() => Some(l),
                _ = tokio::time::sleep_until(self.stop_at.into()) => None,
            }
        } else {
            Some(lines.next_line().await)
        }
    }

    /// Routes one parsed server line to the step it answers.
    async fn on_line(&mut self, msg: ServerLine) {
        match msg {
            ServerLine::Ok { id, .. } => self.on_ok(&id),
            ServerLine::Err { id, code, .. } => self.on_refused(&id, code).await,
            ServerLine::Event { match_id, event, body } => {
                let body = body.unwrap_or_default();
                match event {
                    Named::Known(Event::MatchStarted) => self.start_match(match_id, &body),
                    Named::Known(Event::YourTurn) => self.take_turn().await,
                    Named::Known(Event::Action) => self.on_action(&body),
                    Named::Known(Event::Result) => self.finish_match(),
                    _ => {}
                }
            }
        }
    }

    /// A request was accepted: the leave ends this client; a subscribe
    /// (while not leaving) is followed by ready.
    fn on_ok(&mut self, id: &str) {
        if self.leave_id.as_deref() == Some(id) {
            self.done = true;
        } else if id == self.sub_id && self.leave_id.is_none() {
            self.request(Method::Ready, None, None);
        }
    }

    /// A request was refused. NOT_IN_LOBBY for the leave: the match started
    /// (play it out) or the last subscribe found the lobby full (nothing left
    /// to do). A full lobby is asked again; anything else is an error, and
    /// answers the move in flight, if any.
    async fn on_refused(&mut self, id: &str, code: Named<ErrorCode>) {
        if self.leave_id.as_deref() == Some(id) {
            self.done = self.current.is_none();
        } else if id == self.sub_id && code == Named::Known(ErrorCode::LobbyFull) {
            self.retry_full_lobby().await;
        } else {
            let mut sh = self.shared.borrow_mut();
            sh.errors += 1;
            if self.in_flight.take().is_some() {
                sh.actions_open -= 1;
            }
        }
    }

    /// LOBBY_FULL for the last subscribe: during play time, subscribes again
    /// after a random 50..250 ms; after it, this client is done (unless it is
    /// already leaving, when the leave's answer ends it).
    async fn retry_full_lobby(&mut self) {
        self.shared.borrow_mut().lobby_full += 1;
        if Instant::now() < self.stop_at {
            tokio::time::sleep(Duration::from_millis(50 + self.rng.below(200))).await;
            self.subscribe();
        } else if self.leave_id.is_none() {
            self.done = true;
        }
    }

    /// `match.started`: checks the board size against the game and the
    /// number of players, counts the match as live, and starts tracking
    /// the column heights (to pick legal moves).
    fn start_match(&mut self, match_id: Option<String>, body: &Map<String, Value>) {
        let n = body.get("participants").and_then(|p| p.as_array()).map_or(0, Vec::len);
        let w = body.get("width").and_then(|v| v.as_u64()).unwrap_or(0) as usize;
        let h = body.get("height").and_then(|v| v.as_u64()).unwrap_or(0) as usize;
        let expected = if self.game == "connect4" {
            (n + 4, n + 3)
        } else {
            (7, 6)
        };
        let mut sh = self.shared.borrow_mut();
        if (w, h) != expected {
            sh.board_errors += 1;
        }
        let id = match_id.unwrap_or_default();
        sh.live.entry(id.clone()).or_insert(n);
        self.current = Some(SwarmMatch {
            id,
            heights: vec![0; w],
            rows: h,
        });
    }

    /// `game.your_turn`: picks a random open column, thinks a random
    /// 0..=think_ms ms, and sends the move; the latency clock starts here.
    async fn take_turn(&mut self) {
        let Some(m) = self.current.as_ref() else { return };
        let open: Vec<usize> = (0..m.heights.len()).filter(|&c| m.heights[c] < m.rows).collect();
        if open.is_empty() {
            return;
        }
        let col = open[self.rng.below(open.len() as u64) as usize];
        if self.think_ms > 0 {
            tokio::time::sleep(Duration::from_millis(self.rng.below(self.think_ms + 1))).await;
        }
        let id = m.id.clone();
        self.request(
            Method::Action,
            Some(&id),
            Some(serde_json::json!({"type": "move", "move": col})),
        );
        self.in_flight = Some(Instant::now());
        self.shared.borrow_mut().actions_open += 1;
    }

    /// `game.action`: fills the column on the tracked board; when it is this
    /// client's own move, stops the latency clock and closes the request.
    fn on_action(&mut self, body: &Map<String, Value>) {
        let col = body.get("move").and_then(|v| v.as_u64()).unwrap_or(u64::MAX) as usize;
        if let Some(m) = self.current.as_mut() {
            if let Some(h) = m.heights.get_mut(col) {
                *h += 1;
            }
        }
        if body.get("player").and_then(|p| p.as_str()) == Some(self.name.as_str()) {
            if let Some(t) = self.in_flight.take() {
                let mut sh = self.shared.borrow_mut();
                sh.latencies_us.push(t.elapsed().as_micros() as u64);
                sh.actions_open -= 1;
            }
        }
    }

    /// `game.result`: counts the result (the match is finished once all its
    /// participants have theirs), then subscribes again during play time,
    /// else this client is done.
    fn finish_match(&mut self) {
        if let Some(m) = self.current.take() {
            let mut sh = self.shared.borrow_mut();
            let left = sh.live.get_mut(&m.id).map(|n| {
                *n -= 1;
                *n
            });
            if left == Some(0) {
                sh.live.remove(&m.id);
                sh.finished += 1;
            }
            sh.results += 1;
        }
        if Instant::now() >= self.stop_at || self.leave_id.is_some() {
            self.done = true;
        } else {
            self.subscribe();
        }
    }
}

/// One swarm client: plays matches until the play time is over, then
/// finishes the match it is in (or leaves its lobby) and disconnects.
async fn swarm_client(i: usize, addr: String, args: LobbyArgs, shared: Rc<RefCell<Shared>>) {
    let Ok(stream) = TcpStream::connect(&addr).await else {
        shared.borrow_mut().errors += 1;
        return;
    };
    let _ = stream.set_nodelay(true);
    let (rd, w) = stream.into_split();
    let mut lines = LineReader::new(BufReader::new(rd), 1 << 20);
    let mut c = SwarmClient::new(i, &args, shared, w);
    c.greet();
    if !c.flush().await {
        return;
    }
    c.drive(&mut lines).await;
    if c.done {
        c.shared.borrow_mut().done += 1;
    }
    let _ = c.w.shutdown().await;
}

/// Why the lobby benchmark could not run, or lost something.
#[derive(Debug, thiserror::Error)]
pub enum LobbyBenchError {
    #[error("cannot find c4sim itself: {0}")]
    NoExe(#[source] std::io::Error),
    #[error("cannot start the server: {0}")]
    Start(#[source] std::io::Error),
    #[error("the server said nothing: {0}")]
    Silent(#[source] std::io::Error),
    /// The server's first line (`line`) is not its JSON greeting.
    #[error("the server's first line `{line}`: {source}")]
    FirstLine { line: String, source: serde_json::Error },
    #[error("the server did not say its address")]
    NoAddress,
    /// The clients' runtime cannot start.
    #[error("{0}")]
    Runtime(#[source] std::io::Error),
    #[error("some clients, moves or matches were lost (above)")]
    Lost,
}

/// Starts `c4sim serve` on a free loopback port; returns it and its address.
fn start_server(args: &LobbyArgs) -> Result<(Child, String), LobbyBenchError> {
    let exe = std::env::current_exe().map_err(LobbyBenchError::NoExe)?;
    let mut child = Command::new(exe)
        .args([
            "serve",
            "--bind",
            "127.0.0.1:0",
            "--countdown",
            &format!("{}ms", args.countdown_ms),
            "--move-timeout",
            "10s",
            "--reconnect-grace",
            "1s",
            "--max-connections",
            &(args.clients + 64).to_string(),
            "--max-connections-per-address",
            &(args.clients + 64).to_string(),
            "--max-lines-per-second",
            "100000",
            "--json",
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(LobbyBenchError::Start)?;
    let stdout = child.stdout.take().expect("piped");
    let mut reader = std::io::BufReader::new(stdout);
    let mut first = String::new();
    reader.read_line(&mut first).map_err(LobbyBenchError::Silent)?;
    let v: serde_json::Value = match serde_json::from_str(&first) {
        Ok(v) => v,
        Err(source) => return Err(LobbyBenchError::FirstLine { line: first, source }),
    };
    let addr = v["addr"].as_str().ok_or(LobbyBenchError::NoAddress)?.to_string();
    // Keep reading (and dropping) the server's output so it never blocks on a full pipe.
    std::thread::spawn(move || for _ in reader.lines() {});
    Ok((child, addr))
}

/// Runs the load test against a server in another process.
pub fn lobby_bench(args: &LobbyArgs) -> Result<LobbyReport, LobbyBenchError> {
    let (mut server, addr) = start_server(args)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(LobbyBenchError::Runtime)?;
    let started = Instant::now();
    let stop_at = started + Duration::from_secs(args.seconds);
    let shared = Rc::new(RefCell::new(Shared {
        stop_at,
        ..Shared::default()
    }));
    let local = tokio::task::LocalSet::new();
    let (finished_in_time, live_samples) = local.block_on(&rt, async {
        let handles: Vec<_> = (0..args.clients)
            .map(|i| tokio::task::spawn_local(swarm_client(i, addr.clone(), args.clone(), shared.clone())))
            .collect();
        let samples = Rc::new(RefCell::new(Vec::<usize>::new()));
        let (s2, sh2) = (samples.clone(), shared.clone());
        let sampler = tokio::task::spawn_local(async move {
            // Sampled during play time only: the tail, when clients leave,
            // would dilute the figure.
            while Instant::now() + Duration::from_millis(100) <= stop_at {
                tokio::time::sleep(Duration::from_millis(100)).await;
                s2.borrow_mut().push(sh2.borrow().live.len());
            }
        });
        let all = async {
            for h in handles {
                let _ = h.await;
            }
        };
        // Matches in progress at the stop end within the move timeout (10 s).
        let bound = Duration::from_secs(args.seconds + GRACE_S);
        let finished_in_time = tokio::time::timeout(bound, all).await.is_ok();
        let _ = sampler.await;
        let samples = samples.borrow().clone();
        (finished_in_time, samples)
    });
    let wall = started.elapsed();
    let _ = server.kill();
    let _ = server.wait();
    let mut sh = shared.borrow_mut();
    if !finished_in_time {
        eprintln!("warning: the swarm did not finish within {GRACE_S} s after play time");
    }
    let mut latencies = std::mem::take(&mut sh.latencies_us);
    latencies.sort_unstable();
    let in_progress = sh.live.len();
    Ok(LobbyReport {
        clients: args.clients,
        clients_done: sh.done,
        results: sh.results,
        matches_finished: sh.finished,
        wall,
        matches_per_s: sh.finished as f64 / wall.as_secs_f64(),
        max_live_matches: live_samples.iter().copied().max().unwrap_or(0),
        mean_live_matches: if live_samples.is_empty() {
            0.0
        } else {
            live_samples.iter().sum::<usize>() as f64 / live_samples.len() as f64
        },
        latencies_us: latencies,
        lost_actions: sh.actions_open,
        lost_matches: in_progress,
        errors: sh.errors,
        lobby_full: sh.lobby_full,
        board_errors: sh.board_errors,
    })
}

/// `c4sim bench lobby`: runs and prints; fails when anything was lost.
pub fn run(args: &LobbyArgs) -> Result<(), ModeError> {
    println!(
        "lobby load on loopback: {} clients ({} connect4-classic, the rest connect4), {} s of play, \
         think 0..={} ms, countdown {} ms; the server is a separate process",
        args.clients,
        if args.classic_every == 0 {
            0
        } else {
            args.clients.div_ceil(args.classic_every)
        },
        args.seconds,
        args.think_ms,
        args.countdown_ms
    );
    let r = lobby_bench(args).map_err(ModeError::failed)?;
    println!(
        "  clients finished: {}/{}   matches finished: {} ({} results) in {:.2} s = {:.1} matches/s",
        r.clients_done,
        r.clients,
        r.matches_finished,
        r.results,
        r.wall.as_secs_f64(),
        r.matches_per_s
    );
    println!(
        "  matches at once (sampled every 100 ms): max {}, mean {:.1}",
        r.max_live_matches, r.mean_live_matches
    );
    println!(
        "  move request → game.action event, {} moves: p50 {:.3} ms  p90 {:.3} ms  p99 {:.3} ms  max {:.3} ms",
        r.latencies_us.len(),
        r.percentile_ms(50.0),
        r.percentile_ms(90.0),
        r.percentile_ms(99.0),
        r.percentile_ms(100.0)
    );
    println!(
        "  lost: {} move requests without their event, {} matches without a result; errors {}, wrong boards {}, \
         LOBBY_FULL retries {}",
        r.lost_actions, r.lost_matches, r.errors, r.board_errors, r.lobby_full
    );
    let p99 = r.percentile_ms(99.0);
    println!("  goal p99 ≤ 5 ms: {}", if p99 <= 5.0 { "met" } else { "NOT met" });
    let ok = r.clients_done == r.clients
        && r.lost_actions == 0
        && r.lost_matches == 0
        && r.errors == 0
        && r.board_errors == 0;
    if ok {
        Ok(())
    } else {
        Err(ModeError::failed(LobbyBenchError::Lost))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_the_nearest_rank() {
        let r = LobbyReport {
            latencies_us: (1..=100).map(|i| i * 1000).collect(),
            ..Default::default()
        };
        assert_eq!(r.percentile_ms(50.0), 50.0);
        assert_eq!(r.percentile_ms(99.0), 99.0);
        assert_eq!(r.percentile_ms(100.0), 100.0);
        assert_eq!(r.percentile_ms(0.0), 1.0);
        assert!(LobbyReport::default().percentile_ms(50.0).is_nan());
    }
}
