//! A run's start and its words: the run directory readied for a role, the
//! evaluation openings, the first line and each iteration's summary line.

use super::*;

/// The line printed after each iteration.
pub(super) fn summary_line(r: &Row, total: u32, opponent: &str) -> String {
    let loss = match (r.policy_loss, r.value_loss, r.reply_loss) {
        (Some(p), Some(v), Some(q)) => format!("loss {p:.3} + {v:.3} (policy + value), reply {q:.3}"),
        (Some(p), Some(v), None) => format!("loss {p:.3} + {v:.3} (policy + value)"),
        _ => "no training yet (buffer below replay.min_size)".into(),
    };
    let eval = r.eval_score.map_or_else(String::new, |s| {
        format!(
            ", eval {:.1}% vs {opponent} (+{} ={} -{})",
            s * 100.0,
            r.eval_wins,
            r.eval_draws,
            r.eval_losses
        )
    });
    let accuracy = match (r.acc_raw_mistakes, r.acc_mcts_mistakes) {
        (Some(raw), Some(mcts)) => format!(
            ", mistakes {:.1}% alone, {:.1}% with search (± {:.1}, {:.1}; {} positions)",
            raw * 100.0,
            mcts * 100.0,
            r.acc_raw_se.unwrap_or(0.0) * 100.0,
            r.acc_mcts_se.unwrap_or(0.0) * 100.0,
            r.acc_positions
        ),
        _ => String::new(),
    };
    if r.files > 0 {
        return format!(
            "iteration {}/{total}: {} games, {} positions from {} files of {} worker{} ({} stale, {} set aside, lag {:.2}), \
             buffer {}, {loss}{eval}{accuracy}, {:.1} s",
            r.iteration,
            r.games,
            r.positions,
            r.files,
            r.workers,
            if r.workers == 1 { "" } else { "s" },
            r.stale,
            r.rejected,
            r.mean_lag,
            r.buffer,
            metrics::iteration_seconds(r)
        );
    }
    format!(
        "iteration {}/{total}: {} games ({:.2} games/s, {:.0} sims/s, cache {:.0}%, batch {:.1}), buffer {}, {loss}{eval}{accuracy}, {:.1} s",
        r.iteration,
        r.games,
        r.selfplay_games_per_s,
        r.simulations_per_s,
        r.cache_hit_rate * 100.0,
        r.mean_batch,
        r.buffer,
        metrics::iteration_seconds(r)
    )
}

/// The evaluation games' openings: `eval.openings` as plies (in a seeded
/// order: when the games do not cover the whole suite, 200 games from the
/// 343 openings of 3 plies, they still sample it fairly, and every
/// evaluation plays the same ones) or a file; the empty opening if none.
pub(super) fn eval_openings(suite: &OpeningSuite, cfg: BoardConfig, seed: u64) -> Result<Vec<Vec<usize>>, TrainError> {
    let openings = match suite {
        OpeningSuite::Plies(p) => shuffled_openings(cfg, *p as usize, seed),
        OpeningSuite::File(f) => {
            let text = std::fs::read_to_string(f).map_err(|source| TrainError::OpeningsFile {
                path: f.clone(),
                source,
            })?;
            parse_opening_file(&text, cfg).map_err(|e| TrainError::Openings {
                path: f.clone(),
                why: e.to_string(),
            })?
        }
    };
    Ok(if openings.is_empty() {
        vec![Vec::new()]
    } else {
        openings
    })
}

/// Readies `layout`'s directory for `role`: one trainer per run (the lock,
/// returned, is held while it lives), a fresh start when asked, and no
/// single-process run over a distributed one.
pub(super) fn prepare_run_dir(
    layout: &Layout,
    settings: &TrainSettings,
    role: Role,
    fresh: bool,
) -> Result<Option<std::fs::File>, ModeError> {
    // One trainer per run directory: a second one would train on the same
    // files and overwrite the first one's checkpoints.
    let lock = match role {
        Role::Trainer => Some(crate::train::exchange::lock(&layout.trainer_lock()).map_err(|held| {
            ModeError::Failed(format!("another trainer is running on {} ({held})", layout.out.display()).into())
        })?),
        Role::Single => None,
    };
    // `resume: false` starts over as `--fresh` does; for a distributed run
    // that means the workers' files and the run id too, or the new history
    // would take the old run's files again.
    if fresh || (role == Role::Trainer && !settings.resume) {
        crate::train::exchange::start_over(&layout.out, role == Role::Trainer).map_err(ModeError::failed)?;
    }
    match role {
        // Workers learn at once that a run given more iterations goes on.
        Role::Trainer => {
            let _ = std::fs::remove_file(layout.done_file());
        }
        // Self-play here next to workers' files would take none of them and
        // leave the next trainer a checkpoint without its ledger.
        Role::Single if layout.run_file().exists() => {
            return Err(ModeError::Usage(
                format!(
                "{} holds a distributed run (run.json): continue it with --role trainer, or start over with --fresh",
                layout.out.display()
            )
                .into(),
            ))
        }
        Role::Single => {}
    }
    Ok(lock)
}

/// The run's first line: what is trained, where and how.
pub(super) fn say_start(st: &TrainState) {
    let (total, start, out, json) = (st.settings.iterations, st.iteration, &st.out, st.json);
    let s = &st.settings;
    emit(
        json,
        &crate::events::Event::TrainStart {
            name: st.name.clone(),
            out: out.clone(),
            device: device_name(&st.device).to_string(),
            workers: st.workers,
            resumed_from: start,
            iterations: total,
            board: BoardMeta::from(st.cfg),
            network: st.net.shape,
            simulations: s.mcts.simulations,
            games_per_iteration: s.self_play.games_per_iteration,
        },
        &format!(
            "training {} on {} ({}, {}): network {} blocks × {} channels{}, {} simulations, iterations {}..{total}, output {}",
            st.name,
            st.cfg,
            device_name(&st.device),
            match &st.ingest {
                Some(i) => format!("trainer; workers write to {}", i.layout.selfplay().display()),
                None => format!("{} worker{}", st.workers, if st.workers == 1 { "" } else { "s" }),
            },
            st.net.shape.blocks,
            st.net.shape.channels,
            if st.net.shape.reply_head { " with a reply head" } else { "" },
            s.mcts.simulations,
            start + 1,
            out.display()
        ),
    );
}
