//! Client WebSocket frames checked header by header as their bytes arrive,
//! before any of them is buffered.
//!
//! Why: actix-http's codec compares a frame's length with its limit only
//! once the whole frame has arrived, and actix-ws appends every incoming
//! chunk to one buffer until then, so a header announcing 2^62 bytes made
//! the server hold whatever the client sent next. [`FrameCheck`] reads only
//! headers (at most 14 bytes kept) and skips payloads by counting, so a
//! frame or message over the limit, or a header no client may send, is
//! refused the moment its header is complete. Pure: bytes in, verdict out.

/// Why a connection must close, and with which RFC 6455 close code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Violation {
    /// A frame, or a fragmented message so far, over the limit: 1009.
    /// `announced` is its length where a header said it (`None` where the
    /// codec found the excess after reading).
    TooLarge { announced: Option<u64>, limit: usize },
    /// A header no client may send (reserved bits, unknown opcode, an
    /// unmasked frame, a long or fragmented control frame, continuation
    /// out of order): 1002.
    Protocol(String),
    /// A text message that is not UTF-8: 1007. Found by the codec after
    /// the frame is read (never by [`FrameCheck`]), listed here so the
    /// connection has one type for why it closes.
    InvalidUtf8,
}

impl Violation {
    /// The RFC 6455 close code.
    pub fn close_code(&self) -> u16 {
        match self {
            Violation::TooLarge { .. } => 1009,
            Violation::Protocol(_) => 1002,
            Violation::InvalidUtf8 => 1007,
        }
    }

    /// What the person (or the client's author) reads.
    pub fn describe(&self) -> String {
        match self {
            Violation::TooLarge {
                announced: Some(n),
                limit,
            } => format!("a frame or message of {n} bytes; the limit is {limit}"),
            Violation::TooLarge { announced: None, limit } => {
                format!("a frame or message over the limit of {limit} bytes")
            }
            Violation::Protocol(why) => format!("WebSocket protocol error: {why}"),
            Violation::InvalidUtf8 => "a text message that is not UTF-8".to_string(),
        }
    }
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

impl std::error::Error for Violation {}

/// Where the reader is in the stream of client frames.
#[derive(Debug)]
pub struct FrameCheck {
    limit: usize,
    /// The header read so far (2 to 14 bytes: flags, length, mask).
    head: [u8; 14],
    head_len: usize,
    /// Payload bytes of the current frame not yet seen.
    skip: u64,
    /// Data bytes of the fragmented message in progress, `None` outside one.
    message: Option<u64>,
}

const FIN: u8 = 0x80;
const RSV: u8 = 0x70;
const MASKED: u8 = 0x80;

impl FrameCheck {
    /// Frames and (fragmented) messages over `limit` bytes are refused.
    pub fn new(limit: usize) -> Self {
        FrameCheck {
            limit,
            head: [0; 14],
            head_len: 0,
            skip: 0,
            message: None,
        }
    }

    /// Reads the next bytes the client sent; the first violation ends the
    /// connection (call no more after one).
    pub fn feed(&mut self, mut bytes: &[u8]) -> Result<(), Violation> {
        while !bytes.is_empty() {
            if self.skip > 0 {
                let n = self.skip.min(bytes.len() as u64);
                self.skip -= n;
                bytes = &bytes[n as usize..];
                continue;
            }
            let need = self.header_len_needed();
            let take = (need - self.head_len).min(bytes.len());
            self.head[self.head_len..self.head_len + take].copy_from_slice(&bytes[..take]);
            self.head_len += take;
            bytes = &bytes[take..];
            // Every check that the bytes so far allow, as early as they allow it.
            self.check_partial()?;
            if self.head_len == self.header_len_needed() {
                self.skip = self.complete()?;
                self.head_len = 0;
            }
        }
        Ok(())
    }

    /// Header bytes this frame needs: 2, then 2 + extended length + mask.
    fn header_len_needed(&self) -> usize {
        if self.head_len < 2 {
            return 2;
        }
        let ext = match self.head[1] & 0x7F {
            126 => 2,
            127 => 8,
            _ => 0,
        };
        2 + ext + 4
    }

    /// Checks on the first two bytes, as soon as they are in.
    fn check_partial(&self) -> Result<(), Violation> {
        if self.head_len < 2 {
            return Ok(());
        }
        let (b0, b1) = (self.head[0], self.head[1]);
        let protocol = |why: String| Err(Violation::Protocol(why));
        if b0 & RSV != 0 {
            return protocol("reserved bits set (no extension was agreed)".into());
        }
        let opcode = b0 & 0x0F;
        if !matches!(opcode, 0 | 1 | 2 | 8 | 9 | 10) {
            return protocol(format!("unknown opcode {opcode}"));
        }
        if b1 & MASKED == 0 {
            return protocol("an unmasked frame (a client must mask every frame)".into());
        }
        let short = (b1 & 0x7F) as u64;
        if opcode >= 8 {
            if b0 & FIN == 0 {
                return protocol("a fragmented control frame".into());
            }
            if short > 125 {
                return protocol("a control frame over 125 bytes".into());
            }
        }
        if let Some(len) = self.announced()? {
            self.within_limit(len)?;
        }
        Ok(())
    }

    /// The payload length, once the header holds it.
    fn announced(&self) -> Result<Option<u64>, Violation> {
        let ext = self.header_len_needed() - 6;
        if self.head_len < 2 + ext {
            return Ok(None);
        }
        Ok(Some(match self.head[1] & 0x7F {
            126 => u16::from_be_bytes([self.head[2], self.head[3]]) as u64,
            127 => {
                let mut n = [0u8; 8];
                n.copy_from_slice(&self.head[2..10]);
                let n = u64::from_be_bytes(n);
                if n >> 63 != 0 {
                    return Err(Violation::Protocol("a frame length with its top bit set".into()));
                }
                n
            }
            short => short as u64,
        }))
    }

