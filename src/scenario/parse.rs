//! Reading a scenario file into a [`Scenario`], with every default filled in
//! and every error located at `FILE:LINE:COLUMN`.
//!
//! # Keys and defaults
//! The reference for users, every key of every mode with its default, is
//! docs/scenarios.md; this table is the parser's own summary of the common keys.
//! Every key is optional. A key with an empty value (`board:`) counts as
//! not written. Unknown keys are errors everywhere, with the closest known
//! key suggested.
//!
//! | key | type | default |
//! |---|---|---|
//! | `name` | string | the file name without its extension |
//! | `mode` | `match` \| `tournament` \| `train` \| `serve` \| `join` \| `web` | `match` |
//! | `seed` | whole number (u64) | `0` |
//! | `board` | `{rows, cols, win_length}` | `{rows: 6, cols: 7, win_length: 4}`; checked by [`BoardConfig::validate`] |
//! | `limits.move_time` | duration (`30s`, `500ms`, `2m`, `1h`, bare seconds) | `30s` |
//! | `limits.max_invalid_moves` | whole number ≥ 1 | `5` |
//! | `render` | `emoji` \| `fullwidth` \| `ascii` \| `none` | `emoji` |
//! | `color` | `auto` \| `always` \| `never` | `auto` |
//! | `players` | list of player entries | two `{kind: random}` players |
//! | `match.games` | whole number ≥ 1 | `1` |
//! | `match.swap_colors` | `true` \| `false` | `true` |
//! | `match.first` *(c4sim)* | `seat` (the first entry) \| `ask` (the person at the terminal chooses before game 1; needs a `human` player) \| `random` (seeded) | `seat` |
//! | `tournament`, `report`, `train`, `server`, `join`, `web` | mapping, typed by each mode's own parser | absent |
//!
//! With `mode: match` there must be 2 to 9 players.
//!
//! # Player entries
//! `use` (a profile `players/NAME.yaml`; keys beside it override the
//! profile's), `name` (the profile name if `use`d, else the kind; repeated
//! names get " 2", " 3", ...), `kind` (required), `move_time` (overrides
//! `limits.move_time`), and each kind's own keys. Kinds and their keys are
//! not listed here: they come from the registry (`players::kinds::KINDS`
//! and each kind's `KindKeys`), which also words the errors; docs/scenarios.md
//! ("Kinds") documents them for users.
//!
//! A key that does not apply to the player's kind is an error. Profiles are
//! looked up in `players/` beside the scenario, then in `players/` of the
//! scenario's parent directory, then in `./players`.
//!
//! The sections of the other modes are parsed by their own modules:
//! `tournament.rs` (`tournament`, `report`), `train.rs` (`train`) and
//! `net.rs` (`server`, `join`) and `web.rs` (`web`), with the same located errors.

use super::players::{self, ProfileLookup};
use super::tree::{self, Loc, Node};
use super::types::{
    ColorChoice, FirstMover, Limits, MatchSettings, Mode, PlayerKind, PlayerSpec, RenderStyle, Scenario,
};
use super::value::{get, Doc};
use super::ScenarioError;
use crate::game::{BoardConfig, DEFAULT_MAX_INVALID, MAX_SEATS, MIN_SEATS};
use crate::players::kinds::RunsAs;
use std::path::Path;
use std::time::Duration;

