//! Game-tree searches over bitboard positions: pure, synchronous code.
//!
//! - [`minimax`]: the fixed-depth alpha–beta opponent of docs/alphazero.md,
//!   exactly equal to plain negamax, only faster.
//! - [`reference`]: the plain negamax that minimax must equal (tests, bench).
//! - [`uct`]: plain UCT with random playouts, the reference opponent
//!   between minimax and AlphaZero.

pub mod minimax;
pub mod reference;
pub mod uct;
