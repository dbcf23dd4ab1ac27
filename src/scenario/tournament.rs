//! The `tournament` and `report` sections (mode: tournament).
//!
//! | key | type | default |
//! |---|---|---|
//! | `tournament.schedule` | `round-robin` \| `double-round-robin` \| `gauntlet` | `round-robin` |
//! | `tournament.games_per_pair` | even whole number ≥ 2 | `10` |
//! | `tournament.openings` | `{plies: N}` or `{file: PATH}` | `{plies: 2}` |
//! | `tournament.concurrency` | whole number ≥ 1 | the number of cores |
//! | `tournament.anchor` | `{player: NAME, elo: NUMBER}` | none: ratings centred on the pool average |
//! | `report.dir` | path | `reports/<scenario file name>` |
//! | `report.formats` | list of `markdown`, `json`, `csv`, `html` | all four |

use super::tree::{Node, Pos};
use super::value::{get, Doc};
use super::{PlayerSpec, ScenarioError};
use crate::players::kinds::RunsAs;
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Schedule {
    RoundRobin,
    DoubleRoundRobin,
    Gauntlet,
}

impl Schedule {
    pub fn as_str(self) -> &'static str {
        match self {
            Schedule::RoundRobin => "round-robin",
            Schedule::DoubleRoundRobin => "double-round-robin",
            Schedule::Gauntlet => "gauntlet",
        }
    }
}

/// Where the openings of a tournament come from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OpeningSuite {
    /// Every legal sequence of this many plies that does not end the game, in a seeded order.
    Plies(u32),
    /// One move string a line (columns from 1); resolved against the scenario's directory.
    File(PathBuf),
}

/// Typed `tournament:` settings with their defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct TournamentSettings {
    pub schedule: Schedule,
    pub games_per_pair: u32,
    pub openings: OpeningSuite,
    pub concurrency: u32,
    /// A player whose rating is fixed, and the rating.
    pub anchor: Option<(String, f64)>,
}

