//! Scenario parsing, end to end: text in, `Scenario` or located error out.

use super::players::{parse_player_spec_with, ProfileLookup};
use super::*;
use crate::game::BoardConfig;
use crate::players::alphazero::AlphaZeroSpec;
use crate::players::bots::{MctsSpec, MinimaxSpec};
use crate::players::external::ExternalSpec;
use crate::players::KindSpec;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn parse(src: &str) -> Result<Scenario, ScenarioError> {
    parse_str(src, Path::new("scenarios/test.yaml"))
}

fn err(src: &str) -> ScenarioError {
    match parse(src) {
        Ok(s) => panic!("expected an error, got {s:?}"),
        Err(e) => e,
    }
}

/// Asserts the error's position and that its message contains every part.
fn assert_err(e: &ScenarioError, line: usize, column: usize, parts: &[&str]) {
    assert_eq!((e.line, e.column), (line, column), "position of: {e}");
    for p in parts {
        assert!(e.message.contains(p), "`{p}` missing from: {e}");
    }
}

#[test]
fn full_scenario_with_every_key() {
    let src = r#"
name: Everything
mode: match
seed: 7
board: { rows: 7, cols: 8, win_length: 5 }
limits: { move_time: 2m, max_invalid_moves: 3 }
render: ascii
color: never
players:
  - { name: You, kind: human, move_time: 10m }
  - { kind: minimax, depth: 8 }
  - { kind: mcts, simulations: 50 }
  - kind: alphazero
    model: models/best.onnx
    simulations: 200
    device: cuda
  - name: Mine
    kind: external
    command: [python3, players/example_bot.py]
    cwd: bots
    env: { RUST_LOG: debug, N: 5 }
  - { kind: leftmost }
  - { kind: rightmost }
  - { kind: random }
  - { kind: invalid }
match: { games: 10, swap_colors: false }
tournament: { schedule: round-robin, games_per_pair: 20 }
report: { dir: reports/x, formats: [markdown, json] }
train: { iterations: 50 }
server: { bind: "127.0.0.1:7878" }
join: { server: "127.0.0.1:7878", matches: 5 }
"#;
    let s = parse(src).unwrap();
    assert_eq!(s.path, PathBuf::from("scenarios/test.yaml"));
    assert_eq!(s.name, "Everything");
    assert_eq!(s.mode, Mode::Match);
    assert_eq!(s.seed, 7);
    assert_eq!(
        s.board,
        BoardConfig {
            rows: 7,
            cols: 8,
            win_length: 5
        }
    );
    assert_eq!(
        s.limits,
        Limits {
            move_time: Duration::from_secs(120),
            max_invalid_moves: 3
        }
    );
    assert_eq!(s.render, RenderStyle::Ascii);
    assert_eq!(s.color, ColorChoice::Never);
    assert_eq!(
        s.match_settings,
        MatchSettings {
            games: 10,
            swap_colors: false,
            first: FirstMover::Seat,
        }
    );
    let names: Vec<&str> = s.players.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "You",
            "minimax",
            "mcts",
            "alphazero",
            "Mine",
            "leftmost",
            "rightmost",
            "random",
            "invalid"
        ]
    );
    let p = &s.players;
    assert_eq!(p[0].kind, KindSpec::Human);
    assert_eq!(p[0].move_time, Some(Duration::from_secs(600)));
    assert_eq!(p[1].kind, KindSpec::Minimax(MinimaxSpec { depth: 8 }));
    assert_eq!(p[2].kind, KindSpec::Mcts(MctsSpec { simulations: 50 }));
    assert_eq!(
        p[3].kind,
        KindSpec::Alphazero(AlphaZeroSpec {
            model: Some(PathBuf::from("models/best.onnx")),
            simulations: 200,
            device: "cuda".into(),
            threads: None,
            solver: None,
        })
    );
    let env = [("RUST_LOG", "debug"), ("N", "5")];
    assert_eq!(
        p[4].kind,
        KindSpec::External(ExternalSpec {
            command: vec!["python3".into(), "players/example_bot.py".into()],
            cwd: Some(PathBuf::from("bots")),
            env: env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        })
    );
    // Each mode's section is present; its own module's tests check its keys.
    assert!(s.tournament.is_some() && s.report.is_some() && s.train.is_some());
    assert!(s.server.is_some() && s.join.is_some());
}

