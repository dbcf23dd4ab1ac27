//! Connections and sessions: opening and closing connections within the
//! connection limits, `session.hello`, `session.login` (names and tokens),
//! `session.resume`, and the reconnect grace after a disconnect.

use super::dispatch::{fail, field, string_field, Failure};
use super::{Conn, ConnId, Effect, HubState, Place, Player, SeatAnswer, Timer, MAX_NAME};
use crate::net::codec::{ErrorCode, Event, Request, ServerMsg};
use rand::RngCore;
use serde_json::{json, Value};
use std::net::IpAddr;

/// A new token: 256 bits from the operating system's generator, as hex.
/// Tokens are the only proof of identity on resume, so they must not be
/// guessable from earlier ones (a seeded generator would be).
pub fn new_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

impl HubState {
    /// A connection opened from `ip`: its id, or `None` when a connection
    /// limit refuses it.
    pub fn open(&mut self, ip: IpAddr) -> Option<(ConnId, Vec<Effect>)> {
        let s = &self.settings;
        let from_ip = self.per_ip.get(&ip).copied().unwrap_or(0);
        if self.conns.len() >= s.max_connections || from_ip >= s.max_connections_per_address {
            tracing::warn!("refused a connection from {ip}: connection limit");
            return None;
        }
        self.next_conn += 1;
        let id = self.next_conn;
        *self.per_ip.entry(ip).or_insert(0) += 1;
        self.conns.insert(
            id,
            Conn {
                ip,
                hello: false,
                player: None,
            },
        );
        // A connection that never logs in is closed: it must not hold a
        // slot of the connection limits for ever.
        Some((id, vec![Effect::After(s.hello_timeout, Timer::Hello(id))]))
    }

    /// The connection's reader ended.
    pub fn closed(&mut self, conn: ConnId) -> Vec<Effect> {
        self.drop_conn(conn);
        self.effects()
    }

    /// The connection stopped reading its lines (its outbox overflowed):
    /// dropped, as a disconnect.
    pub fn kicked(&mut self, conn: ConnId) -> Vec<Effect> {
        if self.conns.contains_key(&conn) {
            tracing::info!("connection {conn}: not reading its lines, dropped");
            self.drop_conn(conn);
        }
        self.effects()
    }

    pub(super) fn drop_conn(&mut self, conn: ConnId) {
        let Some(c) = self.conns.remove(&conn) else { return };
        self.out.push(Effect::Close(conn));
        if let Some(n) = self.per_ip.get_mut(&c.ip) {
            *n -= 1;
            if *n == 0 {
                self.per_ip.remove(&c.ip);
            }
        }
        let Some(name) = c.player else { return };
        let Some(p) = self.players.get_mut(&name) else { return };
        if p.conn != Some(conn) {
            return;
        }
        p.conn = None;
        p.grace_epoch += 1;
        let epoch = p.grace_epoch;
        if let Place::Lobby(g) = p.place.clone() {
            p.place = Place::Idle;
            self.leave_lobby(g, &name);
        }
        let grace = self.settings.reconnect_grace;
        tracing::info!("{name} disconnected; token valid for {grace:?}");
        self.out.push(Effect::After(grace, Timer::Grace { name, epoch }));
    }

    /// The reconnect grace ended without a resume: the token dies, the name
    /// is free again, and a seat in a match is gone ("disconnected").
    pub(super) fn grace_over(&mut self, name: &str, epoch: u64) {
        match self.players.get(name) {
            Some(p) if p.conn.is_none() && p.grace_epoch == epoch => {}
            _ => return,
        }
        let p = self.players.remove(name).expect("checked above");
        self.tokens.remove(&p.token);
        tracing::info!("{name}: reconnect grace over, token expired");
        let Place::Match(m) = p.place else { return };
        let Some(i) = self.matches.get(&m).and_then(|st| st.seat_of(name)) else {
            return;
        };
        let s = &mut self.matches.get_mut(&m).expect("checked").seats[i];
        s.gone = Some("disconnected");
        // Nobody can act for this seat any more, not even a new player who
        // takes the freed name.
        s.result = Some(("LOSS", "disconnected"));
        if s.action.is_none() && s.asked {
            self.answer_seat(&m, i, SeatAnswer::Gone("disconnected"));
        }
    }

