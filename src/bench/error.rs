//! Why a bench could not run or finish: one typed error for the `bench`
//! layer, so the cause (an I/O error, a network error, a bad argument with
//! its value) reaches the command line intact instead of as a string.
//!
//! The texts are what the benches have always printed (tests and users
//! match them); the command-line shell adds `error: ` and chooses the exit
//! code (2 for bad input, 1 for a failure while running).

use crate::game::board::BoardError;
use std::path::PathBuf;

/// A typed error from a layer below (sets files, players, the exchange
/// folder, the accuracy tally), boxed: the bench only passes it on, with
/// its source chain, and needs no variant per layer.
pub type Cause = Box<dyn std::error::Error + Send + Sync>;

/// Why a bench failed; the `Display` text is the message a person reads.
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    /// A file or folder that could not be read, written or made.
    #[error("{}: {source}", .path.display())]
    File {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Any other I/O failure: standard output, a child process, the
    /// executable's own path.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    /// The network library failed (building, folding, saving a network).
    #[error(transparent)]
    Network(#[from] candle_core::Error),
    #[error(transparent)]
    Model(#[from] crate::players::model::ModelError),
    #[error(transparent)]
    Scenario(#[from] crate::scenario::ScenarioError),
    #[error(transparent)]
    Solver(#[from] crate::solver::SolverError),
    #[error(transparent)]
    Board(#[from] BoardError),
    /// A labelled position whose move string does not replay.
    #[error("{moves}: {source}")]
    Moves {
        moves: String,
        #[source]
        source: BoardError,
    },
    /// A cause from a layer that reports strings; see [`Cause`].
    #[error(transparent)]
    Below(Cause),

    /// `bench accuracy` without a player to measure.
    #[error("give at least one --player SPEC (or --make-sets)")]
    NoPlayer,
    /// `bench accuracy --only` named a set that does not exist.
    #[error("--only: no set `{name}`; sets: {}", .known.join(", "))]
    UnknownSet { name: String, known: Vec<String> },
    /// `bench accuracy --make-sets --groups` named a group that does not exist.
    #[error("no group `{0}`: the groups are begin, middle, end")]
    UnknownGroup(String),

    /// `bench supervised`: a step count of 0 would never measure or batch.
    #[error("--eval-every and --batch-size must be at least 1")]
    ZeroSteps,
    #[error("--value-weight must be a number ≥ 0, not {0}")]
    ValueWeight(f64),
    /// Every training position was a test position (or none was of the chosen sets).
    #[error("no training position of `{only}` in the --train files that is not a test position")]
    NoTrainingPosition { only: String },
    /// `bench supervised --init` gave a model of another board.
    #[error("{}: a model for {board}, not 6×7 (win 4)", .dir.display())]
    ModelBoard { dir: PathBuf, board: String },

    /// A `BLOCKSxCHANNELS` network size that does not parse; `why` says
    /// which part is wrong.
    #[error("`{spec}`: {why}")]
    NetSize { spec: String, why: &'static str },
    /// The search bench's positions are 64-bit boards.
    #[error("the search bench takes models of boards of up to 64 cells")]
    SearchBoard,
    /// PyTorch's inference script could not be started.
    #[error("cannot run {python}: {source}")]
    TorchStart {
        python: String,
        #[source]
        source: std::io::Error,
    },
    /// PyTorch's inference script failed; the last line it wrote.
    #[error("{0}")]
    TorchFailed(String),

    /// `bench ingest` could not start one of its writer processes.
    #[error("cannot start a writer: {0}")]
    WriterStart(#[source] std::io::Error),
    #[error("a writer failed: {0}")]
    WriterFailed(std::process::ExitStatus),
    /// The trainer's intake did not take every file the writers wrote.
    #[error("took {took} files of {files} ({rejected} set aside)")]
    Intake { took: u64, files: u64, rejected: u64 },
}

impl BenchError {
    /// A file error at `path`.
    pub fn file(path: impl Into<PathBuf>) -> impl FnOnce(std::io::Error) -> BenchError {
        let path = path.into();
        move |source| BenchError::File { path, source }
    }

    /// A layer below failed; its error is kept as the source.
    pub fn below(cause: impl Into<Cause>) -> BenchError {
        BenchError::Below(cause.into())
    }
}
