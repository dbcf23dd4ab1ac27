//! What the web tests share: a `c4sim` child serving a page on a free
//! loopback port (killed when dropped), and reading the URL it prints.

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

pub struct Served {
    pub child: Child,
    pub addr: SocketAddr,
    /// Everything else the child printed on the stream the URL came on.
    pub rest: mpsc::Receiver<String>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The `http://IP:PORT/` in a line, as an address.
pub fn url_in(line: &str) -> Option<SocketAddr> {
    let at = line.find("http://")? + "http://".len();
    let rest = &line[at..];
    let end = rest.find('/')?;
    rest[..end].parse().ok()
}

/// `c4sim web` on a free loopback port with `leftmost` as the server's
/// player, and `extra` arguments.
pub fn serve_leftmost(extra: &[&str]) -> Served {
    let mut args = vec!["web", "--bind", "127.0.0.1:0", "--player", "leftmost"];
    args.extend_from_slice(extra);
    serve(&args, false)
}

/// Runs `c4sim ARGS` and waits (up to 60 s: AlphaZero loads its model
/// first) for the line with its URL, on standard output or, with
/// `url_on_stderr`, standard error.
pub fn serve(args: &[&str], url_on_stderr: bool) -> Served {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_c4sim"));
    cmd.args(args)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null());
    if url_on_stderr {
        cmd.stderr(Stdio::piped()).stdout(Stdio::null());
    } else {
        cmd.stdout(Stdio::piped()).stderr(Stdio::inherit());
    }
    let mut child = cmd.spawn().expect("c4sim starts");
    let stream: Box<dyn Read + Send> = if url_on_stderr {
        Box::new(child.stderr.take().unwrap())
    } else {
        Box::new(child.stdout.take().unwrap())
    };
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    // Owned by the guard at once, so a panic below kills the child too.
    let mut served = Served {
        child,
        addr: SocketAddr::from(([0, 0, 0, 0], 0)),
        rest: rx,
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match served.rest.recv_timeout(left) {
            Ok(line) => {
                if let Some(addr) = url_in(&line) {
                    served.addr = addr;
                    return served;
                }
            }
            Err(_) => panic!("c4sim {args:?} printed no URL"),
        }
    }
}