    /// A whole header: checks the length and continuation order, and
    /// returns the payload length to skip.
    fn complete(&mut self) -> Result<u64, Violation> {
        let b0 = self.head[0];
        let len = self.announced()?.unwrap_or(0);
        let fin = b0 & FIN != 0;
        match b0 & 0x0F {
            0 => {
                let Some(so_far) = self.message else {
                    return Err(Violation::Protocol(
                        "a continuation frame outside a fragmented message".into(),
                    ));
                };
                let total = so_far + len;
                self.within_limit(total)?;
                self.message = if fin { None } else { Some(total) };
            }
            1 | 2 => {
                if self.message.is_some() {
                    return Err(Violation::Protocol("a new message inside a fragmented one".into()));
                }
                if !fin {
                    self.message = Some(len);
                }
            }
            _ => {}
        }
        Ok(len)
    }

    fn within_limit(&self, announced: u64) -> Result<(), Violation> {
        if announced > self.limit as u64 {
            Err(Violation::TooLarge {
                announced: Some(announced),
                limit: self.limit,
            })
        } else {
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A masked client frame header (mask 0) for `len` payload bytes.
    fn header(b0: u8, len: u64) -> Vec<u8> {
        let mut h = vec![b0];
        if len < 126 {
            h.push(MASKED | len as u8);
        } else if len <= u16::MAX as u64 {
            h.push(MASKED | 126);
            h.extend_from_slice(&(len as u16).to_be_bytes());
        } else {
            h.push(MASKED | 127);
            h.extend_from_slice(&len.to_be_bytes());
        }
        h.extend_from_slice(&[0, 0, 0, 0]);
        h
    }

    fn frame(b0: u8, len: usize) -> Vec<u8> {
        let mut f = header(b0, len as u64);
        f.extend(std::iter::repeat_n(b'x', len));
        f
    }

    #[test]
    fn frames_within_the_limit_pass_in_any_chunking() {
        let mut stream = Vec::new();
        stream.extend(frame(0x81, 5));
        stream.extend(frame(0x81, 300));
        stream.extend(frame(0x89, 125));
        stream.extend(frame(0x01, 1000)); // a text message in three fragments
        stream.extend(frame(0x8A, 0)); // a pong between them is allowed
        stream.extend(frame(0x00, 1000));
        stream.extend(frame(0x80, 1000));
        stream.extend(frame(0x82, 16 * 1024));
        for chunk in [1, 2, 3, 7, 13, 64, 4096, stream.len()] {
            let mut c = FrameCheck::new(16 * 1024);
            for part in stream.chunks(chunk) {
                assert_eq!(c.feed(part), Ok(()), "chunks of {chunk}");
            }
        }
    }

    #[test]
    fn a_huge_announced_length_is_refused_at_its_header() {
        let mut c = FrameCheck::new(16 * 1024);
        let h = header(0x81, 1 << 62);
        // Refused once the length is in, before the mask or any payload.
        assert_eq!(c.feed(&h[..9]), Ok(()));
        assert_eq!(
            c.feed(&h[9..10]),
            Err(Violation::TooLarge {
                announced: Some(1 << 62),
                limit: 16 * 1024
            })
        );
        let mut c = FrameCheck::new(16 * 1024);
        assert_eq!(c.feed(&header(0x81, 16 * 1024 + 1)).unwrap_err().close_code(), 1009);
        let mut c = FrameCheck::new(100);
        assert_eq!(c.feed(&header(0x81, 101)[..2]).unwrap_err().close_code(), 1009);
    }

    #[test]
    fn a_fragmented_message_over_the_limit_is_refused() {
        let mut c = FrameCheck::new(1000);
        assert_eq!(c.feed(&frame(0x01, 600)), Ok(()));
        assert_eq!(
            c.feed(&header(0x80, 600)),
            Err(Violation::TooLarge {
                announced: Some(1200),
                limit: 1000
            })
        );
    }

    #[test]
    fn headers_no_client_may_send_are_protocol_errors() {
        let cases: Vec<(&str, Vec<u8>)> = vec![
            ("reserved bits", frame(0xC1, 3)),
            ("unknown opcode", frame(0x83, 3)),
            ("control over 125", header(0x89, 200)),
            ("fragmented ping", frame(0x09, 3)),
            ("unmasked", vec![0x81, 0x03, b'a', b'b', b'c']),
            ("top bit of the length", {
                let mut h = vec![0x81, MASKED | 127];
                h.extend_from_slice(&(1u64 << 63).to_be_bytes());
                h
            }),
            ("continuation first", frame(0x80, 3)),
            (
                "text inside a fragmented message",
                [frame(0x01, 3), frame(0x81, 3)].concat(),
            ),
        ];
        for (what, bytes) in cases {
            let mut c = FrameCheck::new(16 * 1024);
            let got = c.feed(&bytes);
            assert!(matches!(got, Err(Violation::Protocol(_))), "{what}: {got:?}");
            assert_eq!(got.unwrap_err().close_code(), 1002, "{what}");
        }
    }

    #[test]
    fn at_most_a_header_is_kept() {
        // The check's whole state is a fixed-size struct; no payload byte is stored.
        assert!(std::mem::size_of::<FrameCheck>() <= 64);
        let mut c = FrameCheck::new(usize::MAX);
        let h = header(0x82, 1 << 40);
        c.feed(&h).unwrap();
        c.feed(&vec![0u8; 1 << 20]).unwrap();
        assert_eq!(c.skip, (1 << 40) - (1 << 20));
    }
}
