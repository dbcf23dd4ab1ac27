//! c4sim: Connect Four worlds described by YAML scenario files.
//!
//! The crate is a functional core (rules, searches, codecs) inside a thin
//! actor shell; see ARCHITECTURE.md for the map.

pub mod actors;
pub mod analyze;
pub mod az;
pub mod bench;
pub mod events;
pub mod game;
pub mod net;
pub mod players;
pub mod record;
pub mod render;
pub mod rl;
pub mod run;
pub mod scenario;
pub mod search;
pub mod solver;
pub mod tournament;
pub mod train;
pub mod util;
pub mod web;
