//! c4sim: Connect Four worlds described by YAML scenario files.
//!
//! The crate is a functional core (rules, searches, codecs) inside a thin
//! actor shell; see ARCHITECTURE.md for the map.

pub mod actors;
pub mod analyze;
pub mod bench;
pub mod game;
pub mod players;
pub mod record;
pub mod render;
pub mod scenario;
pub mod search;
