use crate::players::bots::MinimaxSpec;
use crate::players::KindSpec;
use crate::scenario::train::{AccuracySettings, OpeningSuite, TrainSettings};
use crate::scenario::{parse_str, ScenarioError};
use std::path::Path;

fn train(body: &str) -> Result<TrainSettings, ScenarioError> {
    let src = format!("mode: train\ntrain:\n{body}");
    parse_str(&src, Path::new("t.yaml")).map(|s| s.train.expect("train section"))
}

/// The message a refused `train` section prints.
fn refusal(body: &str) -> String {
    train(body).unwrap_err().to_string()
}

#[test]
fn the_spec_example_parses() {
    let t = train(
        "  network: { blocks: 2, channels: 32 }
  mcts: { simulations: 50, c_puct: 1.5, dirichlet_alpha: 0.3, dirichlet_weight: 0.2 }
  self_play: { games_per_iteration: 10, temperature_moves: 8, workers: 1, concurrent_games: 5, cache_size: 0 }
  optimizer: { steps_per_iteration: 20, batch_size: 32, learning_rate: 2e-3, weight_decay: 0, threads: 1 }
  replay: { capacity: 1000, min_size: 100 }
  eval: { every: 2, games: 20, opponent: { kind: minimax, depth: 3 }, openings: { plies: 1 }, simulations: 40 }
  iterations: 3
  device: cpu
  out: models/x
  resume: false
",
    )
    .unwrap();
    assert_eq!(
        (t.network.blocks, t.network.channels, t.network.value_hidden),
        (2, 32, 64)
    );
    assert_eq!(t.mcts.simulations, 50);
    assert!((t.mcts.c_puct - 1.5).abs() < 1e-6 && (t.mcts.dirichlet_alpha - 0.3).abs() < 1e-6);
    assert_eq!(t.self_play.concurrent_games, 5);
    assert_eq!(t.self_play.cache_size, 0);
    assert!((t.optimizer.learning_rate - 2e-3).abs() < 1e-12);
    assert_eq!(t.optimizer.weight_decay, 0.0);
    assert_eq!(t.optimizer.threads, 1);
    assert_eq!(t.replay.min_size, 100);
    assert_eq!(t.eval.opponent.kind, KindSpec::Minimax(MinimaxSpec { depth: 3 }));
    assert_eq!(t.eval.openings, OpeningSuite::Plies(1));
    assert_eq!(t.eval_simulations(), 40);
    assert_eq!((t.iterations, t.device.as_str(), t.resume), (3, "cpu", false));
    assert_eq!(t.out_dir(Path::new("t.yaml")), Path::new("models/x"));
}

#[test]
fn a_learning_rate_schedule_steps_down_by_iteration() {
    let t = train(
        "  optimizer:
    learning_rate: 0.001
    learning_rate_schedule: [{from: 150, learning_rate: 3e-4}, {from: 300, learning_rate: 0.0001}]
",
    )
    .unwrap();
    let o = &t.optimizer;
    assert_eq!(o.learning_rate_schedule, vec![(150, 3e-4), (300, 1e-4)]);
    let at: Vec<f64> = [1, 149, 150, 299, 300, 1000]
        .iter()
        .map(|&i| o.learning_rate_at(i))
        .collect();
    assert_eq!(at, vec![1e-3, 1e-3, 3e-4, 3e-4, 1e-4, 1e-4]);
    assert_eq!(train("  iterations: 5\n").unwrap().optimizer.learning_rate_at(7), 1e-3);

    let e = refusal(
        "  optimizer: { learning_rate_schedule: [{from: 9, learning_rate: 1e-4}, {from: 9, learning_rate: 1e-5}] }\n",
    );
    assert!(e.starts_with("t.yaml:3:"), "{e}");
    assert!(e.contains("must go up by `from`: 9 comes after 9"), "{e}");
    let e = refusal("  optimizer: { learning_rate_schedule: [{from: 9}] }\n");
    assert!(e.contains("needs both `from` and `learning_rate`"), "{e}");
    let e = refusal("  optimizer: { learning_rate_schedule: {from: 9, learning_rate: 1e-4} }\n");
    assert!(
        e.contains("must be a list of `{from: ITERATION, learning_rate: RATE}`"),
        "{e}"
    );
    let e = refusal("  optimizer: { learning_rate_schedule: [{from: 0, learning_rate: 1e-4}] }\n");
    assert!(e.contains("`from`"), "{e}");
    let e = refusal("  optimizer: { learning_rate_schedule: [{from: 5, learning_rate: 0}] }\n");
    assert!(e.contains("`learning_rate`"), "{e}");
    let e = refusal("  optimizer: { learning_rate_schedule: [{from: 5, rate: 1e-4}] }\n");
    assert!(e.contains("rate"), "{e}");
}

