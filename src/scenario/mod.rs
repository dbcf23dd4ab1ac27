//! Scenario files: YAML schema, defaults, profiles and validation with
//! file:line:column errors.
//!
//! [`load`] / [`parse_str`] turn a scenario file into a [`Scenario`] (the
//! keys and defaults are listed in docs/scenarios.md); [`parse_player_spec`] reads
//! the `--player` argument of `c4sim analyze`; every failure is a
//! [`ScenarioError`] that prints as `FILE:LINE:COLUMN: MESSAGE`.

mod duration;
mod error;
pub mod net;
mod parse;
mod players;
pub mod resolved;
#[cfg(test)]
mod tests;
pub mod tournament;
pub mod train;
mod tree;
pub mod types;
mod value;
pub mod web;

pub use duration::{parse_duration, DurationError};
pub use error::{InScenario, ScenarioError};
pub use parse::{load, parse_str, DEFAULT_MOVE_TIME};
pub use players::parse_player_spec;
pub use tree::{locate, PathSeg};
pub use types::*;
