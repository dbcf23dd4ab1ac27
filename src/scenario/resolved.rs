//! The resolved scenario (`c4sim validate FILE --resolved`): every key with
//! its default filled in, `use:` profiles expanded into each player's kind
//! and keys, durations normalised, written as YAML that `c4sim validate`
//! accepts again. Tournaments and training save it beside their results,
//! so what ran is kept with what it produced.
//!
//! The mapping is built key by key from the typed [`Scenario`] with
//! serde_yaml's `Value`, in the order the scenario keys are documented.

use super::net::{JoinSettings, ServerSettings};
use super::parse;
use super::tournament::{self, ReportSettings, TournamentSettings};
use super::train::{self, TrainSettings};
use super::types::{PlayerSpec, Scenario};
use crate::players::kinds::KeyValue;
use serde_yaml::{Mapping, Value};
use std::path::Path;
use std::time::Duration;

/// The file name the resolved copy is saved under in an output directory.
pub const RESOLVED_FILE: &str = "scenario.resolved.yaml";

/// `sc` as YAML text, with a header comment naming its source.
pub fn to_yaml(sc: &Scenario) -> String {
    let body = serde_yaml::to_string(&to_value(sc)).expect("a mapping of plain values serialises");
    format!(
        "# The resolved scenario of {}: defaults filled in, profiles expanded.\n{body}",
        sc.path.display()
    )
}

/// Writes the resolved copy of `sc` into `dir` (created if missing).
pub fn save(sc: &Scenario, dir: &Path) -> std::io::Result<()> {
    crate::util::write_atomic(&dir.join(RESOLVED_FILE), to_yaml(sc).as_bytes())
}

/// A mapping from `(key, value)` pairs, in order.
fn map<const N: usize>(pairs: [(&str, Value); N]) -> Value {
    let mut m = Mapping::new();
    for (k, v) in pairs {
        m.insert(Value::from(k), v);
    }
    Value::Mapping(m)
}

/// Adds `key: value` to a mapping value.
fn push(m: &mut Value, key: &str, v: Value) {
    if let Value::Mapping(m) = m {
        m.insert(Value::from(key), v);
    }
}

fn path(p: &Path) -> Value {
    Value::from(p.display().to_string())
}

/// `30s`, `500ms`: the shortest exact way the scenario parser reads back.
fn duration(d: Duration) -> Value {
    let ms = d.as_millis();
    Value::from(if ms % 1000 == 0 {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    })
}

/// An `f32` as the decimal it was written as (0.8, not 0.800000011920929).
fn float32(x: f32) -> Value {
    Value::from(x.to_string().parse::<f64>().unwrap_or(x as f64))
}

fn to_value(sc: &Scenario) -> Value {
    let mut v = map([
        ("name", Value::from(sc.name.clone())),
        ("mode", Value::from(parse::mode_word(sc.mode))),
        ("seed", Value::from(sc.seed)),
        (
            "board",
            map([
                ("rows", Value::from(sc.board.rows)),
                ("cols", Value::from(sc.board.cols)),
                ("win_length", Value::from(sc.board.win_length)),
            ]),
        ),
        (
            "limits",
            map([
                ("move_time", duration(sc.limits.move_time)),
                ("max_invalid_moves", Value::from(sc.limits.max_invalid_moves)),
            ]),
        ),
        ("render", Value::from(parse::render_word(sc.render))),
        ("color", Value::from(parse::color_word(sc.color))),
        (
            "match",
            map([
                ("games", Value::from(sc.match_settings.games)),
                ("swap_colors", Value::from(sc.match_settings.swap_colors)),
                ("first", Value::from(parse::first_word(sc.match_settings.first))),
            ]),
        ),
        ("players", Value::Sequence(sc.players.iter().map(player).collect())),
    ]);
    if let Some(t) = &sc.tournament {
        push(&mut v, "tournament", tournament_value(t));
    }
    if let Some(r) = &sc.report {
        push(&mut v, "report", report_value(r));
    }
    if let Some(t) = &sc.train {
        push(&mut v, "train", train_value(t));
    }
    if let Some(s) = &sc.server {
        push(&mut v, "server", server_value(s));
    }
    if let Some(j) = &sc.join {
        push(&mut v, "join", join_value(j));
    }
    if let Some(w) = &sc.web {
        push(&mut v, "web", map([("bind", Value::from(w.bind.to_string()))]));
    }
    v
}

