use super::*;
use crate::game::{Game, DEFAULT_MAX_INVALID};
use crate::players::bots::{Leftmost, RandomBot};

/// The buffers of one step for `n` envs on `cfg`.
struct Bufs {
    obs: Vec<i8>,
    mask: Vec<i8>,
    rewards: Vec<f32>,
    terminated: Vec<bool>,
    final_moves: Vec<i8>,
    final_len: Vec<i32>,
}

impl Bufs {
    fn new(n: usize, cfg: BoardConfig) -> Self {
        Bufs {
            obs: vec![7; n * cfg.cells() * 2],
            mask: vec![7; n * cfg.cols],
            rewards: vec![7.0; n],
            terminated: vec![true; n],
            final_moves: vec![7; n * cfg.cells()],
            final_len: vec![7; n],
        }
    }
    fn out(&mut self) -> StepOut<'_> {
        StepOut {
            obs: &mut self.obs,
            mask: &mut self.mask,
            rewards: &mut self.rewards,
            terminated: &mut self.terminated,
            final_moves: &mut self.final_moves,
            final_len: &mut self.final_len,
        }
    }
}

/// The observation of `game` for the seat to move, as the env writes it.
fn referee_view(game: &Game, cfg: BoardConfig) -> (Vec<i8>, Vec<i8>) {
    let b = game.board();
    let me = game.moves().len() % 2;
    let mut obs = vec![0i8; cfg.cells() * 2];
    for r in 0..cfg.rows {
        for c in 0..cfg.cols {
            if let Some(s) = b.cell(r, c) {
                obs[((cfg.rows - 1 - r) * cfg.cols + c) * 2 + usize::from(s != me)] = 1;
            }
        }
    }
    let mask = (0..cfg.cols).map(|c| i8::from(b.is_legal(c))).collect();
    (obs, mask)
}

fn no_opponent() -> Option<&'static dyn Fn() -> Result<Box<dyn Strategy>, BuildError>> {
    None
}

/// Random games in the env and in the referee's `Game`, side by side: every
/// observation, mask, reward and end agrees, on several board shapes.
#[test]
fn the_env_plays_the_referees_rules() {
    for (rows, cols, win) in [(6, 7, 4), (4, 4, 3), (5, 9, 5), (9, 9, 4), (1, 3, 2), (12, 11, 5)] {
        let cfg = BoardConfig::new(rows, cols, win).unwrap();
        let n = 8;
        let mut env = VecEnv::new(n, cfg, 5, no_opponent(), 1).unwrap();
        let mut b = Bufs::new(n, cfg);
        env.reset(None, b.out()).unwrap();
        let mut games: Vec<Game> = (0..n).map(|_| Game::new(cfg, 2, DEFAULT_MAX_INVALID)).collect();
        let mut ended = 0;
        let mut actions = vec![0i64; n];
        for _ in 0..400 {
            for (i, g) in games.iter().enumerate() {
                let (obs, mask) = referee_view(g, cfg);
                assert_eq!(&b.obs[i * cfg.cells() * 2..(i + 1) * cfg.cells() * 2], &obs[..]);
                assert_eq!(&b.mask[i * cols..(i + 1) * cols], &mask[..]);
            }
            env.random_actions(&mut actions);
            env.step(&actions, b.out()).unwrap();
            for (i, g) in games.iter_mut().enumerate() {
                let seat = g.moves().len() % 2;
                g.submit(Answer::Column(actions[i]));
                let over = g.is_over();
                assert_eq!(b.terminated[i], over, "{rows}x{cols}x{win} env {i}");
                let won = g.outcome().is_some_and(|o| o.winner == Some(seat));
                assert_eq!(b.rewards[i], if won { 1.0 } else { 0.0 });
                if over {
                    ended += 1;
                    let len = b.final_len[i] as usize;
                    assert_eq!(len, g.moves().len());
                    let fm = &b.final_moves[i * cfg.cells()..(i + 1) * cfg.cells()];
                    let played: Vec<usize> = fm[..len].iter().map(|&c| c as usize).collect();
                    assert_eq!(played, g.moves());
                    assert!(fm[len..].iter().all(|&c| c == -1));
                    *g = Game::new(cfg, 2, DEFAULT_MAX_INVALID);
                } else {
                    assert_eq!(b.final_len[i], 0);
                }
                assert_eq!(env.moves(i).unwrap(), g.moves());
            }
        }
        assert!(ended > 0, "{rows}x{cols}x{win}: no game ended");
    }
}

