//! `eval.accuracy`: how often the network being trained leaves perfect
//! play, the instrument the learning issue steers by (a score against one
//! minimax saturates and is noisy; W/D/L mistakes on solver-labelled
//! positions are neither).
//!
//! Measured on evaluated iterations (the `eval.every` schedule), on a fixed
//! subset of the labelled sets ([`crate::solver::sets::subset`]), so every
//! iteration is judged on the same positions. Two players, both the
//! `alphazero` player over the current network exactly as `c4sim bench
//! accuracy --player '{kind: alphazero, …}'` builds it:
//! - raw: 1 simulation, the network's own choice;
//! - mcts: `eval.accuracy.simulations` (default `eval.simulations`).
//!
//! Positions are dealt to one thread per worker, each with its own player
//! and an evaluator that computes position by position
//! ([`crate::players::judge::play_all_parallel`]), so the rates are
//! those of one player asked in turn, whatever the threads' timing.

use super::error::TrainError;
use crate::az::inference::Evaluate;
use crate::az::meta::BoardMeta;
use crate::players::alphazero::AlphaZeroBot;
use crate::players::judge::play_all_parallel;
use crate::players::Strategy;
use crate::scenario::train::AccuracySettings;
use crate::solver::sets::{parse_choice, parse_sets, subset, Labelled, Tally};
use std::time::Instant;

/// The positions `eval.accuracy` judges, read once per run.
pub fn load_positions(a: &AccuracySettings) -> Result<Vec<Labelled>, TrainError> {
    let what = |e: &dyn std::fmt::Display| TrainError::Accuracy { why: e.to_string() };
    let text = std::fs::read_to_string(&a.file).map_err(|source| TrainError::AccuracyFile {
        path: a.file.clone(),
        source,
    })?;
    let sets = parse_sets(&text, &a.file.display().to_string()).map_err(|e| what(&e))?;
    let order = parse_choice(&a.set).map_err(|e| what(&e))?;
    let chosen: Vec<Labelled> = subset(&sets, &order, a.positions as usize)
        .into_iter()
        .cloned()
        .collect();
    if chosen.is_empty() {
        return Err(what(&format!("{} holds no position of `{}`", a.file.display(), a.set)));
    }
    Ok(chosen)
}

/// One measurement: the raw network's and the search's tallies.
#[derive(Clone, Debug, Default)]
pub struct Accuracy {
    pub raw: Tally,
    pub mcts: Tally,
    pub seconds: f64,
}

/// One player's tally: the `alphazero` player at `simulations` over the
/// network that `evaluator` makes (a fresh one per thread), asked on
/// `positions` on `threads` threads. `evaluator`'s error is any the caller
/// has (the trainer's, a bench's); it reaches the result as its text.
pub fn tally<E: std::fmt::Display>(
    evaluator: &(dyn Fn() -> Result<Box<dyn Evaluate>, E> + Sync),
    board: BoardMeta,
    positions: &[&Labelled],
    simulations: u32,
    seed: u64,
    threads: usize,
) -> Result<Tally, TrainError> {
    // `players::judge` takes its strategies' failures as text.
    let make = || -> Result<Box<dyn Strategy>, String> {
        let eval = evaluator().map_err(|e| e.to_string())?;
        let bot = AlphaZeroBot::with_evaluator(format!("{simulations} simulations"), board, simulations, eval);
        Ok(Box::new(bot))
    };
    let mut t = Tally::default();
    let judged = play_all_parallel(&make, positions, seed, threads).map_err(|e| TrainError::Judge(e.to_string()))?;
    for (v, seconds) in judged {
        t.record(v, seconds);
    }
    Ok(t)
}

/// Judges the network that `evaluator` makes (a fresh one per thread) on
/// `positions`: at 1 simulation and at `simulations`, on `threads` threads.
pub fn measure<E: std::fmt::Display>(
    evaluator: &(dyn Fn() -> Result<Box<dyn Evaluate>, E> + Sync),
    board: BoardMeta,
    positions: &[Labelled],
    simulations: u32,
    seed: u64,
    threads: usize,
) -> Result<Accuracy, TrainError> {
    let started = Instant::now();
    let refs: Vec<&Labelled> = positions.iter().collect();
    let at = |sims: u32| tally(evaluator, board, &refs, sims, seed, threads);
    Ok(Accuracy {
        raw: at(1)?,
        mcts: at(simulations)?,
        seconds: started.elapsed().as_secs_f64(),
    })
}