/// One player: name, kind, the kind's keys in effect, and `move_time` if set.
pub fn player(p: &PlayerSpec) -> Value {
    let mut v = map([
        ("name", Value::from(p.name.clone())),
        ("kind", Value::from(p.kind.as_str())),
    ]);
    for (key, value) in p.key_values() {
        let value = match value {
            KeyValue::Count(n) => Value::from(n),
            KeyValue::Count64(n) => Value::from(n),
            KeyValue::Path(p) => path(&p),
            KeyValue::Word(w) => Value::from(w),
            KeyValue::Command(c) => Value::Sequence(c.into_iter().map(Value::from).collect()),
            KeyValue::Env(e) => Value::Mapping(e.into_iter().map(|(k, v)| (Value::from(k), Value::from(v))).collect()),
        };
        push(&mut v, key, value);
    }
    if let Some(t) = p.move_time {
        push(&mut v, "move_time", duration(t));
    }
    v
}

fn tournament_openings(o: &tournament::OpeningSuite) -> Value {
    match o {
        tournament::OpeningSuite::Plies(n) => map([("plies", Value::from(*n))]),
        tournament::OpeningSuite::File(f) => map([("file", path(f))]),
    }
}

fn tournament_value(t: &TournamentSettings) -> Value {
    let mut v = map([
        ("schedule", Value::from(t.schedule.as_str())),
        ("games_per_pair", Value::from(t.games_per_pair)),
        ("openings", tournament_openings(&t.openings)),
        ("concurrency", Value::from(t.concurrency)),
    ]);
    if let Some((player, elo)) = &t.anchor {
        push(
            &mut v,
            "anchor",
            map([("player", Value::from(player.clone())), ("elo", Value::from(*elo))]),
        );
    }
    v
}

fn report_value(r: &ReportSettings) -> Value {
    let formats = r.formats.iter().map(|f| Value::from(f.as_str())).collect();
    let mut v = map([("formats", Value::Sequence(formats))]);
    if let Some(d) = &r.dir {
        push(&mut v, "dir", path(d));
    }
    v
}

fn train_value(t: &TrainSettings) -> Value {
    let n = &t.network;
    let m = &t.mcts;
    let mut network = map([
        ("blocks", Value::from(n.blocks)),
        ("channels", Value::from(n.channels)),
        ("value_hidden", Value::from(n.value_hidden)),
    ]);
    // Only where on, so older scenarios resolve as they did.
    if n.reply_head {
        push(&mut network, "reply_head", Value::from(true));
    }
    let mut v = map([
        ("network", network),
        (
            "mcts",
            map([
                ("simulations", Value::from(m.simulations)),
                ("c_puct", float32(m.c_puct)),
                ("dirichlet_alpha", float32(m.dirichlet_alpha)),
                ("dirichlet_weight", float32(m.dirichlet_weight)),
                ("root_prior_temperature", float32(m.root_prior_temperature)),
            ]),
        ),
        ("self_play", self_play_value(&t.self_play)),
        ("optimizer", optimizer_value(&t.optimizer, n.reply_head)),
        (
            "replay",
            map([
                ("capacity", Value::from(t.replay.capacity)),
                ("min_size", Value::from(t.replay.min_size)),
                ("average_duplicates", Value::from(t.replay.average_duplicates)),
                ("growing_window", Value::from(t.replay.growing_window)),
            ]),
        ),
        ("eval", eval_value(&t.eval)),
        ("iterations", Value::from(t.iterations)),
        ("device", Value::from(t.device.clone())),
        ("resume", Value::from(t.resume)),
    ]);
    if let Some(out) = &t.out {
        push(&mut v, "out", path(out));
    }
    // Only where given: a single-process run resolves as it always did.
    let d = &t.distributed;
    if *d != train::DistributedSettings::default() {
        let dist = map([
            ("positions_per_iteration", Value::from(d.positions_per_iteration)),
            ("max_lag", Value::from(d.max_lag)),
            ("games_per_batch", Value::from(d.games_per_batch)),
            ("max_backlog", Value::from(d.max_backlog)),
            ("worker_threads", Value::from(d.worker_threads)),
        ]);
        push(&mut v, "distributed", dist);
    }
    v
}

