//! One lobby per game name, as pure state (docs/lobby-protocol.md, "Lobby
//! rules"): who is in it in join order, who is ready, and whether the
//! countdown runs. Each operation says what the countdown must do, so the
//! server only turns that into timers and `lobby.countdown` events.

use crate::scenario::net::GameKind;
use serde_json::{json, Value};

/// What the countdown must do after a change.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Countdown {
    /// Nothing changes.
    Keep,
    /// Everyone is ready and there are enough: start it.
    Start,
    /// It was running and must stop (`{"seconds": null}`).
    Stop,
}

#[derive(Debug, PartialEq, Eq)]
pub struct Full;

#[derive(Debug, PartialEq, Eq)]
pub struct NotIn;

#[derive(Clone, Debug)]
pub struct Lobby {
    pub game: GameKind,
    /// In join order, which is the turn order of the match.
    players: Vec<String>,
    ready: Vec<bool>,
    counting: bool,
    /// Bumped at each start, so a timer from a countdown that was stopped
    /// and started again cannot fire the new one early.
    epoch: u64,
}

impl Lobby {
    pub fn new(game: GameKind) -> Self {
        Lobby {
            game,
            players: Vec::new(),
            ready: Vec::new(),
            counting: false,
            epoch: 0,
        }
    }

    pub fn players(&self) -> &[String] {
        &self.players
    }
    pub fn contains(&self, name: &str) -> bool {
        self.players.iter().any(|p| p == name)
    }
    pub fn is_counting(&self) -> bool {
        self.counting
    }
    /// The current countdown's number (valid while [`Lobby::is_counting`]).
    pub fn epoch(&self) -> u64 {
        self.epoch
    }

    fn should_count(&self) -> bool {
        self.players.len() >= self.game.min_players() && self.ready.iter().all(|&r| r)
    }

    /// Moves the countdown to where the state says it should be.
    fn settle(&mut self) -> Countdown {
        match (self.counting, self.should_count()) {
            (false, true) => {
                self.counting = true;
                self.epoch += 1;
                Countdown::Start
            }
            (true, false) => {
                self.counting = false;
                Countdown::Stop
            }
            _ => Countdown::Keep,
        }
    }

    /// Adds a player at the end. A join during the countdown stops it (the
    /// newcomer is not ready yet); everyone else stays ready.
    pub fn subscribe(&mut self, name: &str) -> Result<Countdown, Full> {
        if self.contains(name) {
            return Ok(Countdown::Keep);
        }
        if self.players.len() >= self.game.max_players() {
            return Err(Full);
        }
        self.players.push(name.to_string());
        self.ready.push(false);
        Ok(self.settle())
    }

    pub fn ready(&mut self, name: &str) -> Result<Countdown, NotIn> {
        let i = self.players.iter().position(|p| p == name).ok_or(NotIn)?;
        self.ready[i] = true;
        Ok(self.settle())
    }

    /// Removes a player (`lobby.leave` or a dropped connection). The
    /// countdown goes on if those left are still enough and all ready; it
    /// may even start, when the one who was not ready leaves.
    pub fn leave(&mut self, name: &str) -> Result<Countdown, NotIn> {
        let i = self.players.iter().position(|p| p == name).ok_or(NotIn)?;
        self.players.remove(i);
        self.ready.remove(i);
        Ok(self.settle())
    }

    /// The countdown of `epoch` ended: the match starts with everyone, in
    /// join order, and the lobby empties. `None` if that countdown was
    /// stopped meanwhile.
    pub fn take_all(&mut self, epoch: u64) -> Option<Vec<String>> {
        if !self.counting || epoch != self.epoch || !self.should_count() {
            return None;
        }
        self.counting = false;
        self.ready.clear();
        Some(std::mem::take(&mut self.players))
    }

