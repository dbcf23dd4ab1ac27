//! `mode: train`: AlphaZero self-play training on the engine of [`crate::az`].
//!
//! | module | job |
//! |---|---|
//! | [`trainer`] | the Trainer actor: iterations, checkpoints, evaluation games through the tournament's lanes |
//! | [`selfplay`] | workers advancing many games at once, their leaves batched into one network call |
//! | [`exact`] | exact value targets: the perfect solver rescores the positions it proves within a budget |
//! | [`resume`] | what a run starts from: its newest checkpoint, or a new network |
//! | [`replay`] | the replay buffer, mirror augmentation, its file |
//! | [`metrics`] | metrics.csv and curves.svg |
//! | [`eval_accuracy`] | `eval.accuracy`: the network's mistakes against perfect play, alone and with search |
//! | [`exchange`] | a distributed run's shared volume: published networks, workers' folders, the ledger of files taken |
//! | [`gamefile`] | one worker's batch of games as a file (the format, pure) |
//! | [`ingest`] | `--role trainer`: takes finished files exactly once until an iteration's worth arrived |
//! | [`worker`] | `--role selfplay`: plays batches with the newest network, writes them |
//! | [`error`] | `TrainError`: why a run stops, its causes kept as sources |
//! | [`progress`] | progress lines on stdout: JSON events or text |

pub mod checkpoint;
pub mod error;
pub mod eval_accuracy;
pub mod exact;
pub mod exchange;
pub mod gamefile;
pub mod ingest;
pub mod metrics;
pub mod progress;
pub mod replay;
pub mod resume;
pub mod selfplay;
pub mod trainer;
pub mod worker;

pub use error::TrainError;
pub use trainer::{run_train, run_train_as, Role};
pub use worker::run_worker;
