//! The lobby protocol's lines as pure functions: parsing what clients send
//! (`REQ ...`), formatting what the server sends (`RES ...`, `EVT ...`), and
//! the reverse pair for c4sim's own client. No I/O, so every rule of the
//! wire contract (docs/lobby-protocol.md, "Framing") is tested here on
//! arbitrary bytes, and the server and the clients cannot disagree on it.

use serde_json::{Map, Value};

/// The longest line a server accepts, in bytes without the line end.
pub const MAX_LINE: usize = 4096;

/// Bad lines in a row after which the server closes the connection.
pub const MAX_BAD_LINES: u32 = 20;

/// The id put in `RES - ERR BAD_REQUEST` when no request id could be read.
pub const NO_ID: &str = "-";

/// Defines a protocol enum whose variants are spelled on the wire as
/// given, with `ALL` (in that order), `as_str`, `parse` and `Display`, so
/// each name is written once and the two directions cannot disagree.
macro_rules! wire_names {
    ($(#[$meta:meta])* $name:ident { $($variant:ident => $wire:literal,)+ }) => {
        $(#[$meta])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $name {
            $($variant,)+
        }

        impl $name {
            pub const ALL: [$name; [$($wire),+].len()] = [$($name::$variant),+];

            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $wire,)+
                }
            }

            pub fn parse(s: &str) -> Option<$name> {
                $name::ALL.into_iter().find(|v| v.as_str() == s)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

wire_names! {
    /// Every error code of the protocol.
    ErrorCode {
        BadRequest => "BAD_REQUEST",
        HelloRequired => "HELLO_REQUIRED",
        UnsupportedVersion => "UNSUPPORTED_VERSION",
        LoginRequired => "LOGIN_REQUIRED",
        NameTaken => "NAME_TAKEN",
        BadToken => "BAD_TOKEN",
        UnknownMethod => "UNKNOWN_METHOD",
        UnknownGame => "UNKNOWN_GAME",
        LobbyFull => "LOBBY_FULL",
        NotInLobby => "NOT_IN_LOBBY",
        NotInMatch => "NOT_IN_MATCH",
        NotYourTurn => "NOT_YOUR_TURN",
        InvalidMove => "INVALID_MOVE",
        UnknownAction => "UNKNOWN_ACTION",
    }
}

wire_names! {
    /// Every method of the protocol, so the server dispatches on a type and
    /// the client cannot misspell what it sends. `ALL` is in the order the
    /// server lists them in `UNKNOWN_METHOD` messages.
    Method {
        Hello => "session.hello",
        Login => "session.login",
        Resume => "session.resume",
        Subscribe => "lobby.subscribe",
        Ready => "lobby.ready",
        LobbyLeave => "lobby.leave",
        Action => "game.action",
        GameLeave => "game.leave",
    }
}

impl Method {
    /// `game.*` requests name their match (`REQ <id> <m> <method>`); the
    /// others must not.
    pub fn in_match(self) -> bool {
        matches!(self, Method::Action | Method::GameLeave)
    }

    /// `lobby.*` and `game.*` act for a player, so they need a login.
    pub fn needs_login(self) -> bool {
        !matches!(self, Method::Hello | Method::Login | Method::Resume)
    }
}

wire_names! {
    /// Every event the server sends.
    Event {
        LobbyUpdate => "lobby.update",
        LobbyCountdown => "lobby.countdown",
        MatchStarted => "game.match_started",
        YourTurn => "game.your_turn",
        Action => "game.action",
        PlayerOut => "game.player_out",
        Result => "game.result",
    }
}

/// A name read from the wire: one this build knows, or the text as sent (a
/// newer peer's name, or a mistake), which is no error by itself: the
/// server answers an unknown method, a client skips an unknown event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Named<T> {
    Known(T),
    Unknown(String),
}

impl<T> Named<T> {
    /// `text` read with `parse` (`None`: not one of this build's names).
    fn read(text: String, parse: impl Fn(&str) -> Option<T>) -> Self {
        match parse(&text) {
            Some(known) => Named::Known(known),
            None => Named::Unknown(text),
        }
    }
}

/// The name as it was sent.
impl<T: std::fmt::Display> std::fmt::Display for Named<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Named::Known(known) => write!(f, "{known}"),
            Named::Unknown(raw) => f.write_str(raw),
        }
    }
}