    pub(super) fn hello(&mut self, conn: ConnId, req: &Request) -> Result<(), Failure> {
        let v = field(&req.params, "version")?;
        if !v.is_number() {
            return fail(ErrorCode::BadRequest, "`version` must be a number");
        }
        if v.as_u64() != Some(1) {
            return fail(
                ErrorCode::UnsupportedVersion,
                format!("version {v} is not supported; use 1"),
            );
        }
        self.conns.get_mut(&conn).expect("checked").hello = true;
        self.ok(conn, &req.id, None);
        Ok(())
    }

    pub(super) fn login(&mut self, conn: ConnId, req: &Request, player: Option<String>) -> Result<(), Failure> {
        if let Some(p) = player {
            return fail(
                ErrorCode::BadRequest,
                format!("this connection is already logged in as {p}"),
            );
        }
        let name = string_field(&req.params, "player")?;
        let chars = name.chars().count();
        if name.trim().is_empty() || chars > MAX_NAME || name.chars().any(char::is_control) || name.trim() != name {
            return fail(
                ErrorCode::BadRequest,
                format!("a player name is 1 to {MAX_NAME} characters, no control characters, no spaces at the ends"),
            );
        }
        if self.players.contains_key(name) {
            return fail(ErrorCode::NameTaken, format!("`{name}` is already logged in"));
        }
        let token = new_token();
        self.tokens.insert(token.clone(), name.to_string());
        self.players.insert(
            name.to_string(),
            Player {
                token: token.clone(),
                conn: Some(conn),
                place: Place::Idle,
                grace_epoch: 0,
            },
        );
        self.conns.get_mut(&conn).expect("checked").player = Some(name.to_string());
        tracing::info!("connection {conn}: {name} logged in");
        self.ok(conn, &req.id, Some(json!({ "session_token": token })));
        Ok(())
    }

