//! What the hub's unit tests share: a state with short limits, shortcuts
//! to open connections, log in, fill lobbies and start matches, and readers
//! of the effects that come back.

use super::{ConnId, Effect, HubState, SeatAnswer, Timer};
use crate::game::{EndReason, Outcome};
use crate::net::codec::{parse_request, ErrorCode, ServerMsg};
use crate::record::GameRecord;
use crate::scenario::net::ServerSettings;
use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

pub(super) const COUNTDOWN: Duration = Duration::from_secs(10);
pub(super) const GRACE: Duration = Duration::from_secs(30);
pub(super) const HELLO: Duration = Duration::from_secs(5);

pub(super) fn state() -> HubState {
    HubState::new(
        ServerSettings {
            countdown: COUNTDOWN,
            reconnect_grace: GRACE,
            hello_timeout: HELLO,
            max_connections: 6,
            max_connections_per_address: 5,
            ..ServerSettings::default()
        },
        true,
    )
}

pub(super) fn ip(n: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(10, 0, 0, n))
}

pub(super) fn open(s: &mut HubState) -> ConnId {
    s.open(ip(1)).expect("under the limits").0
}

/// Sends one raw line; returns whether it was refused BAD_REQUEST, and the effects.
pub(super) fn send(s: &mut HubState, conn: ConnId, line: &str) -> (bool, Vec<Effect>) {
    let req = parse_request(line.as_bytes()).expect("a well-formed line");
    s.request(conn, req).expect("an open connection")
}

/// The lines `conn` gets from `fx`, without their line ends.
pub(super) fn lines(fx: &[Effect], conn: ConnId) -> Vec<String> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Send(c, m) if *c == conn => Some(m.line().trim_end().to_string()),
            _ => None,
        })
        .collect()
}

/// The error code of the answer to request `id` in `fx`.
pub(super) fn code(fx: &[Effect], id: &str) -> Option<ErrorCode> {
    fx.iter().find_map(|e| match e {
        Effect::Send(_, ServerMsg::Err { id: Some(i), code, .. }) if i == id => Some(*code),
        _ => None,
    })
}

/// Sends a line and returns the error code it is answered with.
pub(super) fn refused(s: &mut HubState, conn: ConnId, line: &str) -> ErrorCode {
    let id = line.split(' ').nth(1).expect("REQ <id> ...");
    let (_, fx) = send(s, conn, line);
    code(&fx, id).unwrap_or_else(|| panic!("{line} was not refused: {fx:?}"))
}

pub(super) fn is_ok(fx: &[Effect], id: &str) -> bool {
    fx.iter()
        .any(|e| matches!(e, Effect::Send(_, ServerMsg::Ok { id: i, .. }) if i == id))
}

/// Opens a connection, says hello and logs in; returns it and the token.
pub(super) fn login(s: &mut HubState, name: &str) -> (ConnId, String) {
    let c = open(s);
    assert!(is_ok(&send(s, c, r#"REQ h session.hello {"version": 1}"#).1, "h"));
    let fx = send(s, c, &format!(r#"REQ l session.login {{"player": "{name}"}}"#)).1;
    let token = fx
        .iter()
        .find_map(|e| match e {
            Effect::Send(_, ServerMsg::Ok { body: Some(b), .. }) => b["session_token"].as_str().map(str::to_string),
            _ => None,
        })
        .unwrap_or_else(|| panic!("{name} logs in: {fx:?}"));
    (c, token)
}

pub(super) fn countdown_timer(fx: &[Effect]) -> Option<Timer> {
    fx.iter().find_map(|e| match e {
        Effect::After(d, t @ Timer::Countdown { .. }) if *d == COUNTDOWN => Some(t.clone()),
        _ => None,
    })
}

/// Logs everyone in, subscribes and readies them; returns the
/// connections and the effects of the last ready.
pub(super) fn lobby(s: &mut HubState, game: &str, names: &[&str]) -> (Vec<ConnId>, Vec<Effect>) {
    let mut conns = Vec::new();
    let mut last = Vec::new();
    for n in names {
        let (c, _) = login(s, n);
        assert!(is_ok(
            &send(s, c, &format!(r#"REQ s lobby.subscribe {{"game": "{game}"}}"#)).1,
            "s"
        ));
        conns.push(c);
    }
    for &c in &conns {
        last = send(s, c, "REQ r lobby.ready").1;
        assert!(is_ok(&last, "r"));
    }
    (conns, last)
}

/// A started match of `names`: the connections, the match id and the
/// effects of the countdown's end.
pub(super) fn started(s: &mut HubState, game: &str, names: &[&str]) -> (Vec<ConnId>, String, Vec<Effect>) {
    let (conns, fx) = lobby(s, game, names);
    let timer = countdown_timer(&fx).expect("the countdown starts");
    let fx = s.timer(timer);
    let m = fx
        .iter()
        .find_map(|e| match e {
            Effect::StartMatch(st) => Some(st.match_id.clone()),
            _ => None,
        })
        .expect("the match starts");
    (conns, m, fx)
}

pub(super) fn answers(fx: &[Effect]) -> Vec<(usize, SeatAnswer)> {
    fx.iter()
        .filter_map(|e| match e {
            Effect::Answer { seat, answer, .. } => Some((*seat, answer.clone())),
            _ => None,
        })
        .collect()
}

pub(super) fn record(m: &str, players: &[&str], winner: Option<usize>) -> GameRecord {
    GameRecord {
        game: m[1..].parse().unwrap(),
        players: players.iter().map(|p| p.to_string()).collect(),
        moves: vec![0, 1, 0],
        opening: Vec::new(),
        outcome: Outcome {
            winner,
            reason: EndReason::Win,
            eliminated: Vec::new(),
            resigned: Vec::new(),
        },
        seed: 0,
        duration_ms: 5,
        think_ms: Vec::new(),
        turns: Vec::new(),
        forfeits: vec![],
    }
}