#[test]
fn the_growing_window_starts_at_its_key_and_grows_to_the_capacity() {
    let r = train("  replay: { capacity: 100000, min_size: 100, growing_window: 20000 }\n")
        .unwrap()
        .replay;
    assert_eq!(r.growing_window, 20_000);
    assert_eq!(r.window(0), 20_000, "never below its start");
    assert_eq!(r.window(20_000), 20_000);
    // KataGo's shape: 20k·(1 + 0.4·(10^0.75 − 1)/0.75) at 200k seen.
    let w = r.window(200_000);
    assert!(
        (w as f64 - 20_000.0 * (1.0 + 0.4 * (10f64.powf(0.75) - 1.0) / 0.75)).abs() < 2.0,
        "{w}"
    );
    assert!((69_000..70_000).contains(&w), "{w}");
    assert!(r.window(100_000) < w, "it grows");
    assert_eq!(r.window(10_000_000), 100_000, "up to the capacity");
    // Off: the whole buffer.
    assert_eq!(train("  iterations: 5\n").unwrap().replay.window(5), 200_000);
    let e = refusal("  replay: { growing_window: -1 }\n");
    assert!(e.contains("growing_window"), "{e}");
}

#[test]
fn the_reply_head_and_its_weight() {
    let t = train("  iterations: 5\n").unwrap();
    assert!(!t.network.reply_head, "off unless asked for");
    assert_eq!(t.optimizer.reply_weight, 0.15);
    let t = train("  network: { blocks: 1, reply_head: true }\n  optimizer: { reply_weight: 0.3 }\n").unwrap();
    assert!(t.network.reply_head);
    assert_eq!(t.optimizer.reply_weight, 0.3);
    assert_eq!(
        train("  optimizer: { reply_weight: 0 }\n")
            .unwrap()
            .optimizer
            .reply_weight,
        0.0
    );
    let e = refusal("  network: { reply_head: yes please }\n");
    assert!(e.starts_with("t.yaml:3:") && e.contains("`reply_head`"), "{e}");
    let e = refusal("  optimizer: { reply_weight: -0.1 }\n");
    assert!(
        e.starts_with("t.yaml:3:") && e.contains("`reply_weight` must be at least 0"),
        "{e}"
    );
    let e = refusal("  network: { reply_heads: true }\n");
    assert!(e.contains("did you mean `reply_head`"), "{e}");
}

#[test]
fn defaults_are_the_reference_values() {
    let t = train("  iterations: 50\n").unwrap();
    assert_eq!(t, TrainSettings::default());
    assert_eq!(t.mcts.simulations, 100);
    assert_eq!(t.replay.capacity, 200_000);
    assert_eq!(t.eval.opponent.kind, KindSpec::Minimax(MinimaxSpec { depth: 8 }));
    assert_eq!(t.eval_simulations(), 100);
    assert!(t.resume);
    assert_eq!(t.out_dir(Path::new("dir/train_x.yaml")), Path::new("models/train_x"));
}

#[test]
fn errors_are_located_and_say_what_is_allowed() {
    let e = refusal("  mcts: { simulatons: 5 }\n");
    assert!(e.starts_with("t.yaml:3:11:"), "{e}");
    assert!(e.contains("did you mean `simulations`"), "{e}");
    let e = refusal("  mcts: { c_puct: -1 }\n");
    assert!(e.contains("`c_puct` must be more than 0"), "{e}");
    let t = train("  mcts: { root_prior_temperature: 1.5 }\n").unwrap();
    assert_eq!(t.mcts.root_prior_temperature, 1.5);
    assert!(train("  mcts: { root_prior_temperature: 0 }\n").is_err());
    let e = refusal("  mcts: { dirichlet_weight: 2 }\n");
    assert!(e.contains("at most 1"), "{e}");
    let e = refusal("  optimizer: { learning_rate: fast }\n");
    assert!(e.contains("`learning_rate` must be a number"), "{e}");
    let e = refusal("  replay: { capacity: 10, min_size: 20 }\n");
    assert!(e.contains("must not exceed"), "{e}");
    let e = refusal("  eval: { opponent: { kind: human } }\n");
    assert!(e.contains("without a person"), "{e}");
    let e = refusal("  eval: { opponent: { kind: minimax, dept: 3 } }\n");
    assert!(e.contains("did you mean `depth`"), "{e}");
    let e = refusal("  eval: { openings: { plies: 1, file: x.txt } }\n");
    assert!(e.contains("not both"), "{e}");
    let e = refusal("  device: gpu\n");
    assert!(e.contains("cuda"), "{e}");
    let e = refusal("  iterations: 0\n");
    assert!(e.contains("at least 1"), "{e}");
    let e = refusal("  resume: maybe\n");
    assert!(e.contains("true or false"), "{e}");
    let e = refusal("  network: { channels: 5000 }\n");
    assert!(e.contains("at most 1024"), "{e}");
    let e = refusal("  batch: 5\n");
    assert!(e.contains("unknown key `batch` in `train`"), "{e}");
}