#[test]
fn defaults_for_empty_files() {
    for src in ["", "{}", "# nothing\n", "---\n", "board:\nplayers:\n"] {
        let s = parse(src).unwrap_or_else(|e| panic!("{src:?}: {e}"));
        assert_eq!(s.name, "test");
        assert_eq!(s.mode, Mode::Match);
        assert_eq!(s.seed, 0);
        assert_eq!(s.board, BoardConfig::default());
        assert_eq!(
            s.limits,
            Limits {
                move_time: Duration::from_secs(30),
                max_invalid_moves: 5
            }
        );
        assert_eq!(s.render, RenderStyle::Emoji);
        assert_eq!(s.color, ColorChoice::Auto);
        assert_eq!(
            s.match_settings,
            MatchSettings {
                games: 1,
                swap_colors: true,
                first: FirstMover::Seat,
            }
        );
        let names: Vec<&str> = s.players.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["random", "random 2"]);
        assert!(s.players.iter().all(|p| p.kind == KindSpec::Random));
        assert!(s.tournament.is_none() && s.report.is_none() && s.train.is_none());
        assert!(s.server.is_none() && s.join.is_none());
    }
}

#[test]
fn player_defaults_per_kind() {
    let s =
        parse("players: [{kind: minimax}, {kind: mcts}, {kind: alphazero}, {kind: external, command: [x]}]").unwrap();
    let p = &s.players;
    assert_eq!(p[0].kind, KindSpec::Minimax(MinimaxSpec { depth: 4 }));
    assert_eq!(p[1].kind, KindSpec::Mcts(MctsSpec { simulations: 1000 }));
    assert_eq!(
        p[2].kind,
        KindSpec::Alphazero(AlphaZeroSpec {
            model: None,
            simulations: 800,
            device: "auto".into(),
            threads: None,
            solver: None,
        })
    );
    assert_eq!(
        p[3].kind,
        KindSpec::External(ExternalSpec {
            command: vec!["x".into()],
            ..Default::default()
        })
    );
    assert!(p[3].move_time.is_none());
}

#[test]
fn display_form() {
    let e = err("match:\n  gmes: 3\n");
    assert_eq!(
        e.to_string(),
        "scenarios/test.yaml:2:3: unknown key `gmes` in `match`; did you mean `games`? allowed: games, swap_colors, first"
    );
}

#[test]
fn typo_key_suggests_and_locates() {
    let e = err("name: x\nmatch:\n  gmes: 3\n  swap_colors: true\n");
    assert_err(
        &e,
        3,
        3,
        &[
            "unknown key `gmes` in `match`",
            "did you mean `games`?",
            "allowed: games, swap_colors, first",
        ],
    );
    let e = err("seed: 1\ncolour: never\n");
    assert_err(
        &e,
        2,
        1,
        &[
            "unknown key `colour` at the top level",
            "did you mean `color`?",
            "allowed: name, mode",
        ],
    );
    let e = err("board: {rows: 6, win_len: 4}\n");
    assert_err(&e, 1, 18, &["did you mean `win_length`?"]);
    let e = err("players:\n  - {kind: minimax, dept: 3}\n  - {kind: random}\n");
    assert_err(
        &e,
        2,
        21,
        &["unknown key `dept` in player 1 of `players`", "did you mean `depth`?"],
    );
    let e = err("zzz: 1\n");
    assert_err(&e, 1, 1, &["unknown key `zzz` at the top level; allowed: name"]);
}

