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

use super::codec::{parse_server_line, req_line, ErrorCode, Event, Method, ServerLine};
use super::lines::{Line, LineReader};
use std::cell::RefCell;
use std::collections::HashMap;
use std::io::BufRead;
use std::process::{Child, Command, Stdio};
use std::rc::Rc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncWriteExt, BufReader};
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

/// One swarm client: plays matches until the play time is over, then
/// finishes the match it is in (or leaves its lobby) and disconnects.
async fn swarm_client(i: usize, addr: String, args: LobbyArgs, shared: Rc<RefCell<Shared>>) {
    let Ok(stream) = TcpStream::connect(&addr).await else {
        shared.borrow_mut().errors += 1;
        return;
    };
    let _ = stream.set_nodelay(true);
    let (rd, mut w) = stream.into_split();
    let mut lines = LineReader::new(BufReader::new(rd), 1 << 20);
    let name = format!("b{i}");
    let game = if args.classic_every > 0 && i % args.classic_every == 0 {
        "connect4-classic"
    } else {
        "connect4"
    };
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15 ^ (i as u64 + 1).wrapping_mul(0x2545_f491_4f6c_dd1d));
    let mut next_id = 0u64;
    let mut line = |method: Method, m: Option<&str>, params: Option<serde_json::Value>| {
        next_id += 1;
        (
            next_id.to_string(),
            req_line(&next_id.to_string(), m, method.as_str(), params.as_ref()),
        )
    };
    let mut out = String::new();
    out.push_str(&line(Method::Hello, None, Some(serde_json::json!({"version": 1}))).1);
    out.push_str(&line(Method::Login, None, Some(serde_json::json!({"player": name}))).1);
    let (mut sub_id, sub) = line(Method::Subscribe, None, Some(serde_json::json!({"game": game})));
    out.push_str(&sub);
    if w.write_all(out.as_bytes()).await.is_err() {
        return;
    }
    let stop_at = shared.borrow().stop_at;
    let mut current: Option<SwarmMatch> = None;
    // The move in flight: when it was sent.
    let mut in_flight: Option<Instant> = None;
    // Set once play time is over and this client has asked to leave its lobby.
    let mut leave_id: Option<String> = None;
    let mut done = false;
    while !done {
        let waiting_in_lobby = current.is_none() && leave_id.is_none();
        let next = if waiting_in_lobby {
            tokio::select! {
                l = lines.next_line() => Some(l),
                _ = tokio::time::sleep_until(stop_at.into()) => None,
            }
        } else {
            Some(lines.next_line().await)
        };
        let mut send = String::new();
        let Some(next) = next else {
            // Play time is over: leave the lobby, unless a match starts first.
            let (id, l) = line(Method::LobbyLeave, None, None);
            leave_id = Some(id);
            if w.write_all(l.as_bytes()).await.is_err() {
                break;
            }
            continue;
        };
        let l = match next {
            Ok(Some(Line::Text(t))) => String::from_utf8_lossy(&t).into_owned(),
            _ => break,
        };
        let Ok(msg) = parse_server_line(&l) else {
            shared.borrow_mut().errors += 1;
            continue;
        };
        match msg {
            ServerLine::Ok { id, .. } if Some(&id) == leave_id.as_ref() => done = true,
            ServerLine::Ok { id, .. } if id == sub_id && leave_id.is_none() => {
                send.push_str(&line(Method::Ready, None, None).1);
            }
            ServerLine::Ok { .. } => {}
            // NOT_IN_LOBBY: the match started (play it out) or the last
            // subscribe found the lobby full (nothing left to do).
            ServerLine::Err { id, .. } if Some(&id) == leave_id.as_ref() => done = current.is_none(),
            ServerLine::Err { id, code, .. } if id == sub_id && code == Ok(ErrorCode::LobbyFull) => {
                shared.borrow_mut().lobby_full += 1;
                if Instant::now() < stop_at {
                    tokio::time::sleep(Duration::from_millis(50 + rng.below(200))).await;
                    let (id, l) = line(Method::Subscribe, None, Some(serde_json::json!({"game": game})));
                    sub_id = id;
                    send.push_str(&l);
                } else if leave_id.is_none() {
                    done = true;
                }
            }
            ServerLine::Err { .. } => {
                let mut sh = shared.borrow_mut();
                sh.errors += 1;
                if in_flight.take().is_some() {
                    sh.actions_open -= 1;
                }
            }
            ServerLine::Event { match_id, event, body } => {
                let body = body.unwrap_or_default();
                match event {
                    Ok(Event::MatchStarted) => {
                        let n = body.get("participants").and_then(|p| p.as_array()).map_or(0, Vec::len);
                        let w = body.get("width").and_then(|v| v.as_u64()).unwrap_or(0) as usize;
                        let h = body.get("height").and_then(|v| v.as_u64()).unwrap_or(0) as usize;
                        let expected = if game == "connect4" { (n + 4, n + 3) } else { (7, 6) };
                        let mut sh = shared.borrow_mut();
                        if (w, h) != expected {
                            sh.board_errors += 1;
                        }
                        let id = match_id.unwrap_or_default();
                        sh.live.entry(id.clone()).or_insert(n);
                        current = Some(SwarmMatch {
                            id,
                            heights: vec![0; w],
                            rows: h,
                        });
                    }
                    Ok(Event::YourTurn) => {
                        let Some(m) = current.as_ref() else { continue };
                        let open: Vec<usize> = (0..m.heights.len()).filter(|&c| m.heights[c] < m.rows).collect();
                        if open.is_empty() {
                            continue;
                        }
                        let col = open[rng.below(open.len() as u64) as usize];
                        if args.think_ms > 0 {
                            tokio::time::sleep(Duration::from_millis(rng.below(args.think_ms + 1))).await;
                        }
                        let id = m.id.clone();
                        send.push_str(
                            &line(
                                Method::Action,
                                Some(&id),
                                Some(serde_json::json!({"type": "move", "move": col})),
                            )
                            .1,
                        );
                        in_flight = Some(Instant::now());
                        shared.borrow_mut().actions_open += 1;
                    }
                    Ok(Event::Action) => {
                        let col = body.get("move").and_then(|v| v.as_u64()).unwrap_or(u64::MAX) as usize;
                        if let Some(m) = current.as_mut() {
                            if let Some(h) = m.heights.get_mut(col) {
                                *h += 1;
                            }
                        }
                        if body.get("player").and_then(|p| p.as_str()) == Some(name.as_str()) {
                            if let Some(t) = in_flight.take() {
                                let mut sh = shared.borrow_mut();
                                sh.latencies_us.push(t.elapsed().as_micros() as u64);
                                sh.actions_open -= 1;
                            }
                        }
                    }
                    Ok(Event::Result) => {
                        if let Some(m) = current.take() {
                            let mut sh = shared.borrow_mut();
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
                        if Instant::now() >= stop_at || leave_id.is_some() {
                            done = true;
                        } else {
                            let (id, l) = line(Method::Subscribe, None, Some(serde_json::json!({"game": game})));
                            sub_id = id;
                            send.push_str(&l);
                        }
                    }
                    _ => {}
                }
            }
        }
        if !send.is_empty() && w.write_all(send.as_bytes()).await.is_err() {
            break;
        }
    }
    if done {
        shared.borrow_mut().done += 1;
    }
    let _ = w.shutdown().await;
}

