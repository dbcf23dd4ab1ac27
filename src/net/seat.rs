//! A network seat: what the referee sees of a remote player. The referee
//! talks to every player through the same five messages ([`PlayerHandle`]);
//! this actor forwards them to the lobby hub, tagged with the match and
//! seat, because `Abandon` and `GameEnded` do not say whose they are. The
//! hub then turns them into protocol lines on that player's connection.

use super::hub_messages::{SeatAbandon, SeatAsk, SeatEnded, SeatHub};
use crate::actors::messages::{Abandon, GameEnded, NewGame, Reply, Shutdown, YourTurn};
use actix::prelude::*;

pub struct NetSeat {
    pub hub: SeatHub,
    pub match_id: String,
    pub seat: usize,
}

impl Actor for NetSeat {
    type Context = Context<Self>;
}

impl Handler<YourTurn> for NetSeat {
    type Result = ResponseFuture<Reply>;
    fn handle(&mut self, msg: YourTurn, _: &mut Context<Self>) -> Self::Result {
        let ask = self.hub.ask.send(SeatAsk {
            match_id: self.match_id.clone(),
            seat: self.seat,
            view: msg.0,
        });
        Box::pin(async move { ask.await.unwrap_or_else(|_| Reply::Gone("disconnected".into())) })
    }
}

impl Handler<Abandon> for NetSeat {
    type Result = ();
    fn handle(&mut self, _: Abandon, _: &mut Context<Self>) {
        self.hub.abandon.do_send(SeatAbandon {
            match_id: self.match_id.clone(),
            seat: self.seat,
        });
    }
}

impl Handler<NewGame> for NetSeat {
    type Result = ();
    fn handle(&mut self, _: NewGame, _: &mut Context<Self>) {}
}

impl Handler<GameEnded> for NetSeat {
    type Result = ();
    fn handle(&mut self, msg: GameEnded, _: &mut Context<Self>) {
        self.hub.ended.do_send(SeatEnded {
            match_id: self.match_id.clone(),
            seat: self.seat,
            result: msg.result,
            reason: msg.reason,
        });
    }
}

impl Handler<Shutdown> for NetSeat {
    type Result = ();
    fn handle(&mut self, _: Shutdown, _: &mut Context<Self>) {}
}
