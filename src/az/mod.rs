//! AlphaZero: network (candle), batched MCTS, self-play, training, checkpoints.
//!
//! | module | job |
//! |---|---|
//! | [`encode`] | input planes, training samples, the mirror |
//! | [`network`] | the residual network and AdamW in candle (any device) |
//! | [`inference`] | the folded fast CPU path, the candle (GPU) path, the position cache |
//! | [`mcts`] | PUCT search in steps, so leaves of many games can share a batch |
//! | [`selfplay`] | workers advancing many games at once |
//! | [`replay`] | the replay buffer, mirror augmentation, its file |
//! | [`checkpoint`] | atomic checkpoints, latest-checkpoint lookup, model paths |
//! | [`metrics`] | metrics.csv and curves.svg |
//! | [`player`] | the `alphazero` player kind |
//! | [`device`] | `device: auto | cpu | cuda | metal` |
//! | [`train`] | `mode: train`: the Trainer actor, iterations, evaluation through the referee |

pub mod checkpoint;
pub mod device;
pub mod encode;
pub mod inference;
pub mod mcts;
pub mod metrics;
pub mod network;
pub mod player;
pub mod replay;
pub mod selfplay;
pub mod train;

pub use train::run_train;
