//! The lobby protocol's lines as pure functions: parsing what clients send
//! (`REQ ...`), formatting what the server sends (`RES ...`, `EVT ...`), and
//! the reverse pair for c4sim's own client. No I/O, so every rule of the
//! wire contract (spec/lobby-protocol.md, "Framing") is tested here on
//! arbitrary bytes, and the server and the clients cannot disagree on it.

use serde_json::{Map, Value};

/// The longest line a server accepts, in bytes without the line end.
pub const MAX_LINE: usize = 4096;

/// Bad lines in a row after which the server closes the connection.
pub const MAX_BAD_LINES: u32 = 20;

/// The id put in `RES - ERR BAD_REQUEST` when no request id could be read.
pub const NO_ID: &str = "-";

/// Every error code of the protocol, spelled as on the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    BadRequest,
    HelloRequired,
    UnsupportedVersion,
    LoginRequired,
    NameTaken,
    BadToken,
    UnknownMethod,
    UnknownGame,
    LobbyFull,
    NotInLobby,
    NotInMatch,
    NotYourTurn,
    InvalidMove,
    UnknownAction,
}

impl ErrorCode {
    pub const ALL: [ErrorCode; 14] = [
        ErrorCode::BadRequest,
        ErrorCode::HelloRequired,
        ErrorCode::UnsupportedVersion,
        ErrorCode::LoginRequired,
        ErrorCode::NameTaken,
        ErrorCode::BadToken,
        ErrorCode::UnknownMethod,
        ErrorCode::UnknownGame,
        ErrorCode::LobbyFull,
        ErrorCode::NotInLobby,
        ErrorCode::NotInMatch,
        ErrorCode::NotYourTurn,
        ErrorCode::InvalidMove,
        ErrorCode::UnknownAction,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::BadRequest => "BAD_REQUEST",
            ErrorCode::HelloRequired => "HELLO_REQUIRED",
            ErrorCode::UnsupportedVersion => "UNSUPPORTED_VERSION",
            ErrorCode::LoginRequired => "LOGIN_REQUIRED",
            ErrorCode::NameTaken => "NAME_TAKEN",
            ErrorCode::BadToken => "BAD_TOKEN",
            ErrorCode::UnknownMethod => "UNKNOWN_METHOD",
            ErrorCode::UnknownGame => "UNKNOWN_GAME",
            ErrorCode::LobbyFull => "LOBBY_FULL",
            ErrorCode::NotInLobby => "NOT_IN_LOBBY",
            ErrorCode::NotInMatch => "NOT_IN_MATCH",
            ErrorCode::NotYourTurn => "NOT_YOUR_TURN",
            ErrorCode::InvalidMove => "INVALID_MOVE",
            ErrorCode::UnknownAction => "UNKNOWN_ACTION",
        }
    }

    pub fn parse(s: &str) -> Option<ErrorCode> {
        ErrorCode::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A well-formed client request. Whether its method exists, and whether
/// its parameters hold the right fields, is the server's business.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    pub id: String,
    /// The `<m>` of `REQ <id> <m> <method>`, for requests inside a match.
    pub match_id: Option<String>,
    pub method: String,
    pub params: Option<Map<String, Value>>,
}

/// A line that is not a request: answered `RES <id> ERR BAD_REQUEST` with
/// the id when one could be read, else `RES - ERR BAD_REQUEST`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BadLine {
    pub id: Option<String>,
    pub why: String,
}

impl BadLine {
    /// The answer the spec requires for this line.
    pub fn answer(&self) -> String {
        err_line(self.id.as_deref(), ErrorCode::BadRequest, &self.why)
    }
}

