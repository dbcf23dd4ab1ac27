//! Why a training run stops: one enum for the trainer's own failures, with
//! the errors of the layers below (device, exchange, model files, candle,
//! I/O) kept as sources, so `c4sim -v` can print the chain. Each text is
//! the line a person reads (tests and scripts match them).

use super::exchange::ExchangeError;
use super::metrics::ChartError;
use crate::az::device::DeviceError;
use crate::players::model::ModelError;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum TrainError {
    #[error(transparent)]
    Device(#[from] DeviceError),
    #[error(transparent)]
    Exchange(#[from] ExchangeError),
    #[error(transparent)]
    Model(#[from] ModelError),
    /// The network or optimizer in candle (building, folding, loading).
    #[error(transparent)]
    Candle(#[from] candle_core::Error),
    #[error(transparent)]
    Chart(#[from] ChartError),
    #[error("cannot create {}: {source}", path.display())]
    Create { path: PathBuf, source: std::io::Error },
    #[error("cannot read {}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("cannot clear {}: {source}", path.display())]
    Clear { path: PathBuf, source: std::io::Error },
    /// A file of the run that could not be read or written, said as `PATH: why`.
    #[error("{}: {source}", path.display())]
    File { path: PathBuf, source: std::io::Error },
    #[error("{}: {source}", path.display())]
    Json { path: PathBuf, source: serde_json::Error },
    /// Writing iteration `iteration`'s checkpoint under `out`.
    #[error("checkpoint in {}: {source}", out.display())]
    Checkpoint {
        out: PathBuf,
        iteration: u32,
        source: std::io::Error,
    },
    /// The ingest ledger could not be put into the checkpoint.
    #[error("{0}")]
    Ledger(#[source] serde_json::Error),
    /// `what` is the file: "the network", "the trained network", "the optimizer".
    #[error("saving {what}: {source}")]
    Save {
        what: &'static str,
        source: candle_core::Error,
    },
    #[error("training step failed: {0}")]
    Step(#[source] candle_core::Error),
    #[error("averaging the weights: {0}")]
    Average(#[source] candle_core::Error),
    #[error("publishing network {iteration}: {source}")]
    Publish { iteration: u32, source: std::io::Error },
    /// The checkpoint to resume was trained for another board.
    #[error(
        "{} holds a model for a {theirs} board, but this scenario's board is {ours}: \
         use another `out`, or `resume: false` to start over",
        out.display()
    )]
    OtherBoard {
        out: PathBuf,
        theirs: crate::az::meta::BoardMeta,
        ours: crate::az::meta::BoardMeta,
    },
    /// The checkpoint to resume holds a network `train.network` cannot grow from.
    #[error(
        "{} holds a network of {} blocks × {} channels (value head {}), but `train.network` asks \
         for {} × {} ({}): use another `out`, or `resume: false` to start over",
        out.display(), theirs.blocks, theirs.channels, theirs.value_hidden,
        ours.blocks, ours.channels, ours.value_hidden
    )]
    OtherNetwork {
        out: PathBuf,
        theirs: crate::az::network::NetShape,
        ours: crate::az::network::NetShape,
    },
    #[error("eval openings file {}: {source}", path.display())]
    OpeningsFile { path: PathBuf, source: std::io::Error },
    #[error("eval openings file {}: {why}", path.display())]
    Openings { path: PathBuf, why: String },
    /// `train.eval.accuracy`'s set file or choice; `why` says what.
    #[error("`train.eval.accuracy`: {why}")]
    Accuracy { why: String },
    #[error("`train.eval.accuracy`: {}: {source}", path.display())]
    AccuracyFile { path: PathBuf, source: std::io::Error },
    /// A player asked on labelled positions failed (its own words).
    #[error("{0}")]
    Judge(String),
    /// The evaluation games could not be played (the lanes' own words).
    #[error("{0}")]
    Evaluation(String),
    /// Work on the blocking pool panicked; `what` says which.
    #[error("{what} panicked: {why}")]
    Panicked { what: &'static str, why: String },
    #[error("the trainer lost its state after a failure")]
    LostState,
}

/// A failed run is a runtime failure (exit code 1); the error stays its
/// source, so `-v` prints its chain.
impl From<TrainError> for crate::actors::mode::ModeError {
    fn from(e: TrainError) -> Self {
        crate::actors::mode::ModeError::failed(e)
    }
}