const TOP_KEYS: [&str; 15] = [
    "name",
    "mode",
    "seed",
    "board",
    "limits",
    "render",
    "color",
    "players",
    "match",
    "tournament",
    "report",
    "train",
    "server",
    "join",
    "web",
];
const BOARD_KEYS: [&str; 3] = ["rows", "cols", "win_length"];
const LIMITS_KEYS: [&str; 2] = ["move_time", "max_invalid_moves"];
const MATCH_KEYS: [&str; 3] = ["games", "swap_colors", "first"];
// Each word list and the values it names, in the same order: the parser
// reads a word's index, `resolved` writes a value's word.
const FIRSTS: [&str; 3] = ["seat", "ask", "random"];
pub(super) const FIRST_VALUES: [FirstMover; 3] = [FirstMover::Seat, FirstMover::Ask, FirstMover::Random];
const MODES: [&str; 6] = ["match", "tournament", "train", "serve", "join", "web"];
pub(super) const MODE_VALUES: [Mode; 6] = [
    Mode::Match,
    Mode::Tournament,
    Mode::Train,
    Mode::Serve,
    Mode::Join,
    Mode::Web,
];
const RENDERS: [&str; 4] = ["emoji", "fullwidth", "ascii", "none"];
pub(super) const RENDER_VALUES: [RenderStyle; 4] = [
    RenderStyle::Emoji,
    RenderStyle::Fullwidth,
    RenderStyle::Ascii,
    RenderStyle::None,
];
const COLORS: [&str; 3] = ["auto", "always", "never"];
pub(super) const COLOR_VALUES: [ColorChoice; 3] = [ColorChoice::Auto, ColorChoice::Always, ColorChoice::Never];

/// The word of `value` in a word list and its values (see the lists above).
pub(super) fn word_of<T: PartialEq>(words: &[&'static str], values: &[T], value: &T) -> &'static str {
    words[values
        .iter()
        .position(|v| v == value)
        .expect("every value has its word")]
}

/// The words of [`MODE_VALUES`], [`RENDER_VALUES`], [`COLOR_VALUES`], [`FIRST_VALUES`].
pub(super) fn mode_word(m: Mode) -> &'static str {
    word_of(&MODES, &MODE_VALUES, &m)
}
pub(super) fn render_word(r: RenderStyle) -> &'static str {
    word_of(&RENDERS, &RENDER_VALUES, &r)
}
pub(super) fn color_word(c: ColorChoice) -> &'static str {
    word_of(&COLORS, &COLOR_VALUES, &c)
}
pub(super) fn first_word(f: FirstMover) -> &'static str {
    word_of(&FIRSTS, &FIRST_VALUES, &f)
}

/// `limits.move_time` when not given.
pub const DEFAULT_MOVE_TIME: Duration = Duration::from_secs(30);

/// Reads and parses a scenario file.
pub fn load(path: &Path) -> Result<Scenario, ScenarioError> {
    let src = std::fs::read_to_string(path)
        .map_err(|e| ScenarioError::at(path, Loc::START, format!("cannot read the scenario file: {e}")))?;
    parse_str(&src, path)
}

/// Parses scenario text. `path` is used for messages, the default `name`
/// and the profile lookup; the file itself is not read.
pub fn parse_str(src: &str, path: &Path) -> Result<Scenario, ScenarioError> {
    let doc = Doc { file: path };
    let t = tree::parse(src).map_err(|(pos, info)| doc.err(pos, format!("invalid YAML: {info}")))?;
    if let Some(p) = t.second_doc {
        return Err(doc.err(
            p,
            "a scenario file holds one YAML document, but a second one starts here",
        ));
    }
    let top = top_entries(doc, &t.root)?;
    doc.check_keys(top, &TOP_KEYS, " at the top level")?;

    let name = match get(top, "name") {
        Some((_, v)) => doc.nonempty_string("name", v)?,
        None => path
            .file_stem()
            .map_or_else(|| "scenario".to_string(), |s| s.to_string_lossy().into_owned()),
    };
    let mode = match get(top, "mode") {
        Some((_, v)) => MODE_VALUES[doc.choice("mode", "mode", v, &MODES)?],
        None => Mode::Match,
    };
    let seed = match get(top, "seed") {
        Some((_, v)) => doc.uint("seed", v, 0, u64::MAX)?,
        None => 0,
    };
    let board = parse_board(doc, top)?;
    let limits = parse_limits(doc, top)?;
    let render = match get(top, "render") {
        Some((_, v)) => RENDER_VALUES[doc.choice("render", "render style", v, &RENDERS)?],
        None => RenderStyle::Emoji,
    };
    let color = match get(top, "color") {
        Some((_, v)) => COLOR_VALUES[doc.choice("color", "color choice", v, &COLORS)?],
        None => ColorChoice::Auto,
    };
    let players = parse_seats(doc, top, mode, path)?;
    let match_settings = parse_match(doc, top, &players)?;

    // Each mode's section has its own typed parser, owned by that mode.
    let tournament = section(top, "tournament", |v| super::tournament::parse_tournament(doc, v))?;
    let report = section(top, "report", |v| super::tournament::parse_report(doc, v))?;
    let train = section(top, "train", |v| super::train::parse_train(doc, v, board))?;
    let server = section(top, "server", |v| super::net::parse_server(doc, v))?;
    let join = section(top, "join", |v| super::net::parse_join(doc, v))?;
    let web = section(top, "web", |v| super::web::parse_web(doc, v))?;
    if mode == Mode::Tournament {
        check_tournament_players(doc, src, top, &tournament.clone().unwrap_or_default(), &players)?;
    }

    Ok(Scenario {
        path: path.to_path_buf(),
        name,
        mode,
        seed,
        board,
        limits,
        render,
        color,
        players,
        match_settings,
        tournament,
        report,
        train,
        server,
        join,
        web,
    })
}

