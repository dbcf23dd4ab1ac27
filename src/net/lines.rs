//! Reading `\n`-terminated lines from a socket with a hard bound on memory:
//! a peer that sends an endless line costs at most `max + 1` buffered bytes,
//! and the line is reported as too long (answered `BAD_REQUEST`) instead of
//! growing a buffer without end, as `read_line` would.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

/// One line from the peer.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// The line without `\n` and without a final `\r`.
    Text(Vec<u8>),
    /// Longer than the limit; `head` holds its first bytes (enough to read a
    /// request id from). The rest was read and thrown away.
    TooLong { head: Vec<u8> },
}

/// Bytes of an over-long line kept to find its request id in.
const HEAD: usize = 64;

pub struct LineReader<R> {
    inner: R,
    max: usize,
    /// The line read so far. Kept here, not in the future, so that
    /// [`LineReader::next_line`] is cancel-safe (clients race it against
    /// their player's answer in `select!`).
    buf: Vec<u8>,
    overflow: bool,
}

impl<R: AsyncBufRead + Unpin> LineReader<R> {
    pub fn new(inner: R, max: usize) -> Self {
        LineReader {
            inner,
            max,
            buf: Vec::with_capacity(256),
            overflow: false,
        }
    }

    /// The next line; `None` at end of input. An unterminated last line is
    /// dropped: the protocol says `\n` ends a line, and a peer that closes
    /// mid-line has not finished saying anything.
    pub async fn next_line(&mut self) -> std::io::Result<Option<Line>> {
        // Keep at most max + 1 bytes: enough to hold a `\r` after a line of
        // exactly `max` bytes, and to know a longer one is too long.
        let keep = self.max + 1;
        loop {
            let avail = self.inner.fill_buf().await?;
            if avail.is_empty() {
                return Ok(None);
            }
            let (chunk, used, done) = match avail.iter().position(|&b| b == b'\n') {
                Some(i) => (&avail[..i], i + 1, true),
                None => (avail, avail.len(), false),
            };
            let room = keep.saturating_sub(self.buf.len());
            if chunk.len() > room {
                self.overflow = true;
            }
            self.buf.extend_from_slice(&chunk[..chunk.len().min(room)]);
            self.inner.consume(used);
            if done {
                break;
            }
        }
        let overflow = std::mem::replace(&mut self.overflow, false);
        let mut line = std::mem::take(&mut self.buf);
        if line.last() == Some(&b'\r') && !overflow {
            line.pop();
        }
        if overflow || line.len() > self.max {
            line.truncate(HEAD);
            return Ok(Some(Line::TooLong { head: line }));
        }
        Ok(Some(Line::Text(line)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::BufReader;

    async fn all(input: &[u8], max: usize, cap: usize) -> Vec<Line> {
        let mut r = LineReader::new(BufReader::with_capacity(cap, input), max);
        let mut out = Vec::new();
        while let Some(l) = r.next_line().await.unwrap() {
            out.push(l);
        }
        out
    }

    fn text(s: &str) -> Line {
        Line::Text(s.as_bytes().to_vec())
    }

    #[tokio::test]
    async fn splits_lines_and_strips_cr() {
        for cap in [1, 3, 4096] {
            let lines = all(b"REQ 1 a.b\r\n\nREQ 2 c.d\nhalf", 16, cap).await;
            assert_eq!(
                lines,
                vec![text("REQ 1 a.b"), text(""), text("REQ 2 c.d")],
                "capacity {cap}"
            );
        }
    }

    #[tokio::test]
    async fn bounds_long_lines_and_recovers_after_them() {
        for cap in [1, 7, 8192] {
            let mut input = b"REQ 9 ".to_vec();
            input.resize(input.len() + 100_000, b'x');
            input.extend_from_slice(b"\nREQ 3 e.f\n");
            let lines = all(&input, 16, cap).await;
            assert_eq!(lines.len(), 2);
            match &lines[0] {
                Line::TooLong { head } => assert!(head.starts_with(b"REQ 9 xxx") && head.len() <= HEAD),
                other => panic!("{other:?}"),
            }
            assert_eq!(lines[1], text("REQ 3 e.f"));
        }
    }

    #[tokio::test]
    async fn the_limit_is_exact() {
        let ok = format!("{}\r\n", "a".repeat(16));
        assert_eq!(all(ok.as_bytes(), 16, 5).await, vec![text(&"a".repeat(16))]);
        let long = format!("{}\n", "a".repeat(17));
        assert!(matches!(all(long.as_bytes(), 16, 5).await[..], [Line::TooLong { .. }]));
        let long_cr = format!("{}\r\n", "a".repeat(17));
        assert!(matches!(
            all(long_cr.as_bytes(), 16, 5).await[..],
            [Line::TooLong { .. }]
        ));
    }
}