/// Starts `c4sim serve` on a free loopback port; returns it and its address.
fn start_server(args: &LobbyArgs) -> Result<(Child, String), String> {
    let exe = std::env::current_exe().map_err(|e| format!("cannot find c4sim itself: {e}"))?;
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
        .map_err(|e| format!("cannot start the server: {e}"))?;
    let stdout = child.stdout.take().expect("piped");
    let mut reader = std::io::BufReader::new(stdout);
    let mut first = String::new();
    reader
        .read_line(&mut first)
        .map_err(|e| format!("the server said nothing: {e}"))?;
    let v: serde_json::Value =
        serde_json::from_str(&first).map_err(|e| format!("the server's first line `{first}`: {e}"))?;
    let addr = v["addr"]
        .as_str()
        .ok_or("the server did not say its address")?
        .to_string();
    // Keep reading (and dropping) the server's output so it never blocks on a full pipe.
    std::thread::spawn(move || for _ in reader.lines() {});
    Ok((child, addr))
}

/// Runs the load test against a server in another process.
pub fn lobby_bench(args: &LobbyArgs) -> Result<LobbyReport, String> {
    let (mut server, addr) = start_server(args)?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
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

/// `c4sim bench lobby`: runs and prints. Exit code 1 when anything was lost.
pub fn run(args: &LobbyArgs) -> u8 {
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
    let r = match lobby_bench(args) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return 1;
        }
    };
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
        0
    } else {
        1
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
