//! Lobbies: `lobby.subscribe`, `lobby.ready` and `lobby.leave`, the
//! updates and the countdown they cause, and the start of a match when a
//! countdown ends.

use super::dispatch::{fail, string_field, Failure};
use super::{match_id, ConnId, Effect, HubState, MatchStart, MatchState, Place, SeatState, Timer};
use crate::net::codec::{ErrorCode, Event, Method, Request, ServerMsg};
use crate::net::lobby::Countdown;
use crate::scenario::net::GameKind;
use serde_json::json;

impl HubState {
    pub(super) fn subscribe(&mut self, conn: ConnId, req: &Request, name: &str) -> Result<(), Failure> {
        let game_name = string_field(&req.params, "game")?;
        let game = GameKind::parse(game_name)
            .filter(|g| self.lobbies.contains_key(g))
            .ok_or_else(|| {
                let hosted: Vec<&str> = self.settings.games.iter().map(|g| g.as_str()).collect();
                (
                    ErrorCode::UnknownGame,
                    format!("this server hosts {}, not `{game_name}`", hosted.join(", ")),
                )
            })?;
        let place = self.players[name].place.clone();
        match place {
            Place::Match(m) => {
                return fail(
                    ErrorCode::BadRequest,
                    format!("you are playing in match `{m}`; finish it or leave it (game.leave) first"),
                )
            }
            Place::Lobby(g) if g == game => {
                self.ok(conn, &req.id, None);
                self.lobby_update(game);
                return Ok(());
            }
            _ => {}
        }
        let lobby = self.lobbies.get_mut(&game).expect("checked");
        if lobby.players().len() >= game.max_players() {
            return fail(
                ErrorCode::LobbyFull,
                format!("the {} lobby holds its {} players", game.as_str(), game.max_players()),
            );
        }
        if let Place::Lobby(old) = place {
            self.leave_lobby(old, name);
        }
        let effect = self
            .lobbies
            .get_mut(&game)
            .expect("checked")
            .subscribe(name)
            .map_err(|_| (ErrorCode::LobbyFull, "the lobby is full".to_string()))?;
        self.players.get_mut(name).expect("checked").place = Place::Lobby(game);
        self.ok(conn, &req.id, None);
        self.lobby_update(game);
        self.countdown(game, effect);
        Ok(())
    }

    pub(super) fn ready_or_leave(
        &mut self,
        conn: ConnId,
        req: &Request,
        method: Method,
        name: &str,
    ) -> Result<(), Failure> {
        let Some(Place::Lobby(game)) = self.players.get(name).map(|p| p.place.clone()) else {
            return fail(ErrorCode::NotInLobby, "you are not in a lobby");
        };
        let lobby = self.lobbies.get_mut(&game).expect("a hosted game");
        let leaving = method == Method::LobbyLeave;
        let effect = if leaving { lobby.leave(name) } else { lobby.ready(name) }
            .map_err(|_| (ErrorCode::NotInLobby, "you are not in a lobby".to_string()))?;
        if leaving {
            self.players.get_mut(name).expect("checked").place = Place::Idle;
        }
        self.ok(conn, &req.id, None);
        self.lobby_update(game);
        self.countdown(game, effect);
        Ok(())
    }

    pub(super) fn leave_lobby(&mut self, game: GameKind, name: &str) {
        let Some(l) = self.lobbies.get_mut(&game) else { return };
        if let Ok(effect) = l.leave(name) {
            self.lobby_update(game);
            self.countdown(game, effect);
        }
    }

    fn countdown(&mut self, game: GameKind, effect: Countdown) {
        match effect {
            Countdown::Keep => {}
            Countdown::Stop => {
                self.out.push(Effect::StopCountdown(game));
                let msg = ServerMsg::event(None, Event::LobbyCountdown, Some(json!({ "seconds": null })));
                self.send_lobby(game, msg);
            }
            Countdown::Start => {
                let d = self.settings.countdown;
                let seconds = if d.subsec_nanos() == 0 {
                    json!(d.as_secs())
                } else {
                    json!(d.as_secs_f64())
                };
                let msg = ServerMsg::event(None, Event::LobbyCountdown, Some(json!({ "seconds": seconds })));
                self.send_lobby(game, msg);
                let epoch = self.lobbies[&game].epoch();
                self.out.push(Effect::After(d, Timer::Countdown { game, epoch }));
            }
        }
    }