/// The top level's entries: a mapping, or nothing for an empty file.
fn top_entries<'a>(doc: Doc, root: &'a Option<Node>) -> Result<&'a [(Node, Node)], ScenarioError> {
    match root {
        Some(Node::Map { entries, .. }) => Ok(entries),
        Some(n) if !n.is_null() => Err(doc.err(
            n.pos(),
            format!(
                "a scenario must be a mapping of keys such as `mode: match` on their own lines, got {}; allowed keys: {}",
                n.describe(),
                TOP_KEYS.join(", ")
            ),
        )),
        _ => Ok(&[]),
    }
}

/// The `players` list (or each mode's default), named apart, with a count
/// the mode cannot use reported at the `players` key.
fn parse_seats(doc: Doc, top: &[(Node, Node)], mode: Mode, path: &Path) -> Result<Vec<PlayerSpec>, ScenarioError> {
    let mut players = match get(top, "players") {
        Some((_, v)) => players::parse_list(doc, v, &ProfileLookup::for_scenario(path))?,
        // `mode: web` plays the shipped AlphaZero unless told otherwise.
        None if mode == Mode::Web => vec![players::parse_player_spec_with(
            super::web::DEFAULT_PLAYER,
            &ProfileLookup::for_scenario(path),
        )?],
        None => vec![
            PlayerSpec::of_kind(PlayerKind::Random),
            PlayerSpec::of_kind(PlayerKind::Random),
        ],
    };
    players::dedupe_names(&mut players);
    // A player count a mode cannot use is reported at the `players` key.
    let count_error = match mode {
        Mode::Match if !(MIN_SEATS..=MAX_SEATS).contains(&players.len()) => Some(format!(
            "`mode: match` needs {MIN_SEATS} to {MAX_SEATS} players, got {}",
            players.len()
        )),
        Mode::Web if players.len() != 1 => Some(format!(
            "`mode: web` needs one player (the one people play against), got {}",
            players.len()
        )),
        _ => None,
    };
    if let Some(msg) = count_error {
        let pos = top
            .iter()
            .find(|(k, _)| k.scalar() == Some("players"))
            .map_or(Loc::START, |(k, _)| k.pos());
        return Err(doc.err(pos, msg));
    }
    Ok(players)
}

/// A tournament's players checked against its section (anchor, sizes),
/// each error at the key that causes it.
fn check_tournament_players(
    doc: Doc,
    src: &str,
    top: &[(Node, Node)],
    tournament: &super::tournament::TournamentSettings,
    players: &[PlayerSpec],
) -> Result<(), ScenarioError> {
    let key_pos = |key: &str| top.iter().find(|(k, _)| k.scalar() == Some(key)).map(|(k, _)| k.pos());
    let players_pos = key_pos("players").unwrap_or(Loc::START);
    let anchor_pos = super::locate(src, &["tournament".into(), "anchor".into()])
        .map_or(players_pos, |(line, column)| Loc { line, column });
    super::tournament::check_players(doc, players_pos, anchor_pos, tournament, players)
}

/// A mode's section, parsed by its own parser when the key is present.
fn section<T>(
    top: &[(Node, Node)],
    key: &str,
    parse: impl FnOnce(&Node) -> Result<T, ScenarioError>,
) -> Result<Option<T>, ScenarioError> {
    get(top, key).map(|(_, v)| parse(v)).transpose()
}

