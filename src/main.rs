//! The `c4sim` command line: run, validate, analyze, bench.

use c4sim::actors::mode::ModeError;
use c4sim::game::BoardConfig;
use c4sim::scenario::{self, Mode};
use clap::{Parser, Subcommand};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "c4sim", version, about = "Connect Four worlds from YAML scenario files")]
struct Cli {
    /// More log output on standard error (-v info, -vv debug). RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario file.
    Run {
        file: PathBuf,
        #[command(flatten)]
        flags: RunFlags,
    },
    /// Play against a player in a web browser: serves one page and prints its URL (`mode: web` without a file).
    Web {
        /// Where to listen; loopback unless you mean to open it to other machines.
        #[arg(long, default_value = c4sim::web::DEFAULT_BIND)]
        bind: std::net::SocketAddr,
        /// The player to play: a profile name from players/, a profile file, or inline YAML like '{kind: minimax, depth: 8}'.
        #[arg(long, default_value = c4sim::web::DEFAULT_PLAYER)]
        player: String,
        /// Board as ROWSxCOLSxWIN.
        #[arg(long, default_value = "6x7x4")]
        board: String,
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Analyses (Show the solution, replays) at once for the whole server; more wait.
        /// Default: half the cores, at least 1, so games keep their pace.
        #[arg(long)]
        analysts: Option<usize>,
    },
    /// Write a tournament's report from every game recorded in its report directory (all shards).
    Report {
        file: PathBuf,
        /// A `summary` JSON object on standard output instead of the markdown report.
        #[arg(long)]
        json: bool,
    },
    /// Check a scenario file without running it.
    Validate {
        file: PathBuf,
        /// Print the resolved scenario as YAML: defaults filled in, profiles expanded, durations normalised.
        #[arg(long)]
        resolved: bool,
    },
    /// Ask a player for its move on positions read from standard input (move strings, columns from 1).
    Analyze {
        /// A profile name from players/, a profile file, or inline YAML like '{kind: minimax, depth: 8}'.
        #[arg(long)]
        player: String,
        /// Board as ROWSxCOLSxWIN.
        #[arg(long, default_value = "6x7x4")]
        board: String,
        #[arg(long, default_value_t = 0)]
        seed: u64,
    },
    /// Run a lobby server (docs/lobby-protocol.md) from flags: `mode: serve` without a file.
    Serve(c4sim::net::cli::ServeArgs),
    /// Join a lobby server with c4sim players as clients: `mode: join` without a file.
    Join(c4sim::net::cli::JoinArgs),
    /// The perfect solver's opening book.
    Book {
        #[command(subcommand)]
        what: BookWhat,
    },
    /// Measure performance against a baseline in the same run.
    Bench {
        #[command(subcommand)]
        what: BenchWhat,
    },
}

#[derive(Subcommand)]
enum BookWhat {
    /// Build (or resume) the 6×7 book: the best exact move in every position a solver player meets in its first plies.
    Build {
        /// Entries for positions of fewer than this many plies.
        #[arg(long, default_value_t = 8)]
        plies: u32,
        /// Also walk from every opening of this many plies (both sides' moves
        /// forced, as in a tournament's `openings: {plies: N}`), so the player
        /// finds its moves after any such opening.
        #[arg(long, default_value_t = 0)]
        openings: u32,
        #[arg(long, default_value = "models/solver-book-6x7.bin")]
        out: PathBuf,
        #[command(flatten)]
        run: c4sim::book::SolveRun,
    },
    /// Build (or resume) the 6×7 score book: every position's exact score up to a ply, so
    /// every column's score of any earlier position is known at once (analysis, the page).
    Scores {
        /// Scores for every position of up to this many plies.
        #[arg(long, default_value_t = 7)]
        plies: u32,
        #[arg(long, default_value = "models/solver-scores-6x7.bin")]
        out: PathBuf,
        #[command(flatten)]
        run: c4sim::book::SolveRun,
    },
}

