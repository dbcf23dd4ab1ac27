//! The functional core of the rules: pure code, no I/O, no actors.

pub mod bitboard;
pub mod board;
pub mod openings;
pub mod rules;

pub use board::{
    colour_name, Board, BoardConfig, IllegalMove, COLOUR_NAMES, DEFAULT_LETTERS, MAX_SEATS, MAX_SIDE, MIN_SEATS,
};
pub use rules::{Answer, EndReason, Game, Outcome, Refusal, Step, DEFAULT_MAX_INVALID};