#[test]
fn wrong_types_locate_the_value() {
    let e = err("mode: match\nmatch:\n  games: ten\n");
    assert_err(&e, 3, 10, &["`games` must be a whole number of at least 1, got `ten`"]);
    let e = err("match: {games: 0}\n");
    assert_err(&e, 1, 16, &["`games` must be at least 1, got 0"]);
    let e = err("board: 5\n");
    assert_err(
        &e,
        1,
        8,
        &["`board` must be a mapping, like {rows: 6, cols: 7, win_length: 4}; got `5`"],
    );
    let e = err("seed: \"7\"\n");
    assert_err(&e, 1, 7, &["`seed` must be a whole number", "quoted string"]);
    let e = err("match: {swap_colors: yes}\n");
    assert_err(&e, 1, 22, &["`swap_colors` must be true or false, got `yes`"]);
    let e = err("limits:\n  move_time: fast\n");
    assert_err(
        &e,
        2,
        14,
        &["`move_time`: invalid duration `fast`", "30s, 500ms, 2m or 1h"],
    );
    let e = err("limits: {move_time: 0s}\n");
    assert_err(&e, 1, 21, &["more than zero"]);
    let e = err("limits: {max_invalid_moves: 0}\n");
    assert_err(&e, 1, 29, &["`max_invalid_moves` must be at least 1, got 0"]);
    let e = err("mode: matc\n");
    assert_err(
        &e,
        1,
        7,
        &["unknown mode `matc`; did you mean `match`? allowed: match, tournament, train, serve, join, web"],
    );
    let e = err("render: color\n");
    assert_err(
        &e,
        1,
        9,
        &["unknown render style `color`", "allowed: emoji, fullwidth, ascii, none"],
    );
    let e = err("players: {kind: human}\n");
    assert_err(&e, 1, 10, &["`players` must be a list"]);
    let e = err("players:\n  - human\n  - random\n");
    assert_err(
        &e,
        2,
        5,
        &["player 1 must be a mapping", "allowed keys: use, name, kind"],
    );
    let e = err("tournament: round-robin\n");
    assert_err(&e, 1, 13, &["`tournament` must be a mapping"]);
    let e = err("- a\n- b\n");
    assert_err(&e, 1, 1, &["a scenario must be a mapping", "allowed keys: name, mode"]);
    let e = err("players: [{kind: external, command: python3 bot.py}, {kind: random}]\n");
    assert_err(&e, 1, 37, &["`command` must be a list of strings"]);
    let e = err("players: [{kind: external, command: []}, {kind: random}]\n");
    assert_err(&e, 1, 37, &["`command` must not be empty"]);
    let e = err("players: [{kind: minimax, depth: 0}, {kind: random}]\n");
    assert_err(&e, 1, 34, &["`depth` must be at least 1, got 0"]);
    let e = err("players: [{kind: alphazero, device: gpu}, {kind: random}]\n");
    assert_err(&e, 1, 37, &["unknown device `gpu`", "allowed: auto, cpu, cuda, metal"]);
}

#[test]
fn board_errors_point_at_the_offending_key() {
    let e = err("name: b\nboard:\n  rows: 4\n  cols: 4\n  win_length: 5\n");
    assert_err(&e, 5, 3, &[]);
    assert_eq!(
        e.message,
        "`win_length` 5 cannot fit on a 4×4 board (rows × cols): it must be at most max(rows, cols) = 4"
    );
    let e = err("board: {rows: 0, cols: 4}\n");
    assert_err(&e, 1, 9, &["`rows` must be from 1 to 16, got 0"]);
    let e = err("board: {cols: 40}\n");
    assert_err(&e, 1, 9, &["`cols` must be from 1 to 16, got 40"]);
    // The default win_length does not fit: point at `board`, say why.
    let e = err("board: {rows: 2, cols: 3}\n");
    assert_err(
        &e,
        1,
        1,
        &["`win_length` 4 cannot fit", "was not given and defaults to 4"],
    );
    let e = err("board: {rows: -1}\n");
    assert_err(&e, 1, 15, &["`rows` must be a whole number"]);
}

#[test]
fn unknown_kind_suggests_and_locates() {
    let e = err("players:\n  - name: A\n    kind: minmax\n  - kind: random\n");
    assert_err(
        &e,
        3,
        11,
        &["unknown player kind `minmax`; did you mean `minimax`? allowed: human, leftmost, rightmost, random"],
    );
}

#[test]
fn missing_kind_and_command() {
    let e = err("players:\n  - kind: random\n  - name: B\n");
    assert_err(&e, 3, 5, &["player 2 has no `kind`; allowed kinds: human, leftmost"]);
    let e = err("players:\n  - kind: random\n  - {name: B, kind: external}\n");
    assert_err(
        &e,
        3,
        5,
        &["player 2 is `external` but has no `command`", "[python3, bot.py]"],
    );
}

