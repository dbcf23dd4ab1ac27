//! Asking a [`Strategy`] for its move in solver-labelled positions
//! ([`crate::solver::sets`]) and judging the answers: what
//! `c4sim bench accuracy` (one player, timed, on one thread) and training's
//! `eval.accuracy` (the current network, on every core) both do, so the two
//! report the same mistakes for the same player and positions.
//!
//! Each position is a fresh game: the player's `new_game` is called with a
//! seed derived from the run's seed and the position's index in the list,
//! so a position's answer depends neither on the positions asked before it
//! nor on which thread asks.

use crate::game::board::BoardError;
use crate::game::openings::parse_move_string;
use crate::game::{Answer, Game, DEFAULT_LETTERS};
use crate::players::{Strategy, TurnView};
use crate::solver::sets::{board, judge, Labelled, Verdict};
use crate::util::seed::derive;
use std::time::Instant;

/// One thread's answers: (position index, verdict and seconds) each.
type Dealt = Result<Vec<(usize, (Verdict, f64))>, JudgeError>;

/// Why positions could not be judged.
#[derive(Debug, thiserror::Error)]
pub enum JudgeError {
    /// A labelled position is not one of the board's.
    #[error("{0}")]
    Position(#[from] BoardError),
    /// A thread's strategy could not be made (the maker's own error).
    #[error("{0}")]
    Player(#[source] Box<dyn std::error::Error + Send + Sync>),
    #[error("a thread judging positions panicked")]
    Panicked,
}

/// Seed stream of one benchmarked position.
const STREAM_POSITION: u64 = 0xacc2;

/// Asks `strategy` for its move in `p`, the `index`-th position of a run
/// seeded with `seed`: the verdict and the seconds the answer took.
pub fn play_labelled(
    strategy: &mut dyn Strategy,
    p: &Labelled,
    index: usize,
    seed: u64,
) -> Result<(Verdict, f64), JudgeError> {
    let cfg = board();
    let moves = parse_move_string(&p.moves, cfg.cols)?;
    let game = Game::with_opening(cfg, 2, 1, &moves)?;
    let view = TurnView::of(&game, index as u64 + 1, moves.len() % 2, &DEFAULT_LETTERS, None);
    strategy.new_game(derive(seed, index as u64, STREAM_POSITION));
    let t = Instant::now();
    let answer = strategy.choose(&view);
    let seconds = t.elapsed().as_secs_f64();
    let col = match answer {
        Answer::Column(c) if c >= 0 => c as usize,
        _ => usize::MAX,
    };
    Ok((judge(&p.scores, col), seconds))
}

/// [`play_labelled`] on every position in turn, with one strategy.
pub fn play_all(
    strategy: &mut dyn Strategy,
    positions: &[&Labelled],
    seed: u64,
) -> Result<Vec<(Verdict, f64)>, JudgeError> {
    positions
        .iter()
        .enumerate()
        .map(|(i, p)| play_labelled(strategy, p, i, seed))
        .collect()
}

/// [`play_all`] on `threads` threads, each with its own strategy from
/// `make`. Thread `t` takes positions `t, t + threads, …` (a fixed deal,
/// not a queue), and every answer is put back at its position's index, so
/// the verdicts are those of [`play_all`] with one strategy whenever the
/// strategy's answer depends only on the position and its seed (as the
/// AlphaZero player's does), whatever the threads' timing.
pub fn play_all_parallel<E: Into<Box<dyn std::error::Error + Send + Sync>>>(
    make: &(impl Fn() -> Result<Box<dyn Strategy>, E> + Sync),
    positions: &[&Labelled],
    seed: u64,
    threads: usize,
) -> Result<Vec<(Verdict, f64)>, JudgeError> {
    let threads = threads.clamp(1, positions.len().max(1));
    let dealt: Vec<Dealt> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                s.spawn(move || {
                    let mut strategy = make().map_err(|e| JudgeError::Player(e.into()))?;
                    (t..positions.len())
                        .step_by(threads)
                        .map(|i| play_labelled(strategy.as_mut(), positions[i], i, seed).map(|v| (i, v)))
                        .collect()
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(JudgeError::Panicked)))
            .collect()
    });
    let mut out = vec![None; positions.len()];
    for part in dealt {
        for (i, v) in part? {
            out[i] = Some(v);
        }
    }
    Ok(out.into_iter().map(|v| v.expect("every index is dealt once")).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::players::bots::Leftmost;

    fn leftmost() -> Result<Box<dyn Strategy>, std::convert::Infallible> {
        Ok(Box::new(Leftmost))
    }

    fn labelled(moves: &str, scores: [i32; 7]) -> Labelled {
        Labelled {
            set: "middle-easy".into(),
            moves: moves.into(),
            ply: moves.len(),
            nodes: 0,
            scores: scores.iter().map(|&s| Some(s)).collect(),
        }
    }

    #[test]
    fn threads_give_the_one_strategy_verdicts_in_order() {
        // Leftmost plays column 1: right where it wins, a mistake elsewhere.
        let ps: Vec<Labelled> = (0..9)
            .map(|i| {
                let mut s = [-1; 7];
                s[if i % 3 == 0 { 0 } else { 3 }] = 2;
                labelled(&"4".repeat(i % 4), s)
            })
            .collect();
        let refs: Vec<&Labelled> = ps.iter().collect();
        let one = play_all(&mut Leftmost, &refs, 5).unwrap();
        let mistakes: Vec<bool> = one.iter().map(|(v, _)| v.mistake).collect();
        assert_eq!(mistakes, (0..9).map(|i| i % 3 != 0).collect::<Vec<_>>());
        for threads in [1, 2, 4, 20] {
            let many = play_all_parallel(&leftmost, &refs, 5, threads).unwrap();
            let got: Vec<Verdict> = many.iter().map(|(v, _)| *v).collect();
            assert_eq!(
                got,
                one.iter().map(|(v, _)| *v).collect::<Vec<_>>(),
                "{threads} threads"
            );
        }
        let no_model = || -> Result<Box<dyn Strategy>, std::io::Error> { Err(std::io::Error::other("no model")) };
        let e = play_all_parallel(&no_model, &refs, 5, 2).unwrap_err();
        assert_eq!(e.to_string(), "no model");
        assert!(play_all_parallel(&leftmost, &[], 5, 2).unwrap().is_empty());
    }
}