/// Why a server line cannot be read (a client's view of a broken server).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CodecError {
    #[error("RES without an id")]
    NoId,
    #[error("ERR without a code")]
    NoCode,
    /// A `RES` line (`line`, as sent) that says neither OK nor ERR.
    #[error("RES must say OK or ERR: {line}")]
    NoStatus { line: String },
    #[error("EVT without an event")]
    NoEvent,
    /// A line that is neither `RES` nor `EVT` (`shown`: its first 80 characters).
    #[error("not a server line: {shown}")]
    NotAServerLine { shown: String },
    #[error(transparent)]
    Params(#[from] ParamsError),
}

/// Parameters that are not a JSON object.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParamsError {
    #[error("the parameters must be a JSON object")]
    NotAnObject,
    /// Not JSON at all (the parser's words).
    #[error("bad JSON: {0}")]
    Json(String),
}

/// A well-formed client request. Whether its parameters hold the right
/// fields is the server's business.
#[derive(Clone, Debug, PartialEq)]
pub struct Request {
    pub id: String,
    /// The `<m>` of `REQ <id> <m> <method>`, for requests inside a match.
    pub match_id: Option<String>,
    /// A method of the protocol, or the name sent when it is none: that is
    /// still a request (`UNKNOWN_METHOD`, and only after `HELLO_REQUIRED`),
    /// not a framing error.
    pub method: Named<Method>,
    pub params: Option<Map<String, Value>>,
}

