//! Network play (docs/lobby-protocol.md): the lobby server and c4sim
//! players as its clients.
//!
//! - [`codec`]: the protocol's lines as pure functions (property-tested).
//! - [`lines`]: bounded line reading from sockets.
//! - [`lobby`]: one lobby's state and countdown rules, pure.
//! - [`hub`]: every session, lobby and match of a server and the
//!   protocol's rules about them, pure: calls in, effects out (sessions,
//!   lobbies, the match relay and request dispatch in a file each).
//! - [`server`]: the hub actor that carries the state's effects out and
//!   seats remote players at the one referee; [`seat`] and [`conn`] are its
//!   per-seat and per-connection halves, which reach it through the
//!   [`hub_messages`] recipients only.
//! - [`client`]: `mode: join`, any player kind playing on a server.
//! - [`bench`]: the lobby load test (`c4sim bench lobby`).

pub mod bench;
pub mod cli;
pub mod client;
pub mod codec;
pub mod conn;
pub mod hub;
pub mod hub_messages;
pub mod lines;
pub mod lobby;
pub mod seat;
pub mod server;

use crate::actors::mode::ModeError;
use crate::actors::runner::Output;
use crate::scenario::Scenario;

/// `mode: serve`.
pub fn run_serve(sc: &Scenario, json: bool) -> Result<(), ModeError> {
    server::serve(server::ServeConfig {
        settings: sc.server.clone().unwrap_or_default(),
        max_invalid: sc.limits.max_invalid_moves,
        seed: sc.seed,
        json,
    })
}

/// `mode: join`.
pub fn run_join(sc: &Scenario, json: bool) -> Result<(), ModeError> {
    client::join(client::JoinConfig {
        settings: sc.join.clone().unwrap_or_default(),
        players: sc.players.clone(),
        seed: sc.seed,
        out: Output::for_scenario(sc, json),
    })
}
