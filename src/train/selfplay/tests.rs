use super::*;
use crate::az::inference::{CpuEvaluator, Folded};
use crate::az::network::{NetShape, PolicyValueNet};
use crate::game::{BoardConfig, Game};
use candle_core::Device;
use std::sync::Arc;

fn setup(rows: usize, cols: usize, win: usize) -> (Geometry<u64>, Arc<Folded>) {
    let cfg = BoardConfig::new(rows, cols, win).unwrap();
    let shape = NetShape {
        rows,
        cols,
        blocks: 1,
        channels: 8,
        value_hidden: 8,
        reply_head: false,
    };
    let net = PolicyValueNet::new(shape, 2, &Device::Cpu).unwrap();
    (Geometry::new(cfg), Arc::new(Folded::from_net(&net).unwrap()))
}

/// A sample's ply: the stones on its board.
fn ply_of(s: &Sample) -> usize {
    s.mine.iter().chain(&s.theirs).map(|w| w.count_ones()).sum::<u32>() as usize
}

/// `count` games of `c` on `g` with `net`, from seed `seed`.
fn games(g: &Geometry<u64>, net: &Arc<Folded>, c: &SelfPlayConfig, count: u64, seed: u64) -> Vec<GameOut> {
    let done = AtomicU64::new(0);
    play_games(g, c, &mut CpuEvaluator::new(Arc::clone(net)), 0, count, seed, &done).0
}

fn moves_of(v: &[GameOut]) -> Vec<Vec<usize>> {
    v.iter().map(|g| g.moves.clone()).collect()
}

fn cfg(concurrent: usize) -> SelfPlayConfig {
    SelfPlayConfig {
        simulations: 16,
        c_puct: 2.5,
        dirichlet_alpha: 0.5,
        dirichlet_weight: 0.25,
        root_prior_temperature: 1.0,
        temperature_moves: 4,
        full_search_share: 1.0,
        fast_simulations: 16,
        q_weight: 0.0,
        q_best_child: false,
        random_opening_plies: 0,
        random_move_share: 0.0,
        reply_targets: true,
        exact_value_nodes: 0,
        exact_policy_nodes: 0,
        gumbel: false,
        forced_playouts: 0.0,
        concurrent,
        cache_size: 1000,
    }
}

#[test]
fn games_are_legal_and_samples_are_labelled() {
    let (g, net) = setup(4, 5, 3);
    let done = AtomicU64::new(0);
    let mut ev = CpuEvaluator::new(net);
    let (games, stats) = play_games(&g, &cfg(4), &mut ev, 0, 6, 1, &done);
    assert_eq!(games.len(), 6);
    assert_eq!(done.load(Ordering::Relaxed), 6);
    assert_eq!(stats.games, 6);
    assert!(stats.mean_batch() > 1.0, "leaves of several games share a batch");
    for game in &games {
        // The referee's rules agree with the bitboards on every move and the end.
        let mut r = Game::new(g.cfg, 2, 1);
        for &m in &game.moves {
            assert!(r.to_move().is_some());
            r.submit(crate::game::Answer::Column(m as i64));
        }
        assert!(r.is_over());
        assert_eq!(r.outcome().unwrap().winner, game.winner);
        assert_eq!(game.samples.len(), game.moves.len());
        for (ply, s) in game.samples.iter().enumerate() {
            assert!((s.policy.iter().sum::<f32>() - 1.0).abs() < 1e-4);
            assert_eq!(s.value, result_for(game.winner, ply));
        }
    }
}

