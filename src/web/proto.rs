//! The page's WebSocket protocol as pure functions: client messages in,
//! server messages out, each a JSON object `{t, d, v}` (type, data, and a
//! version for messages about a game). docs/web.md is the reference; the
//! tests here pin the wire format so the page and the server cannot drift.

use serde::{Deserialize, Serialize};

/// The protocol version the server says in `hello`; a page that expects
/// another reloads instead of misreading messages.
pub const PROTOCOL: u32 = 1;

/// The longest text message the server reads. Every client message fits in
/// a few dozen bytes, so anything longer is refused unread.
pub const MAX_MESSAGE: usize = 1024;

/// Who moves first in a new game, as the person chose.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum First {
    You,
    Ai,
}

/// What a page may send. Unknown types and unknown fields are refused, so
/// a typo gets an error instead of being half understood.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(tag = "t", content = "d", rename_all = "snake_case", deny_unknown_fields)]
pub enum ClientMsg {
    /// Start a game against the server's player, from the empty board or
    /// from `pos` (a move string, columns from 1, as `c4sim analyze` reads
    /// them: `?pos=4453` in the page's URL).
    New {
        first: First,
        #[serde(default)]
        pos: Option<String>,
        /// Who plays each side, first mover first: `person` or the name of
        /// a player the server offers (`hello`'s `players`). Without it, a
        /// person plays the side `first` says and the server's player the other.
        #[serde(default)]
        sides: Option<Vec<String>>,
    },
    /// Take back the last move of game `id`: only where people play both
    /// sides. The answer is a new game from the position before it.
    Undo {
        id: String,
    },
    /// Every column's exact score in `pos` (a move string, columns from 1),
    /// from the solver within a node budget; one at a time per connection.
    /// With `player` (an offered player's name), that player's own view of
    /// the position as well: what its search thinks of each column.
    Analyze {
        pos: String,
        #[serde(default)]
        player: Option<String>,
    },
    /// Follow a game (again): the answer is its whole current state, so a
    /// reloaded page resyncs instead of guessing.
    Join {
        id: String,
    },
    /// Play a column (from 0) in game `id`; `v` is the version the page
    /// saw, so a move made on a stale position is refused.
    Move {
        id: String,
        col: i64,
        v: Option<u64>,
    },
    Resign {
        id: String,
    },
    /// Follow the tournament or lobby matches this server shows.
    Watch,
}

/// Why the server refused a message. The page shows `message`; tests and
/// scripts read `code`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    TooLarge,
    Malformed,
    NoGame,
    NotYourTurn,
    GameOver,
    Stale,
    Rate,
    Busy,
    /// A `pos` that is not a position of this board (bad column, full
    /// column, a finished game).
    BadPosition,
    /// A player name the server does not offer (a side of `new`), or one
    /// whose view it cannot give (`analyze`'s `player`).
    NoPlayer,
}

/// A refused client message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProtoError {
    pub code: ErrorCode,
    pub message: String,
}

impl ProtoError {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ProtoError {
            code,
            message: message.into(),
        }
    }

    /// The `error` message for the page.
    pub fn encode(&self) -> String {
        encode(
            "error",
            None,
            &serde_json::json!({"code": self.code, "message": self.message}),
        )
    }
}

/// Reads one text message from a page: too long or not one of
/// [`ClientMsg`] is an error to send back, never a panic.
pub fn decode(text: &str) -> Result<ClientMsg, ProtoError> {
    if text.len() > MAX_MESSAGE {
        return Err(ProtoError::new(
            ErrorCode::TooLarge,
            format!("message of {} bytes; the limit is {MAX_MESSAGE}", text.len()),
        ));
    }
    serde_json::from_str(text).map_err(|e| {
        let mut why = e.to_string();
        why.truncate(200);
        ProtoError::new(ErrorCode::Malformed, format!("not a message this server knows: {why}"))
    })
}