#[derive(Subcommand)]
enum BenchWhat {
    /// Load on a lobby server in another process: clients, matches/s, move latency percentiles.
    Lobby(c4sim::net::bench::LobbyArgs),
    /// A distributed trainer's intake of many writer processes' game files, against one self-play worker's output.
    Ingest(c4sim::bench::ingest::IngestArgs),
    /// W/D/L mistakes and exact-best moves against the perfect solver on labelled 6×7 test sets.
    Accuracy(c4sim::bench::accuracy::AccuracyArgs),
    /// Train a network on solver-labelled positions (not self-play) and follow its mistakes alone on them and on the test sets: can a network of this size learn perfect play?
    Supervised(c4sim::bench::supervised::SupervisedArgs),
    /// The perfect solver on 6×7 without a book: time and nodes/s by ply (0 to 20), and positions/s on end/middle/begin sets split easy/medium/hard.
    Solver(c4sim::bench::solver::SolverBenchOptions),
    /// Minimax time per move on fixed mid-game 7×6 positions, against plain negamax.
    Minimax {
        #[arg(long, default_value_t = 8)]
        depth: u32,
        #[arg(long, default_value_t = 20)]
        positions: usize,
        /// How many positions the (slow) plain negamax baseline is timed on.
        #[arg(long, default_value_t = 2)]
        baseline: usize,
    },
    /// A round-robin of fast bots through the tournament engine at concurrency 1 and 2, against a plain loop.
    Tournament {
        #[arg(long, default_value_t = 10000)]
        games: u64,
        #[arg(long, default_value_t = 3)]
        rounds: usize,
    },
    /// AlphaZero network inference (positions/s): plain candle vs the folded fast path, optionally vs PyTorch.
    Inference {
        /// Networks as BLOCKSxCHANNELS.
        #[arg(long, value_delimiter = ',', default_value = "6x64,4x32")]
        nets: Vec<String>,
        #[arg(long, value_delimiter = ',', default_value = "1,32,256")]
        batches: Vec<usize>,
        #[arg(long, default_value = "6x7x4")]
        board: String,
        #[arg(long, default_value_t = 5)]
        rounds: usize,
        /// Seconds per timed round.
        #[arg(long, default_value_t = 1.0)]
        seconds: f64,
        /// A Python with torch installed, to measure PyTorch in the same run.
        #[arg(long)]
        torch: Option<String>,
    },
    /// AlphaZero training steps/s: convolutions as unfold + matmul vs candle's conv2d.
    Train {
        #[arg(long, value_delimiter = ',', default_value = "6x64,2x32")]
        nets: Vec<String>,
        #[arg(long, default_value = "6x7x4")]
        board: String,
        #[arg(long, default_value_t = 64)]
        batch: usize,
        #[arg(long, default_value_t = 10)]
        steps: usize,
        #[arg(long, default_value_t = 3)]
        rounds: usize,
    },
    /// AlphaZero self-play: simulations/s and games/hour, one leaf at a time vs batched vs one worker per core.
    Selfplay {
        /// Network as BLOCKSxCHANNELS.
        #[arg(long, default_value = "6x64")]
        net: String,
        #[arg(long, default_value = "6x7x4")]
        board: String,
        #[arg(long, default_value_t = 16)]
        games: u64,
        #[arg(long, default_value_t = 100)]
        simulations: u32,
        /// Games per network batch (per worker) in the batched runs.
        #[arg(long, default_value_t = 64)]
        concurrent: usize,
        #[arg(long, default_value_t = 3)]
        rounds: usize,
    },
    /// AlphaZero player search: seconds per move with a trained model, one leaf per network call vs batches on one thread vs on every core.
    Search {
        /// A model directory (or a training `out` directory).
        #[arg(long, default_value = "models/connect4-6x7")]
        model: std::path::PathBuf,
        #[arg(long, default_value_t = 64000)]
        simulations: u32,
        #[arg(long, default_value_t = 3)]
        rounds: usize,
    },
    /// Random-vs-random 7×6 games through the referee and player actors, against a plain loop.
    Referee {
        #[arg(long, default_value_t = 20000)]
        games: u64,
        #[arg(long, default_value_t = 5)]
        rounds: usize,
    },
}

fn init_logs(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .try_init();
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logs(cli.verbose);
    let code = exit_code(command(cli.command));
    c4sim::players::external::kill_all_children();
    let _ = std::io::stdout().flush();
    ExitCode::from(code)
}