/// Gumbel root search plays legal games whose policy targets are
/// distributions, spends exactly the budget per move, explores (two
/// seeds give different games) and is reproducible.
#[test]
fn gumbel_self_play() {
    let (g, net) = setup(4, 5, 3);
    let c = SelfPlayConfig { gumbel: true, ..cfg(4) };
    let play = |seed| {
        let done = AtomicU64::new(0);
        play_games(&g, &c, &mut CpuEvaluator::new(Arc::clone(&net)), 0, 6, seed, &done)
    };
    let (games, stats) = play(1);
    assert_eq!(stats.games, 6);
    assert_eq!(stats.simulations, 16 * stats.moves, "16 simulations a move");
    for game in &games {
        assert_eq!(game.samples.len(), game.moves.len());
        for s in &game.samples {
            assert!((s.policy.iter().sum::<f32>() - 1.0).abs() < 1e-4, "{:?}", s.policy);
        }
    }
    assert_eq!(moves_of(&play(1).0), moves_of(&games));
    assert_ne!(moves_of(&play(2).0), moves_of(&games));
    let distinct: std::collections::BTreeSet<_> = moves_of(&games).into_iter().collect();
    assert!(distinct.len() > 1, "Gumbel noise varies the games");
}

/// Playout cap randomization keeps only the full searches as training
/// positions, and `q_weight` moves each value target from the result
/// `z` towards the root's search value (which lies in [−1, 1]).
#[test]
fn playout_caps_and_q_targets() {
    let (g, net) = setup(4, 5, 3);
    let done = AtomicU64::new(0);
    let mut c = cfg(4);
    c.full_search_share = 0.3;
    c.fast_simulations = 4;
    c.q_weight = 0.5;
    let (games, stats) = play_games(&g, &c, &mut CpuEvaluator::new(net.clone()), 0, 12, 3, &done);
    let (full, full_stats) = play_games(&g, &cfg(4), &mut CpuEvaluator::new(net), 0, 12, 3, &done);
    let samples: usize = games.iter().map(|g| g.samples.len()).sum();
    let moves: usize = games.iter().map(|g| g.moves.len()).sum();
    assert!(samples > 0 && samples < moves * 2 / 3, "{samples} of {moves}");
    assert_eq!(
        full.iter().map(|g| g.samples.len()).sum::<usize>(),
        full.iter().map(|g| g.moves.len()).sum::<usize>()
    );
    assert!((stats.simulations as f64 / moves as f64) < (full_stats.simulations as f64 / full_stats.moves as f64));
    let mut mixed = 0;
    for game in &games {
        for s in &game.samples {
            let ply = ply_of(s);
            let z = result_for(game.winner, ply);
            let q = (s.value - 0.5 * z) / 0.5;
            assert!((-1.0001..=1.0001).contains(&q), "value {} for z {z}", s.value);
            mixed += usize::from(s.value != z);
        }
    }
    assert!(mixed > 0, "some targets move away from the bare result");
}

/// Random openings: games start with 0..=N random moves (no game
/// ends in them), and the samples after them are labelled as usual.
#[test]
fn random_openings() {
    let (g, net) = setup(4, 5, 3);
    let done = AtomicU64::new(0);
    let mut c = cfg(4);
    c.random_opening_plies = 3;
    let (games, _) = play_games(&g, &c, &mut CpuEvaluator::new(net), 0, 24, 5, &done);
    let firsts: std::collections::HashSet<Vec<usize>> = games.iter().map(|g| g.moves[..2].to_vec()).collect();
    assert!(firsts.len() > 5, "openings vary: {firsts:?}");
    for game in &games {
        let opening = game.moves.len() - game.samples.len();
        assert!(opening <= 3, "{opening} unsearched moves");
        for s in &game.samples {
            let ply = ply_of(s);
            assert!(ply >= opening);
            assert_eq!(s.value, result_for(game.winner, ply));
        }
    }
}