/// `train.self_play`; the keys added since the first release only where
/// they are not off, so older scenarios resolve as they did.
fn self_play_value(s: &train::SelfPlaySettings) -> Value {
    let mut self_play = map([
        ("games_per_iteration", Value::from(s.games_per_iteration)),
        ("temperature_moves", Value::from(s.temperature_moves)),
        ("workers", Value::from(s.workers)),
        ("concurrent_games", Value::from(s.concurrent_games)),
        ("cache_size", Value::from(s.cache_size)),
        ("full_search_share", float32(s.full_search_share)),
        ("q_weight", float32(s.q_weight)),
        ("random_opening_plies", Value::from(s.random_opening_plies)),
        ("exact_value_nodes", Value::from(s.exact_value_nodes)),
    ]);
    if let Some(f) = s.fast_simulations {
        push(&mut self_play, "fast_simulations", Value::from(f));
    }
    if s.random_move_share > 0.0 {
        push(&mut self_play, "random_move_share", float32(s.random_move_share));
    }
    if s.q_best_child {
        push(&mut self_play, "q_best_child", Value::from(true));
    }
    if s.forced_playouts > 0.0 {
        push(&mut self_play, "forced_playouts", float32(s.forced_playouts));
    }
    if s.gumbel {
        push(&mut self_play, "gumbel", Value::from(true));
    }
    if s.exact_policy_nodes > 0 {
        push(&mut self_play, "exact_policy_nodes", Value::from(s.exact_policy_nodes));
    }
    self_play
}

/// `train.optimizer`; `reply_weight` where it counts (a reply head) or
/// is not the default, so older scenarios resolve as they did.
fn optimizer_value(o: &train::OptimizerSettings, reply_head: bool) -> Value {
    let mut v = map([
        ("steps_per_iteration", Value::from(o.steps_per_iteration)),
        ("batch_size", Value::from(o.batch_size)),
        ("learning_rate", Value::from(o.learning_rate)),
        (
            "learning_rate_schedule",
            Value::Sequence(
                o.learning_rate_schedule
                    .iter()
                    .map(|&(from, lr)| map([("from", Value::from(from)), ("learning_rate", Value::from(lr))]))
                    .collect(),
            ),
        ),
        ("weight_decay", Value::from(o.weight_decay)),
        ("ema", Value::from(o.ema)),
        ("threads", Value::from(o.threads)),
    ]);
    if reply_head || o.reply_weight != train::DEFAULT_REPLY_WEIGHT {
        push(&mut v, "reply_weight", Value::from(o.reply_weight));
    }
    v
}

fn eval_value(e: &train::EvalSettings) -> Value {
    let openings = match &e.openings {
        train::OpeningSuite::Plies(n) => map([("plies", Value::from(*n))]),
        train::OpeningSuite::File(f) => map([("file", path(f))]),
    };
    let mut eval = map([
        ("every", Value::from(e.every)),
        ("games", Value::from(e.games)),
        ("opponent", player(&e.opponent)),
        ("openings", openings),
    ]);
    if let Some(sims) = e.simulations {
        push(&mut eval, "simulations", Value::from(sims));
    }
    if let Some(a) = &e.accuracy {
        let mut acc = map([
            ("set", Value::from(a.set.clone())),
            ("positions", Value::from(a.positions)),
            ("file", path(&a.file)),
        ]);
        if let Some(sims) = a.simulations {
            push(&mut acc, "simulations", Value::from(sims));
        }
        push(&mut eval, "accuracy", acc);
    }
    eval
}

fn server_value(s: &ServerSettings) -> Value {
    let mut v = map([
        ("bind", Value::from(s.bind.to_string())),
        (
            "games",
            Value::Sequence(s.games.iter().map(|g| Value::from(g.as_str())).collect()),
        ),
        ("countdown", duration(s.countdown)),
        ("move_timeout", duration(s.move_timeout)),
        ("reconnect_grace", duration(s.reconnect_grace)),
        ("hello_timeout", duration(s.hello_timeout)),
        ("max_line", Value::from(s.max_line)),
        ("max_connections", Value::from(s.max_connections)),
        (
            "max_connections_per_address",
            Value::from(s.max_connections_per_address),
        ),
        ("max_lines_per_second", Value::from(s.max_lines_per_second)),
    ]);
    if let Some(r) = &s.records {
        push(&mut v, "records", path(r));
    }
    v
}

