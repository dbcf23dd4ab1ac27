//! The messages between the hub actor and its connection tasks and seats,
//! and the [`Recipient`] bundles those hold. They live here, not in
//! `server.rs`, so that `conn.rs` and `seat.rs` depend on the messages
//! only, never on the hub that handles them: the import graph of `net`
//! then has no cycle, and either side can be tested or replaced alone.

use super::codec::Request;
use super::hub::ConnId;
use crate::actors::messages::Reply;
use crate::game::EndReason;
use crate::players::TurnView;
use crate::record::PlayerResult;
use actix::prelude::*;
use std::net::IpAddr;
use std::sync::Arc;
use tokio::sync::{mpsc, watch};

/// A connection's queue of lines to send.
pub type Outbox = mpsc::Sender<Arc<str>>;

/// A connection opened; `None` when a connection limit refuses it.
#[derive(Message)]
#[rtype(result = "Option<ConnId>")]
pub struct Open {
    pub ip: IpAddr,
    pub outbox: Outbox,
    /// Dropped by the hub to end the connection's tasks.
    pub kill: watch::Sender<()>,
}

/// A well-formed request. Answers whether it was refused `BAD_REQUEST`
/// (the connection counts those), `None` if the connection is gone.
#[derive(Message)]
#[rtype(result = "Option<bool>")]
pub struct Inbound {
    pub conn: ConnId,
    pub req: Request,
}

/// The connection's reader ended (the peer closed, or the hub killed it).
#[derive(Message)]
#[rtype(result = "()")]
pub struct Closed {
    pub conn: ConnId,
}

/// The referee asks a seat for a move (through its `NetSeat`).
#[derive(Message)]
#[rtype(result = "Reply")]
pub struct SeatAsk {
    pub match_id: String,
    pub seat: usize,
    pub view: TurnView,
}

/// The referee stopped waiting for a seat (its move time ran out).
#[derive(Message)]
#[rtype(result = "()")]
pub struct SeatAbandon {
    pub match_id: String,
    pub seat: usize,
}

/// The referee's verdict for one seat at the end of the game.
#[derive(Message)]
#[rtype(result = "()")]
pub struct SeatEnded {
    pub match_id: String,
    pub seat: usize,
    pub result: PlayerResult,
    pub reason: EndReason,
}

/// What a connection task may tell the hub.
#[derive(Clone)]
pub struct ConnHub {
    pub open: Recipient<Open>,
    pub inbound: Recipient<Inbound>,
    pub closed: Recipient<Closed>,
}

/// What a network seat may tell the hub.
#[derive(Clone)]
pub struct SeatHub {
    pub ask: Recipient<SeatAsk>,
    pub abandon: Recipient<SeatAbandon>,
    pub ended: Recipient<SeatEnded>,
}