/// Random moves change the games (same seed), and the value target
/// of every position up to a game's last random move is the search
/// value q, not the result z: with every move random, no target is z
/// unless q happens to equal it (a proven position).
#[test]
fn random_moves() {
    let (g, net) = setup(4, 5, 3);
    let play = |share| {
        let c = SelfPlayConfig {
            random_move_share: share,
            ..cfg(4)
        };
        games(&g, &net, &c, 12, 4)
    };
    let (none, some, all) = (play(0.0), play(0.3), play(1.0));
    assert_ne!(moves_of(&none), moves_of(&some));
    let mut samples = 0;
    let mut not_z = 0;
    for game in &all {
        assert_eq!(game.samples.len(), game.moves.len(), "random moves are still recorded");
        for s in &game.samples {
            let ply = ply_of(s);
            assert!((s.policy.iter().sum::<f32>() - 1.0).abs() < 1e-4);
            assert!((-1.0001..=1.0001).contains(&s.value));
            samples += 1;
            not_z += usize::from(s.value != result_for(game.winner, ply));
        }
    }
    // (Without the rule every target would be z here, as q_weight is 0;
    // on this small board many positions are proven, where q is z.)
    assert!(not_z * 2 > samples, "{not_z} of {samples} targets are not the result");
}

/// Forced playouts change the searches (the same seed gives other
/// games), their policy targets stay distributions, and pruning leaves
/// fewer columns with a share than the raw visits had.
#[test]
fn forced_playouts_and_pruning() {
    let (g, net) = setup(4, 5, 3);
    let play = |k| {
        let c = SelfPlayConfig {
            forced_playouts: k,
            simulations: 40,
            ..cfg(4)
        };
        games(&g, &net, &c, 12, 6)
    };
    let (off, on) = (play(0.0), play(2.0));
    assert_ne!(moves_of(&off), moves_of(&on));
    let support = |v: &[GameOut]| {
        let (mut cols, mut n) = (0usize, 0usize);
        for s in v.iter().flat_map(|g| &g.samples) {
            assert!((s.policy.iter().sum::<f32>() - 1.0).abs() < 1e-4, "{:?}", s.policy);
            cols += s.policy.iter().filter(|&&p| p > 0.0).count();
            n += 1;
        }
        cols as f64 / n as f64
    };
    let (s_off, s_on) = (support(&off), support(&on));
    assert!(
        s_on < s_off,
        "pruned targets are sharper: {s_on} vs {s_off} columns a position"
    );
}

/// `q_best_child` changes the value targets only: the same games, and
/// with `q_weight` 1 some targets differ (the best move's value against
/// the root's mean) while positions the search proved keep theirs.
#[test]
fn q_from_the_best_child() {
    let (g, net) = setup(4, 5, 3);
    let play = |best| {
        let c = SelfPlayConfig {
            q_weight: 1.0,
            q_best_child: best,
            simulations: 40,
            ..cfg(4)
        };
        games(&g, &net, &c, 8, 7)
    };
    let (mean, best) = (play(false), play(true));
    assert_eq!(moves_of(&mean), moves_of(&best), "the games do not change");
    let (mut differ, mut n) = (0, 0);
    for (a, b) in mean
        .iter()
        .flat_map(|g| &g.samples)
        .zip(best.iter().flat_map(|g| &g.samples))
    {
        assert_eq!(a.policy, b.policy);
        assert!((-1.0001..=1.0001).contains(&b.value));
        differ += usize::from(a.value != b.value);
        n += 1;
    }
    assert!(differ > 0 && differ < n, "{differ} of {n} value targets differ");
}

/// A sample whose policy target is all on `col`.
fn on(col: usize) -> Sample {
    let mut policy = [0.0; crate::game::MAX_SIDE];
    policy[col] = 1.0;
    let pos = Position::<u64>::empty();
    Sample::new(&pos, 20, &policy[..5], 0.0)
}

