//! Game-tree searches over bitboard positions: pure, synchronous code.
//!
//! - [`minimax`]: the fixed-depth alpha–beta opponent of alphazero.md,
//!   exactly equal to plain negamax, only faster.
//! - [`mcts`]: plain UCT with random playouts, the reference opponent
//!   between minimax and AlphaZero.
//! - [`bench`]: a reproducible timing of minimax against the plain negamax.

pub mod bench;
pub mod mcts;
pub mod minimax;
