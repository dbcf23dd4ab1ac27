//! AlphaZero: network (candle), batched MCTS, self-play, training, checkpoints.

use crate::scenario::Scenario;

/// `mode: train`. Returns the process exit code.
pub fn run_train(sc: &Scenario, _json: bool) -> u8 {
    eprintln!("{}: mode `train` is not available in this build yet", sc.path.display());
    2
}