#[test]
fn playout_caps_and_q_targets() {
    let t = train(
            "  self_play: { full_search_share: 0.25, fast_simulations: 30, q_weight: 0.5, random_opening_plies: 4,\n               random_move_share: 0.1 }\n",
        )
        .unwrap();
    assert_eq!(t.self_play.random_opening_plies, 4);
    assert_eq!(t.self_play.random_move_share, 0.1);
    assert_eq!(t.self_play.forced_playouts, 0.0, "off unless asked for");
    let forced = train("  self_play: { forced_playouts: 2 }\n").unwrap();
    assert_eq!(forced.self_play.forced_playouts, 2.0);
    let e = refusal("  self_play: { forced_playouts: 101 }\n");
    assert!(e.contains("`forced_playouts`"), "{e}");
    let e = refusal("  self_play: { random_move_share: -0.1 }\n");
    assert!(e.contains("`random_move_share` must be at least 0"), "{e}");
    assert_eq!(t.self_play.full_search_share, 0.25);
    assert_eq!(t.self_play.fast_simulations, Some(30));
    assert_eq!(t.self_play.q_weight, 0.5);
    assert!(!t.self_play.q_best_child, "off unless asked for");
    assert!(
        train("  self_play: { q_best_child: true }\n")
            .unwrap()
            .self_play
            .q_best_child
    );
    let e = refusal("  self_play: { q_best_child: 1 }\n");
    assert!(e.contains("`q_best_child`"), "{e}");
    let e = refusal("  self_play: { full_search_share: 0 }\n");
    assert!(e.contains("`full_search_share` must be more than 0"), "{e}");
    let e = refusal("  self_play: { q_weight: 1.5 }\n");
    assert!(e.contains("at most 1"), "{e}");
    let e = refusal("  self_play: { fast_simulations: 0 }\n");
    assert!(e.contains("at least 1"), "{e}");
}

#[test]
fn accuracy_keys_defaults_and_errors() {
    let t = train("  eval: { accuracy: {} }\n").unwrap();
    let a = t.eval.accuracy.clone().unwrap();
    assert_eq!(a, AccuracySettings::default());
    assert_eq!((a.set.as_str(), a.positions), ("begin+middle", 300));
    assert_eq!(a.file, Path::new("benches/accuracy/sets-v1.jsonl"));
    assert_eq!(
        t.accuracy_simulations(),
        Some(100),
        "eval.simulations, itself mcts.simulations"
    );
    let t = train("  eval: { simulations: 40, accuracy: { set: middle-hard+end, positions: 12 } }\n").unwrap();
    let a = t.eval.accuracy.clone().unwrap();
    assert_eq!(
        (a.set.as_str(), a.positions, t.accuracy_simulations()),
        ("middle-hard+end", 12, Some(40))
    );
    let t = train("  eval: { accuracy: { simulations: 7, file: x.jsonl } }\n").unwrap();
    assert_eq!(t.accuracy_simulations(), Some(7));
    assert_eq!(t.eval.accuracy.unwrap().file, Path::new("x.jsonl"));
    assert_eq!(TrainSettings::default().accuracy_simulations(), None);

    let e = refusal("  eval: { accuracy: { set: middle-hardest } }\n");
    assert!(e.starts_with("t.yaml:3:28:"), "{e}");
    assert!(e.contains("no set `middle-hardest`") && e.contains("begin-easy"), "{e}");
    let e = refusal("  eval: { accuracy: { positions: 0 } }\n");
    assert!(e.contains("at least 1"), "{e}");
    let e = refusal("  eval: { accuracy: { simulations: 0 } }\n");
    assert!(e.contains("at least 1"), "{e}");
    let e = refusal("  eval: { accuracy: { sets: all } }\n");
    assert!(e.contains("in `train.eval.accuracy`") && e.contains("`set`"), "{e}");
    let e = refusal("  eval: { every: 0, accuracy: {} }\n");
    assert!(
        e.starts_with("t.yaml:3:21:") && e.contains("needs `eval.every` of at least 1"),
        "{e}"
    );
    let e = refusal("  eval: { accuracy: 5 }\n");
    assert!(e.contains("accuracy"), "{e}");
    let src = "mode: train\nboard: { rows: 4, cols: 5, win_length: 3 }\ntrain:\n  eval: { accuracy: {} }\n";
    let e = parse_str(src, Path::new("t.yaml")).unwrap_err().to_string();
    assert!(
        e.starts_with("t.yaml:4:11:") && e.contains("needs the 6×7 board"),
        "{e}"
    );
}

#[test]
fn openings_from_a_file() {
    let t = train("  eval: { openings: { file: openings/c4.txt } }\n").unwrap();
    assert_eq!(t.eval.openings, OpeningSuite::File("openings/c4.txt".into()));
}