/// One server message: `{"t": t, "v": v, "d": d}` (`v` only where given).
pub fn encode(t: &str, v: Option<u64>, d: &impl Serialize) -> String {
    let mut m = serde_json::Map::new();
    m.insert("t".into(), t.into());
    if let Some(v) = v {
        m.insert("v".into(), v.into());
    }
    m.insert("d".into(), serde_json::to_value(d).unwrap_or(serde_json::Value::Null));
    serde_json::Value::Object(m).to_string()
}

/// A token bucket: `burst` messages at once, refilled at `per_second`.
/// Kept pure (the caller passes the time) so tests need no clock.
#[derive(Clone, Debug)]
pub struct RateLimiter {
    burst: f64,
    per_second: f64,
    tokens: f64,
    last: std::time::Instant,
}

impl RateLimiter {
    pub fn new(burst: u32, per_second: u32, now: std::time::Instant) -> Self {
        RateLimiter {
            burst: burst as f64,
            per_second: per_second as f64,
            tokens: burst as f64,
            last: now,
        }
    }

    /// Whether one more message may pass at `now`.
    pub fn allow(&mut self, now: std::time::Instant) -> bool {
        let dt = now.saturating_duration_since(self.last).as_secs_f64();
        self.last = now;
        self.tokens = (self.tokens + dt * self.per_second).min(self.burst);
        if self.tokens >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// Whether a WebSocket upgrade may proceed: a browser always sends
/// `Origin`, and it must be this server's own page (same host and port as
/// `Host`), so another site open in the same browser cannot play or watch
/// through it. Without `Origin` the client is not a browser (a test, a
/// script) and nothing cross-site can happen.
pub fn origin_allowed(origin: Option<&str>, host: Option<&str>) -> bool {
    let Some(origin) = origin else { return true };
    let Some(host) = host else { return false };
    let Some(rest) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    rest.trim_end_matches('/').eq_ignore_ascii_case(host)
}

/// Whether a request's `Host` may reach a server bound to loopback only:
/// it must name the machine itself (`localhost`, `127.x.y.z`, `[::1]`).
/// This stops DNS rebinding: a hostile site whose name an attacker points
/// at 127.0.0.1 would otherwise be "the same origin" as this page (its
/// `Origin` and `Host` agree) and could play or watch through it. A server
/// bound to another address was opened to the network on purpose and
/// accepts any `Host`.
pub fn host_allowed(host: Option<&str>, loopback_only: bool) -> bool {
    if !loopback_only {
        return true;
    }
    let Some(host) = host else { return false };
    // Strip the port: after the `]` of an IPv6 literal, or the last `:`.
    let name = match host.strip_prefix('[') {
        Some(rest) => match rest.split_once(']') {
            Some((ip, _)) => ip,
            None => return false,
        },
        None => host.rsplit_once(':').map_or(host, |(n, _)| n),
    };
    name.eq_ignore_ascii_case("localhost") || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn a_loopback_server_answers_only_to_its_own_names() {
        for ok in [
            "127.0.0.1:8080",
            "localhost:8080",
            "LOCALHOST",
            "[::1]:8080",
            "127.1.2.3:1",
        ] {
            assert!(host_allowed(Some(ok), true), "{ok}");
        }
        for bad in [
            "evil.example:8080",
            "evil.example",
            "10.0.0.1:8080",
            "[::1",
            "",
            "127.0.0.1.evil.example:80",
        ] {
            assert!(!host_allowed(Some(bad), true), "{bad}");
        }
        assert!(!host_allowed(None, true));
        assert!(host_allowed(Some("evil.example:8080"), false));
    }

    #[test]
    fn client_messages_decode() {
        assert_eq!(
            decode(r#"{"t":"new","d":{"first":"ai"}}"#),
            Ok(ClientMsg::New {
                first: First::Ai,
                pos: None,
                sides: None
            })
        );
        assert_eq!(
            decode(r#"{"t":"new","d":{"first":"you","pos":"4453"}}"#),
            Ok(ClientMsg::New {
                first: First::You,
                pos: Some("4453".into()),
                sides: None
            })
        );
        assert_eq!(
            decode(r#"{"t":"analyze","d":{"pos":""}}"#),
            Ok(ClientMsg::Analyze {
                pos: String::new(),
                player: None
            })
        );
        assert_eq!(
            decode(r#"{"t":"analyze","d":{"pos":"4","player":"AlphaZero"}}"#),
            Ok(ClientMsg::Analyze {
                pos: "4".into(),
                player: Some("AlphaZero".into())
            })
        );
        assert_eq!(
            decode(r#"{"t":"move","d":{"id":"ab","col":3,"v":7}}"#),
            Ok(ClientMsg::Move {
                id: "ab".into(),
                col: 3,
                v: Some(7)
            })
        );
        assert_eq!(
            decode(r#"{"t":"move","d":{"id":"ab","col":-1}}"#),
            Ok(ClientMsg::Move {
                id: "ab".into(),
                col: -1,
                v: None
            })
        );
        assert_eq!(decode(r#"{"t":"watch"}"#), Ok(ClientMsg::Watch));
        assert_eq!(
            decode(r#"{"t":"join","d":{"id":"x"}}"#),
            Ok(ClientMsg::Join { id: "x".into() })
        );
    }

    #[test]
    fn junk_is_an_error_with_a_code() {
        for bad in [
            "",
            "null",
            "{",
            r#"{"t":"nuke"}"#,
            r#"{"t":"move","d":{"id":"a"}}"#,
            r#"{"t":"new","d":{"first":"you","extra":1}}"#,
            r#"{"t":"move","d":{"id":"a","col":"3"}}"#,
        ] {
            assert_eq!(decode(bad).unwrap_err().code, ErrorCode::Malformed, "{bad}");
        }
        let long = format!(r#"{{"t":"join","d":{{"id":"{}"}}}}"#, "x".repeat(MAX_MESSAGE));
        assert_eq!(decode(&long).unwrap_err().code, ErrorCode::TooLarge);
    }

    #[test]
    fn server_messages_are_t_v_d() {
        let s = encode("game", Some(3), &serde_json::json!({"id": "a"}));
        assert_eq!(s, r#"{"t":"game","v":3,"d":{"id":"a"}}"#);
        let e = ProtoError::new(ErrorCode::NotYourTurn, "wait").encode();
        assert_eq!(e, r#"{"t":"error","d":{"code":"not_your_turn","message":"wait"}}"#);
    }

    #[test]
    fn the_bucket_allows_a_burst_then_the_rate() {
        let t0 = Instant::now();
        let mut r = RateLimiter::new(3, 10, t0);
        assert!(r.allow(t0) && r.allow(t0) && r.allow(t0));
        assert!(!r.allow(t0));
        assert!(r.allow(t0 + Duration::from_millis(100)));
        assert!(!r.allow(t0 + Duration::from_millis(100)));
        // Refill stops at the burst.
        let later = t0 + Duration::from_secs(60);
        assert!((0..3).all(|_| r.allow(later)));
        assert!(!r.allow(later));
    }

    #[test]
    fn only_the_servers_own_page_may_connect() {
        assert!(origin_allowed(None, Some("127.0.0.1:8080")));
        assert!(origin_allowed(Some("http://127.0.0.1:8080"), Some("127.0.0.1:8080")));
        assert!(!origin_allowed(Some("http://evil.example"), Some("127.0.0.1:8080")));
        assert!(!origin_allowed(Some("http://127.0.0.1:9999"), Some("127.0.0.1:8080")));
        assert!(!origin_allowed(Some("null"), Some("127.0.0.1:8080")));
        assert!(!origin_allowed(Some("http://127.0.0.1:8080"), None));
    }
}