/// Runs one command; how it ended becomes the exit code in [`exit_code`].
fn command(command: Command) -> Result<(), ModeError> {
    match command {
        Command::Run { file, flags } => run(&file, flags),
        Command::Web {
            bind,
            player,
            board,
            seed,
            analysts,
        } => web(bind, &player, &board, seed, analysts),
        Command::Report { file, json } => match scenario::load(&file)? {
            sc if sc.mode == Mode::Tournament => c4sim::tournament::shard::report_command(&sc, json),
            _ => Err(ModeError::Usage(
                format!("{}: `c4sim report` takes a `mode: tournament` scenario", file.display()).into(),
            )),
        },
        Command::Validate { file, resolved } => {
            let sc = scenario::load(&file)?;
            if resolved {
                print!("{}", scenario::resolved::to_yaml(&sc));
            } else {
                println!(
                    "{}: ok — {} mode, {} players, board {}",
                    file.display(),
                    format!("{:?}", sc.mode).to_lowercase(),
                    sc.players.len(),
                    sc.board
                );
            }
            Ok(())
        }
        Command::Analyze { player, board, seed } => analyze(&player, &board, seed),
        Command::Bench { what } => bench(what),
        Command::Book {
            what:
                BookWhat::Build {
                    plies,
                    openings,
                    out,
                    run,
                },
        } => {
            let o = c4sim::book::BookBuildOptions {
                plies,
                openings,
                out,
                run,
            };
            c4sim::book::build_book(&o, &mut std::io::stderr())
                .map(drop)
                .map_err(usage)
        }
        Command::Book {
            what: BookWhat::Scores { plies, out, run },
        } => c4sim::book::build_scores(plies, &out, run, &mut std::io::stderr())
            .map(drop)
            .map_err(usage),
        Command::Serve(args) => match args.web {
            None => c4sim::net::cli::serve(&args),
            Some(bind) => c4sim::run::serve_watched(args.config().map_err(usage)?, bind),
        },
        Command::Join(args) => c4sim::net::cli::join(&args),
    }
}

/// A command's bad argument, said as `error: …` (exit code 2).
fn usage(e: impl std::fmt::Display) -> ModeError {
    ModeError::Usage(format!("error: {e}").into())
}

/// `c4sim run`'s flags beside the file: [`c4sim::run::RunOptions`] as clap reads them.
#[derive(clap::Args)]
struct RunFlags {
    /// One JSON object per event on standard output instead of the board.
    #[arg(long)]
    json: bool,
    /// Tournaments and training: start over instead of resuming (a tournament's report
    /// directory, a training run's `out`: its checkpoints, networks and workers' files).
    #[arg(long)]
    fresh: bool,
    /// Tournaments and training: write the run here instead of the scenario's
    /// `report.dir` / `train.out`.
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Training across processes or machines sharing `out` (docs/distributed.md):
    /// `trainer` trains on the workers' game files and publishes networks; `selfplay`
    /// plays games with the newest network and writes them. Without it, one process does both.
    #[arg(long, value_name = "ROLE", value_enum)]
    role: Option<c4sim::run::Role>,
    /// With `--role selfplay`: this worker's name, its folder under `out/selfplay/`
    /// (default: the machine's name and the process id).
    #[arg(long, value_name = "NAME")]
    worker: Option<String>,
    /// Tournaments: play only shard K of N (games numbered g ≡ K mod N), recorded in the
    /// shard's own file; merge with `c4sim report FILE`.
    #[arg(long, value_name = "K/N", value_parser = c4sim::tournament::shard::Shard::parse)]
    shard: Option<c4sim::tournament::shard::Shard>,
    /// Tournaments and lobby servers: also serve a live page (standings, games in progress)
    /// on this address, like 127.0.0.1:8080; its URL is printed on standard error.
    #[arg(long, value_name = "IP:PORT")]
    web: Option<std::net::SocketAddr>,
}

/// `c4sim run FILE`: the library's one entry point does the rest.
fn run(file: &std::path::Path, flags: RunFlags) -> Result<(), ModeError> {
    let sc = scenario::load(file)?;
    let opts = c4sim::run::RunOptions {
        json: flags.json,
        fresh: flags.fresh,
        out: flags.out,
        role: flags.role,
        worker: flags.worker,
        shard: flags.shard,
        web: flags.web,
    };
    c4sim::run::run_scenario(sc, &opts).map(drop)
}

