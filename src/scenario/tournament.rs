//! The `tournament` and `report` sections (mode: tournament).
//!
//! | key | type | default |
//! |---|---|---|
//! | `tournament.schedule` | `round-robin` \| `double-round-robin` \| `gauntlet` | `round-robin` |
//! | `tournament.games_per_pair` | even whole number ≥ 2 | `10` |
//! | `tournament.openings` | `{plies: N}` or `{file: PATH}` | `{plies: 2}` |
//! | `tournament.concurrency` | whole number ≥ 1 | the number of cores |
//! | `tournament.anchor` | `{player: NAME, elo: NUMBER}` | none: ratings centred on the pool average |
//! | `tournament.sprt` | `{elo0: N, elo1: N, alpha: 0.05, beta: 0.05, model: normalized \| logistic}` | none: play every game |
//! | `report.dir` | path | `reports/<scenario file name>` |
//! | `report.formats` | list of `markdown`, `json`, `csv`, `html` | all four |

use super::tree::{Loc, Node};
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
    /// A sequential test between the two players (`games_per_pair` is then the cap).
    pub sprt: Option<SprtSettings>,
}

/// How `elo0` and `elo1` of an SPRT are measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SprtModel {
    /// Normalized Elo (fishtest's and fastchess's default): independent of the draw rate.
    Normalized,
    /// Plain logistic Elo.
    Logistic,
}

pub const SPRT_MODELS: [&str; 2] = ["normalized", "logistic"];

impl SprtModel {
    pub fn as_str(self) -> &'static str {
        SPRT_MODELS[self as usize]
    }
}

/// `tournament.sprt`: H0 "elo ≤ elo0" against H1 "elo ≥ elo1", the first
/// player's Elo over the second's, with error rates alpha and beta.
#[derive(Clone, Debug, PartialEq)]
pub struct SprtSettings {
    pub elo0: f64,
    pub elo1: f64,
    pub alpha: f64,
    pub beta: f64,
    pub model: SprtModel,
}

/// The cap on games when `sprt` is given without `games_per_pair`.
pub const SPRT_DEFAULT_CAP: u32 = 10000;