impl Default for TournamentSettings {
    fn default() -> Self {
        TournamentSettings {
            schedule: Schedule::RoundRobin,
            games_per_pair: 10,
            openings: OpeningSuite::Plies(2),
            concurrency: std::thread::available_parallelism().map_or(2, |n| n.get() as u32),
            anchor: None,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReportFormat {
    Markdown,
    Json,
    Csv,
    Html,
}

pub const REPORT_FORMATS: [&str; 4] = ["markdown", "json", "csv", "html"];

/// Typed `report:` settings; `dir: None` means `reports/<scenario file name>`.
#[derive(Clone, Debug, PartialEq)]
pub struct ReportSettings {
    pub dir: Option<PathBuf>,
    pub formats: Vec<ReportFormat>,
}

impl Default for ReportSettings {
    fn default() -> Self {
        ReportSettings {
            dir: None,
            formats: vec![
                ReportFormat::Markdown,
                ReportFormat::Json,
                ReportFormat::Csv,
                ReportFormat::Html,
            ],
        }
    }
}

impl ReportSettings {
    /// The report directory for a scenario file.
    pub fn dir_for(&self, scenario: &Path) -> PathBuf {
        self.dir.clone().unwrap_or_else(|| {
            let stem = scenario
                .file_stem()
                .map_or_else(|| "tournament".into(), |s| s.to_string_lossy().into_owned());
            PathBuf::from("reports").join(stem)
        })
    }
}

const TOURNAMENT_KEYS: [&str; 5] = ["schedule", "games_per_pair", "openings", "concurrency", "anchor"];
const SCHEDULES: [&str; 3] = ["round-robin", "double-round-robin", "gauntlet"];

pub(crate) fn parse_tournament(doc: Doc, v: &Node) -> Result<TournamentSettings, ScenarioError> {
    let entries = doc.mapping("tournament", v, "`tournament:` followed by indented keys")?;
    doc.check_keys(entries, &TOURNAMENT_KEYS, " in `tournament`")?;
    let mut t = TournamentSettings::default();
    if let Some((_, v)) = get(entries, "schedule") {
        t.schedule = [Schedule::RoundRobin, Schedule::DoubleRoundRobin, Schedule::Gauntlet]
            [doc.choice("schedule", "schedule", v, &SCHEDULES)?];
    }
    if let Some((_, v)) = get(entries, "games_per_pair") {
        let n = doc.u32_at_least("games_per_pair", v, 2)?;
        if n % 2 != 0 {
            return Err(doc.err(
                v.pos(),
                format!("`games_per_pair` must be even (each opening is played once with each colour order), got {n}"),
            ));
        }
        t.games_per_pair = n;
    }
    if let Some((_, v)) = get(entries, "openings") {
        let o = doc.mapping("openings", v, "`{plies: 2}` or `{file: openings.txt}`")?;
        doc.check_keys(o, &["plies", "file"], " in `openings`")?;
        t.openings = match (get(o, "plies"), get(o, "file")) {
            (Some((_, p)), None) => OpeningSuite::Plies(doc.uint("plies", p, 0, 8)? as u32),
            (None, Some((_, f))) => OpeningSuite::File(PathBuf::from(doc.nonempty_string("file", f)?)),
            _ => return Err(doc.err(v.pos(), "`openings` takes exactly one of `plies` or `file`")),
        };
    }
    if let Some((_, v)) = get(entries, "concurrency") {
        t.concurrency = doc.uint("concurrency", v, 1, 256)? as u32;
    }
    if let Some((_, v)) = get(entries, "anchor") {
        let a = doc.mapping("anchor", v, "`{player: NAME, elo: 1500}`")?;
        doc.check_keys(a, &["player", "elo"], " in `anchor`")?;
        let Some((_, p)) = get(a, "player") else {
            return Err(doc.err(
                v.pos(),
                "`anchor` needs `player`: the name of the player whose rating is fixed",
            ));
        };
        let name = doc.nonempty_string("player", p)?;
        let elo = match get(a, "elo") {
            None => 0.0,
            Some((_, e)) => {
                let text = doc.string("elo", e)?;
                text.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .ok_or_else(|| doc.err(e.pos(), format!("`elo` must be a number, got `{text}`")))?
            }
        };
        t.anchor = Some((name, elo));
    }
    Ok(t)
}

pub(crate) fn parse_report(doc: Doc, v: &Node) -> Result<ReportSettings, ScenarioError> {
    let entries = doc.mapping("report", v, "`report:` followed by indented keys")?;
    doc.check_keys(entries, &["dir", "formats"], " in `report`")?;
    let mut r = ReportSettings::default();
    if let Some((_, v)) = get(entries, "dir") {
        r.dir = Some(PathBuf::from(doc.nonempty_string("dir", v)?));
    }
    if let Some((_, v)) = get(entries, "formats") {
        let Node::Seq { items, .. } = v else {
            return Err(doc.err(
                v.pos(),
                format!(
                    "`formats` must be a list like [markdown, html]; allowed: {}",
                    REPORT_FORMATS.join(", ")
                ),
            ));
        };
        r.formats.clear();
        for item in items {
            let f = [
                ReportFormat::Markdown,
                ReportFormat::Json,
                ReportFormat::Csv,
                ReportFormat::Html,
            ][doc.choice("formats", "report format", item, &REPORT_FORMATS)?];
            if !r.formats.contains(&f) {
                r.formats.push(f);
            }
        }
    }
    Ok(r)
}

/// Checks that need the players: enough of them, no people (a tournament
/// runs unattended, games in parallel), and an anchor that exists.
pub(crate) fn check_players(
    doc: Doc,
    players_pos: Pos,
    anchor_pos: Pos,
    t: &TournamentSettings,
    players: &[PlayerSpec],
) -> Result<(), ScenarioError> {
    if players.len() < 2 {
        return Err(doc.err(
            players_pos,
            format!("a tournament needs at least 2 players, got {}", players.len()),
        ));
    }
    if let Some(p) = players.iter().find(|p| p.kind.runs_as() == RunsAs::Human) {
        return Err(doc.err(
            players_pos,
            format!(
                "`{}` is a human player; tournaments run unattended: use mode: match to play",
                p.name
            ),
        ));
    }
    if let Some((name, _)) = &t.anchor {
        if !players.iter().any(|p| &p.name == name) {
            let names: Vec<&str> = players.iter().map(|p| p.name.as_str()).collect();
            return Err(doc.err(
                anchor_pos,
                format!(
                    "anchor player `{name}` is not in `players`; players: {}",
                    names.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::scenario::tournament::*;
    use crate::scenario::{parse_str, Mode};

    fn parse(src: &str) -> Result<crate::scenario::Scenario, ScenarioError> {
        parse_str(src, Path::new("t.yaml"))
    }

    #[test]
    fn defaults_and_full_section() {
        let s = parse("mode: tournament\n").unwrap();
        assert_eq!(s.mode, Mode::Tournament);
        assert!(s.tournament.is_none());
        let s = parse(
            "mode: tournament\ntournament:\n  schedule: gauntlet\n  games_per_pair: 4\n  openings: {plies: 1}\n  concurrency: 3\n  anchor: {player: random, elo: 1000}\nreport: {dir: out/r, formats: [json, html]}\n",
        )
        .unwrap();
        let t = s.tournament.unwrap();
        assert_eq!(
            (t.schedule, t.games_per_pair, t.concurrency),
            (Schedule::Gauntlet, 4, 3)
        );
        assert_eq!(t.openings, OpeningSuite::Plies(1));
        assert_eq!(t.anchor, Some(("random".into(), 1000.0)));
        let r = s.report.unwrap();
        assert_eq!(r.dir, Some(PathBuf::from("out/r")));
        assert_eq!(r.formats, vec![ReportFormat::Json, ReportFormat::Html]);
        assert_eq!(
            ReportSettings::default().dir_for(Path::new("scenarios/rr.yaml")),
            PathBuf::from("reports/rr")
        );
    }

    #[test]
    fn errors_are_located() {
        let e = parse("mode: tournament\ntournament:\n  games_per_pair: 3\n").unwrap_err();
        assert_eq!((e.line, e.message.contains("even")), (3, true));
        let e = parse("mode: tournament\ntournament:\n  shedule: gauntlet\n").unwrap_err();
        assert!(e.message.contains("did you mean `schedule`"), "{e}");
        let e = parse("mode: tournament\ntournament: {schedule: swiss}\n").unwrap_err();
        assert!(e.message.contains("round-robin"), "{e}");
        let e = parse("mode: tournament\nreport: {formats: [pdf]}\n").unwrap_err();
        assert!(e.message.contains("markdown"), "{e}");
        let e = parse("mode: tournament\ntournament:\n  anchor: {player: Nobody}\n").unwrap_err();
        assert_eq!(e.line, 3, "{e}");
        let e = parse("mode: tournament\nplayers: [{kind: human}, {kind: random}]\n").unwrap_err();
        assert!(e.message.contains("unattended"), "{e}");
        let e = parse("mode: tournament\ntournament: {openings: {plies: 1, file: x}}\n").unwrap_err();
        assert!(e.message.contains("exactly one"), "{e}");
    }
}