/// Each sample's reply target is the next sample's policy target when
/// that is the very next ply and this ply's move was not random; none
/// at the end, before an unrecorded ply or after a random move.
#[test]
fn replies_link_each_position_to_the_next_ply() {
    let mut g = GameOut {
        index: 0,
        moves: vec![0; 8],
        winner: None,
        samples: (0..6).map(on).collect(),
        // Ply 3 unrecorded (a fast search), ply 5's move random.
        plies: vec![0, 1, 2, 4, 5, 6],
        random_plies: vec![5],
    };
    g.samples[0].reply = [0.5; crate::game::MAX_SIDE]; // stale, replaced
    g.link_replies();
    let replied: Vec<Option<usize>> = g
        .samples
        .iter()
        .map(|s| s.has_reply().then(|| s.reply.iter().position(|&r| r == 1.0).unwrap()))
        .collect();
    assert_eq!(replied, vec![Some(1), Some(2), None, Some(4), None, None]);
    assert!(g.samples.iter().all(|s| s.reply.iter().sum::<f32>() <= 1.0));
}

/// Every sample's reply target in real games is the rule above, under
/// playout caps, random moves, and exact policy targets (the reply is
/// the next position's final target, the solver's where it gave one).
#[test]
fn reply_targets_in_self_play() {
    let (g, net) = setup(4, 5, 3);
    let check = |games: &[GameOut]| {
        let (mut linked, mut empty) = (0, 0);
        for game in games {
            for (i, s) in game.samples.iter().enumerate() {
                let next = game.plies.get(i + 1).copied();
                let random = game.random_plies.contains(&game.plies[i]);
                if next == Some(game.plies[i] + 1) && !random {
                    assert_eq!(s.reply, game.samples[i + 1].policy);
                    linked += 1;
                } else {
                    assert!(!s.has_reply());
                    empty += 1;
                }
            }
        }
        (linked, empty)
    };
    let (linked, empty) = check(&games(&g, &net, &cfg(4), 6, 1));
    assert!(linked > 0);
    assert_eq!(empty, 6, "all moves searched fully: only the last position has none");
    let caps = SelfPlayConfig {
        full_search_share: 0.5,
        fast_simulations: 4,
        random_move_share: 0.2,
        ..cfg(4)
    };
    let played = games(&g, &net, &caps, 12, 2);
    assert!(played.iter().any(|g| !g.random_plies.is_empty()));
    let (linked, empty) = check(&played);
    assert!(linked > 0 && empty > 12, "{linked} linked, {empty} without");
    let exact = SelfPlayConfig {
        exact_value_nodes: 20_000,
        exact_policy_nodes: 20_000,
        ..cfg(4)
    };
    let done = AtomicU64::new(0);
    let (played, stats) = play_games(&g, &exact, &mut CpuEvaluator::new(net.clone()), 0, 6, 3, &done);
    assert!(stats.exact_policies > 0, "the solver gave policy targets");
    check(&played);
    // Without a reply head, no sample gets one (replay.bin stays version 1).
    let off = SelfPlayConfig {
        reply_targets: false,
        ..cfg(4)
    };
    let played = games(&g, &net, &off, 6, 1);
    assert!(played.iter().flat_map(|g| &g.samples).all(|s| !s.has_reply()));
}

/// A game's moves depend on its number and the seed, not on how many
/// games share a batch or a worker.
#[test]
fn batching_does_not_change_the_games() {
    let (g, net) = setup(4, 5, 3);
    let done = AtomicU64::new(0);
    let mut c = cfg(1);
    c.cache_size = 0;
    let (one, s1) = play_games(&g, &c, &mut CpuEvaluator::new(net.clone()), 0, 4, 9, &done);
    c.concurrent = 4;
    let (many, s4) = play_games(&g, &c, &mut CpuEvaluator::new(net.clone()), 0, 4, 9, &done);
    let mut evals: Vec<Box<dyn Evaluate>> = vec![
        Box::new(CpuEvaluator::new(net.clone())),
        Box::new(CpuEvaluator::new(net)),
    ];
    let (par, _) = play_parallel(&g, &c, &mut evals, 4, 9, &done);
    assert_eq!(moves_of(&one), moves_of(&many));
    assert_eq!(moves_of(&one), moves_of(&par));
    assert!(s4.batches < s1.batches);
}
