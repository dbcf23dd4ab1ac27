//! The typed scenario: what `c4sim run` executes after parsing and
//! validation. Every field has its documented default already filled in.

use crate::game::BoardConfig;
pub use crate::players::{PlayerKind, PlayerSpec};
pub use crate::render::{ColorChoice, RenderStyle};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Match,
    Tournament,
    Train,
    Serve,
    Join,
    Web,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Limits {
    pub move_time: Duration,
    pub max_invalid_moves: u32,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MatchSettings {
    pub games: u32,
    pub swap_colors: bool,
    pub first: FirstMover,
}

/// `match.first`: who takes RED and the first move in game 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FirstMover {
    /// The first player entry.
    Seat,
    /// The person at the terminal says, before the first game.
    Ask,
    /// Drawn from the scenario's seed.
    Random,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Scenario {
    /// The file it came from (for messages and relative paths).
    pub path: PathBuf,
    pub name: String,
    pub mode: Mode,
    pub seed: u64,
    pub board: BoardConfig,
    pub limits: Limits,
    pub render: RenderStyle,
    pub color: ColorChoice,
    pub players: Vec<PlayerSpec>,
    pub match_settings: MatchSettings,
    /// The sections of the other modes, each typed by its own parser;
    /// `None` where the key is absent (the mode then uses its defaults).
    pub tournament: Option<super::tournament::TournamentSettings>,
    pub report: Option<super::tournament::ReportSettings>,
    pub train: Option<super::train::TrainSettings>,
    pub server: Option<super::net::ServerSettings>,
    pub join: Option<super::net::JoinSettings>,
    pub web: Option<super::web::WebSettings>,
}