/// The one place that turns how a mode ended into the process exit code:
/// 0 done, 1 runtime error, 2 bad scenario or usage, 130 interrupted.
fn exit_code(r: Result<(), ModeError>) -> u8 {
    match r {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("{e}");
            match e {
                ModeError::Usage(_) => 2,
                ModeError::Failed(_) => 1,
                ModeError::Interrupted(_) => 130,
            }
        }
    }
}

/// `--player SPEC` and `--board RxCxW` of `web` and `analyze`.
fn player_on_board(player: &str, board: &str) -> Result<(c4sim::players::PlayerSpec, BoardConfig), ModeError> {
    let cfg = BoardConfig::parse_compact(board).map_err(|e| ModeError::Usage(format!("--board: {e}").into()))?;
    let spec = scenario::parse_player_spec(player)?;
    Ok((spec, cfg))
}

/// `c4sim web`: the flags make the one player and board of a `mode: web` run.
fn web(
    bind: std::net::SocketAddr,
    player: &str,
    board: &str,
    seed: u64,
    analysts: Option<usize>,
) -> Result<(), ModeError> {
    let (spec, cfg) = player_on_board(player, board)?;
    let opponent = c4sim::web::play::Opponent {
        spec,
        cfg,
        seed,
        move_time: scenario::DEFAULT_MOVE_TIME,
    };
    c4sim::web::serve_play(bind, opponent, analysts)
}

fn analyze(player: &str, board: &str, seed: u64) -> Result<(), ModeError> {
    let (spec, cfg) = player_on_board(player, board)?;
    let mut strategy = c4sim::analyze::analyzer(&spec, seed).map_err(usage)?;
    strategy.fits(cfg).map_err(usage)?;
    c4sim::analyze::run(
        strategy.as_mut(),
        cfg,
        std::io::stdin().lock(),
        std::io::stdout().lock(),
    )
    .map_err(|e| ModeError::Failed(e.to_string().into()))
}

fn bench(what: BenchWhat) -> Result<(), ModeError> {
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
        } => bench_inference(&nets, &batches, &board, rounds, seconds, torch.as_deref()).map_err(usage),
        BenchWhat::Train {
            nets,
            board,
            batch,
            steps,
            rounds,
        } => bench_train(&nets, &board, batch, steps, rounds).map_err(usage),
        BenchWhat::Selfplay {
            net,
            board,
            games,
            simulations,
            concurrent,
            rounds,
        } => bench_selfplay(&net, &board, games, simulations, concurrent, rounds).map_err(usage),
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

/// `c4sim bench selfplay`.
fn bench_selfplay(
    net: &str,
    board: &str,
    games: u64,
    simulations: u32,
    concurrent: usize,
    rounds: usize,
) -> Result<(), String> {
    let cfg = BoardConfig::parse_compact(board)?;
    if cfg.cells() > 64 {
        return Err("the self-play bench takes boards of up to 64 cells".into());
    }
    let (blocks, channels) = c4sim::bench::az::parse_net(net)?;
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
    .map_err(|e| e.to_string())
}

/// `c4sim bench inference`.
fn bench_inference(
    nets: &[String],
    batches: &[usize],
    board: &str,
    rounds: usize,
    seconds: f64,
    torch: Option<&str>,
) -> Result<(), String> {
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
    .map_err(|e| e.to_string())
}

/// `c4sim bench train`.
fn bench_train(nets: &[String], board: &str, batch: usize, steps: usize, rounds: usize) -> Result<(), String> {
    let (cfg, nets) = board_and_nets(board, nets)?;
    c4sim::bench::az::train_bench(
        cfg,
        &nets,
        batch.max(2),
        steps.max(1),
        rounds.max(1),
        &mut std::io::stdout(),
    )
    .map_err(|e| e.to_string())
}

/// `--board ROWSxCOLSxWIN` and `--nets BLOCKSxCHANNELS,...` of the AlphaZero benches.
fn board_and_nets(board: &str, nets: &[String]) -> Result<(BoardConfig, Vec<(usize, usize)>), String> {
    let cfg = BoardConfig::parse_compact(board)?;
    let nets = nets
        .iter()
        .map(|n| c4sim::bench::az::parse_net(n))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((cfg, nets))
}
