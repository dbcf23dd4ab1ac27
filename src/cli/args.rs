//! The command line as clap reads it: every subcommand and flag, nothing
//! that runs. [`super::commands`] and [`super::bench`] act on them.

use clap::{Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser)]
#[command(name = "c4sim", version, about = "Connect Four worlds from YAML scenario files")]
pub(crate) struct Cli {
    /// More log output on standard error (-v info, -vv debug). RUST_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub(crate) verbose: u8,
    #[command(subcommand)]
    pub(crate) command: Command,
}

#[derive(Subcommand)]
pub(crate) enum Command {
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
pub(crate) enum BookWhat {
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
        run: super::book::SolveRun,
    },
    /// Build (or resume) the 6×7 score book: every position's exact score up to a ply, so
    /// every column's score of any earlier position is known at once (analysis, the page).
    Scores {
        /// Scores for every position of up to this many plies.
        #[arg(long, default_value_t = 9)]
        plies: u32,
        #[arg(long, default_value = "models/solver-scores-6x7.bin")]
        out: PathBuf,
        /// A complete score book of fewer plies to build on (the shipped one): its entries are
        /// taken over and checked against the new ones, and each new position's search starts at
        /// the score its parents prove.
        #[arg(long)]
        from: Option<PathBuf>,
        /// When the book is complete, check this many of its entries (its last two plies,
        /// evenly spread) against a fresh search; a disagreement fails the build.
        #[arg(long, default_value_t = 8)]
        check: usize,
        #[command(flatten)]
        run: super::book::SolveRun,
    },
}

#[derive(Subcommand)]
pub(crate) enum BenchWhat {
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

/// `c4sim run`'s flags beside the file: [`c4sim::run::RunOptions`] as clap reads them.
#[derive(clap::Args)]
pub(crate) struct RunFlags {
    /// One JSON object per event on standard output instead of the board.
    #[arg(long)]
    pub(crate) json: bool,
    /// Tournaments and training: start over instead of resuming (a tournament's report
    /// directory, a training run's `out`: its checkpoints, networks and workers' files).
    #[arg(long)]
    pub(crate) fresh: bool,
    /// Tournaments and training: write the run here instead of the scenario's
    /// `report.dir` / `train.out`.
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// Training across processes or machines sharing `out` (docs/distributed.md):
    /// `trainer` trains on the workers' game files and publishes networks; `selfplay`
    /// plays games with the newest network and writes them. Without it, one process does both.
    #[arg(long, value_name = "ROLE", value_enum)]
    pub(crate) role: Option<c4sim::run::Role>,
    /// With `--role selfplay`: this worker's name, its folder under `out/selfplay/`
    /// (default: the machine's name and the process id).
    #[arg(long, value_name = "NAME")]
    pub(crate) worker: Option<String>,
    /// Tournaments: play only shard K of N (games numbered g ≡ K mod N), recorded in the
    /// shard's own file; merge with `c4sim report FILE`.
    #[arg(long, value_name = "K/N", value_parser = c4sim::tournament::shard::Shard::parse)]
    pub(crate) shard: Option<c4sim::tournament::shard::Shard>,
    /// Tournaments and lobby servers: also serve a live page (standings, games in progress)
    /// on this address, like 127.0.0.1:8080; its URL is printed on standard error.
    #[arg(long, value_name = "IP:PORT")]
    pub(crate) web: Option<std::net::SocketAddr>,
}
