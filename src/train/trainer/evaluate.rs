//! An iteration's evaluation games: the network against `eval.opponent`
//! on the tournaments' lanes, through the referee and player actors.

use super::*;

/// Plays the evaluation games of iteration `it` on the tournament's lanes:
/// the current network (player 0) against `eval.opponent` (player 1), every
/// opening with both colours in turn, one lane per worker. Returns
/// (score, wins, draws, losses).
pub(super) async fn evaluate(st: &TrainState, it: u32) -> Result<(f64, u32, u32, u32), TrainError> {
    let e = &st.settings.eval;
    let games = e.games as u64;
    let board: BoardMeta = st.cfg.into();
    let me_name = "alphazero".to_string();
    let opp_name = if e.opponent.name == me_name {
        format!("{} (opponent)", e.opponent.name)
    } else {
        e.opponent.name.clone()
    };
    // Game g+1 opens with opening g/2 and the network moves first in even g.
    let plan: Vec<Planned> = (0..games)
        .map(|g| Planned {
            index: g + 1,
            seats: if g % 2 == 0 { [0, 1] } else { [1, 0] },
            opening: st.openings[(g as usize / 2) % st.openings.len()].clone(),
        })
        .collect();
    let seed = st.seed;
    let rules = Rules {
        cfg: st.cfg,
        max_invalid: 1,
        names: vec![me_name, opp_name],
        move_times: vec![None, None],
        total: games,
        seed_of: Arc::new(move |index| seed::derive(seed, it as u64 * 1_000_003 + index - 1, seed::EVAL_GAME)),
    };
    // The lanes (`tournament::lanes`) take their players' failures as text.
    let players = |lane: usize, _lanes: usize| -> Result<Vec<Occupant>, String> {
        // One lane per core, so one thread each.
        let eval = st.play_evaluator().map_err(|e| e.to_string())?;
        let me = AlphaZeroBot::with_evaluator(format!("iteration {it}"), board, st.settings.eval_simulations(), eval);
        let opp = build_strategy(&e.opponent, seed::derive(st.seed, it as u64, lane as u64))
            .map_err(|why| format!("the evaluation opponent `{}` cannot be built: {why}", e.opponent.name))?;
        Ok(vec![Occupant::Bot(Box::new(me)), Occupant::Bot(opp)])
    };
    let pb = bar(games, "games");
    pb.set_prefix(format!("eval {it}"));
    let (mut w, mut d, mut l) = (0u32, 0u32, 0u32);
    let on_done = |rec: GameRecord| {
        // The network's seat in game g+1 is 0 for even g.
        let my_seat = if (rec.game - 1) % 2 == 0 { 0 } else { 1 };
        match rec.outcome.winner {
            None => d += 1,
            Some(s) if s == my_seat => w += 1,
            Some(_) => l += 1,
        }
        pb.inc(1);
        true
    };
    play_on_lanes(rules, plan, st.workers.max(1), players, on_done)
        .await
        .map_err(|e| TrainError::Evaluation(e.to_string()))?;
    pb.finish_and_clear();
    let score = (w as f64 + 0.5 * d as f64) / games as f64;
    Ok((score, w, d, l))
}