#[test]
fn a_bad_action_is_refused_and_nothing_is_played() {
    let cfg = BoardConfig::new(2, 3, 3).unwrap();
    let mut env = VecEnv::new(2, cfg, 0, no_opponent(), 1).unwrap();
    let mut b = Bufs::new(2, cfg);
    env.reset(None, b.out()).unwrap();
    env.step(&[0, 1], b.out()).unwrap();
    env.step(&[0, 1], b.out()).unwrap();
    assert_eq!(env.step(&[1, 1], b.out()), Err(StepError::Full { env: 1, column: 1 }));
    assert_eq!(
        env.step(&[2, 3], b.out()),
        Err(StepError::OutOfRange {
            env: 1,
            column: 3,
            cols: 3
        })
    );
    assert_eq!(
        env.step(&[-1, 0], b.out()).unwrap_err().to_string(),
        "env 0: column -1 is out of range (0..3)"
    );
    assert_eq!(env.step(&[1], b.out()), Err(StepError::Count { got: 1, envs: 2 }));
    assert_eq!(env.moves(0).unwrap(), vec![0, 0]);
    assert_eq!(env.moves(1).unwrap(), vec![1, 1]);
}

#[test]
fn with_an_opponent_the_agent_alternates_first_and_rewards_are_its_own() {
    let cfg = BoardConfig::default();
    let make = || Ok(Box::new(Leftmost) as Box<dyn Strategy>);
    let mut env = VecEnv::new(1, cfg, 0, Some(&make), 1).unwrap();
    let mut b = Bufs::new(1, cfg);
    env.reset(None, b.out()).unwrap();
    assert!(env.moves(0).unwrap().is_empty(), "game 0: the agent moves first");
    // The agent stacks column 6; leftmost stacks column 0; the agent wins on its fourth move.
    for _ in 0..3 {
        env.step(&[6], b.out()).unwrap();
        assert!(!b.terminated[0]);
    }
    env.step(&[6], b.out()).unwrap();
    assert!(b.terminated[0]);
    assert_eq!(b.rewards[0], 1.0);
    assert_eq!(b.final_len[0], 7);
    // Game 1: leftmost has moved first, and the observation is the agent's view.
    assert_eq!(env.moves(0).unwrap(), vec![0]);
    let bottom_left = ((cfg.rows - 1) * cfg.cols) * 2;
    assert_eq!(b.obs[bottom_left..bottom_left + 2], [0, 1]);
    for _ in 0..2 {
        env.step(&[6], b.out()).unwrap();
    }
    env.step(&[6], b.out()).unwrap();
    assert!(b.terminated[0], "leftmost makes its line first");
    assert_eq!(b.rewards[0], -1.0);
    assert!(env.moves(0).unwrap().is_empty(), "game 2: the agent first again");
}

#[test]
fn threads_do_not_change_the_games() {
    let cfg = BoardConfig::default();
    let make = || Ok(Box::new(RandomBot::new(0)) as Box<dyn Strategy>);
    let run = |threads: usize| {
        let n = 300;
        let mut env = VecEnv::new(n, cfg, 9, Some(&make), threads).unwrap();
        let mut b = Bufs::new(n, cfg);
        env.reset(None, b.out()).unwrap();
        let mut actions = vec![0i64; n];
        let mut seen = Vec::new();
        for _ in 0..60 {
            env.random_actions(&mut actions);
            env.step(&actions, b.out()).unwrap();
            seen.push((b.obs.clone(), b.rewards.clone(), b.final_moves.clone()));
        }
        (env.threads(), seen)
    };
    let (t1, one) = run(1);
    let (t3, three) = run(3);
    assert_eq!((t1, t3), (1, 3));
    assert!(one == three, "the same games on 1 and 3 threads");
}

#[test]
fn a_seeded_reset_replays_the_same_random_games() {
    let cfg = BoardConfig::default();
    let mut env = VecEnv::new(4, cfg, 1, no_opponent(), 1).unwrap();
    let mut b = Bufs::new(4, cfg);
    let mut play = |env: &mut VecEnv, seed| {
        env.reset(Some(seed), b.out()).unwrap();
        let mut a = vec![0i64; 4];
        let mut all = Vec::new();
        for _ in 0..50 {
            env.random_actions(&mut a);
            all.extend_from_slice(&a);
            env.step(&a, b.out()).unwrap();
        }
        all
    };
    let first = play(&mut env, 3);
    assert_eq!(play(&mut env, 3), first);
    assert_ne!(play(&mut env, 4), first);
}

#[test]
fn a_reset_moves_on_only_from_a_game_the_agent_has_played_in() {
    let cfg = BoardConfig::default();
    let make = || Ok(Box::new(Leftmost) as Box<dyn Strategy>);
    let mut env = VecEnv::new(1, cfg, 0, Some(&make), 1).unwrap();
    let mut b = Bufs::new(1, cfg);
    env.reset(None, b.out()).unwrap();
    env.reset(None, b.out()).unwrap();
    assert!(env.moves(0).unwrap().is_empty(), "still game 0: the agent first");
    env.step(&[6], b.out()).unwrap();
    env.reset(None, b.out()).unwrap();
    assert_eq!(env.moves(0).unwrap(), vec![0], "game 1: leftmost opens");
    env.reset(None, b.out()).unwrap();
    assert_eq!(env.moves(0).unwrap(), vec![0], "a second reset keeps game 1");
    let one = BoardConfig::new(3, 3, 1).unwrap();
    assert!(VecEnv::new(1, one, 0, Some(&make), 1).is_err());
}
