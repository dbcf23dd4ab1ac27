//! The `server` and `join` sections (mode: serve / join): the lobby server
//! and c4sim players joining one. See docs/lobby-protocol.md.
//!
//! # `server:` keys
//! | key | type | default | why it exists |
//! |---|---|---|---|
//! | `bind` | `IP:PORT` | `127.0.0.1:7878` | loopback unless the operator opens it up on purpose |
//! | `games` | list of `connect4`, `connect4-classic` | both | which lobbies exist |
//! | `countdown` | duration | `10s` | lobby countdown once everyone is ready |
//! | `move_timeout` | duration > 0 | `30s` | a player's time per move (TIMEOUT after it) |
//! | `reconnect_grace` | duration | `30s` | how long a token outlives its connection |
//! | `hello_timeout` | duration > 0 | `10s` | a connection must be logged in (or resumed) by then, or it is closed |
//! | `max_line` | 256 to 65536 | `4096` | longer lines are answered `BAD_REQUEST` and dropped |
//! | `max_connections` | ≥ 1 | `1024` | open connections in all |
//! | `max_connections_per_address` | ≥ 1 | `64` | open connections from one IP address |
//! | `max_lines_per_second` | ≥ 1 | `200` | per connection; a flood is slowed to this rate (TCP backpressure) |
//! | `records` | path | none | append one JSON game record per finished match (as tournaments write `games.jsonl`) |
//!
//! # `join:` keys
//! | key | type | default |
//! |---|---|---|
//! | `server` | `HOST:PORT` | `127.0.0.1:7878` |
//! | `game` | `connect4` \| `connect4-classic` | `connect4` |
//! | `matches` | whole number ≥ 1 | `1` (per player) |

use super::tree::Node;
use super::value::{get, Doc};
use super::{PlayerSpec, ScenarioError};
use crate::game::BoardConfig;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// The game names a server can host (docs/lobby-protocol.md, "Games").
pub const GAME_NAMES: [&str; 2] = ["connect4", "connect4-classic"];

/// A game the lobby server hosts: who may play and on which board.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum GameKind {
    /// 3 to 9 players on a (players + 4) × (players + 3) board.
    Connect4,
    /// Exactly two players on 7 × 6.
    Connect4Classic,
}

impl GameKind {
    pub const ALL: [GameKind; 2] = [GameKind::Connect4, GameKind::Connect4Classic];

    pub fn as_str(self) -> &'static str {
        match self {
            GameKind::Connect4 => GAME_NAMES[0],
            GameKind::Connect4Classic => GAME_NAMES[1],
        }
    }

    pub fn parse(s: &str) -> Option<GameKind> {
        GameKind::ALL.into_iter().find(|g| g.as_str() == s)
    }

    /// Fewest players a match of this game starts with.
    pub fn min_players(self) -> usize {
        match self {
            GameKind::Connect4 => 3,
            GameKind::Connect4Classic => 2,
        }
    }

    /// Most players a lobby of this game holds.
    pub fn max_players(self) -> usize {
        match self {
            GameKind::Connect4 => 9,
            GameKind::Connect4Classic => 2,
        }
    }

    /// The board for `players` players: width players + 4 and height
    /// players + 3 for `connect4`, 7 × 6 for the classic duel; 4 in a row wins.
    pub fn board(self, players: usize) -> BoardConfig {
        match self {
            GameKind::Connect4 => BoardConfig {
                rows: players + 3,
                cols: players + 4,
                win_length: 4,
            },
            GameKind::Connect4Classic => BoardConfig::default(),
        }
    }
}

/// Typed `server:` settings with their defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct ServerSettings {
    pub bind: SocketAddr,
    pub games: Vec<GameKind>,
    pub countdown: Duration,
    pub move_timeout: Duration,
    pub reconnect_grace: Duration,
    pub hello_timeout: Duration,
    pub max_line: usize,
    pub max_connections: usize,
    pub max_connections_per_address: usize,
    pub max_lines_per_second: u32,
    pub records: Option<PathBuf>,
}

/// The default address: loopback, so a server is never reachable from
/// other machines unless its operator says so.
pub const DEFAULT_BIND: &str = "127.0.0.1:7878";

impl Default for ServerSettings {
    fn default() -> Self {
        ServerSettings {
            bind: DEFAULT_BIND.parse().expect("a valid address"),
            games: GameKind::ALL.to_vec(),
            countdown: Duration::from_secs(10),
            move_timeout: Duration::from_secs(30),
            reconnect_grace: Duration::from_secs(30),
            hello_timeout: Duration::from_secs(10),
            max_line: 4096,
            max_connections: 1024,
            max_connections_per_address: 64,
            max_lines_per_second: 200,
            records: None,
        }
    }
}

/// Typed `join:` settings with their defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct JoinSettings {
    /// `HOST:PORT`, resolved when connecting.
    pub server: String,
    pub game: GameKind,
    /// Matches each listed player plays before it disconnects.
    pub matches: u32,
}

impl Default for JoinSettings {
    fn default() -> Self {
        JoinSettings {
            server: DEFAULT_BIND.to_string(),
            game: GameKind::Connect4,
            matches: 1,
        }
    }
}