/// Request ids and match ids: 1 to 32 of `A-Z a-z 0-9 _ -`.
pub fn is_valid_id(s: &[u8]) -> bool {
    (1..=32).contains(&s.len()) && s.iter().all(|&b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Method and event names: 1 to 64 of `A-Z a-z 0-9 _ - .`. (Real ones
/// always hold a dot; match ids never do, which tells the two apart.)
fn is_valid_name(s: &[u8]) -> bool {
    (1..=64).contains(&s.len())
        && s.iter()
            .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// Splits off the first space-separated token; the rest loses its leading spaces.
fn token(s: &[u8]) -> (&[u8], &[u8]) {
    let end = s.iter().position(|&b| b == b' ').unwrap_or(s.len());
    let rest = &s[end..];
    let skip = rest.iter().position(|&b| b != b' ').unwrap_or(rest.len());
    (&s[..end], &rest[skip..])
}

fn trim_end_spaces(s: &[u8]) -> &[u8] {
    let end = s.iter().rposition(|&b| b != b' ').map_or(0, |i| i + 1);
    &s[..end]
}

/// Parses an optional JSON object (the rest of a line).
fn params(rest: &[u8]) -> Result<Option<Map<String, Value>>, String> {
    if rest.is_empty() {
        return Ok(None);
    }
    match serde_json::from_slice::<Value>(rest) {
        Ok(Value::Object(m)) => Ok(Some(m)),
        Ok(_) => Err("the parameters must be a JSON object".into()),
        Err(e) => Err(format!("bad JSON: {e}")),
    }
}

/// Reads one client line (without its `\n`; a final `\r` is allowed).
/// Tokens are separated by spaces; the JSON object, when present, is the
/// rest of the line. The token after the id is the method when it holds a
/// dot, else a match id followed by the method (match ids hold no dot).
pub fn parse_request(line: &[u8]) -> Result<Request, BadLine> {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = trim_end_spaces(line);
    let bad = |id: Option<&[u8]>, why: &str| BadLine {
        id: id.map(|i| String::from_utf8_lossy(i).into_owned()),
        why: why.to_string(),
    };
    let Some(rest) = line.strip_prefix(b"REQ ") else {
        return Err(bad(None, "expected `REQ <id> [<match>] <method> [<json-object>]`"));
    };
    let rest = &rest[rest.iter().position(|&b| b != b' ').unwrap_or(rest.len())..];
    let (id, rest) = token(rest);
    if !is_valid_id(id) {
        return Err(bad(None, "the request id must be 1 to 32 of A-Z a-z 0-9 _ -"));
    }
    let id_ok = Some(id);
    let (first, rest) = token(rest);
    if first.is_empty() || first[0] == b'{' {
        return Err(bad(id_ok, "missing method"));
    }
    let (match_id, method, json) = if first.contains(&b'.') || rest.is_empty() || rest[0] == b'{' {
        (None, first, rest)
    } else {
        if !is_valid_id(first) {
            return Err(bad(id_ok, "a match id must be 1 to 32 of A-Z a-z 0-9 _ -"));
        }
        let (method, json) = token(rest);
        (Some(first), method, json)
    };
    if !is_valid_name(method) {
        return Err(bad(id_ok, "a method name must be 1 to 64 of A-Z a-z 0-9 _ - ."));
    }
    let params = params(json).map_err(|why| bad(id_ok, &why))?;
    let text = |b: &[u8]| String::from_utf8(b.to_vec()).expect("checked to be ASCII");
    Ok(Request {
        id: text(id),
        match_id: match_id.map(text),
        method: text(method),
        params,
    })
}

/// The request id at the start of a line, if it has one followed by a
/// space (used on the head of an over-long line, where the rest is gone).
pub fn request_id(head: &[u8]) -> Option<String> {
    let rest = head.strip_prefix(b"REQ ")?;
    let rest = &rest[rest.iter().position(|&b| b != b' ')?..];
    let end = rest.iter().position(|&b| b == b' ')?;
    is_valid_id(&rest[..end]).then(|| String::from_utf8_lossy(&rest[..end]).into_owned())
}

fn with_body(mut s: String, body: Option<&Value>) -> String {
    if let Some(b) = body {
        s.push(' ');
        s.push_str(&b.to_string());
    }
    s.push('\n');
    s
}

/// `RES <id> OK [<json>]\n`.
pub fn ok_line(id: &str, body: Option<&Value>) -> String {
    with_body(format!("RES {id} OK"), body)
}

/// `RES <id> ERR <CODE> {"message": ...}\n` (`-` when there is no id).
pub fn err_line(id: Option<&str>, code: ErrorCode, message: &str) -> String {
    let body = serde_json::json!({ "message": message });
    with_body(format!("RES {} ERR {code}", id.unwrap_or(NO_ID)), Some(&body))
}

/// `EVT [<m>] <event> [<json>]\n`.
pub fn evt_line(match_id: Option<&str>, event: &str, body: Option<&Value>) -> String {
    match match_id {
        Some(m) => with_body(format!("EVT {m} {event}"), body),
        None => with_body(format!("EVT {event}"), body),
    }
}

/// `REQ <id> [<m>] <method> [<json>]\n`, for clients.
pub fn req_line(id: &str, match_id: Option<&str>, method: &str, params: Option<&Value>) -> String {
    match match_id {
        Some(m) => with_body(format!("REQ {id} {m} {method}"), params),
        None => with_body(format!("REQ {id} {method}"), params),
    }
}

/// A line from the server, as a client reads it.
#[derive(Clone, Debug, PartialEq)]
pub enum ServerLine {
    Ok {
        id: String,
        body: Option<Map<String, Value>>,
    },
    Err {
        id: String,
        /// The code as sent (unknown codes are kept, not refused).
        code: String,
        message: Option<String>,
    },
    Event {
        match_id: Option<String>,
        event: String,
        body: Option<Map<String, Value>>,
    },
}

/// Parses a server line (without its `\n`). Clients must not trust a
/// server either: anything malformed is an error, never a panic.
pub fn parse_server_line(line: &str) -> Result<ServerLine, String> {
    let line = line.strip_suffix('\r').unwrap_or(line).trim_end_matches(' ');
    let b = line.as_bytes();
    let (kind, rest) = token(b);
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    match kind {
        b"RES" => {
            let (id, rest) = token(rest);
            if id.is_empty() {
                return Err("RES without an id".into());
            }
            let (status, rest) = token(rest);
            match status {
                b"OK" => Ok(ServerLine::Ok {
                    id: text(id),
                    body: params(rest)?,
                }),
                b"ERR" => {
                    let (code, rest) = token(rest);
                    if code.is_empty() {
                        return Err("ERR without a code".into());
                    }
                    let body = params(rest)?;
                    let message = body
                        .as_ref()
                        .and_then(|m| m.get("message"))
                        .and_then(Value::as_str)
                        .map(str::to_string);
                    Ok(ServerLine::Err {
                        id: text(id),
                        code: text(code),
                        message,
                    })
                }
                _ => Err(format!("RES must say OK or ERR: {line}")),
            }
        }
        b"EVT" => {
            let (first, rest) = token(rest);
            if first.is_empty() {
                return Err("EVT without an event".into());
            }
            let (match_id, event, json) = if first.contains(&b'.') || rest.is_empty() || rest[0] == b'{' {
                (None, first, rest)
            } else {
                let (event, json) = token(rest);
                (Some(first), event, json)
            };
            Ok(ServerLine::Event {
                match_id: match_id.map(text),
                event: text(event),
                body: params(json)?,
            })
        }
        _ => Err(format!(
            "not a server line: {}",
            line.chars().take(80).collect::<String>()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    fn req(line: &str) -> Request {
        parse_request(line.as_bytes()).unwrap_or_else(|e| panic!("{line}: {e:?}"))
    }

    fn bad(line: &[u8]) -> BadLine {
        parse_request(line).expect_err("expected a bad line")
    }

    #[test]
    fn parses_the_session_of_the_spec() {
        let r = req(r#"REQ a1 session.hello {"version": 1}"#);
        assert_eq!(r.id, "a1");
        assert_eq!(r.match_id, None);
        assert_eq!(r.method, "session.hello");
        assert_eq!(r.params.unwrap()["version"], json!(1));
        let r = req("REQ 4 lobby.ready");
        assert_eq!((r.method.as_str(), r.params), ("lobby.ready", None));
        let r = req(r#"REQ 5 m12 game.action {"type": "move", "move": 3}"#);
        assert_eq!(r.match_id.as_deref(), Some("m12"));
        assert_eq!(r.method, "game.action");
        assert_eq!(r.params.unwrap()["move"], json!(3));
        // \r\n endings and extra spaces are accepted.
        let r = req("REQ 6  m1   game.leave  \r");
        assert_eq!((r.match_id.as_deref(), r.method.as_str()), (Some("m1"), "game.leave"));
    }

    #[test]
    fn a_dotless_method_is_a_method_not_a_match() {
        // `REQ 1 foo` is a request for the unknown method `foo`, answered
        // UNKNOWN_METHOD by the server, not a framing error.
        let r = req("REQ 1 foo");
        assert_eq!((r.match_id, r.method.as_str()), (None, "foo"));
        let r = req(r#"REQ 1 foo {"a": 1}"#);
        assert_eq!((r.match_id, r.method.as_str()), (None, "foo"));
        let r = req("REQ 1 m1 bar");
        assert_eq!((r.match_id.as_deref(), r.method.as_str()), (Some("m1"), "bar"));
    }

    #[test]
    fn bad_lines_keep_their_id_when_one_can_be_read() {
        assert_eq!(bad(b"hello").id, None);
        assert_eq!(bad(b"").id, None);
        assert_eq!(bad(b"REQ").id, None);
        assert_eq!(bad(b"REQ  ").id, None);
        assert_eq!(bad(b"REQ bad!id lobby.ready").id, None);
        let too_long_id = format!("REQ {} lobby.ready", "a".repeat(33));
        assert_eq!(bad(too_long_id.as_bytes()).id, None);
        assert_eq!(bad(b"REQ 7").id.as_deref(), Some("7"));
        assert_eq!(bad(b"REQ 7 {\"a\":1}").id.as_deref(), Some("7"));
        assert_eq!(bad(b"REQ 7 session.hello {bad json").id.as_deref(), Some("7"));
        assert_eq!(bad(b"REQ 7 session.hello [1, 2]").id.as_deref(), Some("7"));
        assert_eq!(bad(b"REQ 7 m.1 x game.action").id.as_deref(), Some("7"));
        assert_eq!(bad(b"REQ 7 m1 game/action").id.as_deref(), Some("7"));
        assert_eq!(bad(b"REQ 7 session.hello \xff\xfe").id.as_deref(), Some("7"));
        assert_eq!(bad(b"REQ 7 session.hello {} trailing").id.as_deref(), Some("7"));
        let a = bad(b"REQ 7 session.hello {").answer();
        assert!(a.starts_with("RES 7 ERR BAD_REQUEST {\"message\":"), "{a}");
        assert_eq!(
            bad(b"junk").answer().split(' ').take(4).collect::<Vec<_>>(),
            ["RES", "-", "ERR", "BAD_REQUEST"]
        );
    }

    #[test]
    fn ids_are_read_from_the_head_of_long_lines() {
        assert_eq!(request_id(b"REQ  ab-9 xxxxx").as_deref(), Some("ab-9"));
        assert_eq!(request_id(b"REQ ab"), None, "the id may go on past the head");
        assert_eq!(request_id(b"REQ a!b x"), None);
        assert_eq!(request_id(b"RES 1 x"), None);
    }

    #[test]
    fn server_lines_format_and_parse_back() {
        let l = ok_line("3", Some(&json!({"session_token": "ab"})));
        assert_eq!(l, "RES 3 OK {\"session_token\":\"ab\"}\n");
        assert_eq!(ok_line("4", None), "RES 4 OK\n");
        let l = err_line(None, ErrorCode::BadRequest, "line\nbreak");
        assert_eq!(l.matches('\n').count(), 1, "a message never breaks the line");
        match parse_server_line(l.trim_end()).unwrap() {
            ServerLine::Err { id, code, message } => {
                assert_eq!((id.as_str(), code.as_str()), ("-", "BAD_REQUEST"));
                assert_eq!(message.as_deref(), Some("line\nbreak"));
            }
            other => panic!("{other:?}"),
        }
        let l = evt_line(Some("m1"), "game.your_turn", None);
        assert_eq!(l, "EVT m1 game.your_turn\n");
        assert_eq!(
            parse_server_line(l.trim_end()).unwrap(),
            ServerLine::Event {
                match_id: Some("m1".into()),
                event: "game.your_turn".into(),
                body: None
            }
        );
        let l = evt_line(None, "lobby.countdown", Some(&json!({"seconds": null})));
        match parse_server_line(l.trim_end()).unwrap() {
            ServerLine::Event { match_id, event, body } => {
                assert_eq!((match_id, event.as_str()), (None, "lobby.countdown"));
                assert_eq!(body.unwrap()["seconds"], Value::Null);
            }
            other => panic!("{other:?}"),
        }
        assert!(parse_server_line("RES 1 MAYBE").is_err());
        assert!(parse_server_line("HELLO").is_err());
    }

    #[test]
    fn every_code_round_trips() {
        for c in ErrorCode::ALL {
            assert_eq!(ErrorCode::parse(c.as_str()), Some(c));
        }
        assert_eq!(ErrorCode::parse("NOPE"), None);
    }

    fn arb_id() -> impl Strategy<Value = String> {
        "[A-Za-z0-9_-]{1,32}"
    }

    fn arb_json_object() -> impl Strategy<Value = Option<Value>> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| json!(n)),
            ".{0,12}".prop_map(Value::String),
        ];
        let value = leaf.prop_recursive(3, 16, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map(".{0,6}", inner, 0..4).prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        });
        prop::option::of(
            prop::collection::btree_map(".{0,8}", value, 0..4).prop_map(|m| Value::Object(m.into_iter().collect())),
        )
    }

    proptest! {
        /// Arbitrary bytes (a line never holds `\n`: the reader split there)
        /// never panic the parser, and a refused line is answered exactly as
        /// the spec says: one line, `RES <id> ERR BAD_REQUEST`, with the id
        /// only when the line starts with `REQ <valid id>`.
        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>().prop_filter("no newline", |b| *b != b'\n'), 0..200)) {
            match parse_request(&bytes) {
                Ok(r) => {
                    prop_assert!(bytes.starts_with(b"REQ "));
                    prop_assert!(is_valid_id(r.id.as_bytes()));
                }
                Err(b) => {
                    let answer = b.answer();
                    prop_assert!(answer.ends_with('\n'));
                    prop_assert_eq!(answer.matches('\n').count(), 1);
                    // The spec's rule, restated: the first token after `REQ `
                    // (line end `\r` and trailing spaces aside) is the id if valid.
                    let norm = bytes.strip_suffix(b"\r").unwrap_or(&bytes);
                    let norm = &norm[..norm.iter().rposition(|&c| c != b' ').map_or(0, |i| i + 1)];
                    let expected_id = norm.strip_prefix(b"REQ ").and_then(|r| {
                        let r = &r[r.iter().position(|&c| c != b' ').unwrap_or(r.len())..];
                        let id = &r[..r.iter().position(|&c| c == b' ').unwrap_or(r.len())];
                        is_valid_id(id).then(|| String::from_utf8_lossy(id).into_owned())
                    });
                    prop_assert_eq!(&b.id, &expected_id);
                    let prefix = format!("RES {} ERR BAD_REQUEST ", b.id.as_deref().unwrap_or("-"));
                    prop_assert!(answer.starts_with(&prefix), "{}", answer);
                }
            }
        }

        /// Lines that look almost right (a valid prefix then junk) are
        /// answered with their id.
        #[test]
        fn near_misses_keep_the_id(id in arb_id(), junk in "[^\n]{0,40}") {
            let line = format!("REQ {id} {{{junk}");
            let b = parse_request(line.as_bytes()).expect_err("a method is missing");
            prop_assert_eq!(b.id.as_deref(), Some(id.as_str()));
        }

        /// Whatever a client formats, the server reads back the same request.
        #[test]
        fn requests_round_trip(
            id in arb_id(),
            m in prop::option::of("[A-Za-z0-9_-]{1,32}"),
            method in "[a-z]{1,8}\\.[a-z_]{1,12}",
            body in arb_json_object(),
        ) {
            let line = req_line(&id, m.as_deref(), &method, body.as_ref());
            prop_assert_eq!(line.matches('\n').count(), 1);
            let r = parse_request(line.trim_end_matches('\n').as_bytes()).unwrap();
            prop_assert_eq!(r.id, id);
            prop_assert_eq!(r.match_id, m);
            prop_assert_eq!(r.method, method);
            prop_assert_eq!(r.params.map(Value::Object), body);
        }

        /// Events and answers the server formats parse back on the client.
        #[test]
        fn server_lines_round_trip(
            m in prop::option::of("[A-Za-z0-9_-]{1,32}"),
            event in "[a-z]{1,8}\\.[a-z_]{1,12}",
            body in arb_json_object(),
            id in arb_id(),
            msg in ".{0,40}",
        ) {
            let l = evt_line(m.as_deref(), &event, body.as_ref());
            let parsed = parse_server_line(l.trim_end_matches('\n')).unwrap();
            prop_assert_eq!(parsed, ServerLine::Event {
                match_id: m,
                event,
                body: body.map(|b| match b { Value::Object(o) => o, _ => unreachable!() }),
            });
            let l = err_line(Some(&id), ErrorCode::NotYourTurn, &msg);
            let parsed = parse_server_line(l.trim_end_matches('\n')).unwrap();
            prop_assert_eq!(parsed, ServerLine::Err { id, code: "NOT_YOUR_TURN".into(), message: Some(msg) });
        }

        #[test]
        fn arbitrary_server_lines_never_panic(s in "[^\n]{0,120}") {
            let _ = parse_server_line(&s);
        }
    }
}