/// `board`, checked against docs/rules.md. The error points at the key the
/// check names (`win_length` too large points at `win_length`), or at
/// `board` when that key was left to its default.
fn parse_board(doc: Doc, top: &[(Node, Node)]) -> Result<BoardConfig, ScenarioError> {
    let Some((board_key, v)) = get(top, "board") else {
        return Ok(BoardConfig::default());
    };
    let entries = doc.mapping("board", v, "{rows: 6, cols: 7, win_length: 4}")?;
    doc.check_keys(entries, &BOARD_KEYS, " in `board`")?;
    let mut cfg = BoardConfig::default();
    for key in BOARD_KEYS {
        if let Some((_, v)) = get(entries, key) {
            let n = doc.uint(key, v, 0, u64::MAX)?;
            let n = usize::try_from(n).unwrap_or(usize::MAX);
            match key {
                "rows" => cfg.rows = n,
                "cols" => cfg.cols = n,
                _ => cfg.win_length = n,
            }
        }
    }
    if let Err(e) = cfg.validate() {
        let culprit = e.key();
        let written = culprit.and_then(|k| get(entries, k));
        let pos = written.map_or(board_key.pos(), |(k, _)| k.pos());
        let msg = e.to_string();
        let mut msg = match culprit {
            Some(k) => format!("`{k}`{}", &msg[k.len()..]),
            None => msg,
        };
        if let (Some(k), None) = (culprit, written) {
            let default = BoardConfig::default();
            let d = match k {
                "rows" => default.rows,
                "cols" => default.cols,
                _ => default.win_length,
            };
            msg.push_str(&format!(" (`{k}` was not given and defaults to {d})"));
        }
        return Err(doc.err(pos, msg));
    }
    Ok(cfg)
}

fn parse_limits(doc: Doc, top: &[(Node, Node)]) -> Result<Limits, ScenarioError> {
    let mut limits = Limits {
        move_time: DEFAULT_MOVE_TIME,
        max_invalid_moves: DEFAULT_MAX_INVALID,
    };
    let Some((_, v)) = get(top, "limits") else {
        return Ok(limits);
    };
    let entries = doc.mapping("limits", v, "{move_time: 30s, max_invalid_moves: 5}")?;
    doc.check_keys(entries, &LIMITS_KEYS, " in `limits`")?;
    if let Some((_, v)) = get(entries, "move_time") {
        limits.move_time = doc.duration("move_time", v)?;
        if limits.move_time.is_zero() {
            return Err(doc.err(v.pos(), "`move_time` must be more than zero, like 30s or 500ms"));
        }
    }
    if let Some((_, v)) = get(entries, "max_invalid_moves") {
        limits.max_invalid_moves = doc.u32_at_least("max_invalid_moves", v, 1)?;
    }
    Ok(limits)
}

fn parse_match(doc: Doc, top: &[(Node, Node)], players: &[PlayerSpec]) -> Result<MatchSettings, ScenarioError> {
    let mut m = MatchSettings {
        games: 1,
        swap_colors: true,
        first: FirstMover::Seat,
    };
    let Some((_, v)) = get(top, "match") else {
        return Ok(m);
    };
    let entries = doc.mapping("match", v, "{games: 10, swap_colors: true}")?;
    doc.check_keys(entries, &MATCH_KEYS, " in `match`")?;
    if let Some((_, v)) = get(entries, "games") {
        m.games = doc.u32_at_least("games", v, 1)?;
    }
    if let Some((_, v)) = get(entries, "swap_colors") {
        m.swap_colors = doc.bool("swap_colors", v)?;
    }
    if let Some((_, v)) = get(entries, "first") {
        m.first = FIRST_VALUES[doc.choice("first", "first mover", v, &FIRSTS)?];
        if m.first == FirstMover::Ask && !players.iter().any(|p| p.kind.runs_as() == RunsAs::Human) {
            return Err(doc.err(
                v.pos(),
                "`first: ask` needs a `human` player to ask; allowed: seat, ask, random",
            ));
        }
    }
    Ok(m)
}
