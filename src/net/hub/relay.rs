//! A running match between its players and the referee: the referee's
//! questions and verdicts go out as `game.*` events and answers, and
//! `game.action` and `game.leave` go back to it as its seats' answers.

use super::dispatch::{fail, field, Failure};
use super::{ConnId, Effect, HubState, Place, SeatAnswer};
use crate::game::{EndReason, Refusal};
use crate::net::codec::{ErrorCode, Event, Request, ServerMsg};
use crate::record::{GameRecord, PlayerResult};
use serde_json::{json, Value};

/// The protocol's match id for the referee's game number.
pub fn match_id(number: u64) -> String {
    format!("m{number}")
}

/// `game.result` / `game.player_out` reasons from the referee's end reasons.
/// `gone` is why a seat answered "gone" (FORFEIT): resigned or disconnected.
pub fn reason_word(result: PlayerResult, reason: EndReason, gone: Option<&'static str>) -> &'static str {
    match (result, reason) {
        (PlayerResult::Draw, _) => "board_full",
        (PlayerResult::Win, EndReason::Win) | (PlayerResult::Loss, EndReason::Win) => "normal",
        // Won because everyone else went out.
        (PlayerResult::Win, _) => "last_player",
        (PlayerResult::Loss, EndReason::Timeout) => "timeout",
        (PlayerResult::Loss, EndReason::Forfeit) => gone.unwrap_or("disconnected"),
        (PlayerResult::Loss, EndReason::TooManyInvalid) => "invalid_moves",
        (PlayerResult::Loss, EndReason::Tie) => "board_full",
    }
}

impl HubState {
    /// Gives a player its `game.result` (once) and lets it leave the match.
    fn finish_seat(&mut self, match_id: &str, seat: usize, result: &'static str, reason: &'static str) {
        let Some(st) = self.matches.get_mut(match_id) else {
            return;
        };
        let s = &mut st.seats[seat];
        if s.result.is_some() {
            return;
        }
        s.result = Some((result, reason));
        let name = s.name.clone();
        let body = json!({ "result": result, "reason": reason });
        self.send_player(&name, ServerMsg::event(Some(match_id), Event::Result, Some(body)));
        if let Some(p) = self.players.get_mut(&name) {
            if p.place == Place::Match(match_id.to_string()) {
                p.place = Place::Idle;
            }
        }
    }

    /// A seat the referee knocked out while the others play on.
    fn seat_out(&mut self, match_id: &str, seat: usize, reason: &'static str) {
        let Some(st) = self.matches.get_mut(match_id) else {
            return;
        };
        st.seats[seat].active = false;
        let still_playing = st.active_count() >= 2;
        let name = st.seats[seat].name.clone();
        self.finish_seat(match_id, seat, "LOSS", reason);
        if still_playing {
            let body = json!({ "player": name, "reason": reason });
            let msg = ServerMsg::event(Some(match_id), Event::PlayerOut, Some(body));
            self.send_match(match_id, msg, Some(seat));
        }
    }

    /// The referee asks a seat for a move. `Err` with the reason when the
    /// seat is gone (the referee gets that answer at once); otherwise the
    /// player is told `game.your_turn` and the question stays open until
    /// an [`Effect::Answer`] for it.
    pub fn seat_asked(&mut self, match_id: &str, seat: usize) -> Result<Vec<Effect>, &'static str> {
        let Some(st) = self.matches.get_mut(match_id) else {
            return Err("disconnected");
        };
        let s = &mut st.seats[seat];
        if let Some(why) = s.gone {
            return Err(why);
        }
        s.asked = true;
        s.action = None;
        let name = s.name.clone();
        st.to_move = Some(seat);
        self.send_player(&name, ServerMsg::event(Some(match_id), Event::YourTurn, None));
        Ok(self.effects())
    }

    /// The referee stopped waiting for a seat (its move time ran out); an
    /// action it was judging is answered too late.
    pub fn seat_abandoned(&mut self, match_id: &str, seat: usize) -> Vec<Effect> {
        if let Some(st) = self.matches.get_mut(match_id) {
            let s = &mut st.seats[seat];
            s.asked = false;
            if let Some(id) = s.action.take() {
                let name = s.name.clone();
                let msg = ServerMsg::err(&id, ErrorCode::NotYourTurn, "too late: your move time ran out");
                self.send_player(&name, msg);
            }
        }
        self.effects()
    }

    /// The referee's verdict for one seat at the end of the game.
    pub fn seat_ended(&mut self, match_id: &str, seat: usize, result: PlayerResult, reason: EndReason) -> Vec<Effect> {
        if let Some(st) = self.matches.get_mut(match_id) {
            let s = &mut st.seats[seat];
            s.active = false;
            let reason = reason_word(result, reason, s.gone);
            self.finish_seat(match_id, seat, result.word(), reason);
        }
        self.effects()
    }

    /// The referee accepted a move; `next` is the seat it asks next.
    pub fn moved(&mut self, match_id: &str, seat: usize, col: usize, row: usize, next: Option<usize>) -> Vec<Effect> {
        if let Some(st) = self.matches.get_mut(match_id) {
            st.moves.push((seat, col, row));
            st.to_move = next;
            let s = &mut st.seats[seat];
            let name = s.name.clone();
            if let Some(id) = s.action.take() {
                self.send_player(&name, ServerMsg::ok(&id, None));
            }
            tracing::debug!("{match_id}: {name} plays column {col}, row {row}");
            let body = json!({ "type": "move", "player": name, "move": col, "row": row });
            self.send_match(
                match_id,
                ServerMsg::event(Some(match_id), Event::Action, Some(body)),
                None,
            );
        }
        self.effects()
    }

    /// The referee refused a seat's answer; at no tries left it knocked the
    /// seat out (it sends no separate out event for that).
    pub fn illegal(&mut self, match_id: &str, seat: usize, refusal: &Refusal, tries_left: u32) -> Vec<Effect> {
        if let Some(st) = self.matches.get_mut(match_id) {
            let s = &mut st.seats[seat];
            let name = s.name.clone();
            if let Some(id) = s.action.take() {
                let message = format!(
                    "{}; {tries_left} tr{} left this turn",
                    refusal.describe(0),
                    if tries_left == 1 { "y" } else { "ies" }
                );
                self.send_player(&name, ServerMsg::err(&id, ErrorCode::InvalidMove, message));
            }
            if tries_left == 0 {
                self.seat_out(match_id, seat, "invalid_moves");
            }
        }
        self.effects()
    }

    /// The referee knocked a seat out (time, forfeit) while others play on.
    pub fn out(&mut self, match_id: &str, seat: usize, reason: EndReason) -> Vec<Effect> {
        if let Some(st) = self.matches.get(match_id) {
            let why = reason_word(PlayerResult::Loss, reason, st.seats[seat].gone);
            self.seat_out(match_id, seat, why);
        }
        self.effects()
    }

    /// The referee finished a match: everyone still in it is free again,
    /// and the operator's log gets the results.
    pub fn match_over(&mut self, match_id: &str, record: &GameRecord) -> Vec<Effect> {
        let Some(st) = self.matches.remove(match_id) else {
            return Vec::new();
        };
        let results: Vec<(String, &str, &str)> = st
            .seats
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let (r, why) = s.result.unwrap_or_else(|| {
                    let r = record.result_of(i);
                    (r.word(), reason_word(r, record.reason_for(i), s.gone))
                });
                (s.name.clone(), r, why)
            })
            .collect();
        for s in &st.seats {
            if let Some(p) = self.players.get_mut(&s.name) {
                if p.place == Place::Match(match_id.to_string()) {
                    p.place = Place::Idle;
                }
            }
        }
        let summary: Vec<String> = results.iter().map(|(n, r, w)| format!("{n} {r} ({w})")).collect();
        tracing::info!(
            "{match_id} over after {} moves: {}",
            record.moves.len(),
            summary.join(", ")
        );
        let line = if self.json {
            crate::events::Event::MatchOver {
                table: crate::events::ServerMatch {
                    match_id: match_id.to_string(),
                    game: st.game.as_str().to_string(),
                    players: record.players.clone(),
                    width: st.cfg.cols,
                    height: st.cfg.rows,
                },
                moves: record.moves.clone(),
                results: results
                    .iter()
                    .map(|(n, r, w)| crate::events::SeatResult {
                        player: n.clone(),
                        result: r.to_string(),
                        reason: w.to_string(),
                    })
                    .collect(),
                reason: record.outcome.reason,
                duration_ms: record.duration_ms,
            }
            .line()
        } else {
            format!(
                "{match_id} over after {} moves: {}",
                record.moves.len(),
                summary.join(", ")
            )
        };
        vec![Effect::Print(line)]
    }

    /// Answers the referee's open question to a seat.
    pub(super) fn answer_seat(&mut self, match_id: &str, seat: usize, answer: SeatAnswer) {
        if let Some(st) = self.matches.get_mut(match_id) {
            st.seats[seat].asked = false;
        }
        self.out.push(Effect::Answer {
            match_id: match_id.to_string(),
            seat,
            answer,
        });
    }

    pub(super) fn action(&mut self, req: &Request, name: &str) -> Result<(), Failure> {
        let m = req.match_id.as_deref().expect("checked");
        let seat = self.seat_for(m, name)?;
        let kind = req.params.as_ref().and_then(|p| p.get("type"));
        if kind.and_then(Value::as_str) != Some("move") {
            return fail(
                ErrorCode::UnknownAction,
                match kind {
                    None => "an action needs a `type`; the only one is \"move\"".to_string(),
                    Some(k) => format!("unknown action type {k}; the only one is \"move\""),
                },
            );
        }
        let column = field(&req.params, "move")?.as_i64().ok_or_else(|| {
            (
                ErrorCode::BadRequest,
                "`move` must be a whole number, the column from 0".to_string(),
            )
        })?;
        let s = &mut self.matches.get_mut(m).expect("checked").seats[seat];
        if s.action.is_some() || !s.asked {
            return fail(ErrorCode::NotYourTurn, "it is not your turn");
        }
        s.action = Some(req.id.clone());
        // The referee decides: its verdict comes back through `moved` or
        // `illegal`, and the answer to this request goes out then.
        self.answer_seat(m, seat, SeatAnswer::Column(column));
        Ok(())
    }

    pub(super) fn resign(&mut self, conn: ConnId, req: &Request, name: &str) -> Result<(), Failure> {
        let m = req.match_id.as_deref().expect("checked");
        let seat = self.seat_for(m, name)?;
        self.ok(conn, &req.id, None);
        let s = &mut self.matches.get_mut(m).expect("checked").seats[seat];
        s.gone = Some("resigned");
        if s.action.is_none() && s.asked {
            self.answer_seat(m, seat, SeatAnswer::Gone("resigned"));
        }
        tracing::info!("{m}: {name} resigns");
        self.finish_seat(m, seat, "LOSS", "resigned");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;
    use super::*;

    #[test]
    fn reasons_follow_the_protocol() {
        use EndReason as E;
        use PlayerResult as P;
        assert_eq!(reason_word(P::Win, E::Win, None), "normal");
        assert_eq!(reason_word(P::Loss, E::Win, None), "normal");
        assert_eq!(reason_word(P::Draw, E::Tie, None), "board_full");
        assert_eq!(reason_word(P::Win, E::Timeout, None), "last_player");
        assert_eq!(reason_word(P::Win, E::Forfeit, None), "last_player");
        assert_eq!(reason_word(P::Loss, E::Timeout, None), "timeout");
        assert_eq!(reason_word(P::Loss, E::Forfeit, Some("resigned")), "resigned");
        assert_eq!(reason_word(P::Loss, E::Forfeit, None), "disconnected");
        assert_eq!(reason_word(P::Loss, E::TooManyInvalid, None), "invalid_moves");
    }

    #[test]
    fn a_match_relays_moves_between_the_players_and_the_referee() {
        let mut s = state();
        let (c, m, _) = started(&mut s, "connect4", &["ann", "bob", "cat"]);
        assert_eq!(
            refused(&mut s, c[0], r#"REQ 1 m1 game.action {"type": "move", "move": 3}"#),
            ErrorCode::NotYourTurn,
            "not asked yet"
        );
        let fx = s.seat_asked(&m, 0).unwrap();
        assert_eq!(lines(&fx, c[0]), ["EVT m1 game.your_turn"]);
        assert!(lines(&fx, c[1]).is_empty());
        assert_eq!(
            refused(&mut s, c[1], r#"REQ 2 m1 game.action {"type": "move", "move": 3}"#),
            ErrorCode::NotYourTurn
        );
        let (_, fx) = send(&mut s, c[0], r#"REQ 3 m1 game.action {"type": "move", "move": 3}"#);
        assert_eq!(answers(&fx), [(0, SeatAnswer::Column(3))]);
        assert!(lines(&fx, c[0]).is_empty(), "answered once the referee judged it");
        assert_eq!(
            refused(&mut s, c[0], r#"REQ 4 m1 game.action {"type": "move", "move": 4}"#),
            ErrorCode::NotYourTurn,
            "one action at a time"
        );
        let fx = s.moved(&m, 0, 3, 0, Some(1));
        let event = r#"EVT m1 game.action {"type":"move","player":"ann","move":3,"row":0}"#;
        assert_eq!(lines(&fx, c[0]), ["RES 3 OK", event]);
        assert_eq!(lines(&fx, c[1]), [event]);
        assert_eq!(lines(&fx, c[2]), [event]);
    }

    #[test]
    fn actions_that_are_no_move_are_refused_before_the_referee() {
        let mut s = state();
        let (c, m, _) = started(&mut s, "connect4-classic", &["ann", "bob"]);
        s.seat_asked(&m, 0).unwrap();
        let (bad, fx) = send(&mut s, c[0], r#"REQ 1 m1 game.action {"type": "drop", "move": 3}"#);
        assert_eq!((bad, code(&fx, "1")), (false, Some(ErrorCode::UnknownAction)));
        assert_eq!(
            refused(&mut s, c[0], r#"REQ 2 m1 game.action {"move": 3}"#),
            ErrorCode::UnknownAction
        );
        let (bad, fx) = send(&mut s, c[0], r#"REQ 3 m1 game.action {"type": "move", "move": "3"}"#);
        assert_eq!((bad, code(&fx, "3")), (true, Some(ErrorCode::BadRequest)));
        assert!(answers(&fx).is_empty());
        // Out of range is the referee's to judge.
        let (_, fx) = send(&mut s, c[0], r#"REQ 4 m1 game.action {"type": "move", "move": 99}"#);
        assert_eq!(answers(&fx), [(0, SeatAnswer::Column(99))]);
    }

    #[test]
    fn illegal_moves_are_answered_with_the_tries_left_then_the_player_is_out() {
        let mut s = state();
        let (c, m, _) = started(&mut s, "connect4", &["ann", "bob", "cat"]);
        s.seat_asked(&m, 0).unwrap();
        send(&mut s, c[0], r#"REQ 1 m1 game.action {"type": "move", "move": 9}"#);
        let refusal = Refusal::OutOfRange { column: 9, cols: 7 };
        let fx = s.illegal(&m, 0, &refusal, 1);
        assert_eq!(code(&fx, "1"), Some(ErrorCode::InvalidMove));
        assert!(
            lines(&fx, c[0])[0].contains("1 try left this turn"),
            "{:?}",
            lines(&fx, c[0])
        );
        s.seat_asked(&m, 0).unwrap();
        send(&mut s, c[0], r#"REQ 2 m1 game.action {"type": "move", "move": 9}"#);
        let fx = s.illegal(&m, 0, &refusal, 0);
        assert_eq!(
            lines(&fx, c[0])[1],
            r#"EVT m1 game.result {"result":"LOSS","reason":"invalid_moves"}"#
        );
        let out = r#"EVT m1 game.player_out {"player":"ann","reason":"invalid_moves"}"#;
        assert_eq!(lines(&fx, c[1]), [out]);
        assert_eq!(lines(&fx, c[2]), [out]);
        // Out of the match as far as the protocol goes.
        assert_eq!(refused(&mut s, c[0], "REQ 3 m1 game.leave"), ErrorCode::NotInMatch);
    }

    #[test]
    fn the_last_two_see_no_player_out_only_the_result() {
        let mut s = state();
        let (c, m, _) = started(&mut s, "connect4-classic", &["ann", "bob"]);
        let fx = s.out(&m, 1, EndReason::Timeout);
        assert_eq!(
            lines(&fx, c[1]),
            [r#"EVT m1 game.result {"result":"LOSS","reason":"timeout"}"#]
        );
        assert!(lines(&fx, c[0]).is_empty());
    }

    #[test]
    fn resigning_answers_the_referee_gone_and_ends_the_seat() {
        let mut s = state();
        let (c, m, _) = started(&mut s, "connect4", &["ann", "bob", "cat"]);
        s.seat_asked(&m, 0).unwrap();
        let (_, fx) = send(&mut s, c[0], "REQ 1 m1 game.leave");
        assert_eq!(
            lines(&fx, c[0]),
            [
                "RES 1 OK",
                r#"EVT m1 game.result {"result":"LOSS","reason":"resigned"}"#
            ]
        );
        assert_eq!(answers(&fx), [(0, SeatAnswer::Gone("resigned"))]);
        assert_eq!(s.seat_asked(&m, 0), Err("resigned"), "asked again, the seat is gone");
        // The referee's Out event then tells the others why.
        let fx = s.out(&m, 0, EndReason::Forfeit);
        assert!(lines(&fx, c[0]).is_empty(), "the result went out once");
        assert_eq!(
            lines(&fx, c[1]),
            [r#"EVT m1 game.player_out {"player":"ann","reason":"resigned"}"#]
        );
        // Free to play again.
        assert!(is_ok(
            &send(&mut s, c[0], r#"REQ 2 lobby.subscribe {"game": "connect4"}"#).1,
            "2"
        ));
    }

    #[test]
    fn a_late_action_is_answered_too_late_when_the_referee_gives_up() {
        let mut s = state();
        let (c, m, _) = started(&mut s, "connect4-classic", &["ann", "bob"]);
        s.seat_asked(&m, 0).unwrap();
        send(&mut s, c[0], r#"REQ 1 m1 game.action {"type": "move", "move": 0}"#);
        let fx = s.seat_abandoned(&m, 0);
        assert_eq!(code(&fx, "1"), Some(ErrorCode::NotYourTurn));
        assert_eq!(
            refused(&mut s, c[0], r#"REQ 2 m1 game.action {"type": "move", "move": 0}"#),
            ErrorCode::NotYourTurn,
            "no open question"
        );
    }

    #[test]
    fn match_over_frees_everyone_and_logs_the_results() {
        let mut s = state();
        let (c, m, _) = started(&mut s, "connect4-classic", &["ann", "bob"]);
        let fx = s.seat_ended(&m, 0, PlayerResult::Win, EndReason::Win);
        assert_eq!(
            lines(&fx, c[0]),
            [r#"EVT m1 game.result {"result":"WIN","reason":"normal"}"#]
        );
        let again = s.seat_ended(&m, 0, PlayerResult::Win, EndReason::Win);
        assert!(lines(&again, c[0]).is_empty(), "one result a player");
        assert!(s.has_match(&m));
        let fx = s.match_over(&m, &record(&m, &["ann", "bob"], Some(0)));
        assert!(!s.has_match(&m));
        let [Effect::Print(line)] = fx.as_slice() else {
            panic!("{fx:?}")
        };
        let v: Value = serde_json::from_str(line).unwrap();
        assert_eq!(v["event"], "match_over");
        assert_eq!(
            v["results"],
            json!([{"player": "ann", "result": "WIN", "reason": "normal"},
                   {"player": "bob", "result": "LOSS", "reason": "normal"}])
        );
        for (i, &conn) in c.iter().enumerate() {
            let (_, fx) = send(&mut s, conn, r#"REQ 1 lobby.subscribe {"game": "connect4"}"#);
            assert!(is_ok(&fx, "1"), "player {i} is free again");
        }
        assert_eq!(s.match_over(&m, &record(&m, &["ann", "bob"], Some(0))), Vec::new());
    }
}