const SERVER_KEYS: [&str; 11] = [
    "bind",
    "games",
    "countdown",
    "move_timeout",
    "reconnect_grace",
    "hello_timeout",
    "max_line",
    "max_connections",
    "max_connections_per_address",
    "max_lines_per_second",
    "records",
];
const JOIN_KEYS: [&str; 3] = ["server", "game", "matches"];

/// Parses the `server:` mapping (called only when the key is present).
pub(crate) fn parse_server(doc: Doc, v: &Node) -> Result<ServerSettings, ScenarioError> {
    let entries = doc.mapping(
        "server",
        v,
        "{bind: 127.0.0.1:7878, games: [connect4, connect4-classic], countdown: 10s}",
    )?;
    doc.check_keys(entries, &SERVER_KEYS, " in `server`")?;
    let mut s = ServerSettings::default();
    if let Some((_, v)) = get(entries, "bind") {
        s.bind = doc.bind("bind", v, 7878)?;
    }
    if let Some((_, v)) = get(entries, "games") {
        let Node::Seq { items, .. } = v else {
            return Err(doc.err(
                v.pos(),
                format!(
                    "`games` must be a list of game names, like [connect4, connect4-classic]; got {}",
                    v.describe()
                ),
            ));
        };
        if items.is_empty() {
            return Err(doc.err(
                v.pos(),
                "`games` must name at least one game: connect4, connect4-classic",
            ));
        }
        let mut games = Vec::new();
        for item in items {
            let g = GameKind::ALL[doc.choice("games", "game", item, &GAME_NAMES)?];
            if games.contains(&g) {
                return Err(doc.err(item.pos(), format!("game `{}` is listed twice", g.as_str())));
            }
            games.push(g);
        }
        s.games = games;
    }
    if let Some((_, v)) = get(entries, "countdown") {
        s.countdown = doc.duration("countdown", v)?;
    }
    for (key, slot) in [
        ("move_timeout", &mut s.move_timeout),
        ("hello_timeout", &mut s.hello_timeout),
    ] {
        if let Some((_, v)) = get(entries, key) {
            *slot = doc.duration(key, v)?;
            if slot.is_zero() {
                return Err(doc.err(v.pos(), format!("`{key}` must be more than zero, like 30s or 500ms")));
            }
        }
    }
    if let Some((_, v)) = get(entries, "reconnect_grace") {
        s.reconnect_grace = doc.duration("reconnect_grace", v)?;
    }
    if let Some((_, v)) = get(entries, "max_line") {
        s.max_line = doc.uint("max_line", v, 256, 65536)? as usize;
    }
    if let Some((_, v)) = get(entries, "max_connections") {
        s.max_connections = doc.uint("max_connections", v, 1, 1 << 20)? as usize;
    }
    if let Some((_, v)) = get(entries, "max_connections_per_address") {
        s.max_connections_per_address = doc.uint("max_connections_per_address", v, 1, 1 << 20)? as usize;
    }
    if let Some((_, v)) = get(entries, "max_lines_per_second") {
        s.max_lines_per_second = doc.uint("max_lines_per_second", v, 1, 1_000_000)? as u32;
    }
    if let Some((_, v)) = get(entries, "records") {
        s.records = Some(PathBuf::from(doc.nonempty_string("records", v)?));
    }
    Ok(s)
}

/// Parses the `join:` mapping (called only when the key is present).
pub(crate) fn parse_join(doc: Doc, v: &Node) -> Result<JoinSettings, ScenarioError> {
    let entries = doc.mapping("join", v, "{server: 127.0.0.1:7878, game: connect4, matches: 5}")?;
    doc.check_keys(entries, &JOIN_KEYS, " in `join`")?;
    let mut j = JoinSettings::default();
    if let Some((_, v)) = get(entries, "server") {
        let text = doc.nonempty_string("server", v)?.trim().to_string();
        let port_ok = text
            .rsplit_once(':')
            .is_some_and(|(host, port)| !host.is_empty() && port.parse::<u16>().is_ok());
        if !port_ok {
            return Err(doc.err(
                v.pos(),
                format!("`server` must be a host and port like 127.0.0.1:7878, got `{text}`"),
            ));
        }
        j.server = text;
    }
    if let Some((_, v)) = get(entries, "game") {
        j.game = GameKind::ALL[doc.choice("game", "game", v, &GAME_NAMES)?];
    }
    if let Some((_, v)) = get(entries, "matches") {
        j.matches = doc.u32_at_least("matches", v, 1)?;
    }
    Ok(j)
}

