//! `c4sim bench accuracy` end to end, and the committed sets file against
//! the solver.

mod common;
use c4sim::bench::accuracy::{judge, load_sets, set_names, DEFAULT_SETS, END, FORMAT, VERSION};
use c4sim::game::openings::parse_move_string;
use c4sim::solver::Solver;
use common::*;
use serde_json::Value;
use std::path::PathBuf;

fn sets_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(DEFAULT_SETS)
}

#[test]
fn bench_prints_the_table_and_json_on_a_subset() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("accuracy.json");
    let stdout = stdout_of_success(
        c4sim()
            .args(["bench", "accuracy", "--sets"])
            .arg(sets_path())
            .args([
                "--player",
                "random",
                "--player",
                "{kind: minimax, depth: 2}",
                "--limit",
                "5",
                "--json",
            ])
            .arg(&json),
    );
    for needle in [
        "W/D/L mistakes",
        "| begin-easy (5) |",
        "| end-hard (5) |",
        "| begin+middle (30) |",
        "| all (45) |",
        "| random |",
        "| {kind: minimax, depth: 2} |",
        "Exact-best moves",
        "Time per move",
    ] {
        assert!(stdout.contains(needle), "no `{needle}` in:\n{stdout}");
    }
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let players = v["players"].as_array().unwrap();
    assert_eq!(players.len(), 2);
    for p in players {
        for set in set_names() {
            assert_eq!(p["sets"][&set]["positions"], 5, "{set}");
        }
        let all = &p["sets"]["all"];
        assert_eq!(all["positions"], 45);
        let rate = all["mistake_rate"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&rate));
        let se = all["mistake_se"].as_f64().unwrap();
        assert!((se - (rate * (1.0 - rate) / 45.0).sqrt()).abs() < 1e-9);
    }
    // Minimax depth 2 sees every one-move threat; random does not.
    let mm = players[1]["sets"]["all"]["mistakes"].as_u64().unwrap();
    let random = players[0]["sets"]["all"]["mistakes"].as_u64().unwrap();
    assert!(mm <= random, "minimax 2 {mm} mistakes, random {random}");
}

#[test]
fn bench_refuses_unknown_sets_and_no_players() {
    c4sim()
        .args(["bench", "accuracy", "--sets"])
        .arg(sets_path())
        .args(["--player", "random", "--only", "begin-trivial"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("no set `begin-trivial`"));
    c4sim()
        .args(["bench", "accuracy", "--sets"])
        .arg(sets_path())
        .assert()
        .code(2)
        .stderr(predicates::str::contains("--player"));
}

#[test]
fn committed_sets_parse_and_agree_with_the_solver() {
    let sets = load_sets(&sets_path()).unwrap();
    assert_eq!(sets.header["format"], FORMAT);
    assert_eq!(sets.header["version"], VERSION);
    let per_set = sets.header["per_set"].as_u64().unwrap() as usize;
    for name in set_names() {
        let n = sets.positions.iter().filter(|p| p.set == name).count();
        assert_eq!(n, per_set, "{name}");
    }
    for p in &sets.positions {
        let moves = parse_move_string(&p.moves, 7).unwrap();
        assert_eq!(moves.len(), p.ply);
        assert_eq!(p.scores.len(), 7);
        // Every playable column is labelled; no column wins at once.
        let best_now = (42 + 1 - p.ply as i32) / 2;
        assert!(p.scores.iter().flatten().all(|&s| s < best_now), "{}", p.moves);
        let best = p.scores.iter().flatten().max().copied().unwrap();
        let col = p.scores.iter().position(|&s| s == Some(best)).unwrap();
        assert!(judge(&p.scores, col).exact_best);
    }
    // Re-label the three cheapest end positions from scratch.
    let mut end: Vec<_> = sets.positions.iter().filter(|p| p.set.starts_with("end-")).collect();
    assert!(end.iter().all(|p| (END.0..=END.1).contains(&p.ply)));
    end.sort_by_key(|p| p.nodes);
    let mut solver = Solver::new(c4sim::bench::accuracy::board(), 18).unwrap();
    for p in end.iter().take(3) {
        let pos = solver.position(&parse_move_string(&p.moves, 7).unwrap()).unwrap();
        assert_eq!(solver.scores(&pos, Some(20_000_000)), p.scores, "{}", p.moves);
    }
}

/// Training's `eval.accuracy` (the network in memory, positions dealt to
/// threads) judges the shipped model exactly as `bench accuracy` does (the
/// `alphazero` kind loaded from disk, one position after another), on the
/// same fixed subset. `C4SIM_ACC_POSITIONS` sets its size (default 14, a
/// few seconds); the report's 300 run with it set.
#[test]
fn training_accuracy_agrees_with_bench_accuracy_on_the_shipped_model() {
    use c4sim::az::inference::{Evaluate, Folded, ParallelCpu};
    use c4sim::bench::accuracy::{bench_player, parse_choice, subset, ALL};
    use c4sim::players::alphazero::AlphaZeroBot;
    use c4sim::players::model::load_model;
    use std::sync::Arc;

    let n: usize = std::env::var("C4SIM_ACC_POSITIONS").map_or(14, |v| v.parse().unwrap());
    let model = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("models/connect4-6x7");
    let sets = load_sets(&sets_path()).unwrap();
    let order = parse_choice("begin+middle").unwrap();
    let chosen = subset(&sets, &order, n);
    let owned: Vec<_> = chosen.iter().map(|p| (*p).clone()).collect();
    let (meta, net) = load_model(&model, &candle_core::Device::Cpu).unwrap();
    let folded = Arc::new(Folded::from_net(&net).unwrap());
    let make = || Ok::<_, std::convert::Infallible>(Box::new(ParallelCpu::new(folded.clone(), 1)) as Box<dyn Evaluate>);
    let t = std::time::Instant::now();
    let trained = c4sim::train::eval_accuracy::measure(&make, meta.board, &owned, 100, 1, 2).unwrap();
    eprintln!("eval.accuracy: {:.1} s", t.elapsed().as_secs_f64());
    for (sims, got) in [(1, &trained.raw), (100, &trained.mcts)] {
        let mut bot = AlphaZeroBot::load(&model, sims, "cpu", None).unwrap();
        let bench = bench_player(&mut bot, &chosen, &order, 1).unwrap();
        let want = &bench.iter().find(|(s, _)| s == ALL).unwrap().1;
        eprintln!(
            "{sims} simulations on {n} positions: eval.accuracy {}/{} = {:.2}% ± {:.2}, bench accuracy {}/{} = {:.2}% ± {:.2}",
            got.mistakes,
            got.n,
            100.0 * got.mistake_rate(),
            100.0 * got.mistake_se(),
            want.mistakes,
            want.n,
            100.0 * want.mistake_rate(),
            100.0 * want.mistake_se()
        );
        assert_eq!(
            (got.n, got.mistakes, got.exact_best),
            (want.n, want.mistakes, want.exact_best),
            "{sims} simulations"
        );
    }
}
