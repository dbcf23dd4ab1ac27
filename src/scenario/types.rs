//! The typed scenario: what `c4sim run` executes after parsing and
//! validation. Every field has its documented default already filled in.

use crate::game::BoardConfig;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Match,
    Tournament,
    Train,
    Serve,
    Join,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RenderStyle {
    Emoji,
    Fullwidth,
    Ascii,
    None,
}

/// `color: auto | always | never` — whether emoji/colour are used when the
/// output is not a terminal or NO_COLOR is set (`auto` respects both).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PlayerKind {
    Human,
    Leftmost,
    Rightmost,
    Random,
    Invalid,
    Minimax,
    Mcts,
    Alphazero,
    External,
}

impl PlayerKind {
    pub const NAMES: [&'static str; 9] = [
        "human",
        "leftmost",
        "rightmost",
        "random",
        "invalid",
        "minimax",
        "mcts",
        "alphazero",
        "external",
    ];
    pub fn as_str(self) -> &'static str {
        match self {
            PlayerKind::Human => "human",
            PlayerKind::Leftmost => "leftmost",
            PlayerKind::Rightmost => "rightmost",
            PlayerKind::Random => "random",
            PlayerKind::Invalid => "invalid",
            PlayerKind::Minimax => "minimax",
            PlayerKind::Mcts => "mcts",
            PlayerKind::Alphazero => "alphazero",
            PlayerKind::External => "external",
        }
    }
}

/// One player, after `use: NAME` profiles are merged and defaults applied.
#[derive(Clone, Debug, PartialEq)]
pub struct PlayerSpec {
    /// Display name; defaults to the profile name or the kind (made unique
    /// within a scenario by adding " 2", " 3", ...).
    pub name: String,
    pub kind: PlayerKind,
    /// minimax: search depth in plies (default 4).
    pub depth: u32,
    /// mcts / alphazero: simulations per move (defaults 1000 / 800).
    pub simulations: u32,
    /// alphazero: model path.
    pub model: Option<PathBuf>,
    /// alphazero: auto | cpu | cuda | metal.
    pub device: String,
    /// alphazero on the CPU: threads of its network batches (`None`: every core).
    pub threads: Option<u32>,
    /// external: program and arguments.
    pub command: Vec<String>,
    /// external: working directory.
    pub cwd: Option<PathBuf>,
    /// external: extra environment variables.
    pub env: BTreeMap<String, String>,
    /// Overrides `limits.move_time` for this player. Humans default to no limit.
    pub move_time: Option<Duration>,
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
}