impl Request {
    /// The method as it was sent.
    pub fn method_name(&self) -> &str {
        match &self.method {
            Named::Known(m) => m.as_str(),
            Named::Unknown(name) => name,
        }
    }
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
fn params(rest: &[u8]) -> Result<Option<Map<String, Value>>, ParamsError> {
    if rest.is_empty() {
        return Ok(None);
    }
    match serde_json::from_slice::<Value>(rest) {
        Ok(Value::Object(m)) => Ok(Some(m)),
        Ok(_) => Err(ParamsError::NotAnObject),
        Err(e) => Err(ParamsError::Json(e.to_string())),
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
    let params = params(json).map_err(|why| bad(id_ok, &why.to_string()))?;
    let text = |b: &[u8]| String::from_utf8(b.to_vec()).expect("checked to be ASCII");
    let method = text(method);
    Ok(Request {
        id: text(id),
        match_id: match_id.map(text),
        method: Named::read(method, Method::parse),
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

/// What the server sends, typed: the hub's state produces these and
/// [`ServerMsg::line`] is their one spelling on the wire.
#[derive(Clone, Debug, PartialEq)]
pub enum ServerMsg {
    Ok {
        id: String,
        body: Option<Value>,
    },
    Err {
        /// `None` answers a line whose id could not be read (`RES -`).
        id: Option<String>,
        code: ErrorCode,
        message: String,
    },
    Event {
        match_id: Option<String>,
        event: Event,
        body: Option<Value>,
    },
}

impl ServerMsg {
    pub fn ok(id: &str, body: Option<Value>) -> Self {
        ServerMsg::Ok {
            id: id.to_string(),
            body,
        }
    }

    pub fn err(id: &str, code: ErrorCode, message: impl Into<String>) -> Self {
        ServerMsg::Err {
            id: Some(id.to_string()),
            code,
            message: message.into(),
        }
    }

    pub fn event(match_id: Option<&str>, event: Event, body: Option<Value>) -> Self {
        ServerMsg::Event {
            match_id: match_id.map(str::to_string),
            event,
            body,
        }
    }

    /// The line, `\n` included.
    pub fn line(&self) -> String {
        match self {
            ServerMsg::Ok { id, body } => ok_line(id, body.as_ref()),
            ServerMsg::Err { id, code, message } => err_line(id.as_deref(), *code, message),
            ServerMsg::Event { match_id, event, body } => evt_line(match_id.as_deref(), event.as_str(), body.as_ref()),
        }
    }
}

/// A line from the server, as a client reads it. Codes and events a newer
/// server may add are kept as sent (`Err`), not refused.
#[derive(Clone, Debug, PartialEq)]
pub enum ServerLine {
    Ok {
        id: String,
        body: Option<Map<String, Value>>,
    },
    Err {
        id: String,
        code: Named<ErrorCode>,
        message: Option<String>,
    },
    Event {
        match_id: Option<String>,
        event: Named<Event>,
        body: Option<Map<String, Value>>,
    },
}

/// A code or an event name as sent, whether this build knows it or not.
pub fn as_sent<T: std::fmt::Display>(v: &Named<T>) -> String {
    v.to_string()
}

/// Parses a server line (without its `\n`). Clients must not trust a
/// server either: anything malformed is an error, never a panic.
pub fn parse_server_line(line: &str) -> Result<ServerLine, CodecError> {
    let line = line.strip_suffix('\r').unwrap_or(line).trim_end_matches(' ');
    let b = line.as_bytes();
    let (kind, rest) = token(b);
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    match kind {
        b"RES" => {
            let (id, rest) = token(rest);
            if id.is_empty() {
                return Err(CodecError::NoId);
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
                        return Err(CodecError::NoCode);
                    }
                    let body = params(rest)?;
                    let message = body
                        .as_ref()
                        .and_then(|m| m.get("message"))
                        .and_then(Value::as_str)
                        .map(str::to_string);
                    let code = text(code);
                    Ok(ServerLine::Err {
                        id: text(id),
                        code: Named::read(code, ErrorCode::parse),
                        message,
                    })
                }
                _ => Err(CodecError::NoStatus { line: line.to_string() }),
            }
        }
        b"EVT" => {
            let (first, rest) = token(rest);
            if first.is_empty() {
                return Err(CodecError::NoEvent);
            }
            let (match_id, event, json) = if first.contains(&b'.') || rest.is_empty() || rest[0] == b'{' {
                (None, first, rest)
            } else {
                let (event, json) = token(rest);
                (Some(first), event, json)
            };
            let event = text(event);
            Ok(ServerLine::Event {
                match_id: match_id.map(text),
                event: Named::read(event, Event::parse),
                body: params(json)?,
            })
        }
        _ => Err(CodecError::NotAServerLine {
            shown: line.chars().take(80).collect(),
        }),
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
        assert_eq!(r.method, Named::Known(Method::Hello));
        assert_eq!(r.params.unwrap()["version"], json!(1));
        let r = req("REQ 4 lobby.ready");
        assert_eq!((r.method, r.params), (Named::Known(Method::Ready), None));
        let r = req(r#"REQ 5 m12 game.action {"type": "move", "move": 3}"#);
        assert_eq!(r.match_id.as_deref(), Some("m12"));
        assert_eq!(r.method, Named::Known(Method::Action));
        assert_eq!(r.params.unwrap()["move"], json!(3));
        // \r\n endings and extra spaces are accepted.
        let r = req("REQ 6  m1   game.leave  \r");
        assert_eq!(
            (r.match_id.as_deref(), r.method),
            (Some("m1"), Named::Known(Method::GameLeave))
        );
    }

    #[test]
    fn a_dotless_method_is_a_method_not_a_match() {
        // `REQ 1 foo` is a request for the unknown method `foo`, answered
        // UNKNOWN_METHOD by the server, not a framing error.
        let r = req("REQ 1 foo");
        assert_eq!((r.match_id, r.method), (None, Named::Unknown("foo".into())));
        let r = req(r#"REQ 1 foo {"a": 1}"#);
        assert_eq!((r.match_id.as_deref(), r.method_name()), (None, "foo"));
        let r = req("REQ 1 m1 bar");
        assert_eq!((r.match_id.as_deref(), r.method_name()), (Some("m1"), "bar"));
        let r = req("REQ 1 session.bye");
        assert_eq!(
            r.method,
            Named::Unknown("session.bye".into()),
            "a dotted name that is no method"
        );
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
                assert_eq!((id.as_str(), code), ("-", Named::Known(ErrorCode::BadRequest)));
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
                event: Named::Known(Event::YourTurn),
                body: None
            }
        );
        let l = evt_line(None, "lobby.countdown", Some(&json!({"seconds": null})));
        match parse_server_line(l.trim_end()).unwrap() {
            ServerLine::Event { match_id, event, body } => {
                assert_eq!((match_id, event), (None, Named::Known(Event::LobbyCountdown)));
                assert_eq!(body.unwrap()["seconds"], Value::Null);
            }
            other => panic!("{other:?}"),
        }
        match parse_server_line("RES 1 ERR FUTURE_CODE").unwrap() {
            ServerLine::Err { code, .. } => assert_eq!(code, Named::Unknown("FUTURE_CODE".into()), "kept, not refused"),
            other => panic!("{other:?}"),
        }
        match parse_server_line("EVT lobby.chat {}").unwrap() {
            ServerLine::Event { event, .. } => assert_eq!(as_sent(&event), "lobby.chat"),
            other => panic!("{other:?}"),
        }
        assert!(parse_server_line("RES 1 MAYBE").is_err());
        assert!(parse_server_line("HELLO").is_err());
    }

    #[test]
    fn every_code_method_and_event_round_trips() {
        for c in ErrorCode::ALL {
            assert_eq!(ErrorCode::parse(c.as_str()), Some(c));
        }
        assert_eq!(ErrorCode::parse("NOPE"), None);
        for m in Method::ALL {
            assert_eq!(Method::parse(m.as_str()), Some(m));
            assert_eq!(m.in_match(), m.as_str().starts_with("game."));
            assert_eq!(m.needs_login(), !m.as_str().starts_with("session."));
        }
        assert_eq!(Method::parse("game.resign"), None);
        for e in Event::ALL {
            assert_eq!(Event::parse(e.as_str()), Some(e));
        }
        assert_eq!(Event::parse("game.over"), None);
    }

    #[test]
    fn typed_server_messages_are_the_spec_lines() {
        assert_eq!(ServerMsg::ok("1", None).line(), "RES 1 OK\n");
        assert_eq!(
            ServerMsg::err("2", ErrorCode::LobbyFull, "full").line(),
            "RES 2 ERR LOBBY_FULL {\"message\":\"full\"}\n"
        );
        assert_eq!(
            ServerMsg::event(Some("m3"), Event::YourTurn, None).line(),
            "EVT m3 game.your_turn\n"
        );
        assert_eq!(
            ServerMsg::event(None, Event::LobbyCountdown, Some(json!({"seconds": null}))).line(),
            "EVT lobby.countdown {\"seconds\":null}\n"
        );
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
            prop_assert_eq!(r.method_name(), method);
            prop_assert_eq!(r.id, id);
            prop_assert_eq!(r.match_id, m);
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
                event: Named::read(event, Event::parse),
                body: body.map(|b| match b { Value::Object(o) => o, _ => unreachable!() }),
            });
            let l = err_line(Some(&id), ErrorCode::NotYourTurn, &msg);
            let parsed = parse_server_line(l.trim_end_matches('\n')).unwrap();
            prop_assert_eq!(parsed, ServerLine::Err { id, code: Named::Known(ErrorCode::NotYourTurn), message: Some(msg) });
        }

        #[test]
        fn arbitrary_server_lines_never_panic(s in "[^\n]{0,120}") {
            let _ = parse_server_line(&s);
        }
    }
}