impl Default for TournamentSettings {
    fn default() -> Self {
        TournamentSettings {
            schedule: Schedule::RoundRobin,
            games_per_pair: 10,
            openings: OpeningSuite::Plies(2),
            concurrency: std::thread::available_parallelism().map_or(2, |n| n.get() as u32),
            anchor: None,
            sprt: None,
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
/// The formats [`REPORT_FORMATS`] names, in its order.
pub const REPORT_FORMAT_VALUES: [ReportFormat; 4] = [
    ReportFormat::Markdown,
    ReportFormat::Json,
    ReportFormat::Csv,
    ReportFormat::Html,
];

impl ReportFormat {
    /// The word a scenario writes for this format.
    pub fn as_str(self) -> &'static str {
        REPORT_FORMATS[REPORT_FORMAT_VALUES
            .iter()
            .position(|f| *f == self)
            .expect("every format has its word")]
    }
}

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

const TOURNAMENT_KEYS: [&str; 6] = [
    "schedule",
    "games_per_pair",
    "openings",
    "concurrency",
    "anchor",
    "sprt",
];
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
    if let Some((_, v)) = get(entries, "sprt") {
        t.sprt = Some(parse_sprt(doc, v)?);
        if get(entries, "games_per_pair").is_none() {
            t.games_per_pair = SPRT_DEFAULT_CAP;
        }
    }
    Ok(t)
}

fn parse_sprt(doc: Doc, v: &Node) -> Result<SprtSettings, ScenarioError> {
    let shape = "`{elo0: 0, elo1: 10, alpha: 0.05, beta: 0.05, model: normalized}`";
    let e = doc.mapping("sprt", v, shape)?;
    doc.check_keys(e, &["elo0", "elo1", "alpha", "beta", "model"], " in `sprt`")?;
    let number = |key: &str, default: Option<f64>| -> Result<(f64, Loc), ScenarioError> {
        match get(e, key) {
            None => default.map(|d| (d, v.pos())).ok_or_else(|| {
                doc.err(
                    v.pos(),
                    format!("`sprt` needs `{key}`, like {shape}; allowed keys: elo0, elo1, alpha, beta, model"),
                )
            }),
            Some((_, n)) => {
                let text = doc.string(key, n)?;
                text.parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .map(|x| (x, n.pos()))
                    .ok_or_else(|| doc.err(n.pos(), format!("`{key}` must be a number, got `{text}`")))
            }
        }
    };
    let (elo0, _) = number("elo0", None)?;
    let (elo1, p1) = number("elo1", None)?;
    if elo1 <= elo0 {
        return Err(doc.err(p1, format!("`elo1` must be greater than `elo0` ({elo0}), got {elo1}")));
    }
    let mut rates = [0.0; 2];
    for (i, key) in ["alpha", "beta"].into_iter().enumerate() {
        let (x, p) = number(key, Some(0.05))?;
        if !(x > 0.0 && x < 0.5) {
            return Err(doc.err(
                p,
                format!("`{key}` is an error rate: more than 0 and less than 0.5, got {x}"),
            ));
        }
        rates[i] = x;
    }
    let model = match get(e, "model") {
        None => SprtModel::Normalized,
        Some((_, m)) => {
            [SprtModel::Normalized, SprtModel::Logistic][doc.choice("model", "SPRT model", m, &SPRT_MODELS)?]
        }
    };
    Ok(SprtSettings {
        elo0,
        elo1,
        alpha: rates[0],
        beta: rates[1],
        model,
    })
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
            let f = REPORT_FORMAT_VALUES[doc.choice("formats", "report format", item, &REPORT_FORMATS)?];
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
    players_pos: Loc,
    anchor_pos: Loc,
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
    if t.sprt.is_some() && players.len() != 2 {
        return Err(doc.err(
            players_pos,
            format!(
                "`tournament.sprt` tests one player against another: it needs exactly 2 players, got {}",
                players.len()
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

    #[test]
    fn sprt_section() {
        let two = "players: [{kind: random, name: A}, {kind: random, name: B}]\n";
        let s = parse(&format!(
            "mode: tournament\ntournament:\n  sprt: {{elo0: 0, elo1: 5, model: logistic}}\n{two}"
        ))
        .unwrap();
        let t = s.tournament.unwrap();
        assert_eq!(
            t.sprt,
            Some(SprtSettings {
                elo0: 0.0,
                elo1: 5.0,
                alpha: 0.05,
                beta: 0.05,
                model: SprtModel::Logistic
            })
        );
        assert_eq!(t.games_per_pair, SPRT_DEFAULT_CAP);
        let e = parse(&format!(
            "mode: tournament\ntournament:\n  sprt: {{elo0: 0, elo1: 5, model: bayes}}\n{two}"
        ))
        .unwrap_err();
        assert_eq!((e.line, e.column), (3, 35), "{e}");
        assert!(e.message.contains("allowed: normalized, logistic"), "{e}");
        let e = parse(&format!(
            "mode: tournament\ntournament:\n  sprt:\n    elo0: 5\n    elo1: 0\n{two}"
        ))
        .unwrap_err();
        assert_eq!(e.line, 5, "{e}");
        let e = parse(&format!(
            "mode: tournament\ntournament:\n  sprt: {{elo0: 0, elo1: 5, alpha: 1}}\n{two}"
        ))
        .unwrap_err();
        assert!(e.message.contains("error rate"), "{e}");
        let e = parse(&format!("mode: tournament\ntournament:\n  sprt: {{elo1: 5}}\n{two}")).unwrap_err();
        assert!(e.message.contains("needs `elo0`"), "{e}");
        let e = parse(&format!(
            "mode: tournament\ntournament:\n  sprt: {{elo0: 0, elo1: 5, alfa: 0.1}}\n{two}"
        ))
        .unwrap_err();
        assert!(e.message.contains("allowed: elo0, elo1, alpha"), "{e}");
        let e = parse(
            "mode: tournament\ntournament: {sprt: {elo0: 0, elo1: 5}}\nplayers: [{kind: random}, {kind: random}, {kind: leftmost}]\n",
        )
        .unwrap_err();
        assert!(e.message.contains("exactly 2 players"), "{e}");
    }
}
