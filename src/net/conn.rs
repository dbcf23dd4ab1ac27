//! One TCP connection of the lobby server: a reader task that frames and
//! parses lines and hands requests to the hub one at a time, and a writer
//! task that drains the connection's bounded outbox. The hub owns the
//! connection's life: dropping its end of the connection (and so the kill
//! switch) ends both tasks, even a writer stuck on a peer that stopped
//! reading. The tasks know the hub only as [`ConnHub`] recipients.

use super::codec::{self, ErrorCode, MAX_BAD_LINES};
use super::hub_messages::{Closed, ConnHub, Inbound, Open};
use super::lines::{Line, LineReader};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncWriteExt, BufReader, BufWriter};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, watch};

/// Lines queued for a peer before it counts as not reading and is dropped.
/// Kernel buffers absorb megabytes first, so only a peer that stopped
/// reading altogether gets here.
pub const OUTBOX: usize = 1024;

/// How long queued lines may take to go out once a connection is closed.
const LAST_WORDS: Duration = Duration::from_millis(200);

/// Connection limits the tasks enforce themselves.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_line: usize,
    pub lines_per_second: u32,
}

/// A token bucket: one second's worth of burst, then `rate` lines a second.
/// Over the rate the reader just waits, so a flood is slowed by TCP
/// backpressure instead of taking the server's time from other players.
struct Bucket {
    rate: f64,
    tokens: f64,
    last: Instant,
}

impl Bucket {
    fn new(rate: u32) -> Self {
        Bucket {
            rate: rate as f64,
            tokens: rate as f64,
            last: Instant::now(),
        }
    }

    /// How long to wait before the next line may be handled (zero when a
    /// token is there), and takes the token.
    fn take(&mut self, now: Instant) -> Duration {
        self.tokens = (self.tokens + now.duration_since(self.last).as_secs_f64() * self.rate).min(self.rate);
        self.last = now;
        self.tokens -= 1.0;
        if self.tokens >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-self.tokens / self.rate)
        }
    }
}