    pub(super) fn start_match(&mut self, game: GameKind, names: Vec<String>) {
        self.next_match += 1;
        let number = self.next_match;
        let match_id = match_id(number);
        let cfg = game.board(names.len());
        self.matches.insert(
            match_id.clone(),
            MatchState {
                game,
                cfg,
                seats: names
                    .iter()
                    .map(|n| SeatState {
                        name: n.clone(),
                        active: true,
                        result: None,
                        gone: None,
                        asked: false,
                        action: None,
                    })
                    .collect(),
                moves: Vec::new(),
                to_move: Some(0),
            },
        );
        let body = json!({
            "participants": names, "to_move": names[0], "width": cfg.cols, "height": cfg.rows
        });
        let msg = ServerMsg::event(Some(&match_id), Event::MatchStarted, Some(body));
        for n in &names {
            if let Some(p) = self.players.get_mut(n) {
                p.place = Place::Match(match_id.clone());
            }
            self.send_player(n, msg.clone());
        }
        tracing::info!(
            "{match_id} {} starts: {} on {}x{}",
            game.as_str(),
            names.join(", "),
            cfg.cols,
            cfg.rows
        );
        let line = if self.json {
            crate::events::Event::MatchStarted {
                table: crate::events::ServerMatch {
                    match_id: match_id.clone(),
                    game: game.as_str().to_string(),
                    players: names.clone(),
                    width: cfg.cols,
                    height: cfg.rows,
                },
            }
            .line()
        } else {
            format!(
                "{match_id} started: {} ({}, {}×{})",
                names.join(", "),
                game.as_str(),
                cfg.cols,
                cfg.rows
            )
        };
        self.out.push(Effect::Print(line));
        self.out.push(Effect::StartMatch(MatchStart {
            match_id,
            number,
            cfg,
            names,
        }));
    }

    fn lobby_update(&mut self, game: GameKind) {
        let Some(l) = self.lobbies.get(&game) else { return };
        let msg = ServerMsg::event(None, Event::LobbyUpdate, Some(l.update_body()));
        self.send_lobby(game, msg);
    }
}

#[cfg(test)]
mod tests {
    use super::super::testkit::*;
    use super::*;

