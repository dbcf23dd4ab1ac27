//! `c4sim bench …`: each bench's flags handed to its library function, and
//! the tables of the two that compare the engine with a plain loop.

use super::args::BenchWhat;
use super::commands::usage;
use c4sim::actors::mode::ModeError;
use c4sim::game::BoardConfig;

/// `c4sim bench …`: each bench prints its own table on standard output.
pub(super) fn bench(what: BenchWhat) -> Result<(), ModeError> {
    match what {
        BenchWhat::Lobby(args) => c4sim::net::bench::run(&args),
        BenchWhat::Accuracy(args) => c4sim::bench::accuracy::run(&args),
        BenchWhat::Supervised(args) => c4sim::bench::supervised::run(&args),
        BenchWhat::Ingest(args) => c4sim::bench::ingest::run(&args).map_err(usage),
        BenchWhat::Solver(o) => c4sim::bench::solver::solver_bench(&o, &mut std::io::stdout()).map_err(usage),
        BenchWhat::Minimax {
            depth,
            positions,
            baseline,
        } => {
            let pos = c4sim::bench::minimax::midgame_positions(positions, 2024);
            c4sim::bench::minimax::minimax_bench(depth, &pos, baseline, &mut std::io::stdout())
                .map(drop)
                .map_err(|e| ModeError::Failed(e.to_string().into()))
        }
        BenchWhat::Tournament { games, rounds } => bench_tournament(games, rounds),
        BenchWhat::Inference {
            nets,
            batches,
            board,
            rounds,
            seconds,
            torch,
        } => bench_inference(&nets, &batches, &board, rounds, seconds, torch.as_deref()),
        BenchWhat::Train {
            nets,
            board,
            batch,
            steps,
            rounds,
        } => bench_train(&nets, &board, batch, steps, rounds),
        BenchWhat::Selfplay {
            net,
            board,
            games,
            simulations,
            concurrent,
            rounds,
        } => bench_selfplay(&net, &board, games, simulations, concurrent, rounds),
        BenchWhat::Search {
            model,
            simulations,
            rounds,
        } => {
            let cores = c4sim::util::cores();
            c4sim::bench::az::search_bench(&model, simulations.max(1), cores, rounds.max(1), &mut std::io::stdout())
                .map_err(usage)
        }
        BenchWhat::Referee { games, rounds } => bench_referee(games, rounds),
    }
}

/// `c4sim bench tournament`: the engine against a plain loop, medians of
/// `rounds`; fails if any way played other games.
fn bench_tournament(games: u64, rounds: usize) -> Result<(), ModeError> {
    let runs: Vec<_> = (0..rounds)
        .map(|_| c4sim::bench::referee::tournament_bench(games, &[1, 2]))
        .collect();
    let med = |f: &dyn Fn(&c4sim::bench::referee::TournamentBench) -> f64| {
        let mut v: Vec<f64> = runs.iter().map(f).collect();
        c4sim::util::median(&mut v)
    };
    println!(
        "round-robin of 4 fast bots, {} games, {rounds} rounds (medians):",
        runs[0].games
    );
    println!(
        "  plain loop (same games, no actors):      {:>10.0} games/s",
        med(&|r| r.loop_games_per_s)
    );
    for (i, (c, _, _)) in runs[0].engine.iter().enumerate() {
        println!(
            "  tournament engine, concurrency {c}:        {:>10.0} games/s   ratio to loop {:.2}",
            med(&|r| r.engine[i].1),
            med(&|r| r.engine[i].2)
        );
    }
    let same = runs.iter().all(|r| r.same_games);
    println!("  same games every way: {same}");
    if same {
        Ok(())
    } else {
        Err(ModeError::Failed(
            "the engine and the plain loop played different games".into(),
        ))
    }
}

/// `c4sim bench referee`: the actors against a plain loop; fails if the
/// games differ.
fn bench_referee(games: u64, rounds: usize) -> Result<(), ModeError> {
    println!("random vs random on 7×6, {games} games per round, {rounds} rounds (medians):");
    let r = c4sim::bench::referee::referee_bench(games, rounds);
    println!(
        "  plain loop (same referee state machine, direct calls): {:>10.0} games/s",
        r.loop_games_per_s
    );
    println!(
        "  referee + player actors:                               {:>10.0} games/s",
        r.actor_games_per_s
    );
    println!(
        "  ratio actors / loop: {:.2}   same games both ways: {}",
        r.ratio, r.same_games
    );
    if r.same_games {
        Ok(())
    } else {
        Err(ModeError::Failed(
            "the actors and the plain loop played different games".into(),
        ))
    }
}

/// `c4sim bench selfplay`; its failures are bad arguments (exit code 2).
fn bench_selfplay(
    net: &str,
    board: &str,
    games: u64,
    simulations: u32,
    concurrent: usize,
    rounds: usize,
) -> Result<(), ModeError> {
    let cfg = BoardConfig::parse_compact(board).map_err(usage)?;
    if cfg.cells() > 64 {
        return Err(usage("the self-play bench takes boards of up to 64 cells"));
    }
    let (blocks, channels) = c4sim::bench::az::parse_net(net).map_err(usage)?;
    let cores = c4sim::util::cores();
    c4sim::bench::az::selfplay_bench(
        cfg,
        blocks,
        channels,
        games.max(1),
        simulations.max(1),
        concurrent.max(1),
        cores,
        rounds.max(1),
        &mut std::io::stdout(),
    )
    .map(|_| ())
    .map_err(usage)
}

/// `c4sim bench inference`; its failures are bad arguments (exit code 2).
fn bench_inference(
    nets: &[String],
    batches: &[usize],
    board: &str,
    rounds: usize,
    seconds: f64,
    torch: Option<&str>,
) -> Result<(), ModeError> {
    let (cfg, nets) = board_and_nets(board, nets)?;
    let cores = c4sim::util::cores();
    c4sim::bench::az::inference_bench(
        cfg,
        &nets,
        batches,
        rounds.max(1),
        std::time::Duration::from_secs_f64(seconds.max(0.01)),
        cores,
        torch,
        &mut std::io::stdout(),
    )
    .map_err(usage)
}

/// `c4sim bench train`; its failures are bad arguments (exit code 2).
fn bench_train(nets: &[String], board: &str, batch: usize, steps: usize, rounds: usize) -> Result<(), ModeError> {
    let (cfg, nets) = board_and_nets(board, nets)?;
    c4sim::bench::az::train_bench(
        cfg,
        &nets,
        batch.max(2),
        steps.max(1),
        rounds.max(1),
        &mut std::io::stdout(),
    )
    .map_err(usage)
}

/// `--board ROWSxCOLSxWIN` and `--nets BLOCKSxCHANNELS,...` of the AlphaZero benches.
fn board_and_nets(board: &str, nets: &[String]) -> Result<(BoardConfig, Vec<(usize, usize)>), ModeError> {
    let cfg = BoardConfig::parse_compact(board).map_err(usage)?;
    let nets = nets
        .iter()
        .map(|n| c4sim::bench::az::parse_net(n))
        .collect::<Result<Vec<_>, _>>()
        .map_err(usage)?;
    Ok((cfg, nets))
}