/// Asks the kernel to probe idle peers, so a half-open connection (a peer
/// that vanished without closing) is noticed within about a minute even
/// when no move of that player is due.
#[cfg(target_os = "linux")]
pub fn keepalive(stream: &TcpStream) {
    use std::os::fd::AsRawFd;
    let fd = stream.as_raw_fd();
    let set = |level: libc::c_int, name: libc::c_int, value: libc::c_int| {
        // SAFETY: `fd` is an open socket owned by `stream` for this call, and
        // the option value is a c_int that lives across the call.
        unsafe {
            libc::setsockopt(
                fd,
                level,
                name,
                &value as *const libc::c_int as *const libc::c_void,
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        }
    };
    set(libc::SOL_SOCKET, libc::SO_KEEPALIVE, 1);
    set(libc::IPPROTO_TCP, libc::TCP_KEEPIDLE, 30);
    set(libc::IPPROTO_TCP, libc::TCP_KEEPINTVL, 10);
    set(libc::IPPROTO_TCP, libc::TCP_KEEPCNT, 3);
}

#[cfg(not(target_os = "linux"))]
pub fn keepalive(_stream: &TcpStream) {}

/// Serves one accepted connection until it closes or the hub drops it.
pub async fn run(stream: TcpStream, peer: SocketAddr, hub: ConnHub, limits: Limits) {
    let _ = stream.set_nodelay(true);
    keepalive(&stream);
    let (rd, wr) = stream.into_split();
    let (tx, rx) = mpsc::channel::<Arc<str>>(OUTBOX);
    let (kill_tx, kill_rx) = watch::channel(());
    let id = match hub
        .open
        .send(Open {
            ip: peer.ip(),
            outbox: tx.clone(),
            kill: kill_tx,
        })
        .await
    {
        Ok(Some(id)) => id,
        // Over a connection limit (or the server is stopping): dropping
        // the halves closes the socket.
        _ => return,
    };
    actix::spawn(writer(wr, rx, kill_rx.clone()));
    reader(rd, id, tx, hub.clone(), kill_rx, limits).await;
    hub.closed.do_send(Closed { conn: id });
}

async fn writer(wr: OwnedWriteHalf, mut rx: mpsc::Receiver<Arc<str>>, mut kill: watch::Receiver<()>) {
    let mut w = BufWriter::new(wr);
    loop {
        let line = tokio::select! {
            l = rx.recv() => l,
            _ = kill.changed() => None,
        };
        let Some(line) = line else { break };
        let write = async {
            w.write_all(line.as_bytes()).await?;
            if rx.is_empty() {
                w.flush().await?;
            }
            Ok::<_, std::io::Error>(())
        };
        let ok = tokio::select! {
            r = write => r.is_ok(),
            _ = kill.changed() => false,
        };
        if !ok {
            break;
        }
    }
    // What is already queued (an answer to the last line, say) may still go
    // out, within a bound: a peer that does not read gets nothing more.
    let _ = tokio::time::timeout(LAST_WORDS, async {
        while let Ok(line) = rx.try_recv() {
            w.write_all(line.as_bytes()).await?;
        }
        w.flush().await?;
        w.shutdown().await
    })
    .await;
}

async fn reader(
    rd: OwnedReadHalf,
    conn: u64,
    tx: mpsc::Sender<Arc<str>>,
    hub: ConnHub,
    mut kill: watch::Receiver<()>,
    limits: Limits,
) {
    let mut lines = LineReader::new(BufReader::new(rd), limits.max_line);
    let mut bucket = Bucket::new(limits.lines_per_second);
    let mut bad_in_row = 0;
    loop {
        let next = tokio::select! {
            l = lines.next_line() => l,
            _ = kill.changed() => break,
        };
        let line = match next {
            Ok(Some(l)) => l,
            _ => break,
        };
        let wait = bucket.take(Instant::now());
        if !wait.is_zero() {
            tokio::select! {
                _ = tokio::time::sleep(wait) => {}
                _ = kill.changed() => break,
            }
        }
        let bad = match line {
            Line::TooLong { head } => {
                let answer = codec::err_line(
                    codec::request_id(&head).as_deref(),
                    ErrorCode::BadRequest,
                    &format!("line longer than {} bytes", limits.max_line),
                );
                if tx.try_send(answer.into()).is_err() {
                    break;
                }
                true
            }
            Line::Text(text) => match codec::parse_request(&text) {
                Err(b) => {
                    if tx.try_send(b.answer().into()).is_err() {
                        break;
                    }
                    true
                }
                Ok(req) => match hub.inbound.send(Inbound { conn, req }).await {
                    Ok(Some(bad)) => bad,
                    // The hub dropped this connection meanwhile.
                    Ok(None) | Err(_) => break,
                },
            },
        };
        if bad {
            bad_in_row += 1;
            if bad_in_row >= MAX_BAD_LINES {
                tracing::info!("connection {conn}: {MAX_BAD_LINES} bad lines in a row, closing");
                break;
            }
        } else {
            bad_in_row = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bucket_allows_a_second_of_burst_then_the_rate() {
        let t0 = Instant::now();
        let mut b = Bucket::new(10);
        for _ in 0..10 {
            assert_eq!(b.take(t0), Duration::ZERO);
        }
        let wait = b.take(t0);
        assert!((wait.as_secs_f64() - 0.1).abs() < 1e-9, "{wait:?}");
        // After waiting, the next token is there again after 0.1 s more.
        let wait = b.take(t0 + Duration::from_millis(100));
        assert!((wait.as_secs_f64() - 0.1).abs() < 1e-9, "{wait:?}");
        // A long pause refills only up to the burst.
        let later = t0 + Duration::from_secs(100);
        for _ in 0..10 {
            assert_eq!(b.take(later), Duration::ZERO);
        }
        assert!(b.take(later) > Duration::ZERO);
    }
}