fn join_value(j: &JoinSettings) -> Value {
    map([
        ("server", Value::from(j.server.clone())),
        ("game", Value::from(j.game.as_str())),
        ("matches", Value::from(j.matches)),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::parse_str;

    /// Resolving is a fixed point: the resolved text parses to the same
    /// scenario, and resolving that gives the same text.
    fn round_trip(yaml: &str) -> (Scenario, Scenario) {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("s.yaml");
        let a = parse_str(yaml, &file).unwrap();
        let text = to_yaml(&a);
        let b = parse_str(&text, &file).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert_eq!(to_yaml(&b), text);
        (a, b)
    }

    #[test]
    fn a_match_with_every_kind_of_key_resolves_to_itself() {
        let (a, b) = round_trip(
            "mode: match\nseed: 9\nlimits: {move_time: 1500ms}\nplayers:\n  - {kind: minimax, depth: 6, move_time: 2m}\n  - {kind: external, command: [python3, bot.py], env: {A: b}, cwd: x}\n",
        );
        assert_eq!(a, b);
        assert_eq!(b.limits.move_time, Duration::from_millis(1500));
        // Node budgets are u64: past u32::MAX they are kept, not cut.
        let (a, b) = round_trip(
            "players:\n  - {kind: solver, table_log2: 12, nodes: 5000000000, book: b.bin}\n  - {kind: alphazero, model: m, device: cpu, threads: 2, solver: 5000000000}\n",
        );
        assert_eq!(a, b);
        assert!(to_yaml(&b).contains("nodes: 5000000000"), "{}", to_yaml(&b));
        assert!(to_yaml(&b).contains("solver: 5000000000"), "{}", to_yaml(&b));
    }

    #[test]
    fn tournament_train_serve_and_join_sections_resolve_to_themselves() {
        let (a, b) = round_trip(
            "mode: tournament\ntournament: {schedule: gauntlet, games_per_pair: 4, openings: {plies: 1}, concurrency: 1, anchor: {player: A, elo: 100}}\nreport: {dir: out, formats: [json]}\nplayers: [{name: A, kind: random}, {kind: leftmost}]\n",
        );
        assert_eq!(a, b);
        let (a, b) = round_trip("mode: train\ntrain: {mcts: {c_puct: 1.7}, self_play: {q_weight: 0.3, fast_simulations: 20}, eval: {simulations: 50, opponent: {kind: minimax, depth: 2}}}\n");
        assert_eq!(a, b);
        let (a, b) = round_trip("mode: train\ntrain: {eval: {accuracy: {}}}\n");
        assert_eq!(a, b);
        assert!(to_yaml(&b).contains("set: begin+middle"), "{}", to_yaml(&b));
        let (a, b) = round_trip("mode: train\ntrain: {distributed: {max_lag: 1, games_per_batch: 4}}\n");
        assert_eq!(a, b);
        assert_eq!(b.clone().train.unwrap().distributed.games_per_batch, 4);
        assert!(to_yaml(&b).contains("max_lag: 1"), "{}", to_yaml(&b));
        // Without the section, a training scenario resolves as it always did.
        let (_, b) = round_trip("mode: train\n");
        assert!(!to_yaml(&b).contains("distributed"), "{}", to_yaml(&b));
        assert!(!to_yaml(&b).contains("reply"), "{}", to_yaml(&b));
        // The reply head and its weight, where on.
        let (a, b) = round_trip("mode: train\ntrain: {network: {reply_head: true}}\n");
        assert_eq!(a, b);
        let t = b.train.clone().unwrap();
        assert!(t.network.reply_head && t.optimizer.reply_weight == 0.15);
        assert!(to_yaml(&b).contains("reply_head: true") && to_yaml(&b).contains("reply_weight: 0.15"));
        let (a, b) = round_trip("mode: train\ntrain: {replay: {growing_window: 20000}}\n");
        assert_eq!(a, b);
        assert_eq!(b.train.unwrap().replay.growing_window, 20_000);
        let (a, b) = round_trip("mode: train\ntrain: {optimizer: {reply_weight: 0.5}}\n");
        assert_eq!(a, b);
        assert_eq!(b.train.unwrap().optimizer.reply_weight, 0.5);
        let (a, b) = round_trip(
            "mode: train\ntrain: {eval: {accuracy: {set: middle-hard+end, positions: 12, simulations: 9, file: s.jsonl}}}\n",
        );
        assert_eq!(a, b);
        assert_eq!(b.train.unwrap().accuracy_simulations(), Some(9));
        let (a, b) = round_trip("mode: serve\nserver: {bind: 127.0.0.1:0, countdown: 2s, records: r.jsonl}\n");
        assert_eq!(a, b);
        let (a, b) = round_trip("mode: join\njoin: {server: 127.0.0.1:7878, matches: 3}\nplayers: [{kind: random}]\n");
        assert_eq!(a, b);
    }
}