    /// The body of `EVT lobby.update`.
    pub fn update_body(&self) -> Value {
        let ready: Vec<&String> = self
            .players
            .iter()
            .zip(&self.ready)
            .filter(|(_, &r)| r)
            .map(|(p, _)| p)
            .collect();
        json!({
            "players": self.players,
            "ready": ready,
            "min": self.game.min_players(),
            "max": self.game.max_players(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn countdown_starts_when_all_ready_and_enough() {
        let mut l = Lobby::new(GameKind::Connect4);
        for p in ["a", "b", "c"] {
            assert_eq!(l.subscribe(p), Ok(Countdown::Keep));
        }
        assert_eq!(l.ready("a"), Ok(Countdown::Keep));
        assert_eq!(l.ready("b"), Ok(Countdown::Keep));
        assert_eq!(l.ready("c"), Ok(Countdown::Start));
        assert!(l.is_counting());
        // Readying again changes nothing.
        assert_eq!(l.ready("c"), Ok(Countdown::Keep));
        let body = l.update_body();
        assert_eq!(body["ready"], json!(["a", "b", "c"]));
        assert_eq!((body["min"].as_u64(), body["max"].as_u64()), (Some(3), Some(9)));
    }

    #[test]
    fn too_few_ready_players_do_not_count_down() {
        let mut l = Lobby::new(GameKind::Connect4);
        l.subscribe("a").unwrap();
        l.subscribe("b").unwrap();
        assert_eq!(l.ready("a"), Ok(Countdown::Keep));
        assert_eq!(l.ready("b"), Ok(Countdown::Keep), "two is below min for connect4");
        let mut d = Lobby::new(GameKind::Connect4Classic);
        d.subscribe("a").unwrap();
        d.subscribe("b").unwrap();
        d.ready("a").unwrap();
        assert_eq!(d.ready("b"), Ok(Countdown::Start), "two is enough for the duel");
    }

    #[test]
    fn a_join_stops_the_countdown_and_others_stay_ready() {
        let mut l = Lobby::new(GameKind::Connect4);
        for p in ["a", "b", "c"] {
            l.subscribe(p).unwrap();
            l.ready(p).unwrap();
        }
        let first = l.epoch();
        assert_eq!(l.subscribe("d"), Ok(Countdown::Stop));
        assert_eq!(l.update_body()["ready"], json!(["a", "b", "c"]));
        assert_eq!(l.take_all(first), None, "the stopped countdown cannot fire");
        assert_eq!(l.ready("d"), Ok(Countdown::Start));
        assert_ne!(l.epoch(), first);
        assert_eq!(l.take_all(first), None, "an old timer cannot fire the new countdown");
        let e = l.epoch();
        assert_eq!(
            l.take_all(e),
            Some(vec!["a".into(), "b".into(), "c".into(), "d".into()])
        );
        assert!(l.players().is_empty() && !l.is_counting());
    }

    #[test]
    fn leaving_may_stop_keep_or_start_the_countdown() {
        let mut l = Lobby::new(GameKind::Connect4);
        for p in ["a", "b", "c", "d"] {
            l.subscribe(p).unwrap();
            l.ready(p).unwrap();
        }
        assert_eq!(
            l.leave("d"),
            Ok(Countdown::Keep),
            "three ready players still count down"
        );
        assert_eq!(l.leave("c"), Ok(Countdown::Stop), "two are too few");
        assert_eq!(l.leave("c"), Err(NotIn));
        l.subscribe("e").unwrap();
        assert_eq!(l.leave("e"), Ok(Countdown::Keep));
        l.subscribe("f").unwrap();
        l.subscribe("g").unwrap();
        l.ready("f").unwrap();
        assert_eq!(l.leave("g"), Ok(Countdown::Start), "the one not ready left");
    }

    #[test]
    fn a_full_lobby_refuses_and_a_second_subscribe_is_harmless() {
        let mut l = Lobby::new(GameKind::Connect4);
        for i in 0..9 {
            l.subscribe(&format!("p{i}")).unwrap();
        }
        assert_eq!(l.subscribe("p9"), Err(Full));
        assert_eq!(l.subscribe("p3"), Ok(Countdown::Keep));
        assert_eq!(l.players().len(), 9);
        assert_eq!(l.ready("nobody"), Err(NotIn));
    }
}