    #[test]
    fn subscribing_updates_everyone_in_the_lobby() {
        let mut s = state();
        let (a, _) = login(&mut s, "ann");
        let (b, _) = login(&mut s, "bob");
        send(&mut s, a, r#"REQ 1 lobby.subscribe {"game": "connect4"}"#);
        let (_, fx) = send(&mut s, b, r#"REQ 2 lobby.subscribe {"game": "connect4"}"#);
        let update = r#"EVT lobby.update {"players":["ann","bob"],"ready":[],"min":3,"max":9}"#;
        assert_eq!(lines(&fx, a), [update]);
        assert_eq!(lines(&fx, b), ["RES 2 OK", update], "the answer first");
        assert_eq!(
            refused(&mut s, b, r#"REQ 3 lobby.subscribe {"game": "chess"}"#),
            ErrorCode::UnknownGame
        );
        // Subscribing again is harmless: an OK and a fresh update.
        let (_, fx) = send(&mut s, b, r#"REQ 4 lobby.subscribe {"game": "connect4"}"#);
        assert_eq!(lines(&fx, b), ["RES 4 OK", update]);
    }

    #[test]
    fn moving_to_another_lobby_leaves_the_first() {
        let mut s = state();
        let (a, _) = login(&mut s, "ann");
        let (b, _) = login(&mut s, "bob");
        send(&mut s, a, r#"REQ 1 lobby.subscribe {"game": "connect4"}"#);
        send(&mut s, b, r#"REQ 2 lobby.subscribe {"game": "connect4"}"#);
        let (_, fx) = send(&mut s, b, r#"REQ 3 lobby.subscribe {"game": "connect4-classic"}"#);
        assert_eq!(
            lines(&fx, a),
            [r#"EVT lobby.update {"players":["ann"],"ready":[],"min":3,"max":9}"#]
        );
        assert_eq!(
            lines(&fx, b),
            [
                "RES 3 OK",
                r#"EVT lobby.update {"players":["bob"],"ready":[],"min":2,"max":2}"#
            ]
        );
    }

    #[test]
    fn a_full_lobby_refuses_with_lobby_full() {
        let mut s = state();
        let (conns, _) = lobby(&mut s, "connect4-classic", &["ann", "bob"]);
        assert_eq!(conns.len(), 2);
        let (c, _) = login(&mut s, "cat");
        let (bad, fx) = send(&mut s, c, r#"REQ 1 lobby.subscribe {"game": "connect4-classic"}"#);
        assert_eq!((bad, code(&fx, "1")), (false, Some(ErrorCode::LobbyFull)));
        assert_eq!(lines(&fx, conns[0]), Vec::<String>::new(), "nobody else hears of it");
    }

    #[test]
    fn ready_and_leave_need_a_lobby() {
        let mut s = state();
        let (c, _) = login(&mut s, "ann");
        assert_eq!(refused(&mut s, c, "REQ 1 lobby.ready"), ErrorCode::NotInLobby);
        send(&mut s, c, r#"REQ 2 lobby.subscribe {"game": "connect4"}"#);
        assert!(is_ok(&send(&mut s, c, "REQ 3 lobby.leave").1, "3"));
        assert_eq!(refused(&mut s, c, "REQ 4 lobby.leave"), ErrorCode::NotInLobby);
    }

    #[test]
    fn all_ready_starts_the_countdown_and_its_end_the_match() {
        let mut s = state();
        let (conns, fx) = lobby(&mut s, "connect4", &["ann", "bob", "cat"]);
        for &c in &conns {
            assert!(lines(&fx, c).contains(&r#"EVT lobby.countdown {"seconds":10}"#.to_string()));
        }
        let timer = countdown_timer(&fx).expect("a countdown timer");
        let fx = s.timer(timer);
        let started =
            r#"EVT m1 game.match_started {"participants":["ann","bob","cat"],"to_move":"ann","width":7,"height":6}"#;
        for &c in &conns {
            assert_eq!(lines(&fx, c), [started]);
        }
        let start = fx.iter().find_map(|e| match e {
            Effect::StartMatch(st) => Some(st.clone()),
            _ => None,
        });
        assert_eq!(
            start,
            Some(MatchStart {
                match_id: "m1".into(),
                number: 1,
                cfg: GameKind::Connect4.board(3),
                names: vec!["ann".into(), "bob".into(), "cat".into()],
            })
        );
        let printed: Vec<&String> = fx
            .iter()
            .filter_map(|e| match e {
                Effect::Print(l) => Some(l),
                _ => None,
            })
            .collect();
        assert_eq!(printed.len(), 1);
        assert!(printed[0].contains(r#""event":"match_started""#), "{}", printed[0]);
        // The lobby is empty again.
        let (d, _) = login(&mut s, "dan");
        let (_, fx) = send(&mut s, d, r#"REQ 1 lobby.subscribe {"game": "connect4"}"#);
        assert!(lines(&fx, d)[1].contains(r#""players":["dan"]"#));
    }

    #[test]
    fn a_join_stops_the_countdown_and_its_old_timer_is_stale() {
        let mut s = state();
        let (conns, fx) = lobby(&mut s, "connect4", &["ann", "bob", "cat"]);
        let old = countdown_timer(&fx).unwrap();
        let (d, _) = login(&mut s, "dan");
        let (_, fx) = send(&mut s, d, r#"REQ 1 lobby.subscribe {"game": "connect4"}"#);
        assert!(fx.contains(&Effect::StopCountdown(GameKind::Connect4)));
        assert!(lines(&fx, conns[0]).contains(&r#"EVT lobby.countdown {"seconds":null}"#.to_string()));
        assert_eq!(
            s.timer(old.clone()),
            Vec::new(),
            "the stopped countdown cannot start a match"
        );
        let fx = send(&mut s, d, "REQ 2 lobby.ready").1;
        let new = countdown_timer(&fx).unwrap();
        assert_ne!(new, old);
        assert_eq!(s.timer(old), Vec::new());
        let fx = s.timer(new);
        assert_eq!(lines(&fx, d).len(), 1, "dan plays too");
    }

    #[test]
    fn a_player_in_a_match_cannot_subscribe() {
        let mut s = state();
        let (c, _, _) = started(&mut s, "connect4-classic", &["ann", "bob"]);
        assert_eq!(
            refused(&mut s, c[0], r#"REQ 1 lobby.subscribe {"game": "connect4"}"#),
            ErrorCode::BadRequest
        );
    }
}
