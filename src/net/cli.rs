//! The `c4sim serve` and `c4sim join` shortcuts: the same runs as a
//! `mode: serve` / `mode: join` scenario, set from flags, so a server or a
//! client needs no file. Flags default to the scenario keys' defaults.

use super::client::{self, JoinConfig};
use super::server::{self, ServeConfig};
use crate::actors::mode::ModeError;
use crate::actors::runner::Output;
use crate::game::DEFAULT_MAX_INVALID;
use crate::render::resolve;
use crate::scenario::net::{dedupe_player_names, GameKind, JoinSettings, ServerSettings, DEFAULT_BIND, GAME_NAMES};
use crate::scenario::{parse_duration, parse_player_spec, ColorChoice, DurationError, RenderStyle, ScenarioError};
use std::io::IsTerminal;
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub struct ServeArgs {
    /// Address to listen on (IP:PORT); port 0 picks a free one.
    #[arg(long, default_value = DEFAULT_BIND)]
    pub bind: String,
    /// Games to host, comma-separated: connect4, connect4-classic.
    #[arg(long, value_delimiter = ',', default_values_t = GAME_NAMES.map(String::from))]
    pub games: Vec<String>,
    /// Lobby countdown once everyone is ready (10s, 500ms, ...).
    #[arg(long, default_value = "10s")]
    pub countdown: String,
    #[arg(long, default_value = "30s")]
    pub move_timeout: String,
    #[arg(long, default_value = "30s")]
    pub reconnect_grace: String,
    /// Time from connecting to being logged in before a connection is closed.
    #[arg(long, default_value = "10s")]
    pub hello_timeout: String,
    #[arg(long, default_value_t = 1024)]
    pub max_connections: usize,
    #[arg(long, default_value_t = 64)]
    pub max_connections_per_address: usize,
    #[arg(long, default_value_t = 200)]
    pub max_lines_per_second: u32,
    /// Illegal moves per turn before a player is out.
    #[arg(long, default_value_t = DEFAULT_MAX_INVALID)]
    pub max_invalid_moves: u32,
    /// Append one JSON game record per finished match to this file.
    #[arg(long)]
    pub records: Option<std::path::PathBuf>,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// One JSON object a line on standard output.
    #[arg(long)]
    pub json: bool,
    /// Also serve a web page (on this IP:PORT) where people watch the matches as spectators.
    #[arg(long, value_name = "IP:PORT")]
    pub web: Option<std::net::SocketAddr>,
}

#[derive(clap::Args, Debug)]
pub struct JoinArgs {
    /// The server, HOST:PORT.
    pub addr: String,
    /// A player (profile name, profile file or inline YAML); repeat for more.
    #[arg(long = "player", required = true)]
    pub players: Vec<String>,
    /// connect4 or connect4-classic.
    #[arg(long, default_value = "connect4")]
    pub game: String,
    /// Matches each player plays.
    #[arg(long, default_value_t = 1)]
    pub matches: u32,
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// One JSON object a line on standard output.
    #[arg(long)]
    pub json: bool,
}

/// A `serve` or `join` flag that does not say what it must.
#[derive(Debug, thiserror::Error)]
pub enum FlagError {
    #[error("--{flag}: {source}")]
    Duration { flag: &'static str, source: DurationError },
    /// `--{flag}` names a game the lobby does not have.
    #[error("--{flag}: unknown game `{name}`; games: {}", GAME_NAMES.join(", "))]
    UnknownGame { flag: &'static str, name: String },
    #[error("--games: name at least one game")]
    NoGames,
    #[error("--bind must be an IP address and port like 127.0.0.1:7878, got `{0}`")]
    Bind(String),
    #[error("--move-timeout and --hello-timeout must be more than zero")]
    ZeroTimeout,
    /// A `--player` that does not read as a player entry.
    #[error("{0}")]
    Player(#[from] ScenarioError),
}

/// Bad flags, said as `c4sim serve` and `c4sim join` print them.
#[derive(Debug, thiserror::Error)]
#[error("error: {0}")]
pub struct BadFlags(#[source] pub FlagError);

fn duration(flag: &'static str, s: &str) -> Result<Duration, FlagError> {
    parse_duration(s).map_err(|source| FlagError::Duration { flag, source })
}

impl ServeArgs {
    /// The settings these flags describe, checked as the scenario keys are.
    pub fn config(&self) -> Result<ServeConfig, FlagError> {
        let mut games = Vec::new();
        for g in &self.games {
            let kind = GameKind::parse(g).ok_or_else(|| FlagError::UnknownGame {
                flag: "games",
                name: g.clone(),
            })?;
            if !games.contains(&kind) {
                games.push(kind);
            }
        }
        if games.is_empty() {
            return Err(FlagError::NoGames);
        }
        let settings = ServerSettings {
            bind: self.bind.parse().map_err(|_| FlagError::Bind(self.bind.clone()))?,
            games,
            countdown: duration("countdown", &self.countdown)?,
            move_timeout: duration("move-timeout", &self.move_timeout)?,
            reconnect_grace: duration("reconnect-grace", &self.reconnect_grace)?,
            hello_timeout: duration("hello-timeout", &self.hello_timeout)?,
            max_connections: self.max_connections.max(1),
            max_connections_per_address: self.max_connections_per_address.max(1),
            max_lines_per_second: self.max_lines_per_second.max(1),
            records: self.records.clone(),
            ..ServerSettings::default()
        };
        if settings.move_timeout.is_zero() || settings.hello_timeout.is_zero() {
            return Err(FlagError::ZeroTimeout);
        }
        Ok(ServeConfig {
            settings,
            max_invalid: self.max_invalid_moves.max(1),
            seed: self.seed,
            json: self.json,
        })
    }
}

/// `c4sim serve`.
pub fn serve(args: &ServeArgs) -> Result<(), ModeError> {
    server::serve(args.config().map_err(|e| ModeError::usage(BadFlags(e)))?)
}

impl JoinArgs {
    pub fn config(&self) -> Result<JoinConfig, FlagError> {
        let game = GameKind::parse(&self.game).ok_or_else(|| FlagError::UnknownGame {
            flag: "game",
            name: self.game.clone(),
        })?;
        let mut players = Vec::new();
        for p in &self.players {
            players.push(parse_player_spec(p)?);
        }
        dedupe_player_names(&mut players);
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Ok(JoinConfig {
            settings: JoinSettings {
                server: self.addr.clone(),
                game,
                matches: self.matches.max(1),
            },
            players,
            seed: self.seed,
            out: Output {
                json: self.json,
                style: resolve(
                    RenderStyle::Emoji,
                    ColorChoice::Auto,
                    std::io::stdout().is_terminal(),
                    no_color,
                ),
            },
        })
    }
}

/// `c4sim join`.
pub fn join(args: &JoinArgs) -> Result<(), ModeError> {
    client::join(args.config().map_err(|e| ModeError::usage(BadFlags(e)))?)
}