#[test]
fn key_not_applicable_to_kind() {
    let e = err("players:\n  - kind: random\n    depth: 3\n  - kind: random\n");
    assert_err(
        &e,
        3,
        5,
        &[
            "`depth` applies only to minimax players, not to `random`",
            "keys for `random` players: name, kind, move_time",
        ],
    );
    let e = err("players: [{kind: minimax, simulations: 5}, {kind: random}]\n");
    assert_err(
        &e,
        1,
        27,
        &[
            "`simulations` applies only to mcts and alphazero players, not to `minimax`",
            "depth",
        ],
    );
    let e = err("players: [{kind: human, command: [x]}, {kind: random}]\n");
    assert_err(&e, 1, 25, &["`command` applies only to external players"]);
}

#[test]
fn duplicate_names_get_suffixes() {
    let s = parse(
        "players:\n  - kind: random\n  - kind: random\n  - kind: random\n  - {name: Bob, kind: human}\n  - {name: Bob, kind: human}\n",
    )
    .unwrap();
    let names: Vec<&str> = s.players.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["random", "random 2", "random 3", "Bob", "Bob 2"]);
    // A name the user wrote is never handed to a generated duplicate.
    let s = parse("players: [{kind: random}, {kind: random}, {name: random 2, kind: human}]\n").unwrap();
    let names: Vec<&str> = s.players.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["random", "random 3", "random 2"]);
}

#[test]
fn duplicate_keys_are_refused() {
    let e = err("seed: 1\nseed: 2\n");
    assert_err(
        &e,
        2,
        1,
        &["duplicate key `seed` at the top level: it was already given on line 1"],
    );
}

#[test]
fn player_count_for_match() {
    let e = err("mode: match\nplayers:\n  - kind: random\n");
    assert_err(&e, 2, 1, &["`mode: match` needs 2 to 9 players, got 1"]);
    let e = err("players: []\n");
    assert_err(&e, 1, 1, &["got 0"]);
    let ten = format!("players: [{}]\n", ["{kind: random}"; 10].join(", "));
    assert_err(&err(&ten), 1, 1, &["got 10"]);
    // Other modes leave the count to their own checks.
    assert_eq!(parse("mode: train\nplayers: []\n").unwrap().players.len(), 0);
}

#[test]
fn syntax_errors_are_located() {
    let e = err("name: x\nboard: {rows: 6\nseed: 1\n");
    assert!(e.message.starts_with("invalid YAML: "), "{e}");
    assert!(e.line >= 2, "{e}");
    let e = err("a: 1\n---\nb: 2\n");
    assert_err(&e, 2, 1, &["one YAML document"]);
}

#[test]
fn anchors_and_aliases_work() {
    let s = parse("players:\n  - &deep {kind: minimax, depth: 9}\n  - *deep\n").unwrap();
    assert_eq!(s.players[1].kind, KindSpec::Minimax(MinimaxSpec { depth: 9 }));
    assert_eq!(s.players[1].name, "minimax 2");
}

#[test]
fn locate_finds_key_paths() {
    let src = "players:\n  - kind: random\n  - name: B\n    kind: minimax\n";
    assert_eq!(locate(src, &["players".into(), 1.into(), "kind".into()]), Some((4, 5)));
    assert_eq!(locate(src, &[PathSeg::Key("players"), PathSeg::Index(0)]), Some((2, 5)));
}

/// `scenarios/` and `players/` as siblings, plus `players/` beside the
/// scenario, in a temporary directory.
fn profile_tree() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("scenarios/players")).unwrap();
    std::fs::create_dir_all(root.join("players")).unwrap();
    std::fs::write(root.join("players/tdeep8.yaml"), "# deep\nkind: minimax\ndepth: 8\n").unwrap();
    std::fs::write(
        root.join("players/az.yaml"),
        "name: Zero\nkind: alphazero\nsimulations: 400\nmodel: m.onnx\n",
    )
    .unwrap();
    std::fs::write(root.join("players/broken.yaml"), "kind: minimax\ndepht: 3\n").unwrap();
    std::fs::write(root.join("players/nokind.yaml"), "depth: 3\n").unwrap();
    std::fs::write(root.join("players/loop.yaml"), "use: tdeep8\n").unwrap();
    // Beside the scenario wins over the sibling directory.
    std::fs::write(root.join("scenarios/players/near.yaml"), "kind: leftmost\n").unwrap();
    std::fs::write(root.join("players/near.yaml"), "kind: rightmost\n").unwrap();
    dir
}

