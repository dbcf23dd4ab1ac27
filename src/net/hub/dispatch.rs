//! Requests: every request's checks in the spec's order, then its method's
//! handler in the part that owns it; and the failures handlers return.

use super::{ConnId, Effect, HubState};
use crate::net::codec::{ErrorCode, Method, Named, Request, ServerMsg};
use serde_json::{Map, Value};

pub(super) type Failure = (ErrorCode, String);

pub(super) fn fail<T>(code: ErrorCode, msg: impl Into<String>) -> Result<T, Failure> {
    Err((code, msg.into()))
}

pub(super) fn field<'a>(params: &'a Option<Map<String, Value>>, key: &str) -> Result<&'a Value, Failure> {
    params
        .as_ref()
        .and_then(|p| p.get(key))
        .ok_or_else(|| (ErrorCode::BadRequest, format!("missing field `{key}`")))
}

pub(super) fn string_field<'a>(params: &'a Option<Map<String, Value>>, key: &str) -> Result<&'a str, Failure> {
    field(params, key)?
        .as_str()
        .ok_or_else(|| (ErrorCode::BadRequest, format!("`{key}` must be a string")))
}

impl HubState {
    /// A well-formed request from `conn`: whether it was refused
    /// `BAD_REQUEST` (the connection counts those) and the effects; `None`
    /// when the connection is gone.
    pub fn request(&mut self, conn: ConnId, req: Request) -> Option<(bool, Vec<Effect>)> {
        if !self.conns.contains_key(&conn) {
            return None;
        }
        let bad = match self.handle(conn, &req) {
            Ok(()) => false,
            Err((code, message)) => {
                self.send_conn(conn, ServerMsg::err(&req.id, code, message));
                code == ErrorCode::BadRequest
            }
        };
        Some((bad, self.effects()))
    }

    /// The checks in the spec's order (`HELLO_REQUIRED`, `UNKNOWN_METHOD`,
    /// `LOGIN_REQUIRED`, then the method's own), then the method.
    fn handle(&mut self, conn: ConnId, req: &Request) -> Result<(), Failure> {
        let c = self.conns.get(&conn).expect("the caller checked");
        if !c.hello && req.method != Named::Known(Method::Hello) {
            return fail(ErrorCode::HelloRequired, "say session.hello first");
        }
        let method = match &req.method {
            Named::Known(m) => *m,
            Named::Unknown(name) => {
                let all: Vec<&str> = Method::ALL.iter().map(|m| m.as_str()).collect();
                return fail(
                    ErrorCode::UnknownMethod,
                    format!("unknown method `{name}`; methods: {}", all.join(", ")),
                );
            }
        };
        let player = c.player.clone();
        if player.is_none() && method.needs_login() {
            return fail(ErrorCode::LoginRequired, "log in first with session.login");
        }
        match (&req.match_id, method.in_match()) {
            (Some(_), false) => return fail(ErrorCode::BadRequest, format!("`{method}` takes no match id")),
            (None, true) => {
                return fail(
                    ErrorCode::BadRequest,
                    format!("game requests name their match: REQ <id> <m> {method}"),
                )
            }
            _ => {}
        }
        let logged_in = || player.clone().expect("checked by needs_login");
        match method {
            Method::Hello => self.hello(conn, req),
            Method::Login => self.login(conn, req, player),
            Method::Resume => self.resume(conn, req, player),
            Method::Subscribe => self.subscribe(conn, req, &logged_in()),
            Method::Ready | Method::LobbyLeave => self.ready_or_leave(conn, req, method, &logged_in()),
            Method::Action => self.action(req, &logged_in()),
            Method::GameLeave => self.resign(conn, req, &logged_in()),
        }
    }

    pub(super) fn seat_for(&self, match_id: &str, name: &str) -> Result<usize, Failure> {
        self.matches
            .get(match_id)
            .and_then(|st| st.seat_of(name))
            .ok_or_else(|| {
                (
                    ErrorCode::NotInMatch,
                    format!("you are not playing in match `{match_id}`"),
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;
    use super::*;

    #[test]
    fn hello_comes_before_anything_even_an_unknown_method() {
        let mut s = state();
        let c = open(&mut s);
        let (bad, fx) = send(&mut s, c, r#"REQ 1 session.login {"player": "a"}"#);
        assert_eq!((bad, code(&fx, "1")), (false, Some(ErrorCode::HelloRequired)));
        assert_eq!(refused(&mut s, c, "REQ 2 foo.bar"), ErrorCode::HelloRequired);
        assert_eq!(
            refused(&mut s, c, r#"REQ 3 session.hello {"version": 2}"#),
            ErrorCode::UnsupportedVersion
        );
        let (bad, fx) = send(&mut s, c, r#"REQ 4 session.hello {"version": "1"}"#);
        assert_eq!(
            (bad, code(&fx, "4")),
            (true, Some(ErrorCode::BadRequest)),
            "BAD_REQUEST counts"
        );
        let (bad, fx) = send(&mut s, c, r#"REQ 5 session.hello {"version": 1}"#);
        assert_eq!((bad, lines(&fx, c)), (false, vec!["RES 5 OK".to_string()]));
    }

    #[test]
    fn unknown_methods_then_login_are_checked_in_the_spec_order() {
        let mut s = state();
        let c = open(&mut s);
        send(&mut s, c, r#"REQ h session.hello {"version": 1}"#);
        let (_, fx) = send(&mut s, c, "REQ 1 foo.bar");
        assert_eq!(code(&fx, "1"), Some(ErrorCode::UnknownMethod));
        let line = &lines(&fx, c)[0];
        assert!(line.contains("session.hello, session.login"), "{line}");
        assert_eq!(
            refused(&mut s, c, r#"REQ 2 lobby.subscribe {"game": "connect4"}"#),
            ErrorCode::LoginRequired
        );
        assert_eq!(
            refused(&mut s, c, r#"REQ 3 m1 game.action {"type": "move", "move": 0}"#),
            ErrorCode::LoginRequired
        );
    }

    #[test]
    fn only_game_methods_name_a_match() {
        let mut s = state();
        let (c, _) = login(&mut s, "ann");
        assert_eq!(refused(&mut s, c, "REQ 1 m1 lobby.ready"), ErrorCode::BadRequest);
        assert_eq!(refused(&mut s, c, "REQ 2 game.leave"), ErrorCode::BadRequest);
        assert_eq!(refused(&mut s, c, "REQ 3 m9 game.leave"), ErrorCode::NotInMatch);
    }
}