/// Makes player names unique the way scenario files do (" 2", " 3", ...),
/// for `c4sim join --player ...`: a server refuses a second player of the
/// same name, so the names must differ before connecting.
pub fn dedupe_player_names(players: &mut [PlayerSpec]) {
    super::players::dedupe_names(players)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::{parse_str, Mode, ScenarioError};
    use std::path::Path;

    fn parse(src: &str) -> Result<crate::scenario::Scenario, ScenarioError> {
        parse_str(src, Path::new("net.yaml"))
    }

    fn err(src: &str) -> ScenarioError {
        parse(src).expect_err("expected an error")
    }

    #[test]
    fn server_defaults_when_the_section_is_empty() {
        let sc = parse("mode: serve\nserver: {}\n").unwrap();
        assert_eq!(sc.mode, Mode::Serve);
        let s = sc.server.unwrap();
        assert_eq!(s, ServerSettings::default());
        assert_eq!(s.bind.to_string(), "127.0.0.1:7878");
        assert_eq!(s.games, vec![GameKind::Connect4, GameKind::Connect4Classic]);
        assert_eq!(
            (s.countdown, s.move_timeout, s.reconnect_grace),
            (
                Duration::from_secs(10),
                Duration::from_secs(30),
                Duration::from_secs(30)
            )
        );
        assert_eq!(s.max_line, 4096);
    }

    #[test]
    fn server_every_key() {
        let sc = parse(
            "mode: serve\nserver:\n  bind: 127.0.0.1:0\n  games: [connect4-classic]\n  countdown: 500ms\n  \
             move_timeout: 2s\n  reconnect_grace: 0\n  hello_timeout: 1s\n  max_line: 1024\n  max_connections: 10\n  \
             max_connections_per_address: 3\n  max_lines_per_second: 50\n  records: out/games.jsonl\n",
        )
        .unwrap();
        let s = sc.server.unwrap();
        assert_eq!(s.bind.port(), 0);
        assert_eq!(s.games, vec![GameKind::Connect4Classic]);
        assert_eq!(s.countdown, Duration::from_millis(500));
        assert_eq!(s.move_timeout, Duration::from_secs(2));
        assert_eq!(s.reconnect_grace, Duration::ZERO);
        assert_eq!(s.hello_timeout, Duration::from_secs(1));
        assert_eq!(
            (
                s.max_line,
                s.max_connections,
                s.max_connections_per_address,
                s.max_lines_per_second
            ),
            (1024, 10, 3, 50)
        );
        assert_eq!(s.records, Some(PathBuf::from("out/games.jsonl")));
    }

    #[test]
    fn server_errors_are_located_and_say_what_is_allowed() {
        let e = err("server:\n  bnd: 1.2.3.4:5\n");
        assert_eq!((e.line, e.column), (2, 3));
        assert!(e.message.contains("did you mean `bind`"), "{e}");
        let e = err("server:\n  bind: localhost\n");
        assert_eq!(e.line, 2);
        assert!(e.message.contains("IP address and port"), "{e}");
        let e = err("server:\n  games: [connect5]\n");
        assert!(
            e.message.contains("connect5") && e.message.contains("connect4-classic"),
            "{e}"
        );
        let e = err("server:\n  games: [connect4, connect4]\n");
        assert!(e.message.contains("twice"), "{e}");
        let e = err("server:\n  games: []\n");
        assert!(e.message.contains("at least one"), "{e}");
        let e = err("server:\n  move_timeout: 0s\n");
        assert!(e.message.contains("more than zero"), "{e}");
        let e = err("server:\n  countdown: soon\n");
        assert!(e.message.contains("countdown"), "{e}");
        let e = err("server:\n  max_line: 10\n");
        assert!(e.message.contains("at least 256"), "{e}");
        let e = err("server: 7878\n");
        assert!(e.message.contains("must be a mapping"), "{e}");
    }

    #[test]
    fn join_defaults_and_keys() {
        let sc = parse("mode: join\njoin: {}\n").unwrap();
        assert_eq!(sc.join.unwrap(), JoinSettings::default());
        let sc = parse("mode: join\njoin: { server: 'localhost:9000', game: connect4-classic, matches: 3 }\n").unwrap();
        let j = sc.join.unwrap();
        assert_eq!(
            (j.server.as_str(), j.game, j.matches),
            ("localhost:9000", GameKind::Connect4Classic, 3)
        );
    }

    #[test]
    fn join_errors() {
        let e = err("join: { server: nowhere }\n");
        assert!(e.message.contains("host and port"), "{e}");
        let e = err("join: { matches: 0 }\n");
        assert!(e.message.contains("at least 1"), "{e}");
        let e = err("join: { gme: connect4 }\n");
        assert!(e.message.contains("did you mean `game`"), "{e}");
    }

    #[test]
    fn boards_follow_the_protocol_table() {
        let sizes: Vec<(usize, usize)> = (3..=9)
            .map(|n| {
                let b = GameKind::Connect4.board(n);
                (b.cols, b.rows)
            })
            .collect();
        assert_eq!(
            sizes,
            vec![(7, 6), (8, 7), (9, 8), (10, 9), (11, 10), (12, 11), (13, 12)]
        );
        let c = GameKind::Connect4Classic.board(2);
        assert_eq!((c.cols, c.rows, c.win_length), (7, 6, 4));
        for g in GameKind::ALL {
            assert_eq!(GameKind::parse(g.as_str()), Some(g));
            g.board(g.max_players()).validate().unwrap();
        }
        assert_eq!(GameKind::parse("chess"), None);
    }
}
