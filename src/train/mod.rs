//! `mode: train`: AlphaZero self-play training on the engine of [`crate::az`].
//!
//! | module | job |
//! |---|---|
//! | [`trainer`] | the Trainer actor: iterations, checkpoints, evaluation games through the tournament's lanes |
//! | [`selfplay`] | workers advancing many games at once, their leaves batched into one network call |
//! | [`exact`] | exact value targets: the perfect solver rescores the positions it proves within a budget |
//! | [`replay`] | the replay buffer, mirror augmentation, its file |
//! | [`metrics`] | metrics.csv and curves.svg |
//! | [`accuracy`] | `eval.accuracy`: the network's mistakes against perfect play, alone and with search |

pub mod accuracy;
pub mod exact;
pub mod metrics;
pub mod replay;
pub mod selfplay;
pub mod trainer;

pub use trainer::run_train;
