//! Game-tree searches over bitboard positions: pure, synchronous code.
