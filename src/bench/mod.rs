//! `c4sim bench ...`: performance figures, each against a baseline measured
//! in the same run (this machine is noisy: medians and ratios, never a
//! single timing).
//!
//! | module | measures |
//! |---|---|
//! | [`accuracy`] | players' mistakes against the perfect solver on labelled test sets |
//! | [`referee`] | the referee and tournament engine against the same games in a plain loop |
//! | [`minimax`] | minimax against plain negamax |
//! | [`solver`] | the perfect solver by ply and on end/middle/begin sets (no baseline: absolute times) |
//! | [`az`] | network inference, self-play and the player's search |
//! | [`ingest`] | a distributed trainer's intake of many workers' files against one worker's output |
//! | [`supervised`] | a network trained on solver-labelled positions: can its size learn perfect play? (no baseline: a capacity check) |
//!
//! Their errors are [`error::BenchError`]: typed, with the texts the
//! command line prints.
//!
//! `bench lobby` lives with the server in `net::bench`.

pub mod accuracy;
pub mod az;
pub mod error;
pub mod ingest;
pub mod minimax;
pub mod referee;
pub mod solver;
pub mod supervised;