fn parse_in(dir: &tempfile::TempDir, src: &str) -> Result<Scenario, ScenarioError> {
    let path = dir.path().join("scenarios/s.yaml");
    std::fs::write(&path, src).unwrap();
    load(&path)
}

#[test]
fn profiles_load_and_merge() {
    let dir = profile_tree();
    let s = parse_in(
        &dir,
        "players:\n  - use: tdeep8\n  - {use: tdeep8, depth: 3, name: Shallow}\n  - use: az\n  - use: near\n",
    )
    .unwrap();
    let p = &s.players;
    assert_eq!(
        (p[0].name.as_str(), &p[0].kind),
        ("tdeep8", &KindSpec::Minimax(MinimaxSpec { depth: 8 }))
    );
    assert_eq!(
        (p[1].name.as_str(), &p[1].kind),
        ("Shallow", &KindSpec::Minimax(MinimaxSpec { depth: 3 }))
    );
    let zero = AlphaZeroSpec {
        model: Some(PathBuf::from("m.onnx")),
        simulations: 400,
        ..Default::default()
    };
    assert_eq!((p[2].name.as_str(), &p[2].kind), ("Zero", &KindSpec::Alphazero(zero)));
    assert_eq!((p[3].name.as_str(), &p[3].kind), ("near", &KindSpec::Leftmost));
    // Overriding the kind makes the profile's kind-specific keys invalid;
    // the error points into the profile, where `depth` is written.
    let e = parse_in(&dir, "players:\n  - {use: tdeep8, kind: random}\n  - kind: random\n").unwrap_err();
    assert_eq!(e.file, dir.path().join("scenarios/../players/tdeep8.yaml"));
    assert_err(&e, 3, 1, &["`depth` applies only to minimax players"]);
}

#[test]
fn profile_errors() {
    let dir = profile_tree();
    let e = parse_in(&dir, "players:\n  - kind: random\n  - use: tdeep9\n").unwrap_err();
    assert_eq!(e.file, dir.path().join("scenarios/s.yaml"));
    assert_err(
        &e,
        3,
        10,
        &[
            "unknown profile `tdeep9`; did you mean `tdeep8`? available: ",
            "(looked for tdeep9.yaml in ",
        ],
    );
    for name in ["az", "broken", "loop", "tdeep8", "near", "nokind"] {
        assert!(e.message.contains(name), "{e}");
    }
    // An error inside the profile points at the profile's own line.
    let e = parse_in(&dir, "players:\n  - kind: random\n  - use: broken\n").unwrap_err();
    assert!(e.file.ends_with("players/broken.yaml"), "{e}");
    assert_err(
        &e,
        2,
        1,
        &["unknown key `depht` in profile `broken`; did you mean `depth`?"],
    );
    let e = parse_in(&dir, "players:\n  - kind: random\n  - use: nokind\n").unwrap_err();
    assert_err(&e, 3, 5, &["player 2 has no `kind` (nor does its profile `nokind`)"]);
    let e = parse_in(&dir, "players:\n  - kind: random\n  - use: loop\n").unwrap_err();
    assert!(e.file.ends_with("players/loop.yaml"), "{e}");
    assert_err(&e, 1, 1, &["a profile cannot `use` another profile"]);
}

#[test]
fn player_spec_inline_yaml() {
    let lookup = ProfileLookup::in_dirs(vec![]);
    let p = parse_player_spec_with("{kind: minimax, depth: 8}", &lookup).unwrap();
    assert_eq!(
        (p.kind, p.name.as_str()),
        (KindSpec::Minimax(MinimaxSpec { depth: 8 }), "minimax")
    );
    let p = parse_player_spec("{kind: mcts, simulations: 64, move_time: 500ms}").unwrap();
    assert_eq!(
        (p.kind, p.move_time),
        (
            KindSpec::Mcts(MctsSpec { simulations: 64 }),
            Some(Duration::from_millis(500))
        )
    );
    let e = parse_player_spec("{kind: minmax}").unwrap_err();
    assert_eq!(e.file, PathBuf::from("--player"));
    assert_err(&e, 1, 8, &["unknown player kind `minmax`; did you mean `minimax`?"]);
    let e = parse_player_spec("{kind: random, depth: 2}").unwrap_err();
    assert_err(&e, 1, 16, &["`depth` applies only to minimax"]);
    let threads = |spec: &str| match parse_player_spec(spec).unwrap().kind {
        KindSpec::Alphazero(az) => az.threads,
        other => panic!("{other:?}"),
    };
    assert_eq!(threads("{kind: alphazero, model: m, threads: 2}"), Some(2));
    assert_eq!(threads("{kind: alphazero, model: m}"), None);
    let e = parse_player_spec("{kind: mcts, threads: 2}").unwrap_err();
    assert_err(&e, 1, 14, &["`threads` applies only to alphazero"]);
    let e = parse_player_spec("{kind: alphazero, model: m, threads: 0}").unwrap_err();
    assert_err(&e, 1, 38, &["threads"]);
}