    pub(super) fn resume(&mut self, conn: ConnId, req: &Request, player: Option<String>) -> Result<(), Failure> {
        let token = string_field(&req.params, "session_token")?;
        let Some(name) = self.tokens.get(token).cloned() else {
            return fail(ErrorCode::BadToken, "unknown or expired session token");
        };
        if let Some(p) = player.filter(|p| *p != name) {
            return fail(
                ErrorCode::BadRequest,
                format!("this connection is already logged in as {p}"),
            );
        }
        let p = self.players.get_mut(&name).expect("tokens and players agree");
        p.grace_epoch += 1;
        let old = p.conn.replace(conn);
        let place = p.place.clone();
        if let Some(old) = old.filter(|&o| o != conn) {
            // Taking the seat over: the old connection closes, without the
            // disconnect handling (the player is still here).
            if let Some(c) = self.conns.get_mut(&old) {
                c.player = None;
            }
            self.drop_conn(old);
        }
        self.conns.get_mut(&conn).expect("checked").player = Some(name.clone());
        let (match_id, moves, to_move, ask) = match &place {
            Place::Match(m) => match self.matches.get(m) {
                Some(st) => {
                    let moves: Vec<Value> = st
                        .moves
                        .iter()
                        .map(|&(s, c, r)| json!([st.seats[s].name, c, r]))
                        .collect();
                    let to_move = st.to_move.map(|t| st.seats[t].name.clone());
                    let ask = st
                        .seat_of(&name)
                        .is_some_and(|i| st.seats[i].asked && st.seats[i].action.is_none());
                    (Some(m.clone()), moves, to_move, ask)
                }
                None => (None, Vec::new(), None, false),
            },
            _ => (None, Vec::new(), None, false),
        };
        tracing::info!("connection {conn}: {name} resumed");
        self.ok(
            conn,
            &req.id,
            Some(json!({ "player": name, "match": match_id, "moves": moves, "to_move": to_move })),
        );
        if let (true, Some(m)) = (ask, &match_id) {
            self.send_conn(conn, ServerMsg::event(Some(m), Event::YourTurn, None));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;
    use super::*;
    use crate::net::codec::parse_request;
    use crate::scenario::net::GameKind;

    #[test]
    fn tokens_are_long_random_and_distinct() {
        let a = new_token();
        let b = new_token();
        assert_eq!(a.len(), 64, "256 bits as hex");
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }

    #[test]
    fn login_checks_the_name_and_gives_a_token() {
        let mut s = state();
        let (a, token) = login(&mut s, "ann");
        assert_eq!(token.len(), 64);
        assert_eq!(
            refused(&mut s, a, r#"REQ 1 session.login {"player": "bob"}"#),
            ErrorCode::BadRequest,
            "one login a connection"
        );
        let c = open(&mut s);
        send(&mut s, c, r#"REQ h session.hello {"version": 1}"#);
        assert_eq!(
            refused(&mut s, c, r#"REQ 2 session.login {"player": "ann"}"#),
            ErrorCode::NameTaken
        );
        let long = "x".repeat(MAX_NAME + 1);
        for bad in [" ann", "", "a\\u0007b", long.as_str()] {
            let (was_bad, fx) = send(&mut s, c, &format!(r#"REQ 3 session.login {{"player": "{bad}"}}"#));
            assert_eq!(
                (was_bad, code(&fx, "3")),
                (true, Some(ErrorCode::BadRequest)),
                "{bad:?}"
            );
        }
        assert_eq!(
            refused(&mut s, c, r#"REQ 4 session.login {"player": 7}"#),
            ErrorCode::BadRequest
        );
        assert!(is_ok(
            &send(
                &mut s,
                c,
                &format!(r#"REQ 5 session.login {{"player": "{}"}}"#, "y".repeat(MAX_NAME))
            )
            .1,
            "5"
        ));
    }

    #[test]
    fn a_disconnect_in_a_lobby_leaves_it_and_starts_the_grace() {
        let mut s = state();
        let (c, fx) = lobby(&mut s, "connect4", &["ann", "bob", "cat"]);
        assert!(countdown_timer(&fx).is_some());
        let fx = s.closed(c[2]);
        assert_eq!(fx[0], Effect::Close(c[2]));
        assert!(fx.contains(&Effect::StopCountdown(GameKind::Connect4)));
        assert!(lines(&fx, c[0]).contains(
            &r#"EVT lobby.update {"players":["ann","bob"],"ready":["ann","bob"],"min":3,"max":9}"#.to_string()
        ));
        assert!(lines(&fx, c[2]).is_empty(), "nothing to a closed connection");
        assert!(fx.contains(&Effect::After(
            GRACE,
            Timer::Grace {
                name: "cat".into(),
                epoch: 1
            }
        )));
        assert!(!s.has_conn(c[2]));
        assert_eq!(s.closed(c[2]), Vec::new(), "closing twice is harmless");
    }

    #[test]
    fn resuming_within_the_grace_restores_the_match() {
        let mut s = state();
        let (c, m, _) = started(&mut s, "connect4-classic", &["ann", "bob"]);
        s.seat_asked(&m, 0).unwrap();
        send(&mut s, c[0], r#"REQ 1 m1 game.action {"type": "move", "move": 2}"#);
        s.moved(&m, 0, 2, 0, Some(1));
        s.seat_asked(&m, 1).unwrap();
        let bob_token = s.players["bob"].token.clone();
        let fx = s.closed(c[1]);
        let grace = Timer::Grace {
            name: "bob".into(),
            epoch: 1,
        };
        assert!(fx.contains(&Effect::After(GRACE, grace.clone())));
        let n = open(&mut s);
        send(&mut s, n, r#"REQ h session.hello {"version": 1}"#);
        assert_eq!(
            refused(&mut s, n, r#"REQ 1 session.resume {"session_token": "nope"}"#),
            ErrorCode::BadToken
        );
        let fx = send(
            &mut s,
            n,
            &format!(r#"REQ 2 session.resume {{"session_token": "{bob_token}"}}"#),
        )
        .1;
        assert_eq!(
            lines(&fx, n),
            [
                r#"RES 2 OK {"player":"bob","match":"m1","moves":[["ann",2,0]],"to_move":"bob"}"#,
                "EVT m1 game.your_turn"
            ]
        );
        assert_eq!(s.timer(grace), Vec::new(), "the old grace timer is stale");
        let (_, fx) = send(&mut s, n, r#"REQ 3 m1 game.action {"type": "move", "move": 2}"#);
        assert_eq!(answers(&fx), [(1, SeatAnswer::Column(2))]);
    }

    #[test]
    fn resuming_takes_over_an_open_connection_without_a_disconnect() {
        let mut s = state();
        let (old, token) = login(&mut s, "ann");
        let n = open(&mut s);
        send(&mut s, n, r#"REQ h session.hello {"version": 1}"#);
        let fx = send(
            &mut s,
            n,
            &format!(r#"REQ 1 session.resume {{"session_token": "{token}"}}"#),
        )
        .1;
        assert_eq!(fx[0], Effect::Close(old));
        assert!(
            !fx.iter().any(|e| matches!(e, Effect::After(..))),
            "no grace: ann is here"
        );
        assert_eq!(
            lines(&fx, n),
            [r#"RES 1 OK {"player":"ann","match":null,"moves":[],"to_move":null}"#]
        );
        assert!(!s.has_conn(old));
    }

    #[test]
    fn past_the_grace_the_token_dies_the_name_frees_and_the_seat_is_gone() {
        let mut s = state();
        let (c, m, _) = started(&mut s, "connect4", &["ann", "bob", "cat"]);
        let token = s.players["cat"].token.clone();
        s.seat_asked(&m, 2).unwrap();
        let fx = s.closed(c[2]);
        assert!(answers(&fx).is_empty(), "the referee waits through the grace");
        let grace = Timer::Grace {
            name: "cat".into(),
            epoch: 1,
        };
        let fx = s.timer(grace);
        assert_eq!(answers(&fx), [(2, SeatAnswer::Gone("disconnected"))]);
        assert_eq!(s.seat_asked(&m, 2), Err("disconnected"));
        let n = open(&mut s);
        send(&mut s, n, r#"REQ h session.hello {"version": 1}"#);
        let (_, fx) = send(
            &mut s,
            n,
            &format!(r#"REQ 1 session.resume {{"session_token": "{token}"}}"#),
        );
        assert_eq!(code(&fx, "1"), Some(ErrorCode::BadToken));
        let (_, fx) = send(&mut s, n, r#"REQ 2 session.login {"player": "cat"}"#);
        assert!(is_ok(&fx, "2"), "the name is free");
        assert_eq!(
            refused(&mut s, n, r#"REQ 3 m1 game.leave"#),
            ErrorCode::NotInMatch,
            "the new cat has no seat"
        );
    }

    #[test]
    fn connection_limits_refuse_and_closing_frees_a_slot() {
        let mut s = state();
        let same: Vec<ConnId> = (0..5).map(|_| s.open(ip(1)).unwrap().0).collect();
        assert!(s.open(ip(1)).is_none(), "five an address");
        assert!(s.open(ip(2)).is_some());
        assert!(s.open(ip(3)).is_none(), "six in all");
        s.closed(same[0]);
        assert!(s.open(ip(1)).is_some());
    }

    #[test]
    fn the_hello_timeout_closes_only_connections_not_logged_in() {
        let mut s = state();
        let (a, fx) = s.open(ip(1)).unwrap();
        assert_eq!(fx, [Effect::After(HELLO, Timer::Hello(a))]);
        let (b, _) = login(&mut s, "bob");
        assert_eq!(s.timer(Timer::Hello(a)), [Effect::Close(a)]);
        assert_eq!(s.timer(Timer::Hello(b)), Vec::new());
        assert!(s.has_conn(b) && !s.has_conn(a));
    }

    #[test]
    fn a_connection_that_stopped_reading_is_dropped_as_a_disconnect() {
        let mut s = state();
        let (c, _) = lobby(&mut s, "connect4", &["ann", "bob"]);
        let fx = s.kicked(c[0]);
        assert_eq!(fx[0], Effect::Close(c[0]));
        assert!(lines(&fx, c[1])[0].contains(r#""players":["bob"]"#));
        assert_eq!(s.kicked(c[0]), Vec::new());
        let late = s.request(c[0], parse_request(b"REQ 1 lobby.ready").unwrap());
        assert!(late.is_none(), "a dropped connection's requests are not handled");
    }
}