#[test]
fn player_spec_profiles_kinds_and_paths() {
    let dir = profile_tree();
    let lookup = ProfileLookup::in_dirs(vec![dir.path().join("players")]);
    let p = parse_player_spec_with("tdeep8", &lookup).unwrap();
    assert_eq!(
        (p.kind, p.name.as_str()),
        (KindSpec::Minimax(MinimaxSpec { depth: 8 }), "tdeep8")
    );
    let p = parse_player_spec_with("{use: tdeep8, depth: 2}", &lookup).unwrap();
    assert_eq!(
        (p.kind, p.name.as_str()),
        (KindSpec::Minimax(MinimaxSpec { depth: 2 }), "tdeep8")
    );
    let p = parse_player_spec_with("mcts", &lookup).unwrap();
    assert_eq!(p.kind, KindSpec::Mcts(MctsSpec { simulations: 1000 }));
    let path = dir.path().join("players/az.yaml");
    let p = parse_player_spec_with(path.to_str().unwrap(), &lookup).unwrap();
    assert_eq!((p.kind.kind(), p.name.as_str()), (PlayerKind::Alphazero, "Zero"));
    let e = parse_player_spec_with("tdeep9", &lookup).unwrap_err();
    assert_err(
        &e,
        1,
        1,
        &["unknown profile `tdeep9`; did you mean `tdeep8`?", "inline YAML"],
    );
    let e = parse_player_spec_with("nowhere/x.yaml", &lookup).unwrap_err();
    assert_err(&e, 1, 1, &["does not exist"]);
    let e = parse_player_spec_with("[1, 2]", &lookup).unwrap_err();
    assert_err(&e, 1, 1, &["--player must be a profile name"]);
}

#[test]
fn player_spec_suggests_a_kind() {
    let lookup = ProfileLookup::in_dirs(vec![]);
    let e = parse_player_spec_with("minmax", &lookup).unwrap_err();
    assert_err(
        &e,
        1,
        1,
        &[
            "unknown profile `minmax`; available: none",
            "Did you mean the kind `minimax`?",
        ],
    );
}

#[test]
fn player_spec_profile_without_kind() {
    let dir = profile_tree();
    let lookup = ProfileLookup::in_dirs(vec![dir.path().join("players")]);
    let e = parse_player_spec_with("nokind", &lookup).unwrap_err();
    assert!(e.file.ends_with("players/nokind.yaml"), "{e}");
    assert_err(&e, 1, 1, &["profile `nokind` has no `kind`; allowed kinds: human"]);
    let e = parse_player_spec_with("{use: nokind}", &lookup).unwrap_err();
    assert_eq!(e.file, PathBuf::from("--player"));
    assert_err(
        &e,
        1,
        1,
        &["the --player spec has no `kind` (nor does its profile `nokind`)"],
    );
}

#[test]
fn who_moves_first() {
    let s = parse("match: {first: ask}\nplayers: [{kind: human}, {kind: random}]\n").unwrap();
    assert_eq!(s.match_settings.first, FirstMover::Ask);
    let s = parse("match: {first: random}\n").unwrap();
    assert_eq!(s.match_settings.first, FirstMover::Random);
    assert_eq!(parse("name: x\n").unwrap().match_settings.first, FirstMover::Seat);
    let e = err("match: {first: ask}\n");
    assert_err(&e, 1, 16, &["`first: ask` needs a `human` player"]);
    let e = err("match: {first: me}\n");
    assert_err(&e, 1, 16, &["seat, ask, random"]);
}
